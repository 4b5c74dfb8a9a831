"""mavgame.play.elo: the maximum-likelihood fit recovers known ratings, its intervals cover, calibration."""
import math

import numpy as np
import pytest

from mavgame.play.elo import calibrate, elo_from_results, expected_score, fit_elo

TRUE = np.array([-320.0, -120.0, 0.0, 140.0, 300.0])
NAMES = ["a", "b", "c", "d", "e"]


def simulate(true, games, rng, draw_rate=0.25):
    """Round robin with `games` games per pair; draws keep the expected score of the Elo model."""
    n = len(true)
    W = np.zeros((n, n))
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            p = expected_score(true[i], true[j])
            pd = draw_rate * 2 * min(p, 1 - p)
            pw, pl = p - pd / 2, 1 - p - pd / 2
            w, l, d = rng.multinomial(games, [pw, pl, pd])
            W[i, j], W[j, i], D[i, j], D[j, i] = w, l, d, d
    return W, D


def centred(x):
    return np.asarray(x) - np.mean(x)


def test_expected_score():
    assert expected_score(0, 0) == 0.5
    assert expected_score(400, 0) == pytest.approx(10 / 11)
    assert expected_score(100, 0) + expected_score(0, 100) == pytest.approx(1.0)


def test_two_players_closed_form():
    # 30 wins, 10 draws, 10 losses: score 35/50 = 0.7 -> difference 400 log10(0.7/0.3)
    W = np.array([[0, 30], [10, 0]])
    D = np.array([[0, 10], [10, 0]])
    r = fit_elo(["x", "y"], W, D, prior_draws=0)
    assert r["x"] - r["y"] == pytest.approx(400 * math.log10(0.7 / 0.3), abs=1e-6)
    assert r["x"] + r["y"] == pytest.approx(0.0, abs=1e-9)


def test_fit_recovers_known_ratings():
    rng = np.random.default_rng(12)
    W, D = simulate(TRUE, 3000, rng)
    r = fit_elo(NAMES, W, D, prior_draws=0)
    err = r.elo - centred(TRUE)
    assert np.abs(err).max() < 15, err
    assert list(np.argsort(r.elo)) == list(np.argsort(TRUE))
    assert r.elo.sum() == pytest.approx(0.0, abs=1e-6)
    # standard errors shrink like 1/sqrt(games): about 6-8 Elo here
    assert (r.stderr > 2).all() and (r.stderr < 15).all()


def test_hessian_intervals_cover():
    rng = np.random.default_rng(3)
    truth = centred(TRUE)
    covered = total = 0
    for _ in range(200):
        W, D = simulate(TRUE, 40, rng)
        r = fit_elo(NAMES, W, D, prior_draws=0, level=0.9)
        covered += int(((r.low <= truth) & (truth <= r.high)).sum())
        total += len(NAMES)
    rate = covered / total
    # draws make the normal approximation slightly conservative
    assert 0.86 <= rate <= 0.98, rate


def test_bootstrap_intervals_cover():
    rng = np.random.default_rng(5)
    truth = centred(TRUE)
    covered = total = 0
    for k in range(30):
        W, D = simulate(TRUE, 60, rng)
        r = fit_elo(NAMES, W, D, prior_draws=0, ci="bootstrap", n_boot=150, seed=k)
        covered += int(((r.low <= truth) & (truth <= r.high)).sum())
        total += len(NAMES)
        assert (r.low <= r.elo).all() and (r.elo <= r.high).all()
    assert 0.85 <= covered / total <= 1.0, covered / total


def test_perfect_score_needs_prior():
    W = np.array([[0, 10, 10], [0, 0, 6], [0, 4, 0]])
    with pytest.raises(ValueError, match=r"no finite maximum-likelihood rating for \['p'\]"):
        fit_elo(["p", "q", "r"], W, prior_draws=0)
    r = fit_elo(["p", "q", "r"], W, prior_draws=1)
    assert np.isfinite(r.elo).all() and r["p"] > r["q"] > r["r"]


def test_disconnected_groups_rejected():
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 0] = 3
    W[2, 3] = W[3, 2] = 3
    with pytest.raises(ValueError, match="never played each other"):
        fit_elo(list("wxyz"), W)


def test_bad_inputs():
    with pytest.raises(ValueError, match="2x2"):
        fit_elo(["a", "b"], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        fit_elo(["a", "b"], [[0, -1], [1, 0]])
    with pytest.raises(ValueError, match="not unique"):
        fit_elo(["a", "a"], [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="cannot play itself"):
        fit_elo(["a", "b"], [[1, 1], [1, 0]])
    with pytest.raises(ValueError, match="ci must be"):
        fit_elo(["a", "b"], [[0, 1], [1, 0]], ci="magic")


def test_order_of_agents_does_not_matter():
    rng = np.random.default_rng(8)
    W, D = simulate(TRUE, 50, rng)
    r1 = fit_elo(NAMES, W, D)
    perm = [3, 0, 4, 2, 1]
    r2 = fit_elo([NAMES[i] for i in perm], W[np.ix_(perm, perm)], D[np.ix_(perm, perm)])
    for n in NAMES:
        assert r1[n] == pytest.approx(r2[n], abs=1e-6)


def test_results_list_matches_matrices():
    games = [("a", "b", 1), ("a", "b", 0.5), ("b", "a", 1), ("c", "a", 0), ("b", "c", 0.5), ("c", "b", 1)]
    r = elo_from_results(games)
    W = np.zeros((3, 3))
    D = np.zeros((3, 3))
    W[0, 1] = 1
    W[1, 0] = 1
    D[0, 1] = D[1, 0] = 1
    W[0, 2] = 1
    D[1, 2] = D[2, 1] = 1
    W[2, 1] = 1
    r2 = fit_elo(["a", "b", "c"], W, D)
    np.testing.assert_allclose(r.elo, r2.elo)
    with pytest.raises(ValueError, match="score 2"):
        elo_from_results([("a", "b", 2)])


def test_calibration_recovers_linear_map():
    rng = np.random.default_rng(1)
    W, D = simulate(TRUE, 100, rng)
    r = fit_elo(NAMES, W, D)
    # anchors on an exact linear image of the internal scale: the fit must find it
    anchors = {n: 1.3 * r[n] + 1500 for n in ("a", "c", "e")}
    c = calibrate(r, anchors)
    assert c.slope == pytest.approx(1.3)
    assert c.intercept == pytest.approx(1500)
    for n in NAMES:
        assert c.external[NAMES.index(n)] == pytest.approx(1.3 * r[n] + 1500)
    assert (c.ext_high - c.ext_low == pytest.approx(1.3 * (r.high - r.low)))
    one = calibrate(r, {"c": 2000})
    assert one.slope == 1.0 and one.external[2] == pytest.approx(2000)
    with pytest.raises(ValueError, match="not among the rated agents"):
        calibrate(r, {"zz": 1})
    with pytest.raises(ValueError, match="non-positive slope"):
        calibrate(r, {"a": 2000, "e": 1000})
    text = c.table()
    assert "ext. Elo" in text and "anchor" in text and "1.300 * Elo + 1500.0" in text


def test_table_and_plot(tmp_path):
    rng = np.random.default_rng(2)
    W, D = simulate(TRUE, 20, rng)
    r = fit_elo(NAMES, W, D)
    t = r.table()
    lines = t.splitlines()
    assert lines[2].split()[1] == "e" and lines[6].split()[1] == "a"  # best first
    assert "95% CI" in lines[0]
    rows = r.rows()
    assert sum(x["wins"] for x in rows) == W.sum()
    assert all(x["wins"] + x["draws"] + x["losses"] == x["games"] for x in rows)
    pytest.importorskip("matplotlib")
    out = tmp_path / "elo.png"
    r.plot(str(out), title="test")
    assert out.stat().st_size > 1000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_anchor_on_a_named_agent_is_reported():
    """The paper's scale: one agent (basic MCTS there) at 0; the footer names it and the prior."""
    rng = np.random.default_rng(4)
    W, D = simulate(TRUE, 50, rng)
    mean0 = fit_elo(NAMES, W, D)
    r = fit_elo(NAMES, W, D, anchor=("b", 0.0))
    assert r["b"] == 0.0 and r.origin == ("b", 0.0)
    for n in NAMES:  # the same fit, shifted
        assert r[n] - r["a"] == pytest.approx(mean0[n] - mean0["a"])
    assert abs(float(mean0.elo.mean())) < 1e-6 and mean0.origin is None
    assert "b = 0, 1 virtual draw(s) per pair" in r.table()
    assert "mean 0, 1 virtual draw(s) per pair" in mean0.table()
    plain = fit_elo(NAMES, W, D, prior_draws=0, anchor=("a", 0.0))
    assert "a = 0, no prior (plain maximum likelihood)" in plain.table()
    assert calibrate(r, {"c": 2000}).origin == ("b", 0.0)
    pytest.importorskip("matplotlib")                       # the plot's axis names the origin too
    assert r.plot().get_xlabel() == "Elo (b = 0), 95% CI"
    assert mean0.plot().get_xlabel() == "Elo (mean 0), 95% CI"
    with pytest.raises(ValueError, match="'zz' is not one of the agents"):
        fit_elo(NAMES, W, D, anchor=("zz", 0.0))
