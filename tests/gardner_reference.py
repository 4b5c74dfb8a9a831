"""An independent, deliberately plain Gardner minichess move generator (tests only).

Written from the rules (see csrc/games/gardner/gardner.h) and sharing nothing with the C code:
a padded 9x9 mailbox, pseudo-legal moves, and legality by playing the move on a copy
and asking whether the mover's king is attacked.  Slow but easy to check by eye; the
tests compare the C generator with it move by move and by perft.

Squares are (file, rank) with file, rank in 0..4; moves are UCI strings ("b2b3",
"a4a5q").  Pieces are 'PNBRQK' (White) / 'pnbrqk' (Black), '.' empty.
"""

from __future__ import annotations

START_FEN = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"

KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
KING_STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
ROOK_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1))
BISHOP_DIRS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
FILES = "abcde"


def on_board(f: int, r: int) -> bool:
    return 0 <= f < 5 and 0 <= r < 5


def sq_name(f: int, r: int) -> str:
    return FILES[f] + str(r + 1)


def is_white(p: str) -> bool:
    return p.isupper()


class Position:
    """A position: board[r][f] characters, side 'w' or 'b', clocks."""

    def __init__(self, board, side, halfmove=0, fullmove=1, bishop_promotion=False):
        self.board = board
        self.side = side
        self.halfmove = halfmove
        self.fullmove = fullmove
        self.bishop_promotion = bishop_promotion

    @classmethod
    def from_fen(cls, fen: str = START_FEN, bishop_promotion: bool = False) -> "Position":
        fields = fen.split()
        rows = fields[0].split("/")
        assert len(rows) == 5, fen
        board = [["."] * 5 for _ in range(5)]
        for i, row in enumerate(rows):
            r = 4 - i
            f = 0
            for ch in row:
                if ch.isdigit():
                    f += int(ch)
                else:
                    board[r][f] = ch
                    f += 1
            assert f == 5, fen
        halfmove = int(fields[4]) if len(fields) > 4 else 0
        fullmove = int(fields[5]) if len(fields) > 5 else 1
        return cls(board, fields[1], halfmove, fullmove, bishop_promotion)

    def fen(self) -> str:
        rows = []
        for r in range(4, -1, -1):
            out, empty = "", 0
            for f in range(5):
                p = self.board[r][f]
                if p == ".":
                    empty += 1
                else:
                    if empty:
                        out += str(empty)
                    empty = 0
                    out += p
            if empty:
                out += str(empty)
            rows.append(out)
        return "/".join(rows) + f" {self.side} - - {self.halfmove} {self.fullmove}"

    # -- attacks ---------------------------------------------------------------------

    def attacked_by(self, f: int, r: int, white: bool) -> bool:
        """Is square (f, r) attacked by a piece of the given colour?"""
        b = self.board

        def own(p):
            return p != "." and is_white(p) == white

        for df, dr in KNIGHT_STEPS:
            x, y = f + df, r + dr
            if on_board(x, y) and own(b[y][x]) and b[y][x].upper() == "N":
                return True
        for df, dr in KING_STEPS:
            x, y = f + df, r + dr
            if on_board(x, y) and own(b[y][x]) and b[y][x].upper() == "K":
                return True
        # A white pawn on (f -+ 1, r - 1) attacks (f, r); a black one on (f -+ 1, r + 1).
        pr = r - 1 if white else r + 1
        for x in (f - 1, f + 1):
            if on_board(x, pr) and own(b[pr][x]) and b[pr][x].upper() == "P":
                return True
        for dirs, kinds in ((ROOK_DIRS, "RQ"), (BISHOP_DIRS, "BQ")):
            for df, dr in dirs:
                x, y = f + df, r + dr
                while on_board(x, y):
                    p = b[y][x]
                    if p != ".":
                        if own(p) and p.upper() in kinds:
                            return True
                        break
                    x, y = x + df, y + dr
        return False

    def king(self, white: bool):
        k = "K" if white else "k"
        for r in range(5):
            for f in range(5):
                if self.board[r][f] == k:
                    return f, r
        raise AssertionError("no king")

    def in_check(self) -> bool:
        white = self.side == "w"
        f, r = self.king(white)
        return self.attacked_by(f, r, not white)

    # -- moves -----------------------------------------------------------------------

    def pseudo_moves(self):
        white = self.side == "w"
        b = self.board
        promos = "qrbn" if self.bishop_promotion else "qrn"
        moves = []
        for r in range(5):
            for f in range(5):
                p = b[r][f]
                if p == "." or is_white(p) != white:
                    continue
                kind = p.upper()
                frm = sq_name(f, r)
                targets = []
                if kind == "P":
                    dr = 1 if white else -1
                    last = 4 if white else 0
                    cand = []
                    if on_board(f, r + dr) and b[r + dr][f] == ".":
                        cand.append((f, r + dr))
                    for x in (f - 1, f + 1):
                        if on_board(x, r + dr):
                            q = b[r + dr][x]
                            if q != "." and is_white(q) != white:
                                cand.append((x, r + dr))
                    for x, y in cand:
                        if y == last:
                            moves.extend(frm + sq_name(x, y) + pr for pr in promos)
                        else:
                            moves.append(frm + sq_name(x, y))
                    continue
                if kind in "NK":
                    for df, dr in KNIGHT_STEPS if kind == "N" else KING_STEPS:
                        x, y = f + df, r + dr
                        if on_board(x, y):
                            targets.append((x, y))
                else:
                    dirs = {"R": ROOK_DIRS, "B": BISHOP_DIRS, "Q": ROOK_DIRS + BISHOP_DIRS}[kind]
                    for df, dr in dirs:
                        x, y = f + df, r + dr
                        while on_board(x, y):
                            targets.append((x, y))
                            if b[y][x] != ".":
                                break
                            x, y = x + df, y + dr
                for x, y in targets:
                    q = b[y][x]
                    if q == "." or is_white(q) != white:
                        moves.append(frm + sq_name(x, y))
        return moves

    def play(self, move: str) -> "Position":
        """The position after `move` (no legality check)."""
        f0, r0 = FILES.index(move[0]), int(move[1]) - 1
        f1, r1 = FILES.index(move[2]), int(move[3]) - 1
        board = [row[:] for row in self.board]
        p = board[r0][f0]
        captured = board[r1][f1]
        board[r0][f0] = "."
        if len(move) == 5:
            p = move[4].upper() if self.side == "w" else move[4].lower()
        board[r1][f1] = p
        halfmove = 0 if (captured != "." or p.upper() == "P" or len(move) == 5) else self.halfmove + 1
        fullmove = self.fullmove + (1 if self.side == "b" else 0)
        return Position(board, "b" if self.side == "w" else "w", halfmove, fullmove, self.bishop_promotion)

    def legal_moves(self):
        white = self.side == "w"
        out = []
        for m in self.pseudo_moves():
            nxt = self.play(m)
            f, r = nxt.king(white)
            if not nxt.attacked_by(f, r, not white):
                out.append(m)
        return out

    def perft(self, depth: int) -> int:
        if depth == 0:
            return 1
        moves = self.legal_moves()
        if depth == 1:
            return len(moves)
        return sum(self.play(m).perft(depth - 1) for m in moves)

    # -- end of game -------------------------------------------------------------------

    def insufficient_material(self) -> bool:
        """Kings only; king + one minor vs king; or only bishops, all on one square colour."""
        others = [(p, f, r) for r in range(5) for f in range(5) if (p := self.board[r][f]) not in ".Kk"]
        if not others:
            return True
        if any(p.upper() in "PRQ" for p, _, _ in others):
            return False
        if len(others) == 1:
            return True
        if any(p.upper() == "N" for p, _, _ in others):
            return False
        return len({(f + r) % 2 for _, f, r in others}) == 1

    def outcome(self):
        """(result, reason) without repetition: result '1-0', '0-1', '1/2-1/2' or '*'."""
        if not self.legal_moves():
            if self.in_check():
                return ("0-1" if self.side == "w" else "1-0"), "checkmate"
            return "1/2-1/2", "stalemate"
        if self.insufficient_material():
            return "1/2-1/2", "insufficient_material"
        if self.halfmove >= 100:
            return "1/2-1/2", "fifty_moves"
        return "*", "none"
