"""The exhaustive annotator of the MAV data pipeline: exact values by negamax, for tiny games (GameInfo.annotator
of tictactoe)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import register_annotator


def exhaustive_annotator(options: Dict[str, Any]):
    """Exact values by exhaustive negamax with memoisation (tiny games such as tic-tac-toe only;
    :class:`mavgame.games.negamax.NegamaxSolver`, the minimax agent's search).

    Values: 1 win, 0.5 draw, 0 loss for the mover; the best move wins fastest (or loses slowest), the
    first such move in legal order."""
    from ..games.negamax import NegamaxSolver
    solver = NegamaxSolver()

    def annotate(state) -> Tuple[Dict[str, float], Optional[str]]:
        vals, best, best_s = {}, None, None
        for a, c in solver.action_values(state).items():
            mv = state.action_to_str(a)
            vals[mv] = 1.0 if c > 0 else 0.0 if c < 0 else 0.5
            if best_s is None or c > best_s:
                best, best_s = mv, c
        return vals, best
    return annotate


__all__ = ["exhaustive_annotator"]


# the games this annotator serves, with their default per-position budgets
register_annotator("tictactoe", exhaustive_annotator, None)
