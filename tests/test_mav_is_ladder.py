"""``python -m mavgame.analysis.mav_is_ladder``: each MAV-IS shape's games against the searchless MAV, pooled over
stores, with the score's Elo and interval, token costs from a league's results.json, the table and the plot, bad inputs."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from mavgame.play.records import GameRecord
from mavgame.play.store import ResultStore
from mavgame.analysis import mav_is_ladder


AGENTS = {"mav": "mav:model=m.safetensors", "is-2x1": "mav_is:breadth=2,depth=1,copy_prev=1,model=m.safetensors",
          "is-2x2n": "mav_is:breadth=2,depth=2,copy_prev=1,copy_names=1", "mcts": "uct:sims=100"}


def _store(path, games):
    with ResultStore(str(path)) as st:
        st.set_header({"game": "connect_four", "agents": AGENTS})
        for k, (first, second, result) in enumerate(games):
            st.add_game(GameRecord(f"0|o{k}|{first}|{second}", "connect_four", first, second, f"o{k}", 0, None,
                                   [], ["4"], result, "connected"))
    return str(path)


@pytest.fixture()
def stores(tmp_path):
    a = _store(tmp_path / "a.sqlite", [("is-2x1", "mav", "1-0"), ("mav", "is-2x1", "0-1"),
                                       ("mav", "is-2x1", "1/2-1/2"), ("is-2x2n", "mav", "0-1"),
                                       ("mcts", "mav", "1-0"), ("is-2x1", "is-2x2n", "1-0")])
    b = _store(tmp_path / "b.sqlite", [("is-2x1", "mav", "0-1"), ("mav", "is-2x2n", "0-1")])
    return a, b


def test_shape_of_reads_the_spec():
    assert mav_is_ladder.shape_of("mav_is:breadth=4,depth=1,copy_prev=1") == (4, 1, False)
    assert mav_is_ladder.shape_of("mav_is:breadth=2,depth=2,copy_names=true") == (2, 2, True)
    assert mav_is_ladder.shape_of("mav_is") == (2, 1, False)          # the agent's defaults
    assert mav_is_ladder.shape_of("mav:model=x") is None and mav_is_ladder.shape_of("uct:sims=4") is None
    with pytest.raises(ValueError, match="breadth=x"):
        mav_is_ladder.shape_of("mav_is:breadth=x")


def test_ladder_pools_the_stores_and_counts_only_games_against_the_reference(stores):
    rows = mav_is_ladder.ladder(list(stores))
    assert list(rows) == [(2, 1, False), (2, 2, True)]
    r = rows[(2, 1, False)]
    assert (r["wins"], r["draws"], r["losses"], r["games"], r["stores"]) == (2, 1, 1, 4, 2)
    assert r["score"] == pytest.approx(2.5 / 4)
    assert r["elo"] == pytest.approx(-400 * math.log10(1 / 0.625 - 1))
    se = math.sqrt(((2 + 0.25) / 4 - 0.625 ** 2) / 4)
    assert r["low"] == pytest.approx(-400 * math.log10(1 / (0.625 - 1.96 * se) - 1))
    assert r["low"] < r["elo"] < r["high"]
    n = rows[(2, 2, True)]
    assert (n["wins"], n["draws"], n["losses"]) == (1, 0, 1) and n["elo"] == pytest.approx(0.0)


def test_command_line_table_tokens_and_plot(stores, tmp_path):
    res = tmp_path / "results.json"
    res.write_text(json.dumps({"anchor": "mav", "agents": AGENTS, "rows": [
        {"agent": "mav", "spec": AGENTS["mav"], "tokens": 99.0},
        {"agent": "mav-is-2x1", "spec": "mav_is:breadth=2,depth=1,model=m", "tokens": 454.0},
        {"agent": "mav-is-2x2", "spec": "mav_is:breadth=2,depth=2,model=m", "tokens": 1110.0}]}))
    png = tmp_path / "l.png"
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", "--series", f"m={stores[0]},{stores[1]}",
                        "--tokens", f"m={res}", "--out", str(png)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "| 2x1 | 454 | 2 / 1 / 1 | 62.5 % |" in r.stdout and "| 2x2+names | 1,110 | 1 / 0 / 1 | 50.0 % | +0" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", "--series", f"m={stores[0]}",
                        "--out", str(tmp_path / "x.png")], capture_output=True, text=True)
    assert r.returncode == 2 and "give --tokens" in r.stderr and not (tmp_path / "x.png").exists()
    glob_arg = str(Path(stores[0]).parent / "*.sqlite")
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", "--series", f"m={glob_arg}"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "| 2x1 | – | 2 / 1 / 1 |" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--series", "nolabel"], "expected LABEL=STORE"),
    (["--series", "m=/nonexistent/x.sqlite"], "/nonexistent/x.sqlite: no such results store"),
    (["--series", "m=/nonexistent/*.sqlite"], "no store matches"),
])
def test_bad_arguments_name_the_value(args, message):
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", *args], capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr


def test_reference_missing_or_no_shapes(stores, tmp_path):
    with pytest.raises(ValueError, match="no agent 'nobody'"):
        mav_is_ladder.ladder([stores[0]], ref="nobody")
    other = tmp_path / "o.sqlite"
    _store(other, [("mcts", "mav", "1-0")])
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", "--series", f"m={other}",
                        "--tokens", f"x={other}"], capture_output=True, text=True)
    assert r.returncode == 2 and "--tokens" in r.stderr and "LABEL of --series (m)" in r.stderr
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.mav_is_ladder", "--series", f"m={other}"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no game between 'mav' and a mav_is agent" in r.stderr
