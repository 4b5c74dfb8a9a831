"""The Python API shared by every game class (python-chess style names on top of mavgame._core.State)."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterator, List, Optional

from .. import _core

# enum mg_result -> python-chess style winner (True: first player / White, False: second, None: draw)
_WINNER = {1: True, 2: False, 3: None}


class _StrEnum(str, enum.Enum):
    """A str enum that prints as its value (``str()`` and f-strings give "checkmate")."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str.__str__(self), spec)


# The members come from the C core's enum mg_termination (one list, in csrc/game.c), in python-chess's order:
# CHECKMATE, STALEMATE, INSUFFICIENT_MATERIAL, SEVENTYFIVE_MOVES, FIVEFOLD_REPETITION, FIFTY_MOVES,
# THREEFOLD_REPETITION, then CONNECTED (four or three in a row, a Hex chain) and BOARD_FULL.  Each member is
# also the str of its value, so ``outcome.termination == "checkmate"`` keeps working.
Termination = _StrEnum("Termination", [(n.upper(), n) for n in _core.terminations() if n != "none"],
                       module=__name__, qualname="Termination")
Termination.__doc__ = """How a game ended (python-chess's ``chess.Termination``), a str enum: ``Termination.CHECKMATE ==
"checkmate"``.  Members: CHECKMATE, STALEMATE, INSUFFICIENT_MATERIAL, SEVENTYFIVE_MOVES and FIVEFOLD_REPETITION
(chess's automatic draws), FIFTY_MOVES and THREEFOLD_REPETITION (claimed in chess, automatic in Gardner),
CONNECTED (four or three in a row, a Hex chain), BOARD_FULL."""

# Draws that python-chess's outcome() leaves to a claim (chess and Chess960; Gardner's rules end the game there).
_CLAIMABLE = ("fifty_moves", "threefold_repetition")


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is True (first player: White, 'x'), False (second player) or None
    (draw); ``termination`` is a :data:`Termination` (a str enum: CHECKMATE, STALEMATE,
    INSUFFICIENT_MATERIAL, SEVENTYFIVE_MOVES, FIVEFOLD_REPETITION, FIFTY_MOVES, THREEFOLD_REPETITION,
    CONNECTED, BOARD_FULL)."""

    termination: "Termination"
    winner: Optional[bool]

    def result(self) -> str:
        """"1-0", "0-1" or "1/2-1/2" (as python-chess's Outcome.result())."""
        return "1/2-1/2" if self.winner is None else ("1-0" if self.winner else "0-1")


# The C getter of State.legal_moves (a new list of move strings), under the game classes' live view.
_move_strings = _core.State.legal_moves.__get__


class LegalMoves:
    """The legal moves of a game, as python-chess's ``board.legal_moves`` (a ``LegalMoveGenerator``).

    A live view of the board's current position, not a list: ``for m in board.legal_moves``, ``len()``,
    ``m in board.legal_moves``, ``count()``, ``any()`` and truth all ask the board when they run (iteration
    takes the moves of the position it starts in, so pushing and popping inside the loop is safe).  The
    moves are the game's move strings, in move generation order: for the chess family
    :class:`mavgame.games.chess.Move` (a str, the UCI text, with python-chess's ``uci()``, ``from_square``,
    ``to_square``, ``promotion``), plain str for the other games.  ``in`` takes a move string (exactly as the
    board writes it: ``"e1g1"``, not the also accepted ``"e1h1"``) or a python-chess ``chess.Move``; an int
    action is tested with ``board.is_legal(action)``.  Not indexable (as python-chess's):
    ``list(board.legal_moves)`` for a list.  The raw :class:`mavgame.State`'s ``legal_moves`` is a list."""

    __slots__ = ("_board",)

    def __init__(self, board: "GameBase"):
        self._board = board

    def __iter__(self) -> Iterator[str]:
        return iter(self._board._move_list())

    def __len__(self) -> int:
        return self._board.num_legal_actions()

    def __bool__(self) -> bool:
        return self._board.num_legal_actions() > 0

    def count(self) -> int:
        """The number of legal moves (python-chess's ``legal_moves.count()``)."""
        return len(self)

    def any(self) -> bool:
        """Whether there is a legal move (python-chess's ``legal_moves.any()``)."""
        return bool(self)

    def __contains__(self, move) -> bool:
        if not isinstance(move, str) and callable(getattr(move, "uci", None)):
            move = move.uci()   # a python-chess chess.Move
        if not isinstance(move, str):
            return False
        board = self._board
        if not board.is_legal(move):
            return False
        return board.action_to_str(board.parse_move(move)) == move

    def __repr__(self) -> str:
        return f"<LegalMoves at {id(self):#x} ({', '.join(self._board._move_names())})>"


class GameBase(_core.State):
    """Shared methods of the game classes (ChessFamily, ConnectFour, Hex, TicTacToe): python-chess's names
    (``legal_moves``, ``move_stack``, ``peek()``, ``turn``, ``outcome()``, ``is_game_over()``, ``result()``;
    docs/binding.md, "python-chess names").

    ``State.outcome(game)`` still gives the core's raw ``(result, reason)`` tuple: the search's terminal
    rule, which ``is_terminal()`` follows (for chess it also ends the game where a draw can be claimed).

    Threads (as ``_core.State``): a game may be read from several threads (every method runs with the GIL,
    or on a private copy of the position where it releases it: perft, playouts, solvers); pushes and pops
    from two threads are not coordinated and interleave, so give each thread its own ``copy()`` to play on
    (docs/binding.md, "Threads: what may be shared")."""

    # The type of the game's moves in legal_moves, move_stack and peek() (None: the plain move strings).
    _MOVE: Optional[type] = None

    @property
    def turn(self) -> bool:
        """True if the first player (White, 'x') is to move, as python-chess's ``chess.WHITE``."""
        return self.to_move == 0

    @property
    def legal_moves(self) -> LegalMoves:  # type: ignore[override]
        """The legal moves, a live :class:`LegalMoves` view (python-chess's ``board.legal_moves``)."""
        return LegalMoves(self)

    def _move_list(self) -> list:
        moves = _move_strings(self)
        kind = self._MOVE
        return moves if kind is None else [kind(m) for m in moves]

    def _move_names(self) -> List[str]:
        """The legal moves as LegalMoves' repr shows them (SAN for the chess family)."""
        return _move_strings(self)

    @property
    def move_stack(self) -> list:
        """The moves pushed since construction, oldest first, as python-chess's ``board.move_stack`` (a new
        list; each move written in the position where it was played)."""
        c = self.copy()
        out = []
        while c.ply:
            a = c.pop()
            out.append(c.action_to_str(a))
        kind = self._MOVE
        return out[::-1] if kind is None else [kind(m) for m in reversed(out)]

    def peek(self):
        """The last pushed move (python-chess's ``peek()``); IndexError if no move was pushed."""
        if not self.ply:
            raise IndexError("peek at a game with no moves pushed")
        c = self.copy()
        m = c.action_to_str(c.pop())
        return m if self._MOVE is None else self._MOVE(m)

    def outcome(self, *, claim_draw: bool = False) -> Optional[Outcome]:  # type: ignore[override]
        """The Outcome if the game is over by its rules, else None (python-chess's ``outcome()``).

        Only chess and Chess960 have draws a player claims (the fifty-move rule, threefold repetition: see
        :meth:`mavgame.Chess.outcome`); in the other games ``claim_draw`` changes nothing, and the outcome
        is the search's terminal rule (``is_terminal()``)."""
        result, termination = _core.State.outcome(self)
        if result == 0:
            return None
        return Outcome(Termination(termination), _WINNER.get(result))

    def is_game_over(self, *, claim_draw: bool = False) -> bool:
        """Whether :meth:`outcome` (with the same ``claim_draw``) is not None, as python-chess's."""
        return self.outcome(claim_draw=claim_draw) is not None

    def result(self, *, claim_draw: bool = False) -> str:  # type: ignore[override]
        """"1-0", "0-1", "1/2-1/2" from :meth:`outcome` (with the same ``claim_draw``), "*" while it goes on
        (python-chess's ``result()``; ``State.result(game)`` is the search's terminal rule)."""
        o = self.outcome(claim_draw=claim_draw)
        return o.result() if o is not None else "*"
