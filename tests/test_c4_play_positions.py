"""mavgame.analysis.c4_play_positions (positions of stored games, solver-annotated, with the generated data's split)
and mavgame.analysis.c4_blunders (an agent's mistakes in stored games, by the solver)."""
import json

import pytest

from mavgame.analysis import c4_blunders, c4_play_positions
from mavgame.games.connect_four import ConnectFour
from mavgame.datasets.store import position_split
from mavgame.play.league import match


def _records(root):
    out = []
    for split in ("train", "val"):
        man = json.loads((root / split / "manifest.json").read_text())
        for sh in man["shards"]:
            out += [(split, json.loads(ln)) for ln in (root / split / sh["file"]).read_text().splitlines()]
        assert man["records"] == sum(1 for s, _ in out if s == split)
    return out


def test_positions_of_stored_games_are_annotated_and_split(tmp_path, capsys):
    store = tmp_path / "games.sqlite"
    match("uct:sims=20", "random", "connect_four", 3, path=str(store), progress=False, seed=5)
    tool = c4_play_positions
    assert tool.main([str(store), "--out", str(tmp_path / "data"), "--val-fraction", "0.3", "--workers", "1",
                      "--min-ply", "12"]) == 0
    counts = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    recs = _records(tmp_path / "data")
    assert counts["train"] + counts["val"] == len(recs) > 0
    assert counts["skipped_ply"] > 0 and counts["skipped_budget"] == 0
    states = [r["state"] for _, r in recs]
    assert len(set(states)) == len(states)  # every distinct position once
    finished = [r for _, r in recs if r["result"] != "*"]
    assert len(finished) == counts["finished"] == 6  # every game's last position, none twice
    for split, r in recs:
        st = ConnectFour(r["state"])
        assert sum(ch in "xo" for ch in r["state"].split()[0]) == r["ply"] >= 12
        assert split == position_split(r["state"], 0.3)
        if r["prev_state"] is not None:  # the transition form's position and move before it
            prev = ConnectFour(r["prev_state"])
            prev.push(r["prev_action"])
            assert prev.text() == r["state"]
        if r["result"] != "*":
            assert st.is_terminal() and r["values"] == {} and r["best"] is None and r["result"] == st.result()
            continue
        scores = st.solve(weak=True).move_scores
        assert r["values"] == {m: 1.0 if s > 0 else 0.0 if s < 0 else 0.5 for m, s in scores.items()}
        assert r["values"][r["best"]] == max(r["values"].values())


def test_bad_store_is_named(tmp_path):
    with pytest.raises(SystemExit):
        c4_play_positions.main([str(tmp_path / "nope.sqlite"), "--out", str(tmp_path / "d")])


def test_blunders_match_the_solver(tmp_path, capsys):
    store = tmp_path / "games.sqlite"
    match("uct:sims=20", "random", "connect_four", 2, path=str(store), progress=False, seed=7)
    tool = c4_blunders
    res = tool.mistakes(str(store), "random")
    # recount by hand: a move is a mistake when another legal move has a better win / draw / loss value
    import sqlite3
    moves = mistakes = 0
    for first, second, opening, played in sqlite3.connect(store).execute(
            "select first, second, opening_moves, moves from games"):
        st = ConnectFour()
        for m in json.loads(opening) + json.loads(played):
            if (first if st.ply % 2 == 0 else second) == "random" and st.ply >= len(json.loads(opening)):
                sc = st.solve(weak=True).move_scores
                moves += 1
                mistakes += sc[m] < max(sc.values())
            st.push(m)
    assert (res["moves"], res["mistakes"]) == (moves, mistakes) and moves > 0
    assert sum(c for c, _ in res["by_phase"].values()) == moves
    assert sum(k for _, k in res["by_phase"].values()) == mistakes
    assert res.get("missed immediate win", 0) + res.get("immediate loss allowed", 0) + res.get("deeper", 0) == mistakes
    with pytest.raises(SystemExit):
        tool.main([str(store), "nobody"])
