"""The MAV paper's accuracy metrics over MAV texts, counted by the core (``mg_mav_metrics_add``)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Union

from .. import _core
from .parse import ParseResult
from .write import StateLike


def _rates(c: Dict[str, int]) -> Dict[str, Any]:
    def div(a, b):
        return a / b if b else float("nan")
    p = div(c["top_correct"], c["top_listed"])
    r = div(c["top_correct"], c["top_legal"])
    f1 = 2 * p * r / (p + r) if (p == p and r == r and p + r > 0) else float("nan")
    out: Dict[str, Any] = dict(c)
    out.update({
        "parsed_ok_rate": div(c["parsed_ok"], c["examples"]),
        "best_action_legal": div(c["best_legal"], c["best_total"]),
        "top_all_precision": p,
        "top_all_recall": r,
        "top_all_f1": f1,
        "next_state_accuracy": div(c["state_correct"], c["state_total"]),
        "outcome_accuracy": div(c["outcome_correct"], c["outcome_total"]),
    })
    return out


def metrics(game: Union[str, StateLike], texts: Sequence[Union[str, bytes]],
            true_states: Optional[Sequence[StateLike]] = None) -> Dict[str, Any]:
    """The paper's accuracy metrics over a batch of MAV texts (parsed in C).

    - best_action_legal: fraction of %best_action lines (non-terminal references) that are legal;
    - top_all_precision / recall / f1: over all %top_all lines, distinct legal moves listed / moves listed
      (repeats count as wrong) and / legal moves;
    - next_state_accuracy: output states (transition form, state after the best action) equal to the truth;
    - outcome_accuracy: terminal positions recognised with the right result (and no false claims);

    plus the raw counts. Rates with no cases are NaN."""
    return _rates(_core.mav_metrics(game, list(texts), None if true_states is None else list(true_states)))


def metrics_from_results(results: Iterable[ParseResult]) -> Dict[str, Any]:
    """The same metrics from ParseResult objects (same definitions as :func:`metrics`).

    Counted by the core's ``mg_mav_metrics_add``, the one definition of the metrics: each result's text
    is read again in C with its ``true_state`` (a result parsed without one and with a non-default
    ``board_size``/``flags`` is read in its game's default configuration)."""
    c: Dict[str, int] = {}
    for r in results:
        ref = None if r._true_state is None else [r._true_state]
        for k, v in _core.mav_metrics(r.game, [r._text], ref).items():
            c[k] = c.get(k, 0) + v
    if not c:
        c = _core.mav_metrics("chess", [], None)
    return _rates(c)
