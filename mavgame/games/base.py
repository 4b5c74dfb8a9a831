"""The Python API shared by every game class (python-chess style names on top of mavgame._core.State)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from .. import _core

# enum mg_result -> python-chess style winner (True: first player / White, False: second, None: draw)
_WINNER = {1: True, 2: False, 3: None}


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner`` is True (first player: White, 'x'), False (second player) or None
    (draw); ``termination`` is one of "checkmate", "stalemate", "insufficient_material", "fifty_moves",
    "threefold_repetition", "connected" (four or three in a row, a Hex chain) or "board_full"."""

    termination: str
    winner: Optional[bool]

    def result(self) -> str:
        """"1-0", "0-1" or "1/2-1/2" (as python-chess's Outcome.result())."""
        return "1/2-1/2" if self.winner is None else ("1-0" if self.winner else "0-1")


class GameBase(_core.State):
    """Shared methods of the game classes (ChessFamily, ConnectFour, Hex, TicTacToe).

    ``State.outcome(game)`` still gives the core's raw ``(result, reason)`` tuple."""

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
        return Outcome(termination, _WINNER.get(result))

    def is_game_over(self) -> bool:
        return self.is_terminal()
