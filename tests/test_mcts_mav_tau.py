"""The MAV-MCTS agents' prior temperature adapted to the move number (the MAV paper, equation 1: "we dynamically
adapt the temperature as a function of the number of moves played"): the default schedule reaches the tree's
priors at the root's ply, and ``tau=NUMBER`` is the constant temperature of before."""
import math

import numpy as np
import pytest

import mavgame
from mavgame.agents.mav import MAV_TAU_SCHEDULE, mav_mcts_agent
from mavgame.agents.spec import make_agent
from mavgame.model.inference import MAVModel, shipped_model_path


@pytest.fixture(scope="module")
def model():
    try:
        return MAVModel.load(shipped_model_path("connect_four"))
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped")


def schedule_tau(ply):
    """The schedule's temperature at a ply."""
    return [t for p, t in MAV_TAU_SCHEDULE if p <= ply][-1]


def expected_prior(values, tau, k=5, eps=0.1):
    """Equation 1 from the root's values (the top k, ties with the k-th included)."""
    v = np.asarray(values, dtype=np.float64)
    thr = np.sort(v)[::-1][min(k, len(v)) - 1]
    top = v >= thr
    ex = np.where(top, np.exp((v - v.max()) / tau), 0.0)
    return (1 - eps) * ex / ex.sum() + eps / len(v)


def root_after(agent, moves):
    s = mavgame.State("connect_four")
    for m in moves:
        s.push(m)
    agent.setup("connect_four", seed=1)
    agent.act(s)
    return s, agent._mcts.last_result


# a position of ply 0, one of ply 12 and one of ply 22 (random legal play, not over, 7 and 5 legal moves)
POSITIONS = ("", "536376766517", "2171272272332677337354")


def test_schedule_shape():
    plies = [p for p, _ in MAV_TAU_SCHEDULE]
    taus = [t for _, t in MAV_TAU_SCHEDULE]
    assert plies[0] == 0 and plies == sorted(plies)
    assert taus == sorted(taus, reverse=True) and taus[0] > taus[-1]     # decaying with the move number
    assert 0.1 in taus                                                    # the old constant on the way


@pytest.mark.parametrize("moves", POSITIONS)
def test_default_agent_prior_follows_the_move_number(model, moves):
    agent = mav_mcts_agent(model, sims=1, batch_size=1)
    s, r = root_after(agent, moves)
    assert s.ply == len(moves)
    tau = schedule_tau(s.ply)
    np.testing.assert_allclose(r.prior, expected_prior(r.values, tau), rtol=1e-4, atol=1e-6)
    if len(set(np.round(r.values, 4))) > 1 and tau != 0.1:
        # the prior of the constant temperature differs, so the check above can fail
        assert not np.allclose(r.prior, expected_prior(r.values, 0.1), rtol=1e-4, atol=1e-6)


def test_constant_temperature_one_option_away(model):
    """``tau=0.1`` (a number) is the behaviour before the schedule, in the spec and in Python."""
    spec = make_agent("mav_mcts:sims=1,batch=1,tau=0.1")
    assert spec.kwargs["tau"] == 0.1
    assert make_agent("mav_mcts:sims=1").kwargs["tau"] == [tuple(x) for x in MAV_TAU_SCHEDULE]
    for moves in (POSITIONS[0], POSITIONS[2]):
        _, r = root_after(mav_mcts_agent(model, sims=1, batch_size=1, tau=0.1), moves)
        np.testing.assert_allclose(r.prior, expected_prior(r.values, 0.1), rtol=1e-4, atol=1e-6)
    # a schedule of one's own is taken as it is
    _, r = root_after(mav_mcts_agent(model, sims=1, batch_size=1, tau=[(0, 0.5), (30, 0.01)]), POSITIONS[2])
    np.testing.assert_allclose(r.prior, expected_prior(r.values, 0.5), rtol=1e-4, atol=1e-6)
    assert math.isclose(float(np.sum(r.prior)), 1.0, rel_tol=1e-5)
