"""Position shards and the streaming dataset: split, random access, determinism, no duplicates or gaps."""
import json

import numpy as np
import pytest

from mavgame.datasets import (PositionStore, PositionWriter, epoch_permutation, generate_positions, position_split,
                                 validate_record)
from mavgame.datasets.positions import _gen_games as _REAL_GEN_GAMES


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
    from mavgame.datasets import MAVDataset
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
    from mavgame.datasets import batch_seed
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
    from mavgame.datasets import MAVDataset
    write_set(tmp_path, n=90, val_fraction=0.0)
    store = PositionStore(tmp_path / "train")
    whole = collect(MAVDataset(store, encoder, batch_size=8, seed=3, num_batches=25), 0)
    tail = collect(MAVDataset(store, encoder, batch_size=8, seed=3, start_batch=9, num_batches=16), 2)
    assert tail == whole[9:]


def test_dataset_ranks_interleave_whatever_the_workers(tmp_path):
    """Rank r of W streams batches r, r + W, r + 2W, ... in order for any number of DataLoader workers, so a
    step's batches (one per rank) do not depend on the worker count; the ranks together cover the stream."""
    _torch()
    from mavgame.datasets import MAVDataset
    write_set(tmp_path, n=60, val_fraction=0.0)
    store = PositionStore(tmp_path / "train")
    whole = collect(MAVDataset(store, encoder, batch_size=4, seed=5, start_batch=3, num_batches=12), 0)
    for workers in (0, 2, 3):
        for rank in (0, 1):
            mine = collect(MAVDataset(store, encoder, batch_size=4, seed=5, start_batch=3, num_batches=12,
                                      rank=rank, world_size=2), workers)
            assert [b[0] for b in mine] == list(range(3 + rank, 15, 2)), (workers, rank)
            assert mine == whole[rank::2]


def test_dataset_rejects_too_long_examples(tmp_path):
    _torch()
    from mavgame.datasets import MAVDataset
    write_set(tmp_path, n=20, val_fraction=0.0)
    ds = MAVDataset(PositionStore(tmp_path / "train"), encoder, batch_size=4, max_len=3, num_batches=1)
    with pytest.raises(ValueError, match="exceeds the maximum length 3"):
        collect(ds, 0)


def test_generation_is_deterministic_over_workers(tmp_path):
    """Connect Four with a node budget: the same records whatever the number of processes."""
    kw = dict(seed=4, epsilon=0.3, val_fraction=0.2, random_opening=11, progress=False, chunk=2,
              annotator_options={"max_nodes": 100_000, "tt_log2": 16})
    from mavgame.datasets import generate_positions
    a = generate_positions("connect_four", tmp_path / "a", 6, workers=1, **kw)
    b = generate_positions("connect_four", tmp_path / "b", 6, workers=2, **kw)
    for k in ("positions_unique", "train", "val", "unannotated_by_ply", "results", "value_histogram"):
        assert a[k] == b[k]
    for split in ("train", "val"):
        assert list(PositionStore(tmp_path / "a" / split)) == list(PositionStore(tmp_path / "b" / split))
    assert a["positions_unique"] > 20


# ---- resumable generation ------------------------------------------------------------------------------

TTT = dict(seed=1, epsilon=0.5, val_fraction=0.3, shard_size=5, progress=False, chunk=4)
C4 = dict(seed=4, epsilon=0.3, val_fraction=0.2, random_opening=11, progress=False, chunk=2, shard_size=7,
          annotator_options={"max_nodes": 100_000, "tt_log2": 16})


def snapshot(root):
    """Every file under root as bytes, the manifests parsed with their time statistic left out, the
    timing file (annotation seconds per ply: a measurement, not part of the set) only by its plies."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(root))
            if p.name == "timing.json":
                out[rel] = sorted(json.loads(p.read_text())["by_ply"])
                continue
            if p.name == "manifest.json":
                m = json.loads(p.read_text())
                m["info"]["stats"].pop("seconds")
                out[rel] = m
            else:
                out[rel] = p.read_bytes()
    return out


class Stop(Exception):
    pass


def interrupt_after_adds(monkeypatch, n):
    """PositionWriter.add raises after n records, with what it wrote pushed to the files (as a kill would
    leave lines past the last recorded chunk)."""
    from mavgame.datasets import store
    orig, calls = store.PositionWriter.add, [0]

    def add(self, rec):
        if calls[0] == n:
            for f in self._files.values():
                f.flush()
            raise Stop()
        calls[0] += 1
        return orig(self, rec)
    monkeypatch.setattr(store.PositionWriter, "add", add)


def _stop_at_game_4(job):
    """A job function that fails in the worker on the chunk starting at game 4."""
    if job[2] >= 4:
        raise Stop()
    return _REAL_GEN_GAMES(job)


@pytest.mark.parametrize("workers", [1, 2])
def test_interrupted_generation_resumes_byte_identical(tmp_path, monkeypatch, workers):
    from mavgame.datasets import PROGRESS, generate_positions
    whole = generate_positions("tictactoe", tmp_path / "whole", 40, workers=workers, **TTT)
    want = snapshot(tmp_path / "whole")
    assert not (tmp_path / "whole" / PROGRESS).exists()
    assert len([k for k in want if k.startswith("train/shard-")]) > 10   # many shards: boundaries are crossed
    part = tmp_path / "part"
    for stop in (37, 70):                   # twice, in the middle of a chunk (records past the last progress)
        with monkeypatch.context() as mp:
            interrupt_after_adds(mp, stop)
            with pytest.raises(Stop):
                generate_positions("tictactoe", part, 40, workers=workers, **TTT)
        prog = json.loads((part / PROGRESS).read_text())
        assert 0 < prog["games_done"] < 40 and prog["games_done"] % 4 == 0
        lines = sum(f.read_text().count("\n") for f in part.rglob("shard-*.jsonl"))
        assert sum(map(sum, prog["shards"].values())) < lines   # lines were written past the record
        assert not (part / "train" / "manifest.json").exists()
    last = sorted((part / "train").glob("shard-*.jsonl"))[-1]
    with open(last, "a") as f:
        f.write('{"state":"half a li')       # a partly written line
    resumed = generate_positions("tictactoe", part, 40, workers=3 - workers, **TTT)
    assert snapshot(part) == want
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {k: v for k, v in whole.items() if k != "seconds"}
    assert not (part / PROGRESS).exists()
    with pytest.raises(FileExistsError):    # a finished set stays finished
        generate_positions("tictactoe", part, 40, workers=workers, **TTT)


def test_connect_four_generation_resumes_after_a_worker_fails(tmp_path, monkeypatch):
    from mavgame.datasets import positions
    positions.generate_positions("connect_four", tmp_path / "whole", 6, workers=1, **C4)
    with monkeypatch.context() as mp:
        mp.setattr(positions, "_gen_games", _stop_at_game_4)
        with pytest.raises(Stop):
            positions.generate_positions("connect_four", tmp_path / "part", 6, workers=2, **C4)
    assert json.loads((tmp_path / "part" / positions.PROGRESS).read_text())["games_done"] == 4
    positions.generate_positions("connect_four", tmp_path / "part", 6, workers=2, **C4)
    assert snapshot(tmp_path / "part") == snapshot(tmp_path / "whole")



@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_generation_workers_import_under_spawn_and_forkserver(tmp_path, monkeypatch, method):
    """The worker functions (mavgame.datasets.positions._gen_init / _gen_games) are importable by fresh
    interpreters: spawn and forkserver pools write the same files as one process."""
    import multiprocessing as mp
    from mavgame import workers
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    kw = dict(seed=2, epsilon=0.5, val_fraction=0.3, shard_size=5, progress=False, chunk=3)
    generate_positions("tictactoe", tmp_path / "one", 9, workers=1, **kw)
    monkeypatch.setattr(workers, "_start_method", lambda: method)
    generate_positions("tictactoe", tmp_path / "pool", 9, workers=2, **kw)
    assert snapshot(tmp_path / "pool") == snapshot(tmp_path / "one")

def test_resume_refuses_other_arguments(tmp_path, monkeypatch):
    from mavgame.datasets import PROGRESS, generate_positions
    with monkeypatch.context() as mp:
        interrupt_after_adds(mp, 60)
        with pytest.raises(Stop):
            generate_positions("tictactoe", tmp_path, 40, **TTT)
    before = snapshot(tmp_path)
    with pytest.raises(ValueError, match=r"seed 1 there, 2 here") as e:
        generate_positions("tictactoe", tmp_path, 40, **dict(TTT, seed=2))
    assert "epsilon" not in str(e.value)
    with pytest.raises(ValueError, match=r"chunk 4 there, 8 here; shard_size 5 there, 9 here"):
        generate_positions("tictactoe", tmp_path, 40, **dict(TTT, chunk=8, shard_size=9))
    with pytest.raises(ValueError, match="annotator_options"):
        generate_positions("tictactoe", tmp_path, 40, **dict(TTT, annotator_options={"x": 1}))
    done = json.loads((tmp_path / PROGRESS).read_text())["games_done"]
    with pytest.raises(ValueError, match=f"{done} games done"):    # fewer games than are already done
        generate_positions("tictactoe", tmp_path, done - 1, **TTT)
    assert snapshot(tmp_path) == before                     # a refused resume changes nothing


def test_interrupted_run_can_be_finished_with_more_games(tmp_path, monkeypatch):
    """Games and chunks do not depend on the total: an interrupted run continues into a larger one exactly."""
    from mavgame.datasets import generate_positions
    generate_positions("tictactoe", tmp_path / "whole", 48, **TTT)
    with monkeypatch.context() as mp:
        interrupt_after_adds(mp, 50)
        with pytest.raises(Stop):
            generate_positions("tictactoe", tmp_path / "part", 40, **TTT)
    stats = generate_positions("tictactoe", tmp_path / "part", 48, **TTT)
    assert stats["games"] == 48 and snapshot(tmp_path / "part") == snapshot(tmp_path / "whole")


def test_train_command_resumes_generation(tmp_path, monkeypatch, capsys):
    from mavgame.cli import main
    from mavgame.datasets import PROGRESS, generate_positions
    args = ["train", "--game", "tictactoe", "--data", None, "--games", "40", "--generate-only", "--no-progress"]

    def run(d, *extra):
        return main([str(d) if a is None else a for a in args] + list(extra))
    assert run(tmp_path / "whole") == 0
    with monkeypatch.context() as mp:      # what the command generates, cut short in the second chunk of 16
        interrupt_after_adds(mp, 150)
        with pytest.raises(Stop):
            generate_positions("tictactoe", tmp_path / "part", 40, seed=0, epsilon=0.2, val_fraction=0.02,
                               progress=False)
    assert json.loads((tmp_path / "part" / PROGRESS).read_text())["games_done"] == 16
    with pytest.raises(SystemExit, match="data_seed|seed 0 there, 3 here"):
        run(tmp_path / "part", "--data-seed", "3")
    capsys.readouterr()
    assert run(tmp_path / "part") == 0
    assert "resuming the interrupted generation" in capsys.readouterr().err
    assert snapshot(tmp_path / "part") == snapshot(tmp_path / "whole")


def test_ood_positions_exclude_the_training_sets(tmp_path):
    from mavgame.datasets import ood_positions
    generate_positions("tictactoe", tmp_path / "d", 30, seed=1, epsilon=0.0, val_fraction=0.2, progress=False)
    recs, info = ood_positions("tictactoe", tmp_path / "ood", 20, seed=5, progress=False,
                               exclude=[tmp_path / "d" / "train", PositionStore(tmp_path / "d" / "val")])
    known = {r["state"] for split in ("train", "val") for r in PositionStore(tmp_path / "d" / split)}
    everything = list(PositionStore(tmp_path / "ood" / "train"))
    assert info["generated"] == len(everything) and info["positions"] == len(recs) > 0
    assert info["in_excluded"] == sum(r["state"] in known for r in everything) > 0
    assert not any(r["state"] in known for r in recs)
    again, info2 = ood_positions("tictactoe", tmp_path / "ood", 20, seed=5, progress=False)   # reused as is
    assert info2["generated"] == info["generated"] and len(again) == info["generated"]


def test_chess_ood_set_is_random_placements_annotated_by_stockfish(tmp_path):
    """The paper's out-of-distribution chess set in the Table-2 tooling: ood_positions("chess") writes random
    placements annotated by Stockfish (every legal move valued, the best among them), none from games."""
    from mavgame.engines.uci import find_stockfish
    from mavgame.datasets import ood_positions, random_chess_position_set
    from mavgame import Chess
    if find_stockfish() is None:
        pytest.skip("stockfish is not installed")
    recs, info = ood_positions("chess", tmp_path / "ood", 6, seed=2, progress=False,
                               annotator_options={"nodes": 500})
    assert info["kind"] == "random placements" and info["positions"] == len(recs) == 6
    for r in recs:
        st = Chess(r["state"])
        assert r["prev_state"] is None and r["result"] == "*"
        assert sorted(r["values"]) == sorted(st.legal_moves) and r["best"] in r["values"]
    stats = PositionStore(tmp_path / "ood" / "train").manifest["info"]["stats"]
    assert stats["positions"] == 6 and stats["pieces"]["max"] <= 32
    with pytest.raises(ValueError, match="max_pieces 40"):
        random_chess_position_set(tmp_path / "x", 1, max_pieces=40)
    with pytest.raises(ValueError, match="'tictactoe' has no random-placement"):
        ood_positions("tictactoe", tmp_path / "y", 1, placements=True)


def test_a_game_ended_by_repetition_is_not_recorded_as_finished():
    """Gardner knights shuffling home and back: the threefold repetition ends the game, but the last
    position's text shows an ongoing game, so it is not recorded as a finished (unannotated) one."""
    import numpy as np
    from mavgame.datasets.positions import play_annotated_game
    from mavgame.datasets.records import _new_state
    shuffle = {"b1a3", "a3b1", "b5c3", "c3b5"}

    def annotate(st):
        vals = {m: (1.0 if m in shuffle else 0.5) for m in st.legal_moves}
        return vals, max(vals, key=vals.get)
    recs = play_annotated_game("gardner", annotate, np.random.default_rng(0), epsilon=0.0)
    assert len(recs) == 8 and all(r["values"] for r in recs)   # positions 0..7; the 9th is the third repetition
    for r in recs:
        assert not _new_state("gardner", 0, r["state"]).is_terminal()


def test_finished_positions_repeat_k_times_per_epoch(tmp_path):
    """--finished-repeat K: every finished position (result not "*") K times in each epoch, the others once,
    the same stream for any number of workers, and a plain order when K is 1."""
    _torch()
    from mavgame.datasets import ExampleOrder, MAVDataset
    from mavgame.datasets.dataset import finished_repeats
    with PositionWriter(tmp_path, "tictactoe", shard_size=17, val_fraction=0.0) as w:
        for i in range(60):
            r = rec(i)
            if i % 7 == 0:  # finished: no values, a result
                r.update(values={}, best=None, result="1-0" if i % 2 else "1/2-1/2")
            w.add(r)
    store = PositionStore(tmp_path / "train")
    fin = {i for i in range(len(store)) if store.record(i)["result"] != "*"}
    assert len(fin) == 9
    assert finished_repeats(store, 1) is None
    reps = finished_repeats(store, 4)
    assert [int(reps[i]) for i in range(60)] == [4 if i in fin else 1 for i in range(60)]
    n = 60 + 3 * len(fin)
    assert ExampleOrder(60, 3, reps).n == n
    ds = MAVDataset(store, encoder, batch_size=3, seed=3, num_batches=2 * n // 3, repeats=reps)  # 2 epochs
    assert n % 3 == 0 and ds.batches_per_epoch() == n / 3
    runs = [collect(ds, wk) for wk in (0, 2)]
    assert runs[0] == runs[1]
    idx = [i for b in runs[0] for i in b[1]]
    for e in range(2):
        ep = idx[e * n:(e + 1) * n]
        assert all(ep.count(i) == (4 if i in fin else 1) for i in range(60))
    assert idx[:n] != idx[n:]
    with pytest.raises(ValueError, match="one count >= 1 for each of the 60 records"):
        ExampleOrder(60, 3, np.ones(59, dtype=np.int64))
    with pytest.raises(ValueError, match=">= 1"):
        finished_repeats(store, 0)
