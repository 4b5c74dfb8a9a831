"""MAV values: win probabilities from engine scores and results, the 64 value buckets and their tokens,
scores of bucket distributions (all computed in the C core)."""
from __future__ import annotations

import operator

import numpy as np

from .. import _core

BUCKETS = 64


def _scalar_or_array(x, out):
    return out.item() if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else out


def _numbers(x, needs: str, kinds: str):
    """``x`` as NumPy reads it, if that is numbers of the dtype ``kinds`` ('b' bool, 'i' int, 'u' unsigned,
    'f' float); else TypeError "<needs>, got <type>".  The C functions force-cast their argument, which would
    take strings ('100'), None (NaN), complex numbers (dropping the imaginary part) and datetimes."""
    if type(x) in (int, bool) or (type(x) is float and "f" in kinds):
        return x
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = None
    if a is not None and a.size == 0 and not isinstance(x, np.ndarray):
        return x                       # an empty list: no numbers of any kind
    if a is None or a.dtype.kind not in kinds:
        what = type(x).__name__ if a is None or not isinstance(x, np.ndarray) else f"an array of {a.dtype}"
        raise TypeError(f"{needs}, got {what}")
    return a


def win_prob_from_cp(cp):
    """Win probability for centipawns from the mover's point of view (the lichess formula), element-wise on
    arrays.

    ``cp`` = +inf / -inf are the formula's limits, 1.0 and 0.0: an engine's mate score may be carried as an
    infinite centipawn value (a mate for the mover, or against it). NaN has no win probability and raises
    ValueError (at which flat index, for an array); so does a complex value (TypeError: the imaginary part
    would be dropped)."""
    return _scalar_or_array(cp, _core.mav_win_prob_cp(_numbers(cp, "win_prob_from_cp needs numbers", "biuf")))


def win_prob_from_mate(n: int) -> float:
    """"Mate in n" for the mover: n > 0 is a certain win (1.0); n <= 0 a certain loss (0.0)."""
    return 1.0 if int(n) > 0 else 0.0


def win_prob_from_result(r) -> float:
    """A game-theoretic result for the mover (solvers, Connect Four): win 1.0, draw 0.5, loss 0.0.
    ``r`` is 'win'/'draw'/'loss' or a number whose sign gives the result."""
    if isinstance(r, str):
        table = {"win": 1.0, "draw": 0.5, "loss": 0.0}
        if r not in table:
            raise ValueError(f"result must be 'win', 'draw' or 'loss', not {r!r}")
        return table[r]
    v = float(r)
    if v != v:
        raise ValueError("result is NaN")
    return 1.0 if v > 0 else 0.0 if v < 0 else 0.5


def bucket(p):
    """Bucket index min(63, floor(p * 64)) of a win probability (ValueError outside [0, 1])."""
    return _scalar_or_array(p, _core.mav_bucket(_numbers(p, "bucket needs win probabilities", "biuf")))


def bucket_value(b):
    """Midpoint (b + 0.5) / 64 of bucket b (integers 0..63: ValueError outside, TypeError for floats)."""
    return _scalar_or_array(b, _core.mav_bucket_value(_numbers(b, "bucket_value needs integer bucket indices",
                                                               "biu")))


def bucket_token(b: int) -> str:
    """The value token ``<ctrlB>`` of bucket b (an integer 0..63: ValueError outside, TypeError for floats)."""
    b = operator.index(b)
    if not 0 <= b < BUCKETS:
        raise ValueError(f"bucket {b} is not in 0..63")
    return f"<ctrl{b}>"


def score(dist, method: str = "mean", logits: bool = False):
    """Scores of 64-way bucket distributions ``dist[..., 64]``: 'max' (midpoint of the most probable
    bucket) or 'mean' (expected midpoint). ``logits=True`` applies a softmax first."""
    return _core.mav_score(dist, method, bool(logits))
