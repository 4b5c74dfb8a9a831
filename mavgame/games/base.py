"""The Python API shared by every game class (python-chess style names on top of mavgame._core.State)."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import List, Optional

from .. import _core

# enum mg_result -> python-chess style winner (True: first player / White, False: second, None: draw)
_WINNER = {1: True, 2: False, 3: None}


class _StrEnum(str, enum.Enum):
    """A str enum that prints as its value (``str()`` and f-strings give "checkmate")."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str.__str__(self), spec)


# The members come from the C core's enum mg_termination (one list, in csrc/game.c): CHECKMATE,
# STALEMATE, INSUFFICIENT_MATERIAL, FIFTY_MOVES, THREEFOLD_REPETITION, CONNECTED (four or three in a row,
# a Hex chain), BOARD_FULL.  Each member is also the str of its value, so ``outcome.termination ==
# "checkmate"`` keeps working.
Termination = _StrEnum("Termination", [(n.upper(), n) for n in _core.terminations() if n != "none"],
                       module=__name__, qualname="Termination")
Termination.__doc__ = """How a game ended (python-chess's ``chess.Termination``), a str enum: ``Termination.CHECKMATE ==
"checkmate"``.  Members: CHECKMATE, STALEMATE, INSUFFICIENT_MATERIAL, FIFTY_MOVES, THREEFOLD_REPETITION,
CONNECTED (four or three in a row, a Hex chain), BOARD_FULL."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is True (first player: White, 'x'), False (second player) or None
    (draw); ``termination`` is a :data:`Termination` (a str enum: CHECKMATE, STALEMATE,
    INSUFFICIENT_MATERIAL, FIFTY_MOVES, THREEFOLD_REPETITION, CONNECTED, BOARD_FULL)."""

    termination: "Termination"
    winner: Optional[bool]

    def result(self) -> str:
        """"1-0", "0-1" or "1/2-1/2" (as python-chess's Outcome.result())."""
        return "1/2-1/2" if self.winner is None else ("1-0" if self.winner else "0-1")


class GameBase(_core.State):
    """Shared methods of the game classes (ChessFamily, ConnectFour, Hex, TicTacToe).

    ``State.outcome(game)`` still gives the core's raw ``(result, reason)`` tuple.

    Threads (as ``_core.State``): a game may be read from several threads (every method runs with the GIL,
    or on a private copy of the position where it releases it: perft, playouts, solvers); pushes and pops
    from two threads are not coordinated and interleave, so give each thread its own ``copy()`` to play on
    (docs/architecture.md, "Threads: what may be shared")."""

    @property
    def turn(self) -> bool:
        """True if the first player (White, 'x') is to move, as python-chess's ``chess.WHITE``."""
        return self.to_move == 0

    def move_stack(self) -> List[str]:
        """Move strings of the moves pushed since construction, oldest first (each written in the
        position where it was played)."""
        c = self.copy()
        out = []
        while c.ply:
            a = c.pop()
            out.append(c.action_to_str(a))
        return out[::-1]

    def peek(self) -> Optional[str]:
        """The last pushed move as a string, None if there is none."""
        if not self.ply:
            return None
        c = self.copy()
        return c.action_to_str(c.pop())

    def outcome(self) -> Optional[Outcome]:  # type: ignore[override]
        """The Outcome if the game is over by the rules, else None (python-chess style)."""
        result, termination = _core.State.outcome(self)
        if result == 0:
            return None
        return Outcome(Termination(termination), _WINNER.get(result))

    def is_game_over(self) -> bool:
        return self.is_terminal()
