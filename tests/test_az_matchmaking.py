"""The AZdb paper's matchmakers (appendix B, Figure 9) on a fixed payoff matrix: which distribution over
opponents each gives a player as white and as black, the pairings drawn from them, and the refusals."""
import numpy as np
import pytest

from mavgame.az.matchmaking import MATCHMAKERS, Matchmaker

# white's mean result, rows white, columns black: rock-paper-scissors among three players
RPS = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


def _with_payoff(kind: str, payoff: np.ndarray = RPS) -> Matchmaker:
    m = Matchmaker(len(payoff), kind)
    m.score[:] = payoff
    m.count[:] = 1
    return m


def test_every_paper_matchmaker_is_known():
    assert set(MATCHMAKERS) == {"selfplay", "uniform", "psro", "psro-uniform", "psro-rectified", "psro-cycle"}
    for kind in MATCHMAKERS:
        w, b = _with_payoff(kind).interaction_graphs()
        assert w.shape == b.shape == (3, 3)
        assert np.allclose(w.sum(1), 1) and np.allclose(b.sum(1), 1) and (w >= 0).all() and (b >= 0).all()


def test_selfplay_and_uniform():
    w, b = _with_payoff("selfplay").interaction_graphs()
    assert np.array_equal(w, np.eye(3)) and np.array_equal(b, np.eye(3))
    w, b = _with_payoff("uniform").interaction_graphs()
    assert np.allclose(w, 1 / 3) and np.allclose(b, 1 / 3)


def test_psro_uniform_is_lower_triangular_uniform():
    w, b = _with_payoff("psro-uniform").interaction_graphs()
    want = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])
    assert np.allclose(w, want) and np.allclose(b, want)


def test_psro_nash_on_rock_paper_scissors():
    w, b = _with_payoff("psro").interaction_graphs()
    # player 0: itself; player 1: M[:2, :2] = [[0, 1], [-1, 0]] has the pure equilibrium (row 0, column 0);
    # player 2: the whole game, uniform
    assert np.allclose(w[0], [1, 0, 0]) and np.allclose(b[0], [1, 0, 0])
    assert np.allclose(w[1], [1, 0, 0], atol=1e-2) and np.allclose(b[1], [1, 0, 0], atol=1e-2)
    assert np.allclose(w[2], 1 / 3, atol=2e-2) and np.allclose(b[2], 1 / 3, atol=2e-2)


def test_psro_rectified_keeps_the_opponents_beaten_or_tied():
    w, b = _with_payoff("psro-rectified").interaction_graphs()
    # player 2 as white beats black 0 (M[2, 0] = 1), ties itself, loses to black 1: Nash 1/3 each -> 1/2, 0, 1/2
    assert np.allclose(w[2], [0.5, 0, 0.5], atol=2e-2)
    # as black it beats white 0 (M[0, 2] = -1), ties itself, loses to white 1 (M[1, 2] = 1)
    assert np.allclose(b[2], [0.5, 0, 0.5], atol=2e-2)
    # player 1's Nash opponent is player 0, who beats it on both sides: nothing left, it plays itself
    assert np.allclose(w[1], [0, 1, 0]) and np.allclose(b[1], [0, 1, 0])
    # unplayed pairings count as ties: a fresh matchmaker is PSRO-Nash on a zero matrix, nothing removed
    fresh = Matchmaker(3, "psro-rectified")
    assert np.allclose(fresh.mixtures(2)[0], 1 / 3, atol=2e-2)


def test_psro_cycle():
    w, b = _with_payoff("psro-cycle").interaction_graphs()
    # players 0 and 1 form the cycle (0 responds to 1, 1 to 0); the last responds to the whole team's Nash
    assert np.array_equal(w[0], [0, 1, 0]) and np.array_equal(w[1], [1, 0, 0])
    assert np.array_equal(b[:2], w[:2])
    assert np.allclose(w[2], 1 / 3, atol=2e-2) and np.allclose(b[2], 1 / 3, atol=2e-2)
    w4, _ = _with_payoff("psro-cycle", np.zeros((4, 4))).interaction_graphs()
    assert np.array_equal(w4[:3, :3], [[0, 0, 1], [1, 0, 0], [0, 1, 0]]) and w4[:3, 3].sum() == 0


@pytest.mark.parametrize("kind", MATCHMAKERS)
def test_pairings_follow_the_mixtures(kind):
    m = _with_payoff(kind)
    lat, side = m.pairings(3000, np.random.default_rng(1))
    k = np.arange(3000)
    expl = k % 3
    assert np.array_equal(lat[k, side], expl)
    opp = lat[k, 1 - side]
    w, b = m.interaction_graphs()
    for i in range(3):
        for s, graph in ((0, w), (1, b)):
            sel = (expl == i) & (side == s)
            freq = np.bincount(opp[sel], minlength=3) / sel.sum()
            assert np.allclose(freq, graph[i], atol=0.08), (kind, i, s, freq, graph[i])
    if kind == "selfplay":
        assert np.array_equal(lat[:, 0], lat[:, 1])


def test_refusals_name_the_value():
    with pytest.raises(ValueError, match="'psro-nash2'"):
        Matchmaker(3, "psro-nash2")
    with pytest.raises(ValueError, match="player 3"):
        Matchmaker(3, "psro").mixtures(3)
    with pytest.raises(ValueError, match="num_games"):
        Matchmaker(3, "psro").pairings(-1, np.random.default_rng(0))


def test_config_and_command_refuse_an_unknown_matchmaker():
    pytest.importorskip("torch")
    from mavgame.az.train import AZConfig
    with pytest.raises(ValueError, match="'cycle'"):
        AZConfig(players=3, matchmaking="cycle").check()
    with pytest.raises(ValueError, match="'cycle'"):
        AZConfig(players=1, matchmaking="cycle").check()
    AZConfig(players=3, matchmaking="psro-cycle").check()
