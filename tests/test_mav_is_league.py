"""bench/mav_is_league.py end to end on a tiny league: the Elo table anchored at basic MCTS, the token cost of
each agent (MAV-IS shapes measured, MAV-MCTS as simulations x a MAV call), the plot, and a bad shape refused,
with the shipped MAV-IS (the default --model)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mavgame.model.inference import shipped_model_path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "mav_is_league.py"


def test_mav_is_league_runs_and_reports_token_costs(tmp_path):
    out = tmp_path / "lg"
    r = subprocess.run([sys.executable, str(BENCH), "--out", str(out), "--shapes", "1x1",
                        "--mcts", "2", "--openings", "4", "--matchups", "12", "--token-positions", "3",
                        "--no-perfect", "--no-progress", "--copy-prev"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((out / "results.json").read_text())
    rows = {row["agent"]: row for row in res["rows"]}
    assert set(rows) == {"mcts-100", "mav", "mav-is-1x1", "mav-mcts-2"}
    assert rows["mcts-100"]["elo"] == pytest.approx(0.0, abs=1e-6)
    assert rows["mav"]["tokens"] > 20
    assert rows["mav-mcts-2"]["tokens"] == pytest.approx(2 * rows["mav"]["tokens"])
    is_row = rows["mav-is-1x1"]
    assert is_row["spec"].endswith(",copy_prev=1")   # --copy-prev: the decoder writes the %prev_state copies
    assert is_row["tokens"] > rows["mav"]["tokens"] and 0 <= is_row["shape_ok"] <= 1 and 0 <= is_row["final_legal"] <= 1
    assert res["args"]["model"] == str(shipped_model_path("connect_four", "mav_is")) and res["form"] == "full"
    assert res["games"] == 24 and (out / "elo_tokens.png").stat().st_size > 1000
    bad = subprocess.run([sys.executable, str(BENCH), "--out", str(out), "--shapes", "2y1"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "search shape '2y1': expected BREADTHxDEPTH" in bad.stderr


def test_mav_is_gauntlet_plays_every_agent_against_the_reference_only(tmp_path):
    out = tmp_path / "g"
    r = subprocess.run([sys.executable, str(BENCH), "--out", str(out), "--shapes", "1x1", "--mcts", "",
                        "--openings", "3", "--token-positions", "2", "--no-perfect", "--no-progress",
                        "--gauntlet", "mav", "--copy-prev", "--copy-names"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((out / "results.json").read_text())
    rows = {row["agent"]: row for row in res["rows"]}
    assert set(rows) == {"mcts-100", "mav", "mav-is-1x1"} and res["anchor"] == "mav"
    assert rows["mav"]["elo"] == pytest.approx(0.0, abs=1e-6)
    # --copy-prev --copy-names: the decoder writes the %prev_state copies and the node names, in play and in
    # the token-cost traces
    assert rows["mav-is-1x1"]["spec"].endswith(",copy_prev=1,copy_names=1")
    assert rows["mav-is-1x1"]["tokens"] > rows["mav"]["tokens"] and 0 <= rows["mav-is-1x1"]["shape_ok"] <= 1
    # each of the two challengers plays the reference on every opening with both colours, and nobody else
    assert res["games"] == 2 * 3 * 2
    assert rows["mav-is-1x1"]["games"] == 6 and rows["mcts-100"]["games"] == 6 and rows["mav"]["games"] == 12
    bad = subprocess.run([sys.executable, str(BENCH), "--out", str(tmp_path / "b"), "--shapes", "1x1",
                          "--gauntlet", "nobody"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--gauntlet 'nobody': not an agent of this league" in bad.stderr
