"""The chess annotator of the MAV data pipeline (GameInfo.annotator of chess and Chess960): Stockfish, or
any UCI engine, through :class:`mavgame.engines.annotate.Annotator` (MultiPV over all legal moves, centipawns to
win probability)."""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

from . import register_annotator


def chess_annotator(options: Dict) -> Callable:
    """``annotate(state) -> ({move: value}, best move)`` with Stockfish (or any UCI engine) through
    :class:`mavgame.engines.annotate.Annotator`, for :func:`mavgame.annotators.make_annotator`; options: ``engine``,
    ``nodes``, ``movetime``, ``depth`` (default: 20000 nodes). ``annotate.close()`` ends the engine."""
    from ..engines.annotate import Annotator
    kw = {k: options[k] for k in ("nodes", "movetime", "depth") if options.get(k) is not None}
    if not kw:
        kw["nodes"] = 20000
    ann = Annotator(options.get("engine", "stockfish"), **kw)

    def annotate(state) -> Tuple[Dict[str, float], Optional[str]]:
        a = ann.annotate(state.text())
        return {m: float(v) for m, v in a.values.items()}, a.best
    annotate.close = ann.close  # type: ignore[attr-defined]
    return annotate


__all__ = ["chess_annotator"]


# the games this annotator serves, with their default per-position budgets
register_annotator("chess", chess_annotator, {"nodes": 20_000})
register_annotator("chess960", chess_annotator, {"nodes": 20_000})
