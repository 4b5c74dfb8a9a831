"""The IDP report's agents (mavgame/agents/policy.py): specs, moves, the policy's top-two choice, rollouts,
a MAV model's values as a policy, and a short match through the league."""
import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.agents import AgentError, make_agent
from mavgame.agents.policy import mav_policy, sample_moves, uniform_policy

MATE1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"


@pytest.mark.parametrize("spec", ["alphabeta:depth=2", "guided_ab:threshold=0.01,depth=4", "policy",
                                  "policy_rollouts:games=1,max_plies=10"])
def test_every_kind_plays_legal_moves_and_refuses_other_games(spec):
    agent = make_agent(spec)
    agent.setup("chess", seed=3)
    st = mavgame.State("chess")
    for _ in range(4):
        a = agent.act(st)
        assert st.is_legal(a)
        st.push(a)
    with pytest.raises(AgentError, match="connect_four"):
        agent.setup("connect_four")
        agent.act(mavgame.State("connect_four"))


def test_searches_and_rollouts_find_a_mate_in_one():
    st = mavgame.State("chess", MATE1)
    for spec in ("alphabeta", "guided_ab", "policy_rollouts:games=3,max_plies=6,seed=1"):
        assert st.action_to_str(make_agent(spec).act(st)) == "a1a8", spec
    ro = make_agent("policy_rollouts:games=3,max_plies=6,seed=1")
    ro.act(st)
    assert ro.last_scores["a1a8"] == (3, 0)
    assert all(w < 3 for m, (w, d) in ro.last_scores.items() if m != "a1a8")


def test_policy_agent_picks_between_its_two_best_moves():
    st = mavgame.State("chess")
    w = np.zeros(1968, np.float32)
    w[_core.policy_uci_index("e2e4")] = 0.6
    w[_core.policy_uci_index("d2d4")] = 0.3
    w[_core.policy_uci_index("g1f3")] = 0.1

    def pol(planes, mask):
        return np.where(mask, w, 0.0)

    from mavgame.agents.policy import PolicyAgent
    agent = PolicyAgent(pol, seed=0)
    picks = [st.action_to_str(agent.act(st)) for _ in range(200)]
    assert set(picks) == {"e2e4", "d2d4"}
    assert 100 < picks.count("e2e4") < 160   # about 2/3
    assert {st.action_to_str(PolicyAgent(pol, top=1).act(st)) for _ in range(5)} == {"e2e4"}


def test_sample_moves_follows_the_policy_and_the_mask():
    rng = np.random.default_rng(0)
    mask = np.zeros((2, 1968), bool)
    mask[:, [5, 9]] = True
    probs = np.zeros((2, 1968))
    probs[0, 5] = 1.0
    probs[0, 7] = 100.0   # illegal: ignored
    picks = np.array([sample_moves(probs, mask, rng) for _ in range(50)])
    assert (picks[:, 0] == 5).all()
    assert set(picks[:, 1]) == {5, 9}      # no weight at all: uniform over the legal moves
    np.testing.assert_allclose(uniform_policy(np.zeros((2, 41, 8, 8)), mask).sum(-1), 1.0)


class _FakeOutput:
    def __init__(self, vals):
        self._vals = vals

    def values(self, scoring):
        return self._vals


class _FakeMAV:
    """Stands in for a MAVModel's analyse(): a chess MAV model is not shipped."""

    def analyse(self, states, commands):
        return [(None, _FakeOutput({"e2e4": 0.7, "d2d4": 0.6, "a2a3": 0.1, "zz": 0.9})) for _ in states]


def test_mav_values_become_a_policy_for_the_guided_search():
    pol = mav_policy(_FakeMAV(), temperature=0.1)
    st = mavgame.State("chess")
    w = pol(_core.policy_planes([st]), _core.policy_legal_mask([st]), [st.text()])
    nz = {_core.policy_uci(int(i)) for i in np.flatnonzero(w[0])}
    assert nz == {"e2e4", "d2d4", "a2a3"}
    assert w[0, _core.policy_uci_index("e2e4")] == pytest.approx(1.0)
    assert w[0, _core.policy_uci_index("d2d4")] == pytest.approx(np.exp(-1.0), rel=1e-5)
    from mavgame.agents.policy import GuidedAlphaBetaAgent
    agent = GuidedAlphaBetaAgent(pol, threshold=0.01, depth=4)   # mav_policy asks for the FENs
    assert agent.fens and st.is_legal(agent.act(st)) and agent.last.policy_calls >= 1
    with pytest.raises(ValueError, match="temperature"):
        mav_policy(_FakeMAV(), temperature=0)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="games"):
        make_agent("policy_rollouts:games=0")
    with pytest.raises(ValueError, match="movetime"):
        make_agent("alphabeta:movetime=0")
    with pytest.raises((ValueError, FileNotFoundError)):
        make_agent("policy:policy=/nonexistent/policy.pt")


def test_a_short_match_through_the_league(tmp_path, capsys):
    from mavgame.cli import main
    rc = main(["match", "alphabeta:depth=1", "guided_ab:threshold=0.05,depth=3", "--game", "chess", "--openings", "1",
               "--max-plies", "30", "--no-progress", "--games-out", str(tmp_path / "g.pgn")])
    assert rc == 0
    assert (tmp_path / "g.pgn").read_text().count("[Event ") == 2


def test_guided_search_runs_on_a_real_mav_model(tmp_path):
    """The MAV path end to end: an exported chess MAV model (random weights, numpy backend) behind
    `guided_ab:policy=mav`; its outputs name no legal move with a value, so every position falls back to
    the uniform policy, and the search still plays a legal move after asking the model."""
    from mavgame import mav
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import expected_shapes, export_model
    from mavgame.mav import vocab_fingerprint

    tok = mav.Tokenizer()
    cfg = MAVConfig(vocab_size=tok.size, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=256)
    rng = np.random.default_rng(0)
    w = {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}
    path = tmp_path / "chess_mav.safetensors"
    export_model(path, w, cfg, str(tok.version), info={"game": "chess", "vocab_fingerprint": vocab_fingerprint(tok)})
    agent = make_agent(f"guided_ab:policy=mav,mav_model={path},threshold=0.05,depth=3,batch=8")
    st = mavgame.State("chess", MATE1)
    a = agent.act(st)
    assert st.is_legal(a) and agent.fens and agent.last.policy_calls >= 1 and agent.last.policy_positions >= 1
    uniform = _core.guided_alphabeta(st, None, threshold=0.05, max_depth=3)
    assert agent.last.score == uniform.score   # all-zero weights: the uniform search's value


def test_the_shipped_network_loads_and_plays():
    """mavgame/data/policy_chess.safetensors: the small network trained here (docs/policy.md), exported as
    float16; it runs in the native engine, without PyTorch."""
    from mavgame.agents.policy import SHIPPED_POLICY, load_policy
    assert SHIPPED_POLICY.exists() and SHIPPED_POLICY.stat().st_size < 3_000_000
    pol = load_policy("shipped")
    assert isinstance(pol, _core.PolicyNet) and pol.file_dtype == "F16" and (pol.channels, pol.blocks) == (32, 3)
    st = mavgame.State("chess")
    mask = _core.policy_legal_mask([st])
    p = pol(_core.policy_planes([st]), mask)
    assert p.shape == (1, 1968) and np.all(p[~mask] == 0) and p.sum() == pytest.approx(1.0, abs=1e-5)
    assert p.max() > 2.0 / mask.sum()     # a trained policy, not a flat one
    agent = make_agent("policy:policy=shipped,seed=1")
    assert st.is_legal(agent.act(st))
    guided = make_agent("guided_ab:policy=shipped,threshold=0.01,depth=4,batch=8")
    assert st.is_legal(guided.act(st)) and guided.last.policy_calls >= 1 and guided.last.policy_positions >= 1
