"""The AZdb plots (mavgame.analysis.azdb_plots): opening moves and their distinct count, the prior / raw value /
Q bars of a puzzle, the matchmakers' interaction graphs; each writes a PNG and the JSON of what it drew."""
import json

import numpy as np
import pytest

import mavgame

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def team_run(tmp_path_factory):
    import torch
    from mavgame.az.train import AZConfig, AZTrainer
    torch.set_num_threads(1)
    t = AZTrainer(AZConfig(game="connect_four", players=3, matchmaking="psro-cycle", iterations=1,
                           games_per_iteration=3, parallel_games=3, num_simulations=4, blocks=1, channels=8,
                           value_hidden=8, steps_per_iteration=1, batch_size=8, temperature_plies=2))
    t.run_iteration()
    d = tmp_path_factory.mktemp("run")
    t.save(str(d / "checkpoint.pt"))
    return d


def test_opening_moves_and_distinct_counts(team_run, tmp_path):
    from mavgame.analysis.azdb_plots import Players, main, opening_moves
    from mavgame.play.records import Opening
    players = Players(str(team_run / "checkpoint.pt"))
    ops = [Opening("a", ("4",)), Opening("b", ("1", "7"))]
    res = opening_moves(players, ops, [1, 6])
    for s in ("1", "6"):
        grid = res["moves"][s]
        assert len(grid) == 2 and all(len(row) == 3 for row in grid)
        for o, row in zip(ops, grid):
            st = o.state("connect_four")
            assert all(st.is_legal(st.action_from_str(m)) for m in row)
        want = np.mean([len(set(row)) for row in grid])
        assert res["distinct"][s]["mean"] == pytest.approx(want, abs=1e-3)
    # 1 simulation: the prior's argmax of each player
    pri, _ = players.prior_value([ops[0].state("connect_four")], 2)
    st = ops[0].state("connect_four")
    assert res["moves"]["1"][0][2] == st.action_to_str(int(st.legal_actions()[int(np.argmax(pri[0]))]))
    out = str(tmp_path / "op")
    assert main(["openings", "--checkpoint", str(team_run / "checkpoint.pt"), "--openings", "random:2:3",
                 "--sims", "1", "4", "--out", out]) == 0
    assert (tmp_path / "op.png").stat().st_size > 1000 and len(json.load(open(out + ".json"))["openings"]) == 3
    with pytest.raises(ValueError, match="random:PLIES:N"):
        main(["openings", "--checkpoint", str(team_run / "checkpoint.pt"), "--openings", "nofile", "--out", out])


def test_puzzle_bars_and_graphs(team_run, tmp_path):
    from mavgame.analysis.azdb_plots import Players, main, puzzle_bars
    from mavgame.az import puzzles as pz
    st = mavgame.State("connect_four")
    for col in "112233":
        st.push(st.action_from_str(col))            # x wins at once in column 4
    res = puzzle_bars(Players(str(team_run / "checkpoint.pt")), st, ["4"], 8)
    assert res["moves"] == [str(c) for c in range(1, 8)] and res["correct"] == [m == "4" for m in res["moves"]]
    for r in res["players"]:
        assert np.isclose(sum(r["prior"]), 1, atol=1e-3) and len(r["raw_value"]) == 7
        assert r["raw_value"][3] == 1.0               # the winning move ends the game: its exact result
        assert sum(r["visits"]) >= 7
    path = pz.save_puzzles([pz.Puzzle("connect_four", st.text(), ["4"], id="w")], str(tmp_path / "p.csv"))
    assert main(["puzzle", "--checkpoint", str(team_run / "checkpoint.pt"), "--puzzles", path, "--sims", "8",
                 "--out", str(tmp_path / "pz")]) == 0
    assert (tmp_path / "pz.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="--index 5"):
        main(["puzzle", "--checkpoint", str(team_run / "checkpoint.pt"), "--puzzles", path, "--index", "5",
              "--out", str(tmp_path / "pz")])
    assert main(["graphs", "--runs", str(team_run), "--out", str(tmp_path / "g")]) == 0
    g = json.load(open(tmp_path / "g.json"))[team_run.name]
    assert g["matchmaking"] == "psro-cycle" and np.array_equal(np.asarray(g["sigma_white"])[:2, :2], [[0, 1], [1, 0]])
