"""Chess and Chess960 with a python-chess style API, on mavgame's C core.

>>> from mavgame import Chess
>>> board = Chess()
>>> board.push_san("e4")
1804
>>> board.push("e7e5")
2356
>>> board.fen()
'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2'
>>> board.turn  # True: White to move, as python-chess's chess.WHITE
True

Moves are UCI strings (``"e2e4"``, ``"e7e8q"``) or integer actions
(``from | to << 6 | promo << 12``, see ``csrc/games/chess.h``).  Standard chess writes castling
as the king's two-square move (``e1g1``) and also accepts king-takes-rook (``e1h1``); Chess960
uses king-takes-rook only.

:class:`ChessFamily` is the shared base of the chess-like games (chess, Chess960, Gardner 5x5
minichess): everything in it is generic over ``FILES`` x ``RANKS`` and the game's FEN-like text.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from .. import _core
from . import registry
from ..errors import InvalidMoveError
from .base import GameBase, Outcome

Move = Union[str, int]

WHITE = True
BLACK = False


# Unicode chess glyphs for the SVG board (filled shapes for both sides, coloured by fill).
_GLYPHS = {"k": "\u265a", "q": "\u265b", "r": "\u265c", "b": "\u265d", "n": "\u265e", "p": "\u265f"}


class ChessFamily(GameBase):
    """Base class of the chess-like games; subclasses set GAME (registry name), FILES and RANKS.

    The hot methods (push, pop, legal_actions, legal_moves, perft, copy) are the C methods of
    mavgame._core.State.  ``push`` takes a UCI string or an int action and raises
    :class:`~mavgame.InvalidMoveError` (malformed) or :class:`~mavgame.IllegalMoveError` (illegal),
    both ValueError, naming the move and the FEN; the state is then unchanged.
    ``pop()`` returns the action taken back.  ``State.outcome(board)`` still gives the raw
    ``(result, termination)`` pair of the generic interface.
    """

    GAME = "chess"
    FILES = 8
    RANKS = 8

    # --- text ---------------------------------------------------------------------------

    def fen(self) -> str:
        """FEN of the position (X-FEN castling for Chess960; en passant only when legal)."""
        return self.text()

    def board_rows(self) -> List[str]:
        """The board as RANKS strings of FILES characters, top rank first ('.' empty)."""
        rows = []
        for rank in self.text().split(" ", 1)[0].split("/"):
            row = []
            for ch in rank:
                row.append("." * int(ch) if ch.isdigit() else ch)
            rows.append("".join(row))
        return rows

    def piece_at(self, square: Union[int, str]) -> Optional[str]:
        """Piece letter on a square ("a1" or file + rank * FILES), None if empty."""
        if isinstance(square, str):
            sq = self._square_index(square)
        else:
            sq = int(square)
            if not 0 <= sq < self.FILES * self.RANKS:
                raise ValueError(f"square {square} is off the {self.FILES}x{self.RANKS} board")
        ch = self.board_rows()[self.RANKS - 1 - sq // self.FILES][sq % self.FILES]
        return None if ch == "." else ch

    def _square_index(self, name: str) -> int:
        if len(name) == 2 and "a" <= name[0] < chr(ord("a") + self.FILES) and "1" <= name[1] <= str(self.RANKS):
            return (ord(name[0]) - ord("a")) + (int(name[1]) - 1) * self.FILES
        raise ValueError(f"invalid square name {name!r} for a {self.FILES}x{self.RANKS} board")

    def square_name(self, sq: int) -> str:
        return chr(ord("a") + sq % self.FILES) + str(sq // self.FILES + 1)

    def __str__(self) -> str:
        """ASCII board as python-chess prints it (rank 8 first, '.' for empty squares)."""
        return "\n".join(" ".join(row) for row in self.board_rows())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fen()!r})"

    # --- moves --------------------------------------------------------------------------

    def san(self, move: Move) -> str:
        """SAN of a legal move (UCI string or action), e.g. "Nf3", "O-O", "exd8=Q+"."""
        return _core.san(self, self.parse_move(move))

    def parse_san(self, san: str) -> int:
        """The legal action for a SAN string; :class:`~mavgame.InvalidMoveError` if malformed,
        :class:`~mavgame.IllegalMoveError` if illegal, :class:`~mavgame.AmbiguousMoveError` if
        ambiguous (all ValueError, as in python-chess)."""
        if isinstance(san, str) and ("\x00" in san or not _is_unicode(san)):
            raise self._unreadable(san, "SAN")
        return _core.parse_san(self, san)

    def push_san(self, san: str) -> int:
        """Play a move given in SAN; returns its action (errors as :meth:`parse_san`)."""
        return self.push(self.parse_san(san))

    def parse_uci(self, uci: str) -> int:
        """The legal action for a UCI string (python-chess's name); InvalidMoveError if malformed,
        IllegalMoveError if illegal."""
        if not isinstance(uci, str):
            raise TypeError(f"parse_uci takes a UCI string, not {type(uci).__name__}")
        if not _is_unicode(uci):
            raise self._unreadable(uci, "UCI move")
        return self.action_from_str(uci)

    def _unreadable(self, text: str, what: str) -> InvalidMoveError:
        """The InvalidMoveError for a move text the C parsers cannot read: a NUL character or a str that is
        not valid Unicode (a lone surrogate; the C binding would raise a plain ValueError for either)."""
        why = "contains a NUL character" if "\x00" in text else "not valid Unicode (a lone surrogate)"
        shown = repr(text[:40]) + ("..." if len(text) > 40 else "")
        return InvalidMoveError(f"invalid {what} {shown}: {why} in position {self.fen()!r}")

    def push_uci(self, uci: str) -> int:
        """Play a move given in UCI (python-chess's name); returns its action (errors as :meth:`parse_uci`)."""
        return self.push(self.parse_uci(uci))

    def uci(self, move: Move) -> str:
        """UCI string of a legal move."""
        return self.action_to_str(self.parse_move(move))

    def legal_sans(self) -> List[str]:
        """SAN of every legal move, in move generation order."""
        return [_core.san(self, int(a)) for a in self.legal_actions()]

    def move_info(self, move: Move) -> dict:
        """Describes a legal move: from/to square names, piece, capture, promotion, castle."""
        f, t, piece, capture, promo, castle = _core.move_info(self, self.parse_move(move))
        return {
            "from": self.square_name(f),
            "to": self.square_name(t),
            "piece": piece,
            "capture": capture,
            "promotion": promo or None,
            "castle": {0: None, 1: "O-O", 2: "O-O-O"}[castle],
        }

    def is_capture(self, move: Move) -> bool:
        return bool(_core.move_info(self, self.parse_move(move))[3])

    def is_castling(self, move: Move) -> bool:
        return bool(_core.move_info(self, self.parse_move(move))[5])

    # --- status -------------------------------------------------------------------------

    def is_check(self) -> bool:
        return _core.is_check(self)

    def is_checkmate(self) -> bool:
        return _core.State.outcome(self)[1] == "checkmate"

    def is_stalemate(self) -> bool:
        return len(self.legal_actions()) == 0 and not self.is_check()

    # --- perft --------------------------------------------------------------------------

    def perft_divide(self, depth: int) -> Dict[str, int]:  # type: ignore[override]
        """{uci: perft(depth - 1) below that move} for every legal move."""
        actions, counts = _core.State.perft_divide(self, depth)
        return {self.action_to_str(int(a)): int(n) for a, n in zip(actions, counts)}

    # --- python-chess -------------------------------------------------------------------

    def to_python_chess(self):
        """A chess.Board with the same start position and move stack (so repetitions carry over).
        Needs python-chess (pip install chess); 8x8 games only."""
        chess = _python_chess()
        if (self.FILES, self.RANKS) != (8, 8):
            raise TypeError(f"{type(self).__name__} has no python-chess equivalent")
        c = self.copy()
        actions = []
        while c.ply:
            actions.append(c.pop())
        board = chess.Board(c.fen(), chess960=self.GAME == "chess960")
        for a in reversed(actions):
            board.push(chess.Move.from_uci(c.action_to_str(a)))
            c.push(a)
        return board

    @classmethod
    def from_python_chess(cls, board):
        """A Chess (Chess960 for a chess960 board) with the board's root position and move stack."""
        _python_chess()
        if cls is ChessFamily:
            cls = Chess960 if board.chess960 else Chess
        if (cls.FILES, cls.RANKS) != (8, 8):
            raise TypeError(f"{cls.__name__} has no python-chess equivalent")
        obj = cls.__new__(cls)
        _core.State.__init__(obj, cls.GAME, board.root().fen())
        for move in board.move_stack:
            obj.push(move.uci())
        return obj

    # --- pictures -----------------------------------------------------------------------

    def _repr_svg_(self) -> str:
        return self.svg()

    def svg(self, size: int = 360, coordinates: bool = True) -> str:
        """An SVG picture of the board (last move and a king in check highlighted)."""
        files, ranks = self.FILES, self.RANKS
        margin = 0.5 if coordinates else 0.0
        sq = size / (max(files, ranks) + 2 * margin)
        width, height = (files + 2 * margin) * sq, (ranks + 2 * margin) * sq
        light, dark = "#f0d9b5", "#b58863"
        marks = set()
        if self.ply:
            c = self.copy()
            a = c.pop()
            f, t = _core.move_info(c, a)[:2]
            marks = {f, t}
        rows = self.board_rows()
        check_king = None
        if self.is_check():
            k = "K" if self.turn else "k"
            for r, row in enumerate(rows):
                if k in row:
                    check_king = (ranks - 1 - r) * files + row.index(k)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.2f} {height:.2f}">',
            f'<rect width="{width:.2f}" height="{height:.2f}" fill="#312e2b"/>',
        ]
        for r in range(ranks):
            for f in range(files):
                index = f + (ranks - 1 - r) * files
                x, y = (margin + f) * sq, (margin + r) * sq
                color = light if (f + (ranks - 1 - r)) % 2 else dark
                out.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{sq:.2f}" height="{sq:.2f}" fill="{color}"/>')
                if index in marks:
                    out.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{sq:.2f}" height="{sq:.2f}" '
                               f'fill="#cdd26a" fill-opacity="0.6"/>')
                if index == check_king:
                    out.append(f'<circle cx="{x + sq / 2:.2f}" cy="{y + sq / 2:.2f}" r="{sq * 0.48:.2f}" '
                               f'fill="#e03030" fill-opacity="0.7"/>')
                ch = rows[r][f]
                if ch != ".":
                    glyph = _GLYPHS.get(ch.lower(), ch)
                    fill, stroke = ("#ffffff", "#000000") if ch.isupper() else ("#000000", "#ffffff")
                    out.append(f'<text x="{x + sq / 2:.2f}" y="{y + sq * 0.80:.2f}" font-size="{sq * 0.82:.2f}" '
                               f'text-anchor="middle" fill="{fill}" stroke="{stroke}" '
                               f'stroke-width="{sq * 0.015:.2f}" font-family="DejaVu Sans, sans-serif" '
                               f'class="piece {ch}">{glyph}</text>')
        if coordinates:
            fs = sq * 0.3
            for f in range(files):
                x = (margin + f + 0.5) * sq
                for y in (margin * sq * 0.72, height - margin * sq * 0.28):
                    out.append(f'<text x="{x:.2f}" y="{y:.2f}" font-size="{fs:.2f}" text-anchor="middle" '
                               f'fill="#e0e0e0" font-family="sans-serif">{chr(97 + f)}</text>')
            for r in range(ranks):
                y = (margin + r + 0.62) * sq
                for x in (margin * sq * 0.5, width - margin * sq * 0.5):
                    out.append(f'<text x="{x:.2f}" y="{y:.2f}" font-size="{fs:.2f}" text-anchor="middle" '
                               f'fill="#e0e0e0" font-family="sans-serif">{ranks - r}</text>')
        out.append("</svg>")
        return "\n".join(out)


def _is_unicode(text: str) -> bool:
    """Whether a str encodes as UTF-8 (False for one with a lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _python_chess():
    try:
        import chess  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("this needs python-chess: pip install chess") from e
    return chess


class Chess(ChessFamily):
    """Standard chess.  ``Chess()`` is the start position; ``Chess(fen)`` any legal position."""

    GAME = "chess"

    def __init__(self, fen: Optional[str] = None):
        super().__init__(self.GAME, fen)


class Chess960(ChessFamily):
    """Fischer random chess: ``Chess960(position)`` with the start position number 0..959
    (Scharnagl numbering, 518 is the standard array), or from a FEN: ``Chess960(fen=...)`` or
    ``Chess960("<fen>")``; castling rights in FEN may be KQkq, X-FEN or Shredder-FEN letters;
    fen() writes X-FEN."""

    GAME = "chess960"

    def __init__(self, position: Union[int, str] = 518, fen: Optional[str] = None):
        if fen is None:
            fen = position if isinstance(position, str) else _core.chess960_fen(position)
        super().__init__(self.GAME, fen)

    def __repr__(self) -> str:
        return f"Chess960(fen={self.fen()!r})"


def chess960_fen(position: int) -> str:
    """FEN of Chess960 start position 0..959 (518 = the standard array)."""
    return _core.chess960_fen(position)



registry.register(registry.GameInfo(
    name=Chess.GAME, cls=Chess, family="chess", from_text=lambda text, size, flags: Chess(text),
    san=True, uci=True, openings="openings_chess.txt",
    annotator="mavgame.annotators.chess:chess_annotator", annotator_options={"nodes": 20_000},
    ood_placements="mavgame.model.ood:random_chess_position_set"))
registry.register(registry.GameInfo(
    name=Chess960.GAME, cls=Chess960, family="chess", from_text=lambda text, size, flags: Chess960(fen=text),
    flags={"chess960": _core.FLAG_CHESS960}, san=True, pgn_variant="Chess960", uci=True, uci_chess960=True,
    start_position=_core.chess960_fen, start_positions=960, start_prefix="960-",
    annotator="mavgame.annotators.chess:chess_annotator", annotator_options={"nodes": 20_000}))


__all__ = ["ChessFamily", "Chess", "Chess960", "Outcome", "chess960_fen", "WHITE", "BLACK"]
