"""The AZdb paper's LCB move choice (az and azdb agents' move=lcb) and its per-opening player lookup of
appendix C.5 (mavgame.az.lookup, azdb:...,select=lookup, the table builder)."""
import json

import numpy as np
import pytest

import mavgame
from mavgame.az.azdb import lcb_action
from mavgame.az.lookup import LookupTable, leave_one_seed_out


def test_lcb_action_differs_from_most_visits():
    nan = float("nan")
    # most visited is action 7 (Q 0.1, U 0.05 -> LCB 0.05); action 8 has Q 0.6, U 0.3 -> LCB 0.3; 9 unvisited
    assert lcb_action([7, 8, 9], [20, 6, 0], [0.1, 0.6, nan], [0.05, 0.3, 2.0]) == 8
    # a large U sinks a high Q
    assert lcb_action([7, 8], [20, 1], [0.1, 0.9], [0.05, 0.9]) == 7
    # ties: more visits, then the lower index
    assert lcb_action([1, 2, 3], [3, 5, 5], [0.5, 0.5, 0.5], [0.1, 0.1, 0.1]) == 2
    with pytest.raises(ValueError, match="visited"):
        lcb_action([1, 2], [0, 0], [nan, nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="lengths"):
        lcb_action([1, 2], [1], [0.0], [0.0])


def _table():
    st = mavgame.State("connect_four")
    # 2 openings ("4", "4 4") x 2 colours x 3 players x 3 seeds
    scores = np.zeros((2, 2, 3, 3))
    scores[0, 0] = [[1, 1, 0], [0, 0, 0], [-1, -1, -1]]        # opening "4", first player: player 0 best
    scores[0, 1] = [[-1, -1, -1], [0, 1, 1], [0, 0, 0]]       # second player: player 1
    scores[1, 0] = [[0, 0, 0], [0, 0, 0], [1, 1, 1]]          # opening "4 4": player 2 as first
    scores[1, 1] = [[1, -1, 1], [0, 0, 0], [0, 0, 1]]         # player 0 (mean 1/3) ties player 2 (1/3): lower index
    return LookupTable("connect_four", [(None, ("4",)), (None, ("4", "4"))], ["a", "b"], scores), st


def test_lookup_table_best_and_openings(tmp_path):
    t, st = _table()
    assert t.best().tolist() == [[0, 1], [2, 0]]
    # seed 1 alone: the second player of "4 4" ties at 0 between players 1 and 2 (p0 lost): player 1
    assert t.best(seeds=[1]).tolist() == [[0, 1], [2, 1]] and t.best(seeds=[0])[0, 1] == 1
    s = mavgame.State("connect_four")
    for m in ("4", "4", "3"):
        s.push(m)
    assert t.opening_of(s.root_text(), s.history(), st.root_text()) == 1     # the longest opening
    assert t.player_for(s, 0) == 2 and t.player_for(s, 1) == 0
    s2 = mavgame.State("connect_four")
    s2.push("4")
    s2.push("1")
    assert t.player_for(s2, 1) == 1
    s3 = mavgame.State("connect_four")
    s3.push("1")
    assert t.player_for(s3, 0) is None
    back = LookupTable.load(t.save(str(tmp_path / "t.json")))
    assert np.array_equal(back.scores, t.scores) and back.openings == t.openings and back.best().tolist() == t.best().tolist()
    d = json.loads((tmp_path / "t.json").read_text())
    assert d["openings"][0]["white_best"] == 0 and d["openings"][1]["black_best"] == 0
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not an AZdb lookup table"):
        LookupTable.load(str(tmp_path / "bad.json"))
    with pytest.raises(FileNotFoundError, match="azdb_lookup"):
        LookupTable.load(str(tmp_path / "none.json"))
    with pytest.raises(ValueError, match="in \\[-1, 1\\]"):
        LookupTable("connect_four", [(None, ())], ["x"], np.full((1, 2, 2, 1), 2.0))
    with pytest.raises(ValueError, match="colour"):
        t.player_for(s, 2)


def test_leave_one_seed_out_by_hand():
    t, _ = _table()
    ev = leave_one_seed_out(t)
    # players' mean scores over the 12 games each
    assert ev["players"][0]["score"] == pytest.approx((2 - 3 + 0 + 1) / 12, abs=1e-4)
    assert ev["players"][2]["score"] == pytest.approx((-3 + 0 + 3 + 1) / 12, abs=1e-4)
    # max over latents per game: opening a white [1,1,0], black [0,1,1], b white [1,1,1], b black [1,0,1]
    assert ev["max_over_latents"]["score"] == pytest.approx(9 / 12, abs=1e-4)
    # held-out choices by hand: a-white 0,0,0 (held seed 2: seeds 0,1 -> player 0) -> 1,1,0; a-black:
    # held 0 -> seeds 1,2: player 1 -> 0; held 1 -> seeds 0,2: player 1 (1/2) -> 1; held 2 -> player 1 -> 1;
    # b-white: player 2 -> 1,1,1; b-black: held 0 -> seeds 1,2: p0 0, p2 1/2 -> p2 0; held 1 -> seeds 0,2:
    # p0 1, p2 1/2 -> p0 -1; held 2 -> seeds 0,1: p0 0, p1 0, p2 0 -> p0 1
    assert ev["lookup"]["score"] == pytest.approx((2 + 2 + 3 + 0) / 12, abs=1e-4)
    with pytest.raises(ValueError, match="2 seeds"):
        leave_one_seed_out(LookupTable("connect_four", [(None, ())], ["x"], np.zeros((1, 2, 2, 1))))


@pytest.fixture(scope="module")
def team_path(tmp_path_factory):
    pytest.importorskip("torch")
    import torch
    from mavgame.az.train import AZConfig, AZTrainer
    torch.set_num_threads(1)
    cfg = AZConfig(game="connect_four", players=3, iterations=1, games_per_iteration=3, parallel_games=3,
                   num_simulations=4, blocks=1, channels=8, value_hidden=8, steps_per_iteration=1, batch_size=8,
                   temperature_plies=2)
    t = AZTrainer(cfg)
    t.run_iteration()
    return t.save(str(tmp_path_factory.mktemp("team") / "team.pt"))


@pytest.fixture(scope="module")
def single_path(tmp_path_factory):
    pytest.importorskip("torch")
    from mavgame.az.train import AZConfig, AZTrainer
    t = AZTrainer(AZConfig(game="connect_four", iterations=1, games_per_iteration=2, parallel_games=2,
                           num_simulations=4, blocks=1, channels=8, value_hidden=8, steps_per_iteration=1,
                           batch_size=8))
    return t.save(str(tmp_path_factory.mktemp("single") / "az.pt"))     # untrained: the move rule is what is tested


def test_az_agent_move_lcb(single_path):
    from mavgame.agents import make_agent
    st = mavgame.State("connect_four")
    st.push("4")
    lcb = make_agent(f"az:checkpoint={single_path},sims=30,move=lcb")
    a = lcb.act(st.copy())
    # the same search by hand: its root statistics' LCB move
    ref = make_agent(f"az:checkpoint={single_path},sims=30")
    ref._new(ref._seed)
    r = ref._mcts.search(st.copy())
    assert a == lcb_action(r.actions, r.visits, r.q, r.u) and st.is_legal(a)
    with pytest.raises(ValueError, match="'best'"):
        make_agent(f"az:checkpoint={single_path},sims=8,move=best")


def test_azdb_agent_move_lcb_and_lookup(team_path, tmp_path):
    from mavgame.agents import make_agent
    from mavgame.agents.alphazero import AZdbAgent
    st = mavgame.State("connect_four")
    ag = AZdbAgent(team_path, 12, player=1, move="lcb")
    s = ag.team.search(1, st)
    assert ag.act(st) == lcb_action(s.actions, s.visits, s.q, s.u)
    t, _ = _table()
    path = t.save(str(tmp_path / "lookup.json"))
    look = make_agent(f"azdb:checkpoint={team_path},sims=6,select=lookup,table={path}")
    game = mavgame.State("connect_four")
    game.push("4")
    game.push("4")                       # opening "4 4": the first player is player 2
    look.setup("connect_four", seed=0, player=0)
    look.act(game.copy())
    game.push("1")
    game.push("1")
    look.act(game.copy())
    assert look.chosen == [2, 2]
    look.setup("connect_four", seed=1, player=0)
    other = mavgame.State("connect_four")          # no opening of the table: the best first player overall
    look.act(other)
    # means over openings for the first player: p0 (2/3 + 0)/2, p1 0, p2 (-1 + 1)/2 -> player 0
    assert look.chosen[-1] == 0
    with pytest.raises(ValueError, match="table=PATH"):
        make_agent(f"azdb:checkpoint={team_path},sims=6,select=lookup")
    bad = LookupTable("connect_four", [(None, ())], ["x"], np.zeros((1, 2, 2, 2)))
    with pytest.raises(ValueError, match="2 players"):
        make_agent(f"azdb:checkpoint={team_path},sims=6,select=lookup,table={bad.save(str(tmp_path / 'b.json'))}")


def test_build_table_plays_every_game_and_resumes(team_path, tmp_path):
    from mavgame.analysis.azdb_lookup import build_table, main
    from mavgame.play.records import Opening
    ops = [Opening("o1", ("4",)), Opening("o2", ("3", "5"))]
    log = str(tmp_path / "g.jsonl")
    t = build_table(team_path, "random", ops, 2, sims=3, games_log=log, progress=False, max_plies=6)
    assert t.scores.shape == (2, 2, 3, 2) and np.isfinite(t.scores).all()
    lines = open(log).read().splitlines()
    keys = {(r["opening"], r["colour"], r["player"], r["seed"]) for r in map(json.loads, lines)}
    assert len(lines) == 24 and keys == {(o, c, k, s) for o in (0, 1) for c in (0, 1) for k in range(3) for s in (0, 1)}
    # a rerun plays nothing: the same table from the log (a random opponent would play other games)
    t2 = build_table(team_path, "random", ops, 2, sims=3, games_log=log, progress=False, max_plies=6)
    assert np.array_equal(t.scores, t2.scores) and len(open(log).read().splitlines()) == 24
    out = str(tmp_path / "table.json")
    assert main(["--team", team_path, "--opponent", "random", "--openings", "random:2:2", "--seeds", "2",
                 "--sims", "3", "--max-plies", "6", "--out", out, "--no-progress"]) == 0
    d = json.load(open(out))
    assert d["players"] == 3 and len(d["openings"]) == 2 and "lookup" in d["meta"]["leave_one_seed_out"]
    with pytest.raises(ValueError, match="seeds"):
        build_table(team_path, "random", ops, 0)
