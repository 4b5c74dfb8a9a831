"""The Connect Four annotator of the MAV data pipeline: the perfect solver (GameInfo.annotator of
connect_four)."""
from __future__ import annotations

from typing import Any, Dict

from . import register_annotator


def connect_four_annotator(options: Dict[str, Any]):
    """The perfect Connect Four solver (mavgame._core.C4Solver, with the shipped opening book when the package
    has one): values 1 / 0.5 / 0 for a won / drawn / lost move, the best move the fastest win (slowest loss),
    ties to the most central column.

    Options: ``max_seconds`` / ``max_nodes`` per position (0: no limit); a position whose solve does not
    finish within the budget gets no annotation (None) and is left out of the data; ``tt_log2``. Use
    ``max_nodes`` for data that is reproducible on any machine (a time budget depends on its speed).

    ``exact_plies`` (default -1: none): positions with at most that many stones are solved without a budget,
    by a second solver with its own table, so that every one of them is annotated and its annotation depends
    on the position alone (never on what the budgeted solver's table holds, nor on which positions were
    solved before).  ``annotate.cacheable(state)`` says which positions these are: the data generator keeps
    their annotations in a persistent cache (they are the expensive ones: seconds each from 8 to 10 stones
    without a deeper book, and minutes below 8 stones without the book of ply 8).

    ``weak`` (default 0): 1 values every column by a weak solve (win / draw / loss is all the values
    need) and finds the same best move by exact work on the columns of the best value only
    (``ConnectFour.solve(weak=True, exact_best=True)``): the annotations are identical to those of
    ``weak=0`` (tests/test_c4_generation.py checks it), and data generation is 1.5-1.7x as fast
    (docs/model.md, "Faster annotation"; ``tt_log2=24`` adds some 10%).  Under a budget
    (``max_nodes``) the two count nodes differently, so a budgeted run may leave out other positions.
    """
    from ..games.connect_four import ConnectFour, solver as new_solver
    tt_log2 = int(options.get("tt_log2", 22))
    solver = new_solver(tt_log2)
    max_s = float(options.get("max_seconds", 0.0))
    max_n = int(options.get("max_nodes", 0))
    exact_plies = int(options.get("exact_plies", -1))
    exact = new_solver(tt_log2) if exact_plies >= 0 else None
    weak = options.get("weak", 0)
    if weak not in (0, 1, "0", "1"):
        raise ValueError(f"connect_four annotator option weak must be 0 or 1, got {weak!r}")
    weak = bool(int(weak))

    def cacheable(state) -> bool:
        return exact is not None and state.ply <= exact_plies

    def annotate(state):
        board = ConnectFour(state.text())
        if cacheable(state):
            res = board.solve(solver=exact, weak=weak, exact_best=weak)
        else:
            res = board.solve(max_nodes=max_n, max_seconds=max_s, solver=solver, weak=weak, exact_best=weak)
        legal = state.legal_moves
        if not res.complete or sorted(res.move_scores) != sorted(legal):
            return None
        vals = {m: 1.0 if sc > 0 else 0.0 if sc < 0 else 0.5 for m, sc in sorted(res.move_scores.items())}
        return vals, res.central_best_move()
    annotate.reset = solver.clear  # type: ignore[attr-defined]
    annotate.cacheable = cacheable  # type: ignore[attr-defined]
    return annotate


__all__ = ["connect_four_annotator"]


# a per-position budget that keeps data generation finite (an unbudgeted solve of an opening position
# can take many minutes)
register_annotator("connect_four", connect_four_annotator, {"max_nodes": 1_000_000})
