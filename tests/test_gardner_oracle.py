"""The paper's Gardner oracles as data and their checker (mavgame.games.gardner_oracle, mavgame gardner-proof)."""
import json
import subprocess
import sys

import pytest

from mavgame.games.gardner_oracle import ORACLE_FILE, check, load_oracles, paper_to_mavgame, replay


def _line(lines, label, side="white"):
    return next(ln for ln in lines if ln.label == label and ln.side == side)


def test_coordinate_shift():
    assert paper_to_mavgame("b4") == "a3"
    assert paper_to_mavgame("cxb4") == "bxa3"
    assert paper_to_mavgame("Qxe2+") == "Qxd1+"
    assert paper_to_mavgame("f6") == "e5"
    with pytest.raises(ValueError, match="off the paper's board"):
        paper_to_mavgame("a4")


def test_shipped_file_parses():
    lines = load_oracles()
    assert {ln.side for ln in lines} == {"white", "black"}
    assert _line(lines, "main").tokens == ["b4", "cxb4", "cxb4", "d4", "e4", "f4"]
    assert _line(lines, "[1|2]", "black").root == ("b4",)
    assert sum(1 for ln in lines if ln.leaf and ln.leaf.startswith("#")) >= 30
    assert str(ORACLE_FILE).endswith("mavgame/data/gardner_oracles.txt")


def test_white_main_line_through_move_5_and_black_oracles():
    lines = load_oracles()
    mains = [ln for ln in lines if ln.label == "main" and ln.side == "white"]
    r = replay(mains[-1])   # 4 Bxf4 (from the Black oracle) exf4 5 Qd2 Be5
    assert r.ok and r.sans[6:] == ["Bxe3", "dxe3", "Qc1", "Bd4"]
    for label in ("[4|1]", "[4|2]", "[4|3]", "[4|4]", "[4|5]", "[4|6]", "[5|1]", "[5|2]", "[1|1.4.2.3]"):
        assert replay(_line(lines, label)).ok, label
    assert any("ENGINE'S CHOICE" in ln.note for ln in lines)
    # the Black oracles: one for each of White's seven first moves
    assert {ln.root for ln in lines if ln.side == "black"} == {(m,) for m in ("b4", "c4", "d4", "e4", "f4", "Nb4", "Nd4")}
    assert len(lines) >= 200


def test_replay_recovers_glyphs_and_reports_errors():
    lines = load_oracles()
    r = replay(_line(lines, "main"))
    assert r.ok and r.moves == ["a2a3", "b4a3", "b2a3", "c4c3", "d2d3", "e4e3"]
    r = replay(_line(lines, "[2|1]"))   # ?c3+ : only the bishop
    assert r.ok and r.sans[-1] == "Bb2+" and "the only candidate" in r.recoveries[0]
    r = replay(_line(lines, "[1|2.8.4.3]", "black"))   # ?d2: queen or bishop, the capture on e2 rules out the queen
    assert r.ok and any("rules out Qc1" in x for x in r.recoveries)
    r = replay(_line(lines, "[1|2.5]", "black"))   # transcriber's choice, with the alternative named
    assert r.ok and any("transcriber's choice; also possible: Na3" in x for x in r.recoveries)
    r = replay(_line(lines, "[1|2.8.1]", "black"))
    assert not r.ok and "ambiguous: Nxd4, Bxd4, Qxd4" in r.problems[0]
    r = replay(_line(lines, "[3|6]"))
    assert not r.ok and "no piece or pawn can make the move" in r.problems[0]
    r = replay(_line(lines, "[2|2]"))
    assert not r.ok and "illegal" in r.problems[0]
    r = replay(_line(lines, "[1|2.7]", "black"))
    assert not r.ok and "off the paper's board" in r.problems[0]


def test_malformed_files_name_the_line(tmp_path):
    bad = tmp_path / "o.txt"
    bad.write_text("x1 b4 cxb4\n")
    with pytest.raises(ValueError, match="line 1: a line before any 'oracle' header"):
        load_oracles(bad)
    bad.write_text("oracle white\nx1 b4 cxb4 : #3\n")
    with pytest.raises(ValueError, match="line 2: unknown leaf '#3'"):
        load_oracles(bad)
    bad.write_text("oracle purple\n")
    with pytest.raises(ValueError, match="line 1"):
        load_oracles(bad)
    bad.write_text("oracle black after b4\nx1 c4 d5\n")
    with pytest.raises(ValueError, match="does not start with the oracle's first moves b4"):
        load_oracles(bad)
    bad.write_text("oracle white\nx1 b4 c$4\n")
    with pytest.raises(ValueError, match="malformed move"):
        load_oracles(bad)


SMALL = """oracle white
w1 Nb4 e4 Nxd5+ Ke5 Nf4 Qf6 fxe4 Nb4 : #2 w
w2 Nb4 e4 Nxd5+ Ke5 Nf4 Qf6 fxe4 Nb4 : #1 w -- a leaf that contradicts w1
oracle black
b1 e4 dxe4 fxe4 f4 Be3 Qf5 ?b4 : #1 b
b2 e4 dxe4 fxe4 f4 Be3 Qf5 : =
"""


def test_check_small_oracle(tmp_path):
    f = tmp_path / "small.txt"
    f.write_text(SMALL)
    rep = check(load_oracles(f), mate_nodes=200_000, draw_nodes=50_000, cover_nodes=5_000)
    rows = {r["label"]: r for r in rep.mate_leaves}
    # w1 and w2 reach the same node: the second leaf is reported, the node keeps the last one
    assert any("where another line has" in p for p in rep.problems)
    assert rep.lines == 4 and rep.lines_ok == 4
    assert any("'?b4' -> Na3 (the only candidate)" in r for r in rep.recoveries)
    # Black mates in 2 there, not in 1: the paper-style claim "#1 b" is refuted, and "#2 b" holds instead
    assert rows["b1"]["status"] == "refuted" and rows["b1"]["depth_done"] >= 1
    assert rows["b1"]["holds_with"] == 2 and rows["b1"]["holds_with_plies"] == 3
    held = [ln for ln in rep.text().splitlines() if ln.startswith("refuted leaves whose mate holds")]
    assert len(held) == 1 and "b1 #2" in held[0]
    w = [r for r in rep.mate_leaves if r["label"] in ("w1", "w2")][0]
    assert w["status"] == "refuted"     # the '#1 w' leaf replaced '#2 w'
    assert rep.leaves["white"] == {"#x": 1} and rep.leaves["black"] == {"#x": 1, "=": 1}
    assert rep.draw_leaves[0]["claim"] == "Black cannot lose within 8 plies"
    # every inner node where the oracle's opponent moves lists all its legal replies
    assert rep.coverage and all(r["status"] in ("in the tree", "hopeless (mate proven)", "not covered")
                                for r in rep.coverage)
    assert sum(r["status"] == "in the tree" for r in rep.coverage) >= 3
    text = rep.text()
    assert "lines: 4 transcribed, 4 replayed legally" in text and "refuted" in text


def test_check_proves_a_mate_leaf(tmp_path):
    f = tmp_path / "m.txt"
    f.write_text("oracle white\nw1 Nb4 e4 Nxd5+ Ke5 Nf4 Qf6 fxe4 Nb4 : #2 w\n")
    for method in ("pns", "alphabeta"):
        rep = check(load_oracles(f), mate_nodes=200_000, cover_nodes=2_000, mate_method=method)
        r = rep.mate_leaves[0]
        assert rep.budgets["mate_method"] == method
        assert r["status"] == "proven" and r["mate_plies"] == 3 and r["line"][0] == "c2c3" and len(r["line"]) == 3
    with pytest.raises(ValueError, match="mate_method"):
        check(load_oracles(f), mate_method="dfpn")


def test_check_shipped_oracles_quick():
    rep = check(load_oracles(), mate_nodes=2_000, draw_plies=4, draw_nodes=20_000, cover_moves=1, cover_nodes=500)
    s = rep.summary()
    assert s["lines_replayed"] == s["lines"] - len({p.split()[0] for p in rep.problems if " move " in p})
    assert s["draw_leaves"].get("proven", 0) >= 5
    assert all(r["plies_needed"] >= 2 for r in rep.mate_leaves)
    assert s["replies"]["in the tree"] >= 40


def test_cli_gardner_proof(tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-proof", "--mate-nodes", "1000", "--draw-nodes",
                        "5000", "--cover-nodes", "200", "--no-progress", "--json", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "transcribed" in r.stdout and "recoveries:" not in r.stdout
    d = json.loads(out.read_text())
    assert d["summary"]["lines"] >= 50 and d["problems"] and d["recoveries"]
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-proof", "--oracles", str(tmp_path / "none.txt")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--oracles" in r.stderr


@pytest.mark.slow
def test_paper_leaves_3_1_proven_and_3_5_refuted():
    # [3|1] "#8 w": White mates within 16 plies (Black to move); [3|5] "#8 w": no White mate within 15 plies
    # (an exhaustive search; Fairy-Stockfish finds a mate in 10 there at depth 24)
    from mavgame.games.gardner_prover import Prover
    lines = load_oracles()
    p = Prover(22)
    b31 = replay(_line(lines, "[3|1]"))
    b35 = replay(_line(lines, "[3|5]"))
    from mavgame.games.gardner import Gardner
    s31, s35 = Gardner(), Gardner()
    for m in b31.moves:
        s31.push(m)
    for m in b35.moves:
        s35.push(m)
    r = p.mates_in(s31, 8, side="white")
    assert r.proven and r.mate_plies <= 16
    r = p.mates_in(s35, 8, side="white")
    assert r.refuted and r.depth_done == 15
