"""The Gardner annotator of the MAV data pipeline (GameInfo.annotator of gardner): Fairy-Stockfish
(``UCI_Variant`` = ``gardner``, :mod:`mavgame.engines.fairy`) through :class:`mavgame.engines.annotate.Annotator`. The values
cover mavgame's legal moves (the paper's rules: no bishop promotion)."""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

from . import register_annotator


def gardner_annotator(options: Dict) -> Callable:
    """``annotate(state) -> ({move: value}, best move)`` with Fairy-Stockfish (or the UCI engine named by
    ``engine``), for :func:`mavgame.annotators.make_annotator`; options: ``engine``, ``nodes``, ``movetime``,
    ``depth`` (default: 20000 nodes). ``annotate.close()`` ends the engine."""
    from ..engines.annotate import Annotator
    kw = {k: options[k] for k in ("nodes", "movetime", "depth") if options.get(k) is not None}
    if not kw:
        kw["nodes"] = 20000
    ann = Annotator(options.get("engine", "stockfish"), game="gardner", **kw)

    def annotate(state) -> Tuple[Dict[str, float], Optional[str]]:
        a = ann.annotate(state.text())
        return {m: float(v) for m, v in a.values.items()}, a.best
    annotate.close = ann.close  # type: ignore[attr-defined]
    return annotate


__all__ = ["gardner_annotator"]


# the games this annotator serves, with their default per-position budgets
register_annotator("gardner", gardner_annotator, {"nodes": 20_000})
