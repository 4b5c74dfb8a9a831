"""AlphaZero: the batched self-play plumbing (C gathers the leaves of every game into one batch), the
replay buffer, and with torch the network, training, exact resume, the agent and ``mavgame az``.

The root-only Dirichlet noise, the MCTS step API and the Dirichlet sampler are tested in C
(csrc/tests/test_az.c)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.az import ReplayBuffer, play_games


def uniform(obs):
    """A network that knows nothing: equal logits, value 0."""
    return np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32)


def test_core_imports_without_torch():
    code = ("import sys, mavgame, mavgame.az, mavgame.cli; mavgame.cli.build_parser(); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_selfplay_targets_and_outcomes():
    start = mavgame.State("connect_four")
    r = play_games(uniform, start, num_games=12, parallel_games=5, seed=4, num_simulations=20, temperature_plies=6)
    st = r.stats
    assert st["games_finished"] == 12 and st["p0_wins"] + st["p1_wins"] + st["draws"] == 12
    n = len(r.z)
    assert n == st["moves"] and r.obs.shape == (n, 4, 6, 7) and r.pi.shape == (n, 7)
    # visit-count policies: a distribution over the legal moves (columns whose top cell is empty)
    legal = r.obs[:, 2, 0, :] == 1.0
    assert np.allclose(r.pi.sum(1), 1.0, atol=1e-5)
    assert np.all(r.pi[~legal] == 0) and np.all(r.pi >= 0)
    # z from the mover's view: the side-to-move plane matches the ply, signs alternate in a game,
    # and the last mover of a decisive Connect Four game is its winner
    assert np.all(r.obs[:, 3, 0, 0] == (r.ply % 2))
    decisive = 0
    for g in np.unique(r.game):
        zs, plies = r.z[r.game == g], r.ply[r.game == g]
        assert np.array_equal(plies, np.arange(len(plies)))
        assert np.all(zs[1:] == -zs[:-1])
        assert zs[-1] in (1.0, 0.0)
        decisive += zs[-1] == 1.0
    assert decisive == st["p0_wins"] + st["p1_wins"]
    assert r.search_seconds > 0 and r.network_seconds > 0 and st["evaluations"] >= n


def test_selfplay_batches_observations_in_c():
    start = mavgame.State("connect_four")
    sp = _core.AZSelfPlay(start, parallel_games=6, num_games=6, num_simulations=8, seed=1)
    assert sp.obs_shape == (4, 6, 7) and sp.num_actions == 7 and sp.max_batch == 6 and sp.game == "connect_four"
    obs = sp.gather()
    # the first batch: every game's root, the start position
    assert obs.shape == (6, 4, 6, 7)
    assert np.array_equal(obs, np.broadcast_to(start.observation_tensor(), obs.shape))
    sp.scatter(np.zeros((6, 7), np.float32), np.zeros(6, np.float32))
    obs = sp.gather()
    # the next leaves are children of the start position: one stone on the board
    assert obs.shape[0] == 6 and np.all(obs[:, 0].sum(axis=(1, 2)) == 1) and np.all(obs[:, 3] == 1)


def test_selfplay_is_reproducible_and_seeded():
    start = mavgame.State("tictactoe")

    def net(obs):
        # a fixed function of the position, so that the trees depend on what C wrote
        h = obs.reshape(len(obs), -1).sum(1)
        return np.tile(np.arange(9, dtype=np.float32) * 0.1, (len(obs), 1)), np.tanh(h / 10 - 0.5)
    a = play_games(net, start, num_games=10, parallel_games=3, seed=9, num_simulations=12)
    b = play_games(net, start, num_games=10, parallel_games=3, seed=9, num_simulations=12)
    c = play_games(net, start, num_games=10, parallel_games=3, seed=10, num_simulations=12)
    assert np.array_equal(a.pi, b.pi) and np.array_equal(a.z, b.z) and np.array_equal(a.obs, b.obs)
    assert not (len(a.z) == len(c.z) and np.array_equal(a.pi, c.pi))


def test_selfplay_evaluation_cache():
    start = mavgame.State("connect_four")
    a = play_games(uniform, start, num_games=6, parallel_games=3, seed=5, num_simulations=30)
    b = play_games(uniform, start, num_games=6, parallel_games=3, seed=5, num_simulations=30, cache_log2=14)
    assert b.stats["cache_hits"] > 0 and a.stats["cache_hits"] == 0
    assert b.stats["evaluations"] + b.stats["cache_hits"] == a.stats["evaluations"]
    # the same games (the network answers a position alike every time), finished in another order
    ka, kb = np.lexsort((a.ply, a.game)), np.lexsort((b.ply, b.game))
    assert np.array_equal(a.pi[ka], b.pi[kb]) and np.array_equal(a.z[ka], b.z[kb])


def test_selfplay_max_plies_and_settings():
    r = play_games(uniform, mavgame.State("connect_four"), num_games=3, parallel_games=3, num_simulations=4,
                   max_plies=5)
    assert r.stats["cut_draws"] == 3 and len(r.z) == 15 and np.all(r.z == 0)
    # several leaves per game and network call (virtual counts), with the cache
    r = play_games(uniform, mavgame.State("connect_four"), num_games=4, parallel_games=2, num_simulations=24,
                   batch_size=4, cache_log2=10, seed=1)
    assert r.stats["games_finished"] == 4 and np.allclose(r.pi.sum(1), 1.0, atol=1e-5)
    assert r.stats["evaluations"] > r.stats["batches"]   # more than one leaf per round
    with pytest.raises(ValueError, match="unknown self-play setting"):
        play_games(uniform, mavgame.State("connect_four"), num_games=1, simulations=3)


def test_selfplay_bad_answers_and_misuse():
    start = mavgame.State("connect_four")
    with pytest.raises(ValueError, match="num_simulations 1"):
        _core.AZSelfPlay(start, num_simulations=1)
    with pytest.raises(ValueError, match="c_base"):
        _core.AZSelfPlay(start, c_base=0.0)
    with pytest.raises(ValueError, match="dirichlet_frac 2"):
        _core.AZSelfPlay(start, dirichlet_frac=2.0)
    with pytest.raises(TypeError):
        _core.AZSelfPlay("connect_four")
    over = mavgame.State("tictactoe", "xxx/oo./... o")
    with pytest.raises(ValueError, match="already over"):
        _core.AZSelfPlay(over)
    sp = _core.AZSelfPlay(start, parallel_games=2, num_games=2, num_simulations=4)
    with pytest.raises(RuntimeError, match="gather"):
        sp.scatter(np.zeros((2, 7), np.float32), np.zeros(2, np.float32))
    obs = sp.gather()
    with pytest.raises(RuntimeError, match="before scatter"):
        sp.gather()
    with pytest.raises(ValueError, match=r"logits must have shape \(2, 7\)"):
        sp.scatter(np.zeros((2, 6), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"values must have shape \(2,\)"):
        sp.scatter(np.zeros((2, 7), np.float32), np.zeros(3, np.float32))
    sp.scatter(np.zeros((len(obs), 7)), [0.5, -0.5])  # float64 and lists are converted
    obs = sp.gather()
    with pytest.raises(ValueError, match="value nan of batch row 1"):
        sp.scatter(np.zeros((2, 7), np.float32), np.array([0.0, np.nan], np.float32))
    sp2 = _core.AZSelfPlay(start, parallel_games=1, num_games=1, num_simulations=4)
    sp2.gather()
    lg = np.zeros((1, 7), np.float32)
    lg[0, 3] = np.inf
    with pytest.raises(ValueError, match="logit inf of action 3"):
        sp2.scatter(lg, np.zeros(1, np.float32))


def test_replay_buffer_ring_and_state():
    buf = ReplayBuffer(5, (2, 1, 1), 3)
    obs = np.arange(14, dtype=np.float32).reshape(7, 2, 1, 1)
    pi = np.tile(np.float32([1, 0, 0]), (7, 1))
    z = np.arange(7, dtype=np.float32)
    buf.add(obs[:3], pi[:3], z[:3])
    buf.add(obs[3:], pi[3:], z[3:])
    assert len(buf) == 5 and buf.added == 7
    assert sorted(buf.z.tolist()) == [2, 3, 4, 5, 6]   # the two oldest went
    rng = np.random.Generator(np.random.PCG64(0))
    o, p, zz = buf.sample(rng, 64)
    assert o.shape == (64, 2, 1, 1) and set(zz.tolist()) <= {2, 3, 4, 5, 6}
    assert np.all(o[:, 0, 0, 0] == 2 * zz)   # rows stay together
    b2 = ReplayBuffer.from_state_dict(buf.state_dict())
    assert np.array_equal(b2.obs, buf.obs) and b2.next == buf.next and len(b2) == 5
    with pytest.raises(ValueError, match="shapes"):
        buf.add(obs[:2], pi[:3], z[:2])
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(0, (1,), 1)
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer(2, (1,), 1).sample(rng, 1)


# ---- with torch -------------------------------------------------------------------------------

def _tiny(**kw):
    from mavgame.az.train import AZConfig
    base = dict(game="tictactoe", blocks=1, channels=8, value_hidden=16, games_per_iteration=12, parallel_games=12,
                num_simulations=12, steps_per_iteration=12, batch_size=32, optimizer="adam", lr=0.01, seed=3)
    base.update(kw)
    return AZConfig(**base)


def test_network_shapes():
    torch = pytest.importorskip("torch")
    from mavgame.az.network import AZNet, torch_evaluator
    net = AZNet((4, 6, 7), 7, blocks=2, channels=8)
    logits, v = net(torch.zeros(3, 4, 6, 7))
    assert logits.shape == (3, 7) and v.shape == (3,) and torch.all(v.abs() <= 1)
    lg, vv = torch_evaluator(net)(np.zeros((2, 4, 6, 7), np.float32))
    assert lg.dtype == np.float32 and lg.shape == (2, 7) and vv.shape == (2,)


def test_train_loss_falls_and_resume_is_exact(tmp_path):
    torch = pytest.importorskip("torch")
    from mavgame.az.train import AZTrainer
    torch.set_num_threads(1)
    t = AZTrainer(_tiny())
    recs = [t.run_iteration() for _ in range(3)]
    assert recs[-1]["loss"] < recs[0]["first_loss"]
    assert recs[-1]["policy"] < recs[0]["policy"] or recs[-1]["value"] < recs[0]["value"]
    assert t.step == 36 and len(t.buffer) == sum(r["positions"] for r in recs)
    path = str(tmp_path / "ck.pt")
    t.save(path)
    u = AZTrainer.load(path)
    assert (u.iteration, u.step, len(u.buffer)) == (3, 36, len(t.buffer))
    # one training step after the checkpoint: bit-identical in both runs
    a, b = t.train_step(), u.train_step()
    assert a == b
    for (na, pa), (nb, pb) in zip(t.net.state_dict().items(), u.net.state_dict().items()):
        assert na == nb and torch.equal(pa, pb), na
    # and a whole iteration (self-play seeded by the iteration, sampling by the saved generator)
    ra, rb = t.run_iteration(), u.run_iteration()
    for k in ("loss", "value", "policy", "positions", "p0_wins", "draws"):
        assert ra[k] == rb[k], k
    for pa, pb in zip(t.net.parameters(), u.net.parameters()):
        assert torch.equal(pa, pb)


def test_checkpoint_errors(tmp_path):
    pytest.importorskip("torch")
    from mavgame.az.train import AZTrainer
    with pytest.raises(FileNotFoundError, match="no AlphaZero checkpoint"):
        AZTrainer.load(str(tmp_path / "none.pt"))
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="bad.pt"):
        AZTrainer.load(str(bad))
    with pytest.raises(ValueError, match="optimizer"):
        AZTrainer(_tiny(optimizer="rmsprop"))
    with pytest.raises(ValueError, match="batch_size"):
        AZTrainer(_tiny(batch_size=0))


def test_az_agent_and_command(tmp_path):
    pytest.importorskip("torch")
    from mavgame import cli
    from mavgame import agents
    out = tmp_path / "run"
    args = ["az", "--out", str(out), "--game", "tictactoe", "--iterations", "1", "--games", "6", "--parallel", "6",
            "--sims", "8", "--blocks", "1", "--channels", "8", "--steps", "3", "--batch-size", "16", "--no-progress",
            "--threads", "1"]
    assert cli.main(args) == 0
    assert cli.main(args[:6] + ["2"] + args[7:]) == 0   # resumes at iteration 1
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in log] == [0, 1] and log[1]["step"] == 6
    other = list(args)
    other[6], other[other.index("--sims") + 1] = "3", "9"
    assert cli.main(other) == 1   # other settings than the checkpoint's: refused
    ck = str(out / "checkpoint.pt")
    agent = agents.make_agent(f"az:checkpoint={ck},sims=10")
    assert agent.name == "az-10"
    s = mavgame.State("tictactoe", "xx./oo./... x")
    agent.setup("tictactoe", seed=1)
    for _ in range(3):
        a = agent.act(s)
        assert s.is_legal(a)
    with pytest.raises(agents.AgentError, match="cannot play"):
        agent.act(mavgame.State("connect_four"))
    with pytest.raises(ValueError, match="checkpoint"):
        agents.make_agent("az:sims=10")


# ---- AZdb pieces ------------------------------------------------------------------------------

def test_azdb_latent_planes():
    from mavgame.az import azdb
    obs = np.random.default_rng(0).random((3, 4, 6, 7)).astype(np.float32)
    out = azdb.latent_planes(obs, [2, 0, 4], 5)
    assert out.shape == (3, 9, 6, 7) and np.array_equal(out[:, :4], obs)
    assert [int(np.argmax(out[k, 4:].sum(axis=(1, 2)))) for k in range(3)] == [2, 0, 4]
    assert out[:, 4:].sum() == 3 * 42
    assert np.array_equal(azdb.latent_planes(obs, 1, 2)[:, 5], np.ones((3, 6, 7), np.float32))
    with pytest.raises(ValueError, match="latent 5"):
        azdb.latent_planes(obs, 5, 5)
    with pytest.raises(ValueError, match="num_players"):
        azdb.latent_planes(obs, 0, 0)


def test_azdb_features_from_selfplay():
    from mavgame.az import azdb
    r = play_games(uniform, mavgame.State("connect_four"), num_games=4, parallel_games=4, num_simulations=6, seed=2)
    phi = azdb.diversity_features(r.obs_after, "connect_four")
    assert phi.shape == (len(r.z), 84)
    # the board after the move: one stone more than before, and the same stones as the next position
    assert np.all(phi.sum(1) == r.ply + 1)
    same_game = r.game[1:] == r.game[:-1]
    assert np.array_equal(r.obs_after[:-1][same_game], r.obs[1:][same_game])
    chess = mavgame.State("chess").observation_tensor()[None]
    f = azdb.diversity_features(chess, "chess")
    assert f.shape == (1, 12 * 64 + 4) and f[0, :768].sum() == 32 and np.all(f[0, 768:] == 1)   # 4 castling rights
    with pytest.raises(ValueError, match="no diversity features"):
        azdb.diversity_features(chess, "go")


def test_azdb_feature_means_and_reward():
    from mavgame.az import azdb
    fm = azdb.FeatureMeans(3, 2, window=4)
    fm.update(0, np.array([[1.0, 0.0], [0.0, 0.0]]))
    fm.update(0, np.array([[1.0, 1.0]]))
    assert np.allclose(fm.psi[0], [2 / 3, 1 / 3])                     # a plain mean below the window
    fm.update(0, np.array([[0.0, 0.0], [0.0, 0.0]]))                  # past the window: weight 2 / 4
    assert np.allclose(fm.psi[0], [1 / 3, 1 / 6])
    assert np.allclose(azdb.FeatureMeans.from_state_dict(fm.state_dict()).psi, fm.psi)
    psi = np.array([[0.0, 0.0], [0.3, 0.4], [2.0, 2.0]])
    assert azdb.nearest_other(psi, 0) == 1 and azdb.nearest_other(psi, 2) == 1
    phi = np.array([[1.0, 0.0], [0.0, 1.0]])
    # player 1, nearest 0: d = (0.3, 0.4), |d| = 0.5; l0 = 1: scale 1 - 0.125
    assert np.allclose(azdb.diversity_reward(phi, psi, 1, l0=1.0), 0.875 * np.array([0.3, 0.4]))
    assert np.allclose(azdb.diversity_reward(phi, psi, 1, l0=0.5), 0.0)         # at distance l0: no reward
    assert np.all(azdb.diversity_reward(phi, psi, 1, l0=0.25) < 0)               # beyond: attraction
    lam = azdb.player_lambdas(5, 0.3)
    assert lam[0] == 1.0 and np.all(lam[1:] == 0.3)
    assert np.allclose(azdb.combined_reward([1.0, 2.0], [0.0, -1.0], 0.25), [0.75, 1.25])
    assert np.allclose(azdb.combined_reward([5.0], [1.0], lam[0]), [1.0])          # player 0: the result only
    with pytest.raises(ValueError, match="lambda"):
        azdb.combined_reward([1.0], [1.0], 1.5)
