"""mavgame.analysis.training_overlap: game positions looked up in a tiny position store (the MAV paper's
Figure 8 analysis), by ply, with and without the mirror symmetry."""
from __future__ import annotations

import json

import pytest

from mavgame import _core
from mavgame.analysis import training_overlap as to
from mavgame.datasets.store import PositionWriter
from mavgame.datasets.symmetry import mirror_state_text
from mavgame.play.records import GameRecord, game_key
from mavgame.play.store import ResultStore

OPENING = ["1", "1"]
MOVES = ["2", "2", "3", "3", "4"]          # x completes the bottom row 1-4 at ply 7


def _texts(moves):
    """State texts after 0..len(moves) plies from the empty board."""
    s = _core.State("connect_four", None, 0, 0)
    out = [s.text()]
    for m in moves:
        s.push(m)
        out.append(s.text())
    return out


def _record(state: str, ply: int) -> dict:
    s = _core.State("connect_four", state, 0, 0)
    vals = {s.action_to_str(a): 0.5 for a in s.legal_actions()}
    return {"state": state, "values": vals, "best": next(iter(vals)), "result": "*", "ply": ply}


@pytest.fixture
def tiny(tmp_path):
    """A store of two games (colours swapped) and a position set holding plies 0-3 of the first game and,
    mirrored, its ply-5 position."""
    store = tmp_path / "games.sqlite"
    with ResultStore(str(store)) as st:
        for rnd, (first, second) in enumerate((("mav", "mcts"), ("mcts", "mav"))):
            st.add_game(GameRecord(key=game_key(0, f"o{rnd}", first, second), game="connect_four",
                                   first=first, second=second, opening=f"o{rnd}", round=0, start=None,
                                   opening_moves=OPENING, moves=MOVES, result="1-0", reason="connected"))
    texts = _texts(OPENING + MOVES)
    data = tmp_path / "data"
    with PositionWriter(str(data), "connect_four", val_fraction=0.0) as w:
        for ply, t in enumerate(texts[:4]):
            w.add(_record(t, ply))
        w.add(_record(mirror_state_text("connect_four", texts[5]), 5))
    return store, data, texts


def test_overlap_by_ply_exact_and_mirror(tiny):
    store, data, texts = tiny
    games = to.read_games([str(store)])
    src = to.load_data(f"tiny={data}", "connect_four")
    assert src.records == 5 and len(src.exact) == 5 and src.distinct_by_ply == {0: 1, 1: 1, 2: 1, 3: 1, 5: 1}
    rep = to.overlap(games, [src], n_boot=200)
    assert rep["games"] == 2 and rep["mirror"] is True
    rows = {r["ply"]: r for r in rep["by_ply"]}
    assert sorted(rows) == list(range(8))                   # 8 positions, the finished one included
    for ply in range(8):
        assert rows[ply]["positions"] == 2
        assert rows[ply]["opening"] == (2 if ply < 2 else 0)
        assert rows[ply]["exact"]["in_data"] == (2 if ply <= 3 else 0)
        assert rows[ply]["mirror"]["in_data"] == (2 if ply <= 3 or ply == 5 else 0)
        assert rows[ply]["by_source"] == {"tiny": rows[ply]["exact"]["in_data"]}
    assert rows[3]["exact"]["fraction"] == 1.0 and rows[3]["exact"]["high"] == 1.0
    assert 0.0 < rows[3]["exact"]["low"] < 1.0             # Wilson, n = 2
    # played positions: plies 2..7 (6 a game); exact hits at 2, 3; with the mirror also 5
    ov = rep["overall"]
    assert ov["played"]["positions"] == 12 and ov["all"]["positions"] == 16
    assert ov["played"]["exact"]["fraction"] == round(4 / 12, 4)
    assert ov["played"]["mirror"]["fraction"] == round(6 / 12, 4)
    assert ov["all"]["exact"]["fraction"] == round(8 / 16, 4)
    assert ov["distinct"] == {"positions": 8, "exact": 0.5, "mirror": 0.625}
    # the agents: mav is to move at plies 2, 4, 6 of the game it opens and 3, 5 of the other
    mav = rep["by_agent"]["mav"]
    assert mav["positions_to_move"] == 5 and mav["exact"]["in_data"] == 2 and mav["mirror"]["in_data"] == 3
    assert {p["ply"] for p in mav["by_ply"]} == {2, 3, 4, 5, 6}
    ph = {p["phase"]: p for p in rep["phases"]}
    assert ph["opening"]["positions"] == 12 and ph["middle"]["positions"] == 0


def test_main_writes_json_and_png(tiny, tmp_path):
    pytest.importorskip("matplotlib")
    store, data, _ = tiny
    out, png = tmp_path / "o" / "overlap.json", tmp_path / "overlap.png"
    assert to.main([str(store), "--data", str(data), "--out", str(out), "--plot", str(png),
                    "--bootstrap", "50"]) == 0
    rep = json.loads(out.read_text())
    assert rep["data"][0]["name"] == "data" and rep["data"][0]["distinct_mirror"] == 5
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"


def test_set_root_reads_train_split_only(tmp_path):
    texts = _texts(["4", "4", "3"])
    data = tmp_path / "d"
    with PositionWriter(str(data), "connect_four", val_fraction=0.5) as w:
        splits = [w.add(_record(t, ply)) for ply, t in enumerate(texts)]
    assert "train" in splits and "val" in splits            # the hash puts some in each at 0.5
    src = to.load_data(str(data), "connect_four")
    assert src.records == splits.count("train")


def test_bad_inputs_are_named(tiny, tmp_path, capsys):
    store, data, _ = tiny
    assert to.main([str(store), "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "x.json")]) == 2
    assert "nope" in capsys.readouterr().err
    assert to.main([str(tmp_path / "missing.sqlite"), "--data", str(data), "--out", str(tmp_path / "x.json")]) == 2
    assert "missing.sqlite" in capsys.readouterr().err
    assert to.main([str(store), "--data", f"a={data}", "--data", f"a={data}", "--out", str(tmp_path / "x.json")]) == 2
    assert "named alike" in capsys.readouterr().err
    ttt = tmp_path / "ttt"
    with PositionWriter(str(ttt), "tictactoe", val_fraction=0.0) as w:
        w.add({"state": _core.State("tictactoe", None, 0, 0).text(), "values": {"a1": 0.5}, "best": "a1"})
    with pytest.raises(ValueError, match="tictactoe"):
        to.load_data(str(ttt), "connect_four")
    with pytest.raises(ValueError, match="not a connect_four state"):
        to.canonical_key("connect_four", "")


def test_chess_key_drops_the_clocks():
    a = to.canonical_key("chess", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    b = to.canonical_key("chess", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 3 9")
    assert a == b and to.key_hash(a) == to.key_hash(b)
    assert to.key_hash("x") != to.key_hash("y")
