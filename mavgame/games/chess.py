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

>>> len(board.legal_moves), "g1f3" in board.legal_moves   # python-chess's names: a live view of Moves
(29, True)
>>> move = next(m for m in board.legal_moves if m == "g1f3")
>>> move.uci(), move.from_square, move.to_square, move.promotion, board.san(move)
('g1f3', 6, 21, None, 'Nf3')
>>> board.outcome() is None, board.is_check(), board.piece_at(4), board.move_stack
(True, False, 'K', ['e2e4', 'e7e5'])

Moves go in as UCI strings (``"e2e4"``, ``"e7e8q"``), SAN (``push_san``) or integer actions
(``from | to << 6 | promo << 12``, see ``csrc/games/chess.h``), and come out (``legal_moves``,
``move_stack``, ``peek()``) as :class:`Move`: a str, the UCI text itself, with python-chess's
``uci()``, ``from_square``, ``to_square`` and ``promotion``.  Standard chess writes castling
as the king's two-square move (``e1g1``) and also accepts king-takes-rook (``e1h1``); Chess960
uses king-takes-rook only (as python-chess).

Game end: ``outcome()``, ``is_game_over()`` and ``result()`` follow python-chess (the automatic draws
at 75 moves and fivefold repetition; the fifty-move rule and threefold repetition only with
``claim_draw=True``); ``is_terminal()``, ``State.outcome(board)`` and every search also end the game
where a draw can be claimed (docs/binding.md, "python-chess names").

:class:`ChessFamily` is the shared base of the chess-like games (chess, Chess960, Gardner 5x5
minichess): everything in it is generic over ``FILES`` x ``RANKS`` and the game's FEN-like text.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from .. import _core
from . import registry
from ..errors import InvalidMoveError
from .base import _CLAIMABLE, _WINNER, GameBase, Outcome, Termination

_legal_move_objects = _core.legal_move_objects

MoveArg = Union[str, int]   # what the methods take: a move string (a Move is one) or an int action

WHITE = True
BLACK = False
# python-chess's piece types (chess.PAWN ... chess.KING): Move.promotion and Piece.piece_type
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(1, 7)
_PIECE_LETTERS = " pnbrqk"


class _MoveCache(dict):
    """{move string: Move} of one Move class, each Move made on its first use: a Move is immutable (a str with no
    instance attributes), so ``list(board.legal_moves)`` hands out the same objects every time and makes none but
    the list.  Bounded: the keys are the texts the core writes for legal moves (at most a few per action id)."""

    __slots__ = ("_kind",)

    def __init__(self, kind: type):
        super().__init__()
        self._kind = kind

    def __missing__(self, text: str) -> "Move":
        move = self[text] = self._kind(text)
        return move


class Move(str):
    """A chess-family move as python-chess's ``chess.Move``: the UCI string itself (a ``str``: equal to
    ``"e2e4"`` and hashed as it, so it is a dict key and ``push()`` argument like any move string, and it
    prints and serialises as the string), with python-chess's attributes:

    - ``uci()``: the UCI text (a plain str);
    - ``from_square``, ``to_square``: square indices ``file + FILES * rank`` (a1 = 0; python-chess's
      ``chess.E2`` etc. on the 8x8 board; standard chess's castling is the king's two-square move, Chess960's
      king-takes-rook, as python-chess writes them);
    - ``promotion``: python-chess's piece type (``chess.QUEEN`` is 5, the module's ``QUEEN``) or None;
      ``drop`` is always None.

    Unlike ``chess.Move`` it does not compare equal to a ``chess.Move`` (compare ``m.uci()``), and its
    ``repr`` is the string's.  ``Move.from_uci("e2e4")`` checks the notation only (the board checks
    legality)."""

    __slots__ = ()
    FILES = 8
    RANKS = 8
    drop = None
    _cache: _MoveCache   # this class's Moves by their text (every subclass gets its own)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._cache = _MoveCache(cls)

    def uci(self) -> str:
        """The move in UCI notation (a plain str)."""
        return str.__str__(self)

    def _square(self, i: int) -> int:
        return (ord(self[i]) - 97) + (ord(self[i + 1]) - 49) * self.FILES

    @property
    def from_square(self) -> int:
        return self._square(0)

    @property
    def to_square(self) -> int:
        return self._square(2)

    @property
    def promotion(self) -> Optional[int]:
        return _PIECE_LETTERS.index(self[4].lower()) if len(self) > 4 else None

    @classmethod
    def from_uci(cls, uci: str) -> "Move":
        """The Move for UCI text (python-chess's ``Move.from_uci``); InvalidMoveError if it is not a move
        in the notation (legality is the board's: ``board.is_legal``, ``push``)."""
        if not isinstance(uci, str):
            raise TypeError(f"from_uci takes a str, not {type(uci).__name__}")
        files = "abcdefgh"[:cls.FILES]
        ranks = "12345678"[:cls.RANKS]
        if (len(uci) not in (4, 5) or uci[0] not in files or uci[1] not in ranks or uci[2] not in files
                or uci[3] not in ranks or (len(uci) == 5 and uci[4] not in "nbrq") or uci[:2] == uci[2:4]):
            raise InvalidMoveError(f"invalid uci: {uci!r}")
        return cls(uci)


Move._cache = _MoveCache(Move)


class _GardnerMove(Move):
    __slots__ = ()
    FILES = 5
    RANKS = 5


_UNICODE_PIECES = dict(zip("RNBQKPrnbqkp", "\u2656\u2658\u2657\u2655\u2654\u2659\u265c\u265e\u265d\u265b\u265a\u265f"))


class Piece(str):
    """A piece as python-chess's ``chess.Piece``: its letter itself (a ``str``: ``board.piece_at(4) == "K"``),
    with ``symbol()``, ``piece_type`` (``PAWN`` 1 .. ``KING`` 6, python-chess's numbers), ``color``
    (True: White) and ``unicode_symbol()``."""

    __slots__ = ()

    def symbol(self) -> str:
        return str.__str__(self)

    @property
    def piece_type(self) -> int:
        return _PIECE_LETTERS.index(self.lower())

    @property
    def color(self) -> bool:
        return self.isupper()

    def unicode_symbol(self, *, invert_color: bool = False) -> str:
        return _UNICODE_PIECES[self.swapcase() if invert_color else str.__str__(self)]

    @classmethod
    def from_symbol(cls, symbol: str) -> "Piece":
        if not isinstance(symbol, str) or len(symbol) != 1 or symbol.lower() not in _PIECE_LETTERS[1:]:
            raise ValueError(f"invalid piece symbol {symbol!r}")
        return cls(symbol)


# Unicode chess glyphs for the SVG board (filled shapes for both sides, coloured by fill).
_GLYPHS = {"k": "\u265a", "q": "\u265b", "r": "\u265c", "b": "\u265d", "n": "\u265e", "p": "\u265f"}


class ChessFamily(GameBase):
    """Base class of the chess-like games; subclasses set GAME (registry name), FILES and RANKS.

    The hot methods (push, pop, legal_actions, perft, copy) are the C methods of
    mavgame._core.State.  ``push`` takes a UCI string (a :class:`Move` is one) or an int action and raises
    :class:`~mavgame.InvalidMoveError` (malformed) or :class:`~mavgame.IllegalMoveError` (illegal),
    both ValueError, naming the move and the FEN; the state is then unchanged.
    ``push()`` and ``pop()`` return the action played or taken back (python-chess's return None and the
    Move).  ``legal_moves``, ``move_stack`` and ``peek()`` give :class:`Move` objects.  ``State.outcome(board)``
    still gives the raw ``(result, termination)`` pair of the generic interface (the search's rule).
    """

    GAME = "chess"
    FILES = 8
    RANKS = 8
    _MOVE = Move

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

    @property
    def halfmove_clock(self) -> int:
        """The halfmove clock of the FEN (plies since the last capture or pawn move), as python-chess's."""
        return int(self.text().split()[4])

    @property
    def fullmove_number(self) -> int:
        """The move number of the FEN (1 at the start, +1 after each Black move), as python-chess's.  (The
        ``ply`` attribute is the number of moves pushed since construction; python-chess's ``ply()`` method
        is ``2 * (fullmove_number - 1) + (not turn)``.)"""
        return int(self.text().split()[5])

    def piece_at(self, square: Union[int, str]) -> Optional[Piece]:
        """The :class:`Piece` on a square (python-chess's ``piece_at``; a str, its letter: "K", "p"), None if
        empty.  The square is an index ``file + rank * FILES`` (python-chess's ``chess.E1`` is 4) or a name
        ("e1")."""
        if isinstance(square, str):
            sq = self._square_index(square)
        else:
            sq = int(square)
            if not 0 <= sq < self.FILES * self.RANKS:
                raise ValueError(f"square {square} is off the {self.FILES}x{self.RANKS} board")
        ch = self.board_rows()[self.RANKS - 1 - sq // self.FILES][sq % self.FILES]
        return None if ch == "." else Piece(ch)

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

    def san(self, move: MoveArg) -> str:
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

    def uci(self, move: MoveArg) -> str:
        """UCI string of a legal move."""
        return self.action_to_str(self.parse_move(move))

    def _move_list(self) -> List[Move]:
        """The legal moves as :class:`Move` objects, in move generation order: the Move class's cached Move of
        each move text, looked up in C (no Move, no str made for a move seen before)."""
        return _legal_move_objects(self, self._MOVE._cache)

    def legal_sans(self) -> List[str]:
        """SAN of every legal move, in move generation order."""
        return [_core.san(self, int(a)) for a in self.legal_actions()]

    def _move_names(self) -> List[str]:
        return self.legal_sans()

    def move_info(self, move: MoveArg) -> dict:
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

    def is_capture(self, move: MoveArg) -> bool:
        return bool(_core.move_info(self, self.parse_move(move))[3])

    def is_castling(self, move: MoveArg) -> bool:
        return bool(_core.move_info(self, self.parse_move(move))[5])

    # --- status -------------------------------------------------------------------------

    def is_check(self) -> bool:
        return _core.is_check(self)

    def is_checkmate(self) -> bool:
        return _core.State.outcome(self)[1] == "checkmate"

    def is_stalemate(self) -> bool:
        return len(self.legal_actions()) == 0 and not self.is_check()

    def is_fifty_moves(self) -> bool:
        """A halfmove clock of at least 100 in a position with legal moves (python-chess's)."""
        return self.halfmove_clock >= 100 and len(self.legal_actions()) > 0

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
        """A Chess (Chess960 for a chess960 board) with the board's root position and move stack.

        ``ChessFamily.from_python_chess`` and ``Chess.from_python_chess`` follow the board's ``chess960``
        flag; ``Chess960.from_python_chess`` gives a Chess960 game for any board (a standard board's castling
        moves become king-takes-rook)."""
        chess = _python_chess()
        if not isinstance(board, chess.Board):
            raise TypeError(f"from_python_chess takes a chess.Board, not {type(board).__name__}")
        if cls in (ChessFamily, Chess):
            cls = Chess960 if board.chess960 else Chess
        if (cls.FILES, cls.RANKS) != (8, 8):
            raise TypeError(f"{cls.__name__} has no python-chess equivalent")
        chess960 = cls.GAME == "chess960"
        root = board.root()
        obj = cls.__new__(cls)
        _core.State.__init__(obj, cls.GAME, root.fen())
        for move in board.move_stack:
            obj.push(root.uci(move, chess960=chess960))   # the castling notation of the target game
            root.push(move)
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


class _ChessRules(ChessFamily):
    """python-chess's end of game and draw claims, for Chess and Chess960 (docs/binding.md,
    "python-chess names").

    ``outcome()``, ``is_game_over()`` and ``result()`` end the game as python-chess's do: checkmate,
    insufficient material, stalemate and the automatic draws (the seventy-five-move rule,
    fivefold repetition); with ``claim_draw=True`` also a draw the player to move can claim
    (``can_claim_fifty_moves()``, ``can_claim_threefold_repetition()``, which also look one legal move
    ahead).  ``is_terminal()``, ``State.outcome(board)``, ``State.result(board)``, ``returns()``,
    the OpenSpiel adapter and every search (MCTS, solvers, alpha-beta, leagues, the MAV data) follow the
    search's rule instead: the game also ends where a draw can be claimed in the position itself (halfmove
    clock 100, the position's third occurrence), as an engine claims what it can."""

    def outcome(self, *, claim_draw: bool = False) -> Optional[Outcome]:  # type: ignore[override]
        """python-chess's ``outcome(claim_draw=False)``: the Outcome of a game over by checkmate, insufficient
        material, stalemate, the seventy-five-move rule or fivefold repetition; with ``claim_draw`` also by
        a claimable fifty-move or threefold-repetition draw; None otherwise."""
        result, termination = _core.State.outcome(self)   # the search's rule, in python-chess's precedence
        if result != 0 and termination not in _CLAIMABLE:
            return Outcome(Termination(termination), _WINNER.get(result))
        if claim_draw:
            _, _, fifty, threefold = _core.chess_draw_rules(self, True)
            if fifty:
                return Outcome(Termination.FIFTY_MOVES, None)
            if threefold:
                return Outcome(Termination.THREEFOLD_REPETITION, None)
        return None

    def is_insufficient_material(self) -> bool:
        """Neither side can mate by material (python-chess's ``is_insufficient_material``)."""
        return _core.chess_draw_rules(self)[0]

    def is_repetition(self, count: int = 3) -> bool:
        """The position has occurred ``count`` times (python-chess's ``is_repetition``: since construction,
        since the last capture, pawn move, loss of castling rights or move from a position with a legal en
        passant capture; a repetition the next move could make does not count)."""
        return _core.chess_draw_rules(self)[1] >= count

    def is_seventyfive_moves(self) -> bool:
        """The automatic draw: a halfmove clock of at least 150 in a position with legal moves."""
        return self.halfmove_clock >= 150 and len(self.legal_actions()) > 0

    def is_fivefold_repetition(self) -> bool:
        """The automatic draw: the position's fifth occurrence (``is_repetition(5)``)."""
        return self.is_repetition(5)

    def can_claim_fifty_moves(self) -> bool:
        """The player to move can claim the fifty-move rule: a halfmove clock of at least 100, or a legal move
        that is no capture or pawn move reaches it (python-chess's)."""
        return _core.chess_draw_rules(self, True)[2]

    def can_claim_threefold_repetition(self) -> bool:
        """The player to move can claim threefold repetition: the position occurred three times, or a legal
        move reaches a position's third occurrence (python-chess's)."""
        return _core.chess_draw_rules(self, True)[3]

    def can_claim_draw(self) -> bool:
        """``can_claim_fifty_moves() or can_claim_threefold_repetition()`` (python-chess's)."""
        _, _, fifty, threefold = _core.chess_draw_rules(self, True)
        return fifty or threefold


class Chess(_ChessRules):
    """Standard chess.  ``Chess()`` is the start position; ``Chess(fen)`` any legal position."""

    GAME = "chess"

    def __init__(self, fen: Optional[str] = None):
        super().__init__(self.GAME, fen)


class Chess960(_ChessRules):
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
    san=True, uci=True, openings="openings_chess.txt"))
registry.register(registry.GameInfo(
    name=Chess960.GAME, cls=Chess960, family="chess", from_text=lambda text, size, flags: Chess960(fen=text),
    flags={"chess960": _core.FLAG_CHESS960}, san=True, pgn_variant="Chess960", uci=True, uci_chess960=True,
    start_position=_core.chess960_fen, start_positions=960, start_prefix="960-"))


__all__ = ["ChessFamily", "Chess", "Chess960", "Move", "Piece", "Outcome", "chess960_fen", "WHITE", "BLACK",
           "PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"]
