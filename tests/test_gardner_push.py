"""The resumable push of the Gardner oracle proofs (mavgame.games.gardner_push, mavgame gardner-push)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mavgame.games.gardner_oracle import load_oracles
from mavgame.games.gardner_push import (Schedule, load_state, oracle_leaves, push, report, report_text,
                                        save_state)

# two #x leaves (one proven at once, one refuted whose mate holds with #2), two drawn leaves, one inner line
SMALL = """oracle white
w1 Nb4 e4 Nxd5+ Ke5 Nf4 Qf6 fxe4 Nb4 : #2 w
w3 b4 c4 d4 e4 f4 : =
w4 b4 cxb4 cxb4 d4 e4 fxe4 fxe4 : #8 w
oracle black
b1 e4 dxe4 fxe4 f4 Be3 Qf5 ?b4 : #1 b
b2 e4 dxe4 fxe4 f4 Be3 Qf5 : =
b3 e4 dxe4 fxe4 f4
"""
TINY = Schedule(mate_nodes=3_000, draw_nodes=3_000, growth=3, rounds=3, max_draw_plies=12, retry_moves=2, tt_log2=16)


def _results(state):
    """Every leaf's queries without what depends on the run (its number, the time taken)."""
    return {k: [{f: v for f, v in a.items() if f not in ("run", "seconds")} for a in e["attempts"]]
            for k, e in state["leaves"].items()}


@pytest.fixture
def small(tmp_path):
    f = tmp_path / "small.txt"
    f.write_text(SMALL)
    return f


@pytest.fixture
def reference(small, tmp_path):
    return push(tmp_path / "ref.json", TINY, oracles=small)


def test_leaves_of_the_shipped_oracles():
    leaves = oracle_leaves(load_oracles())
    mates = [lf for lf in leaves if lf.is_mate]
    assert len(mates) == 137 and len(leaves) - len(mates) == 31   # as `mavgame gardner-proof` counts them
    assert len({lf.key for lf in leaves}) == len(leaves)
    lf = next(lf for lf in mates if lf.label == "[3|1]" and lf.oracle == "white")
    assert (lf.x, lf.mate_side, lf.plies_needed) == (8, "white", 16)
    assert {lf.protect for lf in leaves if not lf.is_mate} == {"white", "black"}


def test_push_small(reference, tmp_path):
    by = {e["label"]: e for e in reference["leaves"].values()}
    assert set(by) == {"w1", "w3", "w4", "b1", "b2"}
    assert by["w1"]["status"] == "proven" and by["w1"]["mate_plies"] == 3
    assert len(by["w1"]["attempts"]) == 1          # a proven leaf is never asked again
    assert by["b1"]["status"] == "refuted" and by["b1"]["holds_with"] == 2
    # drawn leaves: one query per round, each to a horizon no shallower than the last
    for lab in ("w3", "b2"):
        att = by[lab]["attempts"]
        assert [a["budget"] for a in att] == [3_000 * 3 ** r for r in range(len(att))]
        assert all(a["kind"] == "noloss" and a["bound"] == 12 for a in att)
        assert by[lab]["horizon"] == max(a["depth_done"] if a["status"] == "unknown" else 12 for a in att) >= 2
    rep = report(reference)
    assert sum(rep["mate"].values()) == 3 and rep["mate"]["proven"] >= 1 and rep["mate"]["refuted"] == 1
    assert rep["draw"] == {"proven": 2}
    assert rep["queries"] == sum(len(e["attempts"]) for e in reference["leaves"].values())
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]   # the atomic writes left nothing behind


def test_resume_after_a_stop_redoes_nothing(reference, small, tmp_path):
    path = tmp_path / "s.json"
    first = push(path, TINY, oracles=small, max_queries=3)
    assert sum(len(e["attempts"]) for e in first["leaves"].values()) == 3
    again = push(path, None, oracles=small)       # the state's own schedule
    assert again["runs"] == 2
    assert _results(again) == _results(reference)
    assert sum(a["run"] == 1 for e in again["leaves"].values() for a in e["attempts"]) == 3
    # a finished push asks nothing more
    before = json.loads(path.read_text())
    third = push(path, None, oracles=small)
    assert _results(third) == _results(before) and third["runs"] == 3


def test_kill_mid_way_and_resume(reference, small, tmp_path):
    path = tmp_path / "k.json"
    cmd = [sys.executable, "-m", "mavgame", "gardner-push", "--state", str(path), "--oracles", str(small),
           "--no-progress", "--mate-nodes", "3000", "--draw-nodes", "3000", "--growth", "3", "--rounds", "3",
           "--max-draw-plies", "12", "--retry-moves", "2", "--tt-log2", "16"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    n, t0 = 0, time.monotonic()
    while proc.poll() is None and time.monotonic() - t0 < 60:
        try:
            st = load_state(path)
        except ValueError:   # never: the file is replaced atomically
            raise
        n = 0 if st is None else sum(len(e["attempts"]) for e in st["leaves"].values())
        if n >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = load_state(path)                     # still a valid state
    done_before = sum(len(e["attempts"]) for e in killed["leaves"].values())
    assert 2 <= done_before < sum(len(e["attempts"]) for e in reference["leaves"].values())   # killed mid-way
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "#x leaves: 3:" in r.stdout
    final = load_state(path)
    assert _results(final) == _results(reference)
    assert sum(a["run"] == 1 for e in final["leaves"].values() for a in e["attempts"]) == done_before
    for att in _results(final).values():          # no query twice
        keys = [(a["kind"], a["bound"], a["budget"]) for a in att]
        assert len(keys) == len(set(keys))


def _att(kind, bound, budget, status, mate_plies=None, depth_done=-1):
    return {"kind": kind, "bound": bound, "budget": budget, "status": status, "mate_plies": mate_plies,
            "depth_done": depth_done, "nodes": budget // 2, "seconds": 1.0, "run": 1, "line": []}


def test_report_format(tmp_path):
    sched = Schedule(mate_nodes=100, draw_nodes=100, rounds=2)
    mk = lambda lab, x, att: {"label": lab, "oracle": "white", "leaf": f"#{x} w" if x else "=", "fen": "-",  # noqa
                              "x": x, "attempts": att}
    state = {"version": 1, "schedule": sched.__dict__, "oracles": None, "runs": 2, "leaves": {
        "a": mk("A", 3, [_att("mate", 3, 100, "proven", 5)]),
        "b": mk("B", 4, [_att("mate", 4, 100, "unknown"), _att("mate", 4, 400, "unknown")]),
        "c": mk("C", 2, [_att("mate", 2, 100, "refuted", None, 3), _att("mate", 3, 100, "refuted", None, 5),
                         _att("mate", 4, 100, "proven", 7)]),
        "d": mk("D", None, [_att("noloss", 40, 100, "unknown", None, 10), _att("noloss", 40, 400, "unknown", None, 13)]),
        "e": mk("E", None, [_att("noloss", 40, 100, "unknown", None, 9)]),
        "f": mk("F", None, [_att("noloss", 40, 100, "refuted", 7, 6)])}}
    rep = report(state)
    assert rep["mate"] == {"proven": 1, "refuted": 1, "unknown": 1} and rep["mate_budget_max"] == 400
    assert rep["mate_budget_min"] == 400 and rep["mate_untried"] == 0
    assert rep["holds_with"] == ["C #4"]
    assert rep["draw"] == {"proven": 2, "refuted": 1} and rep["horizons"] == {6: 1, 9: 1, 13: 1}
    assert (rep["horizon_min"], rep["horizon_max"]) == (6, 13) and rep["queries"] == 10
    text = report_text(state, details=True).splitlines()
    assert text[0] == ("#x leaves: 3: proven 1, refuted 1, unknown 1 (proof-number search; the unknown ones tried "
                       "with 400 to 400 nodes, 0 not yet tried)")
    assert text[1] == "refuted #x leaves whose mate holds with a larger bound: C #4"
    assert text[2].startswith("drawn/hopeless leaves: 3: proven 2, refuted 1; horizon reached (the protected side "
                              "cannot lose within H plies): min 6, max 13; leaves by H: 6: 1, 9: 1, 13: 1")
    assert text[3].startswith("queries: 10, prover nodes: 800, ")
    assert "  white C #2 w: refuted; holds with #4; retries: #3 refuted, #4 proven [100 nodes]" in text
    assert "  white F =: horizon 6 plies; lost within 7 plies" in text
    path = tmp_path / "r.json"
    save_state(path, state)
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-push", "--state", str(path), "--report"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.splitlines() == report_text(state).splitlines()


def test_bad_inputs(small, tmp_path):
    with pytest.raises(ValueError, match="growth must be an integer in 1..1000, not 0"):
        Schedule(growth=0)
    path = tmp_path / "s.json"
    push(path, TINY, oracles=small, max_queries=1)
    with pytest.raises(ValueError, match=r"another schedule \(mate_nodes: 3000 in the state, 5 asked\)"):
        push(path, Schedule(**{**TINY.__dict__, "mate_nodes": 5}), oracles=small)
    with pytest.raises(ValueError, match="started with oracles"):
        push(path, None)
    with pytest.raises(ValueError, match="max_queries must be an integer >= 0"):
        push(path, None, oracles=small, max_queries=-1)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a gardner-push state"):
        load_state(tmp_path / "bad.json")
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-push", "--state", str(tmp_path / "none.json"),
                        "--report"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "does not exist" in r.stderr
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-push", "--state", str(path), "--oracles", str(small),
                        "--growth", "5"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--growth 5 (the state has 3)" in r.stderr
