"""Position shards and the streaming dataset: split, random access, determinism, no duplicates or gaps."""
import json

import numpy as np
import pytest

from mavgame.model.data import PositionStore, PositionWriter, epoch_permutation, position_split, validate_record


def rec(i):
    return {"state": f"position-{i}", "values": {"m1": 0.25, "m2": (i % 10) / 10}, "best": "m1", "result": "*",
            "ply": i % 30}


def write_set(root, n=230, shard_size=17, val_fraction=0.15):
    with PositionWriter(root, "tictactoe", shard_size=shard_size, val_fraction=val_fraction,
                        info={"note": "test"}) as w:
        splits = [w.add(rec(i)) for i in range(n)]
    return splits


def test_writer_store_roundtrip(tmp_path):
    splits = write_set(tmp_path)
    tr, va = PositionStore(tmp_path / "train"), PositionStore(tmp_path / "val")
    assert len(tr) + len(va) == 230 and len(va) == splits.count("val") and 10 < len(va) < 70
    want_tr = [rec(i) for i, s in enumerate(splits) if s == "train"]
    assert [tr.record(i) for i in range(len(tr))] == want_tr
    assert list(va) == [rec(i) for i, s in enumerate(splits) if s == "val"]
    m = json.loads((tmp_path / "train" / "manifest.json").read_text())
    assert m["game"] == "tictactoe" and m["info"] == {"note": "test"} and max(s["records"] for s in m["shards"]) == 17
    # the split is a function of the position alone
    for i, s in enumerate(splits):
        assert position_split(f"position-{i}", 0.15) == s
    with pytest.raises(IndexError):
        tr.record(len(tr))
    with pytest.raises(FileExistsError):
        PositionWriter(tmp_path, "tictactoe")


def test_store_detects_corruption(tmp_path):
    write_set(tmp_path)
    shard = tmp_path / "train" / "shard-00000.jsonl"
    shard.write_text(shard.read_text() + "extra line\n")
    with pytest.raises(ValueError, match="manifest says 17 records, file has 18 lines"):
        PositionStore(tmp_path / "train").record(0)
    with pytest.raises(FileNotFoundError):
        PositionStore(tmp_path / "nowhere")


@pytest.mark.parametrize("bad,msg", [
    ({"values": {}}, "'state'"),
    ({"state": "x", "values": {"a": 1.5}}, "win probability"),
    ({"state": "x", "values": {"a": 0.5}, "best": "b"}, "best move 'b'"),
    ({"state": "x", "values": {"a": 0.5}, "prev_state": "y"}, "together"),
    ({"state": "x", "values": {}}, "needs values"),
    ({"state": "x", "values": {"a": 0.5}, "result": "2-0"}, "invalid result"),
])
def test_record_validation(bad, msg):
    with pytest.raises(ValueError, match=msg):
        validate_record(bad)


def test_epoch_permutations_differ_and_are_seeded():
    a, b = epoch_permutation(100, 5, 0), epoch_permutation(100, 5, 1)
    assert sorted(a) == list(range(100)) and not np.array_equal(a, b)
    assert np.array_equal(a, epoch_permutation(100, 5, 0))
    assert not np.array_equal(a, epoch_permutation(100, 6, 0))


def _torch():
    return pytest.importorskip("torch")


def encoder(records, seed):
    """A stand-in encoder: the record number, then a token drawn from the batch seed (randomisation)."""
    rng = np.random.default_rng(seed)
    out = []
    for r in records:
        i = int(r["state"].split("-")[1])
        n = 1 + int(rng.integers(0, 4))
        toks = [1, i + 10] + [int(rng.integers(3, 9)) for _ in range(n)]
        out.append((toks, [0, 0] + [1] * n))
    return out


def collect(ds, workers):
    torch = _torch()
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers)
    return [(b["batch"], b["index"].tolist(), b["epoch"].tolist(), b["tokens"].tolist(), b["mask"].tolist())
            for b in dl]


def test_dataset_deterministic_over_workers_no_dup_no_drop(tmp_path):
    _torch()
    from mavgame.model.data import MAVDataset
    write_set(tmp_path, n=130, val_fraction=0.0)
    store = PositionStore(tmp_path / "train")
    n = len(store)
    ds = MAVDataset(store, encoder, batch_size=7, seed=11, num_batches=60)  # 420 examples: 3+ epochs
    runs = [collect(ds, w) for w in (0, 1, 2)]
    assert runs[0] == runs[1] == runs[2]
    batches = runs[0]
    assert [b[0] for b in batches] == list(range(60))
    idx = [i for b in batches for i in b[1]]
    ep = [e for b in batches for e in b[2]]
    for e in range(len(idx) // n):          # every full epoch: each record exactly once
        assert sorted(idx[e * n:(e + 1) * n]) == list(range(n))
        assert set(ep[e * n:(e + 1) * n]) == {e}
    assert idx[:n] != idx[n:2 * n]           # reshuffled every epoch
    # each batch is the encoder's output for exactly those records with the batch's seed, right-padded
    from mavgame.model.data import batch_seed
    for b in batches[:12]:
        want = encoder([store.record(i) for i in b[1]], batch_seed(11, b[0]))
        for (wt, wm), t, m in zip(want, b[3], b[4]):
            assert t[:len(wt)] == wt and m[:len(wm)] == wm
            assert set(t[len(wt):]) <= {0} and set(m[len(wm):]) <= {0}
    # a different seed gives a different order
    other = collect(MAVDataset(store, encoder, batch_size=7, seed=12, num_batches=60), 0)
    assert [b[1] for b in other] != [b[1] for b in batches]


def test_dataset_resume_continues_the_stream(tmp_path):
    _torch()
    from mavgame.model.data import MAVDataset
    write_set(tmp_path, n=90, val_fraction=0.0)
    store = PositionStore(tmp_path / "train")
    whole = collect(MAVDataset(store, encoder, batch_size=8, seed=3, num_batches=25), 0)
    tail = collect(MAVDataset(store, encoder, batch_size=8, seed=3, start_batch=9, num_batches=16), 2)
    assert tail == whole[9:]


def test_dataset_rejects_too_long_examples(tmp_path):
    _torch()
    from mavgame.model.data import MAVDataset
    write_set(tmp_path, n=20, val_fraction=0.0)
    ds = MAVDataset(PositionStore(tmp_path / "train"), encoder, batch_size=4, max_len=3, num_batches=1)
    with pytest.raises(ValueError, match="exceeds the maximum length 3"):
        collect(ds, 0)


def test_generation_is_deterministic_over_workers(tmp_path):
    """Connect Four with a node budget: the same records whatever the number of processes."""
    kw = dict(seed=4, epsilon=0.3, val_fraction=0.2, random_opening=11, progress=False, chunk=2,
              annotator_options={"max_nodes": 100_000, "tt_log2": 16})
    from mavgame.model.data import generate_positions
    a = generate_positions("connect_four", tmp_path / "a", 6, workers=1, **kw)
    b = generate_positions("connect_four", tmp_path / "b", 6, workers=2, **kw)
    for k in ("positions_unique", "train", "val", "unannotated_by_ply", "results", "value_histogram"):
        assert a[k] == b[k]
    for split in ("train", "val"):
        assert list(PositionStore(tmp_path / "a" / split)) == list(PositionStore(tmp_path / "b" / split))
    assert a["positions_unique"] > 20
