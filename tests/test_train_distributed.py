"""``mavgame train`` on several processes (torch.distributed, gloo on the CPU): the same global batch gives the
same losses as one process, DDP and FSDP, and a two-process run killed with SIGKILL resumes to the same end."""
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

from mavgame.datasets import MAVDataset, PositionStore, generate_positions, mav_encoder  # noqa: E402
from mavgame.model import distributed  # noqa: E402
from mavgame.model.train import Trainer  # noqa: E402
from mavgame.model.train_config import TrainConfig, load_checkpoint

MODEL = dict(d_model=32, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=64)


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def ttt(tmp_path_factory):
    """A small tic-tac-toe position set (solver-annotated)."""
    root = tmp_path_factory.mktemp("ttt")
    generate_positions("tictactoe", root, n_games=30, seed=0, val_fraction=0.1, progress=False)
    return root


def _cfg(data, out, **kw):
    d = dict(data=str(data), out=str(out), steps=6, batch_size=8, preset="tiny", model=MODEL, warmup=2, lr=3e-3,
             max_seq_len=192, eval_every=100, checkpoint_every=100, log_every=1, progress=False, workers=0,
             gen_eval_positions=0)
    d.update(kw)
    return TrainConfig(**d)


def _records(out):
    return [json.loads(x) for x in (Path(out) / "log.jsonl").read_text().splitlines()]


def _losses(out):
    return [r for r in _records(out) if "loss" in r]


def _logged_steps(out):
    """The steps logged so far (a line being written is left out)."""
    log = Path(out) / "log.jsonl"
    steps = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        try:
            steps.append(json.loads(line)["step"])
        except (ValueError, KeyError):
            pass
    return steps


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**kw):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("WORLD_SIZE", None)
    env.update({k: str(v) for k, v in kw.items()})
    return env


# ---- the rank's share, without processes ---------------------------------------------------------

def test_split_step_and_its_refusal():
    assert distributed.split_step(8, 1, 1) == ("whole", 1)
    assert distributed.split_step(8, 4, 2) == ("whole", 2)
    assert distributed.split_step(8, 3, 2) == ("slice", 3)
    with pytest.raises(ValueError, match="multiple of 3"):
        distributed.split_step(8, 2, 3)


@pytest.mark.parametrize("batch_size,grad_accum", [(8, 1), (4, 2), (4, 3)])
def test_rank_shares_cover_the_global_batch_in_order(ttt, batch_size, grad_accum):
    """Over the ranks, a step's micro-batches hold exactly one process's examples (same tokens, masks, order in
    slice mode), and their padded token counts add up to one process's."""
    enc, info = mav_encoder("tictactoe")
    ds = MAVDataset(PositionStore(ttt / "train"), enc, batch_size, seed=3, pad_id=info["pad_id"])
    one = list(distributed.RankBatches(ds, 2, 3, grad_accum))
    shares = [list(distributed.RankBatches(ds, 2, 3, grad_accum, r, 2)) for r in range(2)]
    assert [b["batch"] for b in one] == list(range(2 * grad_accum, 5 * grad_accum))
    mode, per = distributed.split_step(batch_size, grad_accum, 2)
    for s in range(3):
        full = one[s * grad_accum:(s + 1) * grad_accum]
        mine = [sh[s * per:(s + 1) * per] for sh in shares]
        assert sum(b["tokens_counted"] for m in mine for b in m) == sum(b["tokens"].numel() for b in full)
        if mode == "whole":
            got = sorted((b for m in mine for b in m), key=lambda b: b["batch"])
            assert [b["batch"] for b in got] == [b["batch"] for b in full]
            for a, b in zip(got, full):
                assert torch.equal(a["tokens"], b["tokens"]) and torch.equal(a["mask"], b["mask"])
        else:
            for k, b in enumerate(full):
                parts = [m[k] for m in mine]
                assert torch.equal(torch.cat([p["index"] for p in parts]), b["index"])
                for r, p in enumerate(parts):
                    rows = slice(r * batch_size // 2, (r + 1) * batch_size // 2)
                    T = p["tokens"].shape[1]
                    assert torch.equal(p["tokens"], b["tokens"][rows, :T])
                    assert torch.equal(p["mask"], b["mask"][rows, :T])
                    assert int(b["mask"][rows, T:].sum()) == 0   # trimmed after the last target token only


def test_optimizer_state_names_round_trip(ttt, tmp_path):
    tr = Trainer(_cfg(ttt, tmp_path / "r", steps=2))
    tr.run()
    from mavgame.model.train import _named_groups
    names = [[n for n, _ in g] for g in _named_groups(tr.model)]
    plain = tr.opt.state_dict()
    named = distributed.optimizer_from_plain(plain, names)
    assert set(named["state"]) == {n for g in names for n in g}
    back = distributed.optimizer_to_plain(named)
    assert back["param_groups"] == plain["param_groups"]
    for k, st in plain["state"].items():
        assert torch.equal(back["state"][k]["exp_avg"], st["exp_avg"])


def test_command_line_is_the_parsed_command(tmp_path):
    import argparse
    from mavgame.cli import train as cli
    from mavgame.cli.torchrun import command_line
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    argv = ["--data", "d", "--out", "o", "--nproc", "2", "--fsdp", "--batch-size", "6", "--example-option",
            "p_top_all=0.5", "--example-option", 'tag="1"', "--pgn", "a.pgn", "--no-progress"]
    args = p.parse_args(argv)
    again = command_line(args, cli.add_arguments, "train")
    assert again[0] == "train" and "--nproc" not in again and "--fsdp" in again
    back = p.parse_args(again[1:])
    assert {**vars(back), "nproc": 2} == vars(args)


def test_nproc_refuses_a_batch_it_cannot_share(tmp_path, capsys):
    from mavgame.cli import main
    with pytest.raises(SystemExit, match="--nproc 3: neither --batch-size 8 nor --grad-accum 2"):
        main(["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o"), "--nproc", "3",
              "--batch-size", "8", "--grad-accum", "2", "--device", "cpu"])


# ---- two gloo processes ----------------------------------------------------------------------------

def _train_args(data, out, *extra):
    return ["train", "--data", str(data), "--out", str(out), "--preset", "tiny", "--d-model", "32", "--layers",
            "2", "--heads", "2", "--kv-heads", "1", "--d-ff", "64", "--max-seq-len", "192", "--batch-size", "8",
            "--warmup", "2", "--lr", "3e-3", "--eval-every", "100", "--gen-eval-positions", "0",
            "--final-eval-positions", "0", "--log-every", "1", "--workers", "0", "--threads", "1", "--device", "cpu", "--no-progress",
            *extra]


def test_nproc_2_matches_one_process(ttt, tmp_path):
    """``mavgame train --nproc 2`` (torchrun, gloo): the losses, gradient norms and exported weights of one
    process, step by step; the log and the report say world_size 2."""
    from mavgame.cli import main
    from mavgame.model.export import load_exported
    one = ["--steps", "5", "--checkpoint-every", "100"]
    assert main(_train_args(ttt, tmp_path / "one", *one, "--export", str(tmp_path / "one.safetensors"))) == 0
    p = subprocess.run([sys.executable, "-m", "mavgame", *_train_args(ttt, tmp_path / "two", *one, "--nproc", "2",
                        "--export", str(tmp_path / "two.safetensors"))],
                       capture_output=True, text=True, timeout=240, env=_env())
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["world_size"] == 2 and report["train"]["world_size"] == 2
    a, b = _losses(tmp_path / "one"), _losses(tmp_path / "two")
    assert [r["step"] for r in b] == [1, 2, 3, 4, 5] and {r["world_size"] for r in b} == {2}
    for ra, rb in zip(a, b):
        assert rb["loss"] == pytest.approx(ra["loss"], rel=1e-5)
        assert rb["grad_norm"] == pytest.approx(ra["grad_norm"], rel=1e-4)
        assert rb["tokens_seen"] == ra["tokens_seen"]
    wa, wb = load_exported(tmp_path / "one.safetensors")[0], load_exported(tmp_path / "two.safetensors")[0]
    for k in wa:
        torch.testing.assert_close(torch.from_numpy(wb[k]), torch.from_numpy(wa[k]), atol=1e-5, rtol=1e-4)


WORKER = textwrap.dedent("""
    import json, sys, torch
    torch.set_num_threads(1)
    from mavgame.model.train import Trainer
    from mavgame.model.train_config import TrainConfig
    from mavgame.model import distributed
    from mavgame.model.inference import trainer_metrics
    for cfg in json.loads(sys.argv[1]):
        tr = Trainer(TrainConfig(**cfg), evaluate_fn=trainer_metrics)
        tr.run()
        print(json.dumps({"out": cfg["out"], "sharded": distributed.is_fsdp(tr.model),
                          "ddp": tr.train_module is not tr.model}))
        tr.export()
    distributed.shutdown()
""")


def test_ddp_and_fsdp_with_accumulation_match_one_process(ttt, tmp_path):
    """Two ranks started from the Python API (torchrun's environment variables): DDP with whole micro-batches
    per rank (batch 4 x 2), FSDP2 with every micro-batch split (batch 4 x 3), both resumed from a checkpoint of
    the other kind: losses, validation loss and weights of one process; FSDP's generation metrics (rank 0, on
    a gathered copy) are logged."""
    from mavgame.model.export import load_exported
    runs = {"ddp": dict(batch_size=4, grad_accum=2),
            "fsdp": dict(batch_size=4, grad_accum=3, fsdp=True, gen_eval_positions=2)}
    cfgs = {k: _cfg(ttt, tmp_path / k, **kw) for k, kw in runs.items()}
    singles = {}
    for k, cfg in cfgs.items():
        tr = Trainer(TrainConfig(**{**cfg.__dict__, "out": str(tmp_path / f"{k}1")}))
        tr.run()
        singles[k] = tr
    # half of each run on one process first: the two processes resume its checkpoint
    for k, cfg in cfgs.items():
        Trainer(cfg).run(stop_after=3)
    port = _free_port()
    arg = json.dumps([c.__dict__ for c in cfgs.values()])
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, arg], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=_env(RANK=r, LOCAL_RANK=r, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1",
                                                  MASTER_PORT=port))
             for r in range(2)]
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(e[-3000:] for _, e in outs)
    kinds = [json.loads(x) for x in outs[1][0].splitlines()]
    assert [(k["sharded"], k["ddp"]) for k in kinds] == [(False, True), (True, False)]
    for k in cfgs:
        a, b = _losses(tmp_path / f"{k}1"), _losses(tmp_path / k)
        assert [r["world_size"] for r in b] == [1, 1, 1, 2, 2, 2]
        for ra, rb in zip(a, b):
            assert rb["step"] == ra["step"] and rb["loss"] == pytest.approx(ra["loss"], rel=1e-5), k
        va = [r for r in _records(tmp_path / f"{k}1") if "val_loss" in r]
        vb = [r for r in _records(tmp_path / k) if "val_loss" in r]
        assert len(va) == len(vb) == 1 and vb[0]["val_loss"] == pytest.approx(va[0]["val_loss"], rel=1e-5)
        if k == "fsdp":
            assert 0.0 <= vb[0]["parsed_ok_rate"] <= 1.0 and "eval_error" not in vb[0]
        w = load_exported(tmp_path / k / "model.safetensors")[0]
        ref = singles[k].model.state_dict()
        for name, v in w.items():
            torch.testing.assert_close(torch.from_numpy(v), ref[name], atol=1e-5, rtol=1e-4)
    ck = load_checkpoint(tmp_path / "fsdp" / "checkpoint.pt")
    assert ck["world_size"] == 2 and ck["step"] == 6


@pytest.mark.slow
def test_two_processes_killed_mid_run_resume_to_the_same_end(ttt, tmp_path):
    """SIGKILL to a ``--nproc 2`` run (the launcher and both ranks) between checkpoints; the same command again
    resumes from the last checkpoint and ends with the losses and weights of an uninterrupted two-process run."""
    from mavgame.model.export import load_exported
    args = ["--steps", "40", "--checkpoint-every", "5", "--grad-accum", "2", "--nproc", "2"]

    def command(out):
        return [sys.executable, "-m", "mavgame", *_train_args(ttt, out, *args)]

    whole = subprocess.run(command(tmp_path / "whole"), capture_output=True, text=True, timeout=300, env=_env())
    assert whole.returncode == 0, whole.stderr[-3000:]
    run = tmp_path / "killed"
    p = subprocess.Popen(command(run), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(),
                         start_new_session=True)
    t0 = time.time()
    while time.time() - t0 < 240 and p.poll() is None:
        steps = _logged_steps(run)
        if steps and steps[-1] >= 12:
            break
        time.sleep(0.02)
    assert p.poll() is None, "the run ended before it could be killed"
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    killed_at = _logged_steps(run)[-1]
    assert 12 <= killed_at < 40
    ck = load_checkpoint(run / "checkpoint.pt")
    assert ck["step"] % 5 == 0 and ck["step"] <= killed_at and ck["world_size"] == 2
    again = subprocess.run(command(run), capture_output=True, text=True, timeout=300, env=_env())
    assert again.returncode == 0, again.stderr[-3000:]
    a = {r["step"]: r for r in _losses(tmp_path / "whole")}
    b = {r["step"]: r for r in _losses(run)}      # the steps after the checkpoint are logged twice: the later wins
    assert sorted(b) == sorted(a) == list(range(1, 41))
    for s in range(1, 41):
        assert b[s]["loss"] == pytest.approx(a[s]["loss"], rel=1e-6), s
    wa, wb = load_exported(tmp_path / "whole" / "model.safetensors")[0], load_exported(run / "model.safetensors")[0]
    for k in wa:
        torch.testing.assert_close(torch.from_numpy(wb[k]), torch.from_numpy(wa[k]), atol=1e-6, rtol=1e-5)
