"""Value scoring: a win probability from the model's 64-way distribution over the value buckets, by mean scoring
(the expectation over the bucket midpoints) or max scoring (the midpoint of the most likely bucket)."""
from __future__ import annotations

import numpy as np

NUM_BUCKETS = 64


def bucket_midpoints(n: int = NUM_BUCKETS) -> np.ndarray:
    return (np.arange(n) + 0.5) / n


def mean_value(p: np.ndarray) -> np.ndarray:
    """Mean scoring: expected win probability under the bucket distribution(s) p [..., 64] (the C scorer of
    csrc/format/values.c, shared with the native MCTS evaluator)."""
    from ... import mav
    return mav.score(np.asarray(p), "mean")


def max_value(p: np.ndarray) -> np.ndarray:
    """Max scoring: the midpoint of the most likely bucket (the lowest on ties)."""
    from ... import mav
    return mav.score(np.asarray(p), "max")


def value_scorer(scoring: str):
    """:func:`mean_value` for ``"mean"``, :func:`max_value` for ``"max"`` (ValueError naming anything else)."""
    if scoring not in ("mean", "max"):
        raise ValueError(f"scoring must be 'mean' or 'max', not {scoring!r}")
    return mean_value if scoring == "mean" else max_value


__all__ = ["NUM_BUCKETS", "bucket_midpoints", "mean_value", "max_value", "value_scorer"]
