"""MAV action values: win probabilities, the 64 buckets and max/mean scoring."""
import math

import numpy as np
import pytest

from mavgame import mav


def lichess(cp):
    return (50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)) / 100


@pytest.mark.parametrize("cp", [-2000, -350, -1, 0, 1, 35, 100, 500, 1500])
def test_win_prob_from_cp(cp):
    assert mav.win_prob_from_cp(cp) == pytest.approx(lichess(cp), abs=1e-15)


def test_win_prob_arrays_and_conventions():
    cps = np.array([[-100, 0], [100, 300]])
    out = mav.win_prob_from_cp(cps)
    assert out.shape == (2, 2) and out[0, 1] == 0.5
    assert np.allclose(out, np.vectorize(lichess)(cps))
    assert mav.win_prob_from_cp(1e6) == 1.0 and mav.win_prob_from_cp(-1e6) == 0.0
    assert mav.win_prob_from_mate(2) == 1.0 and mav.win_prob_from_mate(-1) == 0.0 and mav.win_prob_from_mate(0) == 0.0
    assert [mav.win_prob_from_result(r) for r in ("win", "draw", "loss", 3, 0, -7)] == [1, .5, 0, 1, .5, 0]
    with pytest.raises(ValueError, match="'won'"):
        mav.win_prob_from_result("won")
    # the lichess formula, written out independently
    for cp in (-700, -20, 0, 45, 900):
        expected = (50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)) / 100
        assert mav.win_prob_from_cp(cp) == pytest.approx(expected, abs=1e-12)


def test_buckets():
    p = np.linspace(0, 1, 1001)
    b = mav.bucket(p)
    assert b.dtype == np.int32
    assert (b == np.minimum(63, np.floor(p * 64))).all()
    assert mav.bucket(0.0) == 0 and mav.bucket(1.0) == 63 and mav.bucket(0.5) == 32 and mav.bucket(1 / 64) == 1
    mids = mav.bucket_value(np.arange(64))
    assert np.allclose(mids, (np.arange(64) + 0.5) / 64)
    assert (mav.bucket(mids) == np.arange(64)).all()
    assert mav.bucket_token(7) == "<ctrl7>"
    with pytest.raises(ValueError, match="1.5 is not in"):
        mav.bucket([0.2, 1.5])
    with pytest.raises(ValueError, match="nan"):
        mav.bucket(float("nan"))
    with pytest.raises(ValueError, match="bucket 64"):
        mav.bucket_value(64)
    with pytest.raises(ValueError, match="bucket 99"):
        mav.bucket_token(99)


def test_scoring():
    rng = np.random.default_rng(0)
    d = rng.random((5, 3, 64))
    mids = (np.arange(64) + 0.5) / 64
    mean = mav.score(d, "mean")
    assert mean.shape == (5, 3)
    assert np.allclose(mean, (d * mids).sum(-1) / d.sum(-1))
    mx = mav.score(d, "max")
    assert np.allclose(mx, mids[d.argmax(-1)])
    logits = rng.normal(size=(4, 64)).astype(np.float32)
    sm = np.exp(logits - logits.max(-1, keepdims=True))
    sm /= sm.sum(-1, keepdims=True)
    assert np.allclose(mav.score(logits, "mean", logits=True), (sm * mids).sum(-1), atol=1e-6)
    assert np.allclose(mav.score(logits, "max", logits=True), mids[logits.argmax(-1)])
    # a one-hot distribution scores its bucket's midpoint both ways
    oh = np.zeros(64)
    oh[40] = 1
    assert mav.score(oh, "max") == mav.score(oh, "mean") == pytest.approx(40.5 / 64)
    with pytest.raises(ValueError, match="64 buckets"):
        mav.score(np.ones((2, 63)))
    with pytest.raises(ValueError, match="'median'"):
        mav.score(oh, "median")
    bad = np.ones((3, 64))
    bad[2, 5] = -1
    with pytest.raises(ValueError, match="row 2"):
        mav.score(bad)
    with pytest.raises(ValueError, match="sum to 0"):
        mav.score(np.zeros(64))
