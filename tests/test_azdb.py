"""AZdb (issue 19): the team's self-play plumbing (latents and root-to-leaf intrinsic rewards in C), the
reward weights against equation 8, intrinsic value targets, PSRO-Nash on known games, the sub-additive
selection rules on constructed statistics, MCTS U per action, and with torch the team's training,
resume and agent."""
import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.az import azdb, play_games
from mavgame.az.matchmaking import Matchmaker, nash_equilibrium
from mavgame.az.subadditive import PlayerSearch, select_player


def test_nash_known_games():
    # matching pennies: 1/2 each, value 0
    x, y, v = nash_equilibrium([[1, -1], [-1, 1]])
    assert np.allclose(x, [0.5, 0.5], atol=1e-2) and np.allclose(y, [0.5, 0.5], atol=1e-2) and abs(v) < 1e-2
    # rock paper scissors with a doubled payoff for rock beating scissors: x = (1/4, 5/12, 1/3)
    a = np.array([[0, -1, 2], [1, 0, -1], [-1, 1, 0]], float)
    x, y, v = nash_equilibrium(a)
    assert np.allclose(x, [0.25, 5 / 12, 1 / 3], atol=1e-2) and abs(v - 1 / 12) < 1e-2
    # a dominant row and column: pure equilibrium
    x, y, v = nash_equilibrium([[3, 1], [2, 0]])
    assert x[0] > 0.99 and y[1] > 0.99 and abs(v - 1) < 1e-2
    with pytest.raises(ValueError, match="payoff"):
        nash_equilibrium(np.zeros((0, 2)))


def test_matchmaker_psro_and_uniform():
    m = Matchmaker(3, "psro")
    # white 0 always beats black 1, loses to black 0 never played -> psro mixtures over j <= i only
    m.record([1, 1, 0], [0, 1, 1], [1.0, -1.0, 1.0])
    vs_white, vs_black = m.mixtures(0)
    assert np.allclose(vs_white, [1, 0, 0]) and np.allclose(vs_black, [1, 0, 0])   # player 0: self-play
    vs_white, vs_black = m.mixtures(1)
    assert vs_white[2] == 0 and vs_black[2] == 0 and np.isclose(vs_white.sum(), 1)
    # payoff[:2, :2] = [[0, 1], [1, -1]]: column player's Nash y = (2/3, 1/3), row player's x = (2/3, 1/3)
    assert np.allclose(vs_white[:2], [2 / 3, 1 / 3], atol=2e-2) and np.allclose(vs_black[:2], [2 / 3, 1 / 3], atol=2e-2)
    lat, side = m.pairings(30, np.random.default_rng(0))
    assert lat.shape == (30, 2) and np.all(lat[np.arange(30), side] == np.arange(30) % 3)
    assert np.all(lat[np.arange(30), 1 - side] <= np.arange(30) % 3)        # psro: opponents j <= i
    u = Matchmaker(3, "uniform")
    assert np.allclose(u.mixtures(0)[0], [1 / 3] * 3)
    r = Matchmaker.from_state_dict(m.state_dict())
    assert np.array_equal(r.count, m.count) and np.allclose(r.payoff(), m.payoff())
    with pytest.raises(ValueError, match="matchmaking"):
        Matchmaker(3, "cycle")


def _ps(n, q, u, actions=None):
    n = np.asarray(n)
    return PlayerSearch(np.arange(len(n)) if actions is None else np.asarray(actions), n, np.asarray(q, float),
                        np.asarray(u, float))


def test_selection_rules_on_constructed_statistics():
    nan = float("nan")
    p0 = _ps([10, 2, 0], [0.2, 0.1, nan], [0.05, 0.3, 0.9])      # V 0.2, LCB max(0.15, -0.2) = 0.15
    p1 = _ps([4, 8, 0], [0.6, 0.3, nan], [0.5, 0.1, 0.8])        # V 0.6, LCB max(0.1, 0.2) = 0.2, most visits 8
    p2 = _ps([12, 0, 0], [0.55, nan, nan], [0.45, 1.0, 1.0])     # V 0.55, LCB 0.1, most visits 12
    s = [p0, p1, p2]
    assert select_player(s, "visits") == (2, 0)
    assert select_player(s, "value") == (1, 1)                     # player 1 plays its most visited action
    assert select_player(s, "lcb") == (1, 1)
    # gap: Gap = max U = 1.0 -> every player is a candidate -> the lowest V (player 0)
    assert select_player(s, "gap") == (0, 0)
    # a small explicit gap: candidates V >= 0.6 - 0.1 -> players 1 and 2 -> the lower V, player 2
    assert select_player(s, "gap", gap=0.1) == (2, 0)
    with pytest.raises(ValueError, match="rule"):
        select_player(s, "entropy")


def test_mcts_exposes_u_per_action():
    from mavgame.search.mcts import MCTS
    st = mavgame.State("connect_four")
    r = MCTS("playout", num_simulations=60, seed=1).search(st)
    assert r.u.shape == r.visits.shape == r.q.shape
    # U = c(s) P sqrt(N) / (1 + N(a)) with AlphaZero's c(s): recompute from the priors and counts
    assert np.all(r.u > 0) and np.argmin(r.u / r.prior) == np.argmax(r.visits)


def test_reward_weights_match_equation_8():
    rng = np.random.default_rng(3)
    psi = rng.random((4, 84))
    lam = azdb.player_lambdas(4, 0.5)
    w = azdb.reward_weights(psi, "connect_four", (4, 6, 7), lam, l0=2.0)
    obs = (rng.random((5, 4, 6, 7)) < 0.3).astype(np.float32)
    phi = azdb.diversity_features(obs, "connect_four")
    for i in range(1, 4):
        assert np.allclose((w[i] * obs).sum((1, 2, 3)), azdb.diversity_reward(phi, psi, i, 2.0), rtol=1e-4, atol=1e-5)
    assert not w[0].any()                                    # player 0 (lambda 1): no intrinsic reward
    # by hand for two players: psi_1 - psi_0 = e_0 * 0.5, distance 0.5, l0 1 -> scale 1 - 0.125
    psi2 = np.zeros((2, 84))
    psi2[1, 0] = 0.5
    w2 = azdb.reward_weights(psi2, "connect_four", (4, 6, 7), azdb.player_lambdas(2, 0.5), l0=1.0)
    assert np.isclose(w2[1, 0, 0, 0], 0.875 * 0.5) and np.count_nonzero(w2) == 1
    # chess: castling rights enter through cell (0, 0) of their planes
    psic = np.zeros((2, 772))
    psic[1, 768] = 0.5
    wc = azdb.reward_weights(psic, "chess", (18, 8, 8), azdb.player_lambdas(2, 0.5), l0=1.0)
    assert np.isclose(wc[1, 13, 0, 0], 0.875 * 0.5) and np.count_nonzero(wc) == 1


def test_intrinsic_targets_by_hand():
    # one game of 9 moves (plies 0..8), shuffled rows; r_d = ply + 1
    ply = np.array([3, 0, 8, 1, 5, 2, 7, 4, 6])
    game = np.zeros(9, int)
    part, boot = azdb.intrinsic_targets(ply + 1.0, game, ply, n_td=4)
    by_ply = {int(p): (float(part[k]), int(boot[k])) for k, p in enumerate(ply)}
    assert by_ply[0][0] == 1 + 3 and ply[by_ply[0][1]] == 4          # r(0) + r(2), bootstrap at ply 4
    assert by_ply[6][0] == 7 + 9 and by_ply[6][1] == -1              # ply 8 exists, ply 10 does not
    assert by_ply[8][0] == 9 and by_ply[8][1] == -1
    with pytest.raises(ValueError, match="even"):
        azdb.intrinsic_targets(ply, game, ply, n_td=3)


def test_selfplay_team_rows_latents_and_path_rewards():
    """C hands each leaf's game, the root player's latent and its intrinsic rewards summed from root to
    leaf; checked against a replay of the game record in Python."""
    start = mavgame.State("connect_four")
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 4, 6, 7)).astype(np.float32)
    latents = np.array([[1, 2], [0, 1], [2, 2]])
    seen = []

    def evaluate(obs, game, latent, reward, own):
        seen.append((obs.copy(), game.copy(), latent.copy(), reward.copy(), own.copy()))
        return np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32)
    r = play_games(evaluate, start, num_games=3, parallel_games=3, seed=2, num_simulations=6,
                   latents=latents, reward_weights=w, temperature_plies=0)
    assert len(r.z) > 0 and len(seen) > 0
    for obs, game, latent, reward, own in seen:
        side = obs[:, 3, 0, 0].astype(int)                           # plane 3: second player to move
        # own rows: the root player moves at the leaf; its latent is that side's player
        assert np.all(latent[own] == latents[game[own], side[own]])
        assert np.all(latent[~own] == latents[game[~own], 1 - side[~own]])
    # a depth-1 leaf: one move of the root player -> reward = w[latent] . obs(leaf)
    hits = 0
    for obs, game, latent, reward, own in seen:
        for k in np.nonzero(~own)[0]:
            stones = obs[k, :2].sum()
            if stones in (1, ):                                     # the first move of a game, depth 1
                assert np.isclose(reward[k], (w[latent[k]] * obs[k]).sum(), atol=1e-4)
                hits += 1
    assert hits > 0
    sp = _core.AZSelfPlay(start, parallel_games=1, num_games=2, num_simulations=4)
    with pytest.raises(ValueError, match="latents must have one row per game"):
        sp.set_team(np.zeros((3, 2), np.int32))
    with pytest.raises(ValueError, match="latent -1"):
        sp.set_team(np.array([[0, -1], [0, 0]]))
    with pytest.raises(ValueError, match="weights must have shape"):
        sp.set_team(np.zeros((2, 2), np.int32), np.zeros((1, 4, 6, 6), np.float32))
    cached = _core.AZSelfPlay(start, parallel_games=1, num_games=1, num_simulations=4, cache_log2=4)
    with pytest.raises(ValueError, match="cache"):
        cached.set_team(np.zeros((1, 2), np.int32))


def _team_config(**kw):
    from mavgame.az.train import AZConfig
    base = dict(game="connect_four", players=3, iterations=2, games_per_iteration=6, parallel_games=6,
                num_simulations=4, blocks=1, channels=8, value_hidden=8, steps_per_iteration=2, batch_size=16,
                temperature_plies=4)
    base.update(kw)
    return AZConfig(**base)


@pytest.mark.slow
def test_team_training_resume_and_agent(tmp_path):
    pytest.importorskip("torch")
    import torch as _t
    from mavgame.az.train import AZTrainer
    from mavgame.agents import make_agent
    _t.set_num_threads(1)
    t = AZTrainer(_team_config())
    rec = t.run_iteration()
    assert rec["kept"] <= rec["positions"] and len(rec["psi_nearest"]) == 3 and "intrinsic" in rec
    assert t.net(_t.zeros((2,) + t.obs_shape))[2].shape == (2,)
    assert t.obs_shape == (4 + 3, 6, 7) and t.matchmaker.count.sum() == 6
    path = str(tmp_path / "team.pt")
    t.save(path)
    u = AZTrainer.load(path)
    assert np.allclose(u.features.psi, t.features.psi) and np.array_equal(u.matchmaker.count, t.matchmaker.count)
    a, b = t.run_iteration(), u.run_iteration()
    assert a["loss"] == b["loss"] and a["payoff"] == b["payoff"]
    agent = make_agent(f"azdb:checkpoint={path},sims=8,select=lcb")
    st = mavgame.State("connect_four")
    assert st.is_legal(agent.act(st)) and agent.chosen[-1] in range(3)
    assert st.is_legal(make_agent(f"azdb:checkpoint={path},sims=8,player=2").act(st))
    with pytest.raises(ValueError, match="AZdb team"):
        make_agent(f"az:checkpoint={path},sims=8")
    with pytest.raises(ValueError, match="cache"):
        _team_config(cache_log2=4).check()


def test_puzzle_files_and_scoring(tmp_path):
    from mavgame.az import puzzles as pz
    from mavgame.agents import CallableAgent
    # x to move wins at once in column 4 only (x on 1 2 3 of the bottom row, o above)
    st = mavgame.State("connect_four")
    for col in "112233":
        st.push(st.action_from_str(col))
    p = pz.Puzzle("connect_four", st.text(), ["4"], id="t1")
    path = pz.save_puzzles([p, p], str(tmp_path / "c4.csv"))
    back = pz.load_puzzles(path)
    assert [q.position for q in back] == [p.position] * 2 and back[0].solutions == ["4"] and back[0].id == "t1"
    third = CallableAgent(lambda s: s.action_from_str("4"), name="four")
    first = CallableAgent(lambda s: s.action_from_str("1"), name="one")
    assert pz.score_agent(third, back).tolist() == [1, 1] and pz.score_agent(first, back).tolist() == [0, 0]
    bad = tmp_path / "bad.csv"
    bad.write_text("position:connect_four,solutions\n" + st.text() + ",9\n")
    with pytest.raises(ValueError, match="bad.csv:2"):
        pz.load_puzzles(str(bad))
    nogame = tmp_path / "nogame.csv"
    nogame.write_text(st.text() + ",3\n")
    with pytest.raises(ValueError, match="name the game"):
        pz.load_puzzles(str(nogame))
    pytest.importorskip("chess")
    epd = tmp_path / "s.epd"
    epd.write_text('6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - bm Rd8#; id "mate1";\n')
    e = pz.load_puzzles(str(epd))
    assert e[0].game == "chess" and e[0].solutions == ["d1d8"] and e[0].id == "mate1"
    assert e[0].solution_actions() == [e[0].state().action_from_str("d1d8")]


@pytest.mark.slow
def test_generate_connect_four_puzzle_is_unique_win():
    from mavgame.az import puzzles as pz
    from mavgame.games.connect_four import ConnectFour
    ps = pz.generate_connect_four(1, plain_sims=4, seed=3, min_plies=14, max_plies=20, max_seconds=1.0)
    assert len(ps) == 1
    p = ps[0]
    r = ConnectFour(moves=p.info["moves"]).solve(weak=True)
    assert [m for m, v in r.move_scores.items() if v > 0] == p.solutions
    assert p.info["plain_move"] not in p.solutions


@pytest.mark.slow
def test_generate_chess_only_moves_verified_by_stockfish():
    import os
    import shutil
    pytest.importorskip("chess")
    os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + "/usr/games"
    if not shutil.which("stockfish"):
        pytest.skip("no stockfish")
    import chess
    import chess.engine
    from mavgame.az import puzzles as pz
    ps = pz.generate_chess(1, depth=8, seed=1)
    assert len(ps) == 1 and ps[0].game == "chess"
    board = chess.Board(ps[0].position)
    with chess.engine.SimpleEngine.popen_uci(shutil.which("stockfish")) as eng:
        infos = eng.analyse(board, chess.engine.Limit(depth=8), multipv=2)
    s1 = infos[0]["score"].pov(board.turn).score(mate_score=100000)
    s2 = infos[1]["score"].pov(board.turn).score(mate_score=100000)
    assert s1 >= 200 and s1 - s2 >= 200 and ps[0].solutions == [infos[0]["pv"][0].uci()]


def test_az_puzzles_command(tmp_path, capsys):
    import json
    from mavgame.cli import main
    st = mavgame.State("connect_four")
    for col in "112233":
        st.push(st.action_from_str(col))
    f = tmp_path / "p.csv"
    f.write_text("position:connect_four,solutions,id\n" + st.text() + ",4,a\n")
    out = tmp_path / "s.json"
    assert main(["az-puzzles", "score", "--puzzles", str(f), "solver_mcts", "--json", str(out), "--no-progress"]) == 0
    assert "solver_mcts: 1/1" in capsys.readouterr().out
    assert json.loads(out.read_text())["solver_mcts"] == [1]


def test_play_time_path_rewards_equal_python_sum():
    """_core.az_path_rewards (the C sum shared with self-play's row_info) equals equation 8 summed in
    Python over the root mover's moves of a path; bad paths and weights are refused by name."""
    rng = np.random.default_rng(5)
    shape = (4, 6, 7)
    psi = rng.uniform(0.0, 0.1, size=(3, 84))
    lam = azdb.player_lambdas(3, 0.5)
    w = azdb.reward_weights(psi, "connect_four", shape, lam, l0=1.0)
    root = mavgame.State("connect_four")
    for a in (3, 2, 3):
        root.push(a)
    paths = []
    for _ in range(6):
        s, p = root.copy(), []
        for _ in range(int(rng.integers(0, 7))):
            if s.is_terminal():
                break
            a = int(rng.choice(s.legal_actions()))
            s.push(a)
            p.append(a)
        paths.append(p)
    for i in (1, 2):
        got = _core.az_path_rewards(root, paths, w[i])
        for p, g in zip(paths, got):
            s, want = root.copy(), 0.0
            for d, a in enumerate(p):
                s.push(a)
                if d % 2 == 0:                                        # the root mover's moves
                    phi = azdb.diversity_features(s.observation_tensor()[None], "connect_four")
                    want += float(azdb.diversity_reward(phi, psi, i, 1.0)[0])
            assert np.isclose(g, want, atol=1e-4), (i, p, g, want)
    assert _core.az_path_rewards(root, [[]], w[1])[0] == 0.0
    with pytest.raises(ValueError, match=r"paths\[1\]: az: action 9"):
        _core.az_path_rewards(root, [[0], [9]], w[1])
    with pytest.raises(ValueError, match="weights must have"):
        _core.az_path_rewards(root, [[0]], w[1, 0])


def test_search_value_modes():
    v, vd, r = np.array([0.2, 0.2]), np.array([0.4, 0.4]), np.array([0.3, 0.3])
    own = np.array([True, False])
    assert np.allclose(azdb.search_value(v, vd, r, own, 0.5), [0.1 + 0.5 * 0.7, 0.1 - 0.5 * 0.3])
    assert np.allclose(azdb.search_value(v, vd, r, own, 0.5, "vd"), [0.1 + 0.2, 0.1])
    assert np.allclose(azdb.search_value(v, vd, r, own, 0.5, "extrinsic"), v)
    assert np.allclose(azdb.search_value(v, vd, 10 * r, own, 0.0), [1.0, -1.0])          # clipped
    with pytest.raises(ValueError, match="rewards must be one of"):
        azdb.search_value(v, vd, r, own, 0.5, "on")


def _constructed_team(path, lam=0.5):
    """A 2-player team checkpoint whose network plays column 3 by its prior and values every position 0
    (v and v_d), and whose player 1's psi rewards its stones in column 0 (psi_0 = 0)."""
    import torch as _t
    from mavgame.az.train import AZTrainer
    t = AZTrainer(_team_config(players=2, lam=lam, l0=10.0))
    with _t.no_grad():
        for p in t.net.parameters():
            p.zero_()
        t.net.p_fc.bias[3] = 1.0
    psi = np.zeros_like(t.features.psi)
    col0 = np.zeros((2, 6, 7))
    col0[:, :, 0] = 0.5
    psi[1] = col0.reshape(-1)
    t.features.psi[:] = psi
    t.save(path)
    return psi


def test_play_time_rewards_change_a_players_choice(tmp_path):
    """With the intrinsic path rewards on (the default), player 1 (lambda 0.5) plays the column its
    diversity reward favours; with them off, or for player 0 (lambda 1), it plays the prior's move."""
    pytest.importorskip("torch")
    import torch as _t
    from mavgame.agents.alphazero import AZdbTeam
    from mavgame.agents import make_agent
    _t.set_num_threads(1)
    path = str(tmp_path / "team.pt")
    psi = _constructed_team(path)
    st = mavgame.State("connect_four")
    on = AZdbTeam(path, 60)
    assert on.rewards == "path" and np.allclose(on.psi, psi)
    assert np.allclose(on.weights, azdb.reward_weights(psi, "connect_four", (4, 6, 7), on.lambdas, 10.0))
    assert on.search(1, st).best_action() == 0
    assert on.search(0, st).best_action() == 3
    for mode in ("vd", "extrinsic"):
        off = AZdbTeam(path, 60, rewards=mode)
        assert off.search(1, st).best_action() == 3
        assert off.search(0, st).best_action() == 3
    assert make_agent(f"azdb:checkpoint={path},sims=60,player=1").act(st) == 0
    assert make_agent(f"azdb:checkpoint={path},sims=60,player=1,rewards=extrinsic").act(st) == 3
    with pytest.raises(ValueError, match="rewards must be one of"):
        AZdbTeam(path, 8, rewards="on")
