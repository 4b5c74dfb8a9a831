"""mavgame's games as PettingZoo AEC environments (mavgame.compat.pettingzoo, issue 49)."""
import random
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

import mavgame  # noqa: E402
from mavgame.compat import _games  # noqa: E402
from mavgame.compat.pettingzoo import env, raw_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

GAMES = [("connect_four", {}), ("tictactoe", {}), ("hex", {"board_size": 5, "swap": True}), ("hex", {}),
         ("gardner", {}), ("chess", {}), ("chess960", {"position": 100})]


@pytest.mark.parametrize("game, params", GAMES)
def test_pettingzoo_api_test(game, params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(game=game, **params), num_cycles=1000)
    # the only warnings: the dict observation PettingZoo's own classic games are exempted from by name
    assert {str(w.message) for w in caught} <= {
        "Observation is not a NumPy array",
        "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete"}


@pytest.mark.parametrize("game, params", [("connect_four", {}), ("hex", {"board_size": 4, "swap": True}),
                                          ("chess", {})])
def test_plays_mavgame_s_rules(game, params):
    """Random games through the environment and through mavgame agree on the observations, the masks, the
    end and the rewards."""
    e = env(game=game, **params)
    rng = random.Random(game)
    n = e.unwrapped.action_space("player_0").n
    for _ in range(5 if game == "chess" else 20):
        e.reset()
        ref = _games.get(game).state(params)
        returns = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            assert not trunc and info == {}
            np.testing.assert_array_equal(obs["observation"], ref.observation_tensor())
            assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
            if term:
                returns[agent] = reward
                e.step(None)
                continue
            assert agent == f"player_{ref.to_move}"
            legal = sorted(int(a) for a in ref.legal_actions())
            assert obs["action_mask"].shape == (n,) and np.flatnonzero(obs["action_mask"]).tolist() == legal
            other = e.unwrapped.observe(f"player_{1 - ref.to_move}")
            assert not other["action_mask"].any()
            a = rng.choice(legal)
            e.step(a)
            ref.push(a)
        res = mavgame.State.outcome(ref)[0]
        assert returns == {"player_0": {1: 1, 2: -1, 3: 0}[res], "player_1": {1: -1, 2: 1, 3: 0}[res]}
        assert e.agents == []


def test_illegal_action_raises_naming_it():
    e = env(game="connect_four")
    e.reset()
    for _ in range(6):
        e.step(0)
    before = e.unwrapped.mavgame_state.text()
    with pytest.raises(mavgame.IllegalMoveError, match=r"action 0 .*'1'"):
        e.step(0)
    with pytest.raises(mavgame.IllegalMoveError, match=r"action 7 \(not in 0\.\.6"):
        e.step(7)
    assert e.unwrapped.mavgame_state.text() == before and e.agent_selection == "player_0"
    # PettingZoo's own wrapper turns an illegal action into a loss instead
    from pettingzoo.utils.wrappers import TerminateIllegalWrapper
    w = TerminateIllegalWrapper(raw_env("connect_four"), illegal_reward=-1)
    w.reset()
    for _ in range(6):
        w.step(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w.step(0)
    assert all(w.terminations.values()) and w.rewards == {"player_0": -1, "player_1": 0}


def test_spaces_render_and_state():
    e = raw_env("hex", render_mode="ansi", board_size=3)
    e.reset(seed=1)
    assert e.action_space("player_0").n == 9 and e.observation_space("player_1")["observation"].shape == (4, 3, 3)
    e.step(4)
    assert e.render().endswith(e.mavgame_state.text()) and "x" in e.render()
    np.testing.assert_array_equal(e.state(), mavgame.Hex.from_moves("b2", size=3).observation_tensor())
    assert str(e) == "mavgame_hex_v0"
    with pytest.raises(ValueError, match="no parameter size"):
        raw_env("hex", size=3)
    with pytest.raises(ValueError, match="unknown game 'go'"):
        raw_env("go")
