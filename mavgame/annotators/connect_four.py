"""The Connect Four annotator of the MAV data pipeline: the perfect solver (GameInfo.annotator of
connect_four)."""
from __future__ import annotations

from typing import Any, Dict


def connect_four_annotator(options: Dict[str, Any]):
    """The perfect Connect Four solver (mavgame._core.C4Solver): values 1 / 0.5 / 0 for a won / drawn / lost
    move, the best move the fastest win (slowest loss), ties to the most central column.

    Options: ``max_seconds`` / ``max_nodes`` per position (0: no limit); a position whose solve does not
    finish within the budget gets no annotation (None) and is left out of the data; ``tt_log2``. Use
    ``max_nodes`` for data that is reproducible on any machine (a time budget depends on its speed).
    """
    from ..games.connect_four import ConnectFour, solver as new_solver
    solver = new_solver(int(options.get("tt_log2", 22)))
    max_s = float(options.get("max_seconds", 0.0))
    max_n = int(options.get("max_nodes", 0))

    def annotate(state):
        res = ConnectFour(state.text()).solve(max_nodes=max_n, max_seconds=max_s, solver=solver)
        legal = state.legal_moves()
        if not res.complete or sorted(res.move_scores) != sorted(legal):
            return None
        vals = {m: 1.0 if sc > 0 else 0.0 if sc < 0 else 0.5 for m, sc in sorted(res.move_scores.items())}
        return vals, res.central_best_move()
    annotate.reset = solver.clear
    return annotate


__all__ = ["connect_four_annotator"]
