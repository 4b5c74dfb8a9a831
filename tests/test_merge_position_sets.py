"""``python -m mavgame.datasets.merge``: merged sets read back with every record, repeats and val sources honoured."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mavgame.datasets.records import DATA_FORMAT, MANIFEST
from mavgame.datasets.store import PositionStore
from mavgame.datasets import merge as mps


def make_set(root: Path, name: str, n_train: int, n_val: int, game="connect_four", fmt=DATA_FORMAT):
    for split, n in (("train", n_train), ("val", n_val)):
        d = root / name / split
        d.mkdir(parents=True)
        recs = [{"game": game, "state": f"{name}-{split}-{i}"} for i in range(n)]
        (d / "shard-00000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        (d / MANIFEST).write_text(json.dumps({"format": fmt, "game": game, "split": split, "records": n,
                                              "shards": [{"file": "shard-00000.jsonl", "records": n}]}))
    return str(root / name)


def lines(path: Path):
    man = json.loads((path / MANIFEST).read_text())
    out = []
    for sh in man["shards"]:
        out += [json.loads(x)["state"] for x in (path / sh["file"]).read_text().splitlines()]
    assert man["records"] == len(out)
    return out


def test_merge_repeats_and_val(tmp_path):
    a = make_set(tmp_path, "a", 3, 2)
    b = make_set(tmp_path, "b", 2, 1)
    counts = mps.merge(str(tmp_path / "m"), [(a, 1), (b, 2)])
    assert counts == {"train": 7, "val": 3, "dropped": 0}
    assert lines(tmp_path / "m" / "train") == [f"a-train-{i}" for i in range(3)] + [f"b-train-{i}" for i in range(2)] * 2
    assert sorted(lines(tmp_path / "m" / "val")) == ["a-val-0", "a-val-1", "b-val-0"]
    counts = mps.merge(str(tmp_path / "m"), [(a, 1), (b, 1)], val_from=[b])   # again: old links replaced
    assert counts == {"train": 5, "val": 1, "dropped": 0}
    assert lines(tmp_path / "m" / "val") == ["b-val-0"]
    assert PositionStore(tmp_path / "m" / "train").game == "connect_four"


def test_training_records_in_val_dropped(tmp_path):
    """Sets drawn from one pool: a position in b's val split is left out of a's training shards."""
    a = make_set(tmp_path, "a", 4, 0)
    b = make_set(tmp_path, "b", 0, 2)
    shard = tmp_path / "a" / "train" / "shard-00000.jsonl"
    recs = [json.loads(x) for x in shard.read_text().splitlines()]
    recs[1]["state"] = recs[3]["state"] = "b-val-1"
    shard.write_text("".join(json.dumps(r) + "\n" for r in recs))
    counts = mps.merge(str(tmp_path / "m"), [(a, 2), (b, 1)], val_from=[b])
    assert counts == {"train": 4, "val": 2, "dropped": 4}
    assert lines(tmp_path / "m" / "train") == ["a-train-0", "a-train-2"] * 2
    assert not (tmp_path / "m" / "train" / "shard-00000.jsonl").is_symlink()
    assert len(shard.read_text().splitlines()) == 4          # the source is untouched
    counts = mps.merge(str(tmp_path / "m"), [(a, 1), (b, 1)], val_from=[b], drop_val_overlap=False)
    assert counts == {"train": 4, "val": 2, "dropped": 0}
    assert "b-val-1" in lines(tmp_path / "m" / "train")


def test_parse_source():
    assert mps.parse_source("runs/x:3") == ("runs/x", 3)
    assert mps.parse_source("runs/x") == ("runs/x", 1)
    assert mps.parse_source("C:/data") == ("C:/data", 1)
    with pytest.raises(ValueError, match="at least 1"):
        mps.parse_source("runs/x:0")


def test_refusals(tmp_path):
    a = make_set(tmp_path, "a", 1, 1)
    h = make_set(tmp_path, "h", 1, 1, game="hex")
    f = make_set(tmp_path, "f", 1, 1, fmt="other-format")
    with pytest.raises(ValueError, match="differs"):
        mps.merge(str(tmp_path / "m1"), [(a, 1), (h, 1)])
    with pytest.raises(ValueError, match="other-format"):
        mps.merge(str(tmp_path / "m2"), [(f, 1)])
    r = subprocess.run([sys.executable, "-m", "mavgame.datasets.merge", str(tmp_path / "m3"),
                        str(tmp_path / "missing")], capture_output=True, text=True)
    assert r.returncode != 0 and "missing" in r.stderr
