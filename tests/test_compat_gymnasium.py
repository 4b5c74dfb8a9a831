"""A mavgame game as a Gymnasium single-agent environment against a mavgame agent (mavgame.compat.gymnasium,
issue 49)."""
import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import mavgame  # noqa: E402
from mavgame.compat import gymnasium as mg  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402


@pytest.mark.parametrize("kwargs", [
    dict(game="connect_four", opponent="random"),
    dict(game="connect_four", opponent="uct:sims=50", player=1),
    dict(game="connect_four", opponent="random", player="random"),
    dict(game="tictactoe", opponent="minimax"),
    dict(game="hex", opponent="random", board_size=5),
    # check_env steps with unmasked samples: in chess almost all are illegal, so it runs with illegal="lose"
    dict(game="chess", opponent="random", illegal="lose"),
    dict(game="gardner", opponent="random", illegal="lose"),
])
def test_gymnasium_check_env(kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(f"mavgame/{kwargs.pop('game')}-v0", **kwargs)
        check_env(env.unwrapped)     # with its spec: the render modes are checked too
        env.close()
    assert not [str(w.message) for w in caught if "WARN" in str(w.message)]


def test_registered_ids():
    assert mg.register() == mg.env_ids() == [f"mavgame/{g}-v0" for g in
                                             ("tictactoe", "gardner", "chess", "chess960", "connect_four", "hex")]
    assert all(i in gymnasium.registry for i in mg.env_ids())


def _play(env, seed, rng):
    obs, info = env.reset(seed=seed)
    trace, total = [], 0.0
    while True:
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(a)
        trace.append((a, info["opponent_action"]))
        total += reward
        assert not truncated
        if terminated:
            return trace, reward, total, info
        assert reward == 0


def test_rewards_masks_and_the_opponent():
    env = mg.MavgameEnv("connect_four", opponent="uct:sims=50", player=0)
    rng = np.random.default_rng(0)
    results = []
    for seed in range(6):
        trace, reward, total, info = _play(env, seed, rng)
        assert reward == total and reward in (-1.0, 0.0, 1.0) and not info["action_mask"].any()
        s = env.unwrapped.mavgame_state
        assert reward == {1: 1.0, 2: -1.0, 3: 0.0}[mavgame.State.outcome(s)[0]]
        # the replay: our moves and the opponent's replies make the final position
        ref = mavgame.ConnectFour()
        for mine, reply in trace:
            ref.push(mine)
            if reply is not None:
                ref.push(reply)
        assert ref == s
        results.append(reward)
    assert results.count(-1.0) >= 4     # random play against UCT at 50 simulations loses most games
    # the same seed replays the same opponent moves
    a = _play(env, 3, np.random.default_rng(7))[0]
    b = _play(env, 3, np.random.default_rng(7))[0]
    assert a == b


def test_second_player_and_observations():
    env = mg.MavgameEnv("tictactoe", opponent="random", player=1)
    obs, info = env.reset(seed=5)
    s = env.mavgame_state
    assert s.ply == 1 and info["player"] == 1 and info["opponent_action"] is not None
    np.testing.assert_array_equal(obs, s.observation_tensor())
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert np.flatnonzero(info["action_mask"]).tolist() == sorted(s.legal_actions().tolist())
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (9,)


def test_illegal_action_raises_or_loses():
    env = mg.MavgameEnv("connect_four", opponent="random", player=0)
    env.reset(seed=0)
    with pytest.raises(mavgame.IllegalMoveError, match=r"action 9 .*info\['action_mask'\]"):
        env.step(9)
    assert env.mavgame_state.ply == 0
    lose = mg.MavgameEnv("chess", opponent="random", illegal="lose")
    lose.reset(seed=0)
    obs, reward, terminated, truncated, info = lose.step(0)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, 0)
    with pytest.raises(RuntimeError, match="reset"):
        lose.step(0)


def test_agents_and_errors():
    from mavgame.agents.basic import RandomAgent
    env = mg.MavgameEnv("hex", opponent=RandomAgent(seed=1), board_size=3, render_mode="ansi")
    env.reset(seed=0)
    assert env.action_space.n == 9 and env.render().endswith(env.mavgame_state.text())
    first = mg.MavgameEnv("connect_four", opponent=lambda state: int(state.legal_actions()[0]))
    first.reset(seed=0)
    assert first.step(3)[4]["opponent_action"] == 0
    with pytest.raises(ValueError, match="player"):
        mg.MavgameEnv("connect_four", player=2)
    with pytest.raises(ValueError, match="unknown agent kind"):
        mg.MavgameEnv("connect_four", opponent="nobody")
    with pytest.raises(mavgame.AgentError, match="no perfect player for 'chess'"):
        mg.MavgameEnv("chess", opponent="perfect")
