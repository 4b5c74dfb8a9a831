"""``python -m mavgame.analysis.hard_positions``: exactly the positions the searchless agent plays wrong, each once,
resumable."""
import json
from pathlib import Path

import pytest

from mavgame import State
from mavgame.agents.mav import MAVGreedyAgent
from mavgame.datasets.store import PositionStore, PositionWriter
from mavgame.analysis import hard_positions as hp

ROOT = Path(__file__).resolve().parents[1]

GAME = "connect_four"
MODEL = ROOT / "mavgame" / "data" / "mav_connect_four.safetensors"
LINES = ["4453", "44", "1234567", "4455", "3344521", "1", "77", "4444", "123", "6655"]


def make_set(root: Path, mirror: bool = False):
    """A position set whose labels make the agent right on half the positions and wrong on the rest."""
    agent = MAVGreedyAgent(mirror=mirror)
    agent.setup(GAME, seed=0)
    recs, wrong = [], []
    for i, line in enumerate(LINES):
        st = State(GAME, line)
        mv, _, _ = agent.decide(st)
        bad = i % 2 == 1
        vals = {m: (0.0 if m == mv else 1.0) if bad else (1.0 if m == mv else 0.0) for m in st.legal_moves}
        rec = {"state": st.text(), "values": vals, "best": max(vals, key=vals.get), "ply": len(line),
               "result": "*"}
        recs.append(rec)
        if bad:
            wrong.append(rec["state"])
    recs.append(dict(recs[1]))                             # a repeat: asked once
    won = State(GAME, "1212121")                           # a finished game: not asked
    recs.append({"state": won.text(), "values": {}, "result": won.result(), "ply": 7})
    with PositionWriter(root, GAME, val_fraction=0.0) as w:
        for r in recs:
            w.add(r)
    return wrong


def states(path: Path):
    store = PositionStore(path / "train")
    return [store.record(i)["state"] for i in range(len(store))]


def test_hard_positions_are_the_wrong_ones(tmp_path, capsys):
    wrong = make_set(tmp_path / "src")
    out = tmp_path / "hard"
    args = [str(MODEL), str(tmp_path / "src"), "--out", str(out), "--chunk", "3"]
    assert hp.main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert sorted(states(out)) == sorted(wrong)
    assert summary["asked"] == len(LINES) and summary["played_wrong"] == len(wrong)
    assert summary["by_phase"]["opening"]["asked"] == len(LINES)
    assert json.loads((out / "train" / "manifest.json").read_text())["info"]["hard_positions"]["asked"] == len(LINES)
    assert len(PositionStore(out / "val")) == 0

    # resumable: a missing chunk is asked again, the rest are read back; the set comes out the same
    parts = sorted((out / "parts").glob("part-*.jsonl"))
    assert len(parts) == 4
    parts[1].unlink()
    assert hp.main(args) == 0
    capsys.readouterr()
    assert sorted(states(out)) == sorted(wrong)

    # another recipe on the same folder is refused, naming the recipe it was started with
    with pytest.raises(SystemExit, match="another recipe"):
        hp.main(args + ["--scoring", "max"])


def test_mirror_agent_and_bad_options(tmp_path, capsys):
    wrong = make_set(tmp_path / "src", mirror=True)
    model = str(MODEL)
    assert hp.main([model, str(tmp_path / "src"), "--out", str(tmp_path / "h"), "--mirror", "--workers", "2",
                    "--chunk", "4"]) == 0
    capsys.readouterr()
    assert sorted(states(tmp_path / "h")) == sorted(wrong)
    with pytest.raises(SystemExit):
        hp.main([model, str(tmp_path / "src"), "--out", str(tmp_path / "x"), "--chunk", "0"])
