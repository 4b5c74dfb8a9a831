"""Exact negamax over the generic game interface, for tiny games (tic-tac-toe, small Hex boards).

One implementation serves the minimax agent (``agents.MinimaxAgent``) and the exhaustive annotator
of the data tools (``datasets``): both need the exact value of every legal move, the fastest win
and the slowest loss preferred.

Scores are for the side to move: ``WIN - d`` for a win ``d`` plies from the position scored, 0 for a
draw, ``-(WIN - d)`` for a loss, so that a higher score is a faster win or a slower loss.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from .. import _core

__all__ = ["WIN", "NegamaxSolver", "NodeLimitError"]

WIN = 1000
_DRAW_RESULT = 3   # enum mg_result: draw


class NodeLimitError(RuntimeError):
    """The solver visited more positions than its ``max_nodes``."""


class NegamaxSolver:
    """Exact negamax with a memo of solved positions, kept across calls.

    ``max_nodes`` (None: no limit) bounds the positions solved over the solver's life: past it
    :class:`NodeLimitError` is raised (the game is too large for an exhaustive search)."""

    def __init__(self, max_nodes: Optional[int] = None):
        self.max_nodes = max_nodes
        self.nodes = 0
        self._memo: Dict[Tuple[int, str], int] = {}

    def clear(self) -> None:
        """Forget the solved positions (and the node count)."""
        self._memo.clear()
        self.nodes = 0

    def value(self, s) -> int:
        """Score of position ``s`` for its side to move (``s`` is left as it was)."""
        key = (s.hash, s.text())
        v = self._memo.get(key)
        if v is not None:
            return v
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise NodeLimitError(f"game {s.game!r} is too large (more than {self.max_nodes} positions)")
        result = _core.State.outcome(s)[0]   # the raw (result, termination) pair, for game classes too
        if result != 0:
            # a decided game: the player who just moved won, so the side to move lost
            v = 0 if result == _DRAW_RESULT else -WIN
        else:
            v = -2 * WIN
            for a in s.legal_actions().tolist():
                s.push(a)
                c = -self.value(s)
                s.pop()
                v = max(v, c - 1 if c > 0 else c + 1 if c < 0 else 0)   # one ply further away
        self._memo[key] = v
        return v

    def action_values(self, state) -> Dict[int, int]:
        """Score of each legal action of ``state`` for its side to move ({action: score}, in legal order)."""
        s = state.copy()
        out: Dict[int, int] = {}
        for a in s.legal_actions().tolist():
            s.push(a)
            out[a] = -self.value(s)
            s.pop()
        return out
