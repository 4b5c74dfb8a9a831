"""The training stage of a GPU lease (tools/gpu_session.sh): a Connect Four MAV far larger than the shipped
1.1M-parameter model, trained in bf16 within a time budget, evaluated on held-out solver-scored positions
against the shipped model, written to the lease's output folder in files the lease can send back.

    python tools/gpu_train.py prepare .gpu                 # here, before the lease: the annotation cache
    python tools/gpu_train.py data  --work W [--cache .gpu/c4_annotation_cache.jsonl.gz]   # on the 16 cores
    python tools/gpu_train.py train --work W --out OUT [--budget 240]                     # on the GPU
    python tools/gpu_train.py all   --work W --out OUT --tiny                             # the CPU dry run

Phases (each one command of the ``mavgame`` CLI, so that nothing here depends on module paths, except the
evaluation, which loads the exported files through ``mavgame.model.MAVModel``):

- ``prepare DIR``: writes ``DIR/c4_annotation_cache.jsonl.gz``, the exact solves (positions of up to 14
  stones, 93,594 of them, 1.0 MB) of the 14,256-game empty-board generation (experiments/2026-11-24-c4-empty-
  board-data), taken from the repository's history (commit 2b85fbf, ``resume/``). DIR goes to the GPU machine
  with ``carry`` (add it to .git/info/exclude).
- ``data``: that generation again (``mavgame train --generate-only``: 14,256 epsilon-greedy games of data seed
  2, every position annotated by the perfect solver, ``weak=1``, 1 % held out by position hash), its
  expensive solves answered by the cache: 184 CPU-s for the whole set on the 2-core machine (13 per 1,000
  games), so some 15-30 s on 15 cores, and the same 193,286 training / 1,959 validation positions as the
  shipped model's data (checked on 2026-12-02: the cache answered every position of up to 14 stones).
  Without the cache it plays ``--games`` fresh games instead (about 1.2 CPU-s each).
- ``train``: a calibration run (``--calibrate-steps`` steps of the same model and batch, timed from its
  log.jsonl) sizes the number of steps to the budget, then ``mavgame train`` runs them (bf16 autocast,
  cosine schedule to the end, the shipped model's recipe: line positions, mirror 0.5, finished games
  repeated and weighted, no state after the best action) and exports float16 weights. A watchdog interrupts
  a run that overshoots (the trainer writes its checkpoint; ``tools/export_checkpoint.py`` exports it). Then
  both models, the new one and the shipped one, answer the same held-out positions (every validation position,
  plain and transition form: ``evaluate_records``, the paper's Table 2 plus the solver's best move), on the
  CUDA engine where it runs. ``OUT/train_report.json`` holds the commands, the timings, the data statistics
  and both evaluations; the model goes to OUT in parts of at most ``--part-bytes`` (16 MiB: the lease's
  limit per file; ``cat model.safetensors.part* > model.safetensors``), with its SHA-256.
- ``all``: ``data`` then ``train``. ``--tiny``: a few games, the ``tiny`` preset, a few steps on the CPU, a few
  evaluation positions (tests/test_gpu_session.py).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
CACHE_COMMIT = "2b85fbf"
CACHE_PATH = "resume/c4data-full.annotation_cache.jsonl.gz"
CACHE_NAME = "c4_annotation_cache.jsonl.gz"
CACHED_GAMES = 14256                      # the games whose expensive solves the cache holds
PART_BYTES = 16 * 1024 * 1024             # the lease's limit per file
# the generation of experiments/2026-11-24-c4-empty-board-data (docs/model.md's data command)
GEN_ARGS = ["--game", "connect_four", "--epsilon", "0.2", "--random-opening", "0", "--data-seed", "2",
            "--val-fraction", "0.01", "--annotator-option", "max_nodes=0", "--annotator-option", "exact_plies=14",
            "--annotator-option", "weak=1", "--annotator-option", "tt_log2=24"]
# the model: 24.0M parameters (bench/inference_gpu.py's "medium" shape), 22x the shipped one
MODEL_ARGS = ["--d-model", "512", "--layers", "8", "--heads", "8", "--kv-heads", "2", "--d-ff", "1408",
              "--line-pos", "64"]
# the shipped model's recipe (docs/model.md), less its fine-tuning chain
RECIPE_ARGS = ["--p-after", "0", "--finished-repeat", "2", "--outcome-weight", "8", "--example-option",
               "k_terminal_prev=1", "--mirror", "0.5", "--weight-decay", "0.1", "--grad-clip", "1.0"]
TINY_MODEL_ARGS = ["--preset", "tiny", "--line-pos", "16"]
TABLE2 = ("best_action_legal", "top_all_precision", "top_all_recall", "next_state_accuracy")


def say(msg: str) -> None:
    print(f"gpu_train: {time.strftime('%H:%M:%S')} {msg}", flush=True)


def mavgame_cmd(*args: str) -> List[str]:
    return [sys.executable, "-m", "mavgame", *args]


def run_logged(cmd: List[str], log: Path, timeout: Optional[float] = None, env: Optional[Dict[str, str]] = None,
               grace: float = 90.0) -> int:
    """Run ``cmd`` with stdout and stderr appended to ``log``; past ``timeout`` seconds it gets SIGINT (the
    trainer checkpoints and stops), ``grace`` seconds later SIGKILL.  Returns the exit status."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say(f"{cmd[3] if len(cmd) > 3 else cmd[0]} past its {timeout:.0f} s: interrupting it")
            p.send_signal(signal.SIGINT)
            try:
                return p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                return p.wait()


def child_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


# -- prepare (on the CPU machine, before the lease) ---------------------------------------------------------
def prepare(dest: Path) -> Path:
    """The cached exact solves from the repository's history into ``dest`` (to be carried to the GPU)."""
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / CACHE_NAME
    blob = subprocess.run(["git", "-C", str(ROOT), "show", f"{CACHE_COMMIT}:{CACHE_PATH}"], capture_output=True)
    if blob.returncode != 0:
        raise SystemExit(f"gpu_train prepare: git show {CACHE_COMMIT}:{CACHE_PATH} failed "
                         f"({blob.stderr.decode(errors='replace').strip()}): a clone with the full history is needed")
    gzip.decompress(blob.stdout)   # a whole gzip stream, or the history is not what it should be
    out.write_bytes(blob.stdout)
    say(f"wrote {out} ({len(blob.stdout):,} bytes)")
    return out


# -- data (on the GPU machine's cores) ----------------------------------------------------------------------
def data_phase(args: argparse.Namespace) -> Dict[str, Any]:
    work = Path(args.work)
    data = work / "data"
    cache = Path(args.cache) if args.cache else None
    have_cache = cache is not None and cache.is_file()
    games = args.games or (CACHED_GAMES if have_cache else 600)
    if args.tiny:
        games = args.games or 12
    if (data / "train" / "manifest.json").exists():
        say(f"data: {data} already holds a position set")
    else:
        data.mkdir(parents=True, exist_ok=True)
        if have_cache and not (data / "annotation_cache.jsonl").exists():
            with gzip.open(cache, "rb") as src, open(data / "annotation_cache.jsonl", "wb") as dst:
                shutil.copyfileobj(src, dst)
        workers = args.gen_workers or max(1, (os.cpu_count() or 2) - 1)
        cmd = mavgame_cmd("train", "--data", str(data), "--games", str(games), "--gen-workers", str(workers),
                          *GEN_ARGS, "--generate-only", "--no-progress")
        say(f"data: {games} games on {workers} processes ({'with' if have_cache else 'without'} the cache)")
        t0 = time.time()
        rc = run_logged(cmd, work / "data.log", timeout=args.data_timeout, env=child_env())
        if rc != 0 or not (data / "train" / "manifest.json").exists():
            raise SystemExit(f"gpu_train data: the generation failed (exit {rc}); see {work / 'data.log'}")
        say(f"data: done in {time.time() - t0:.0f} s")
    man = json.loads((data / "train" / "manifest.json").read_text())
    val = json.loads((data / "val" / "manifest.json").read_text()) if (data / "val" / "manifest.json").exists() else {}
    info = {"games": games, "cache": str(cache) if have_cache else None,
            "train_positions": man.get("records"), "val_positions": val.get("records")}
    (work / "data_info.json").write_text(json.dumps(info, indent=1))
    return info


# -- train (on the GPU) -------------------------------------------------------------------------------------
def read_log(run: Path) -> List[Dict[str, Any]]:
    path = run / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def train_args(args: argparse.Namespace, data: Path, run: Path, steps: int, export: Path,
               eval_every: int = 0) -> List[str]:
    model = TINY_MODEL_ARGS if args.tiny else MODEL_ARGS
    return mavgame_cmd("train", "--data", str(data), "--out", str(run), *model, *RECIPE_ARGS,
                       "--steps", str(steps), "--batch-size", str(args.batch_size), "--lr", str(args.lr),
                       "--warmup", str(min(args.warmup, max(1, steps // 10))), "--min-lr-ratio", "0.1",
                       "--seed", str(args.seed), "--workers", str(args.loader_workers), "--device", args.device,
                       "--precision", args.precision, "--eval-every", str(eval_every or max(steps // 4, 1)),
                       "--eval-batches", "8", "--gen-eval-positions", "0", "--checkpoint-every", "500",
                       "--final-eval-positions", "0", "--export", str(export), "--export-dtype", "float16",
                       "--no-progress")


def calibrate(args: argparse.Namespace, data: Path, work: Path) -> Dict[str, float]:
    """Seconds per step of the real model and batch, and the fixed cost of a run (start, data loader, export),
    from a short run's log (its steps after the first log interval: warm)."""
    run = work / "calibrate"
    shutil.rmtree(run, ignore_errors=True)
    n = args.calibrate_steps
    t0 = time.time()
    rc = run_logged(train_args(args, data, run, n, run / "model.safetensors", eval_every=n + 1), work / "train.log",
                    timeout=300, env=child_env())   # no validation inside the timed steps
    wall = time.time() - t0
    log = [r for r in read_log(run) if "tokens_per_s" in r]
    if rc != 0 or len(log) < 2:
        raise SystemExit(f"gpu_train train: the calibration run failed (exit {rc}); see {work / 'train.log'}")
    a, b = log[-2], log[-1]
    per_step = (b["tokens_seen"] - a["tokens_seen"]) / max(1, b["step"] - a["step"]) / b["tokens_per_s"]
    fixed = max(0.0, wall - n * per_step)
    out = {"steps": n, "wall_s": wall, "step_s": per_step, "fixed_s": fixed, "tokens_per_s": b["tokens_per_s"]}
    say(f"calibration: {per_step * 1000:.1f} ms a step, {b['tokens_per_s']:,.0f} tokens/s, {fixed:.0f} s fixed")
    shutil.rmtree(run, ignore_errors=True)
    return out


def split_file(path: Path, out: Path, part_bytes: int) -> List[Dict[str, Any]]:
    """``path`` into ``out`` whole (when small enough) or as ``NAME.part0``, ``.part1``, ...: the lease sends back
    files of at most 16 MiB."""
    size = path.stat().st_size
    if size <= part_bytes:
        dst = out / path.name
        shutil.copyfile(path, dst)
        return [{"file": dst.name, "bytes": size}]
    parts = []
    with open(path, "rb") as f:
        i = 0
        while True:
            chunk = f.read(part_bytes)
            if not chunk:
                break
            dst = out / f"{path.name}.part{i}"
            dst.write_bytes(chunk)
            parts.append({"file": dst.name, "bytes": len(chunk)})
            i += 1
    return parts


def json_clean(obj: Any) -> Any:
    """NaN and infinities (a metric with nothing to count) as null: the report stays standard JSON."""
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    if isinstance(obj, dict):
        return {str(k): json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


def write_report(path: Path, report: Dict[str, Any]) -> None:
    path.write_text(json.dumps(json_clean(report), indent=1, sort_keys=True, allow_nan=False))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def val_records(data: Path, n: int) -> List[Dict[str, Any]]:
    """The first ``n`` validation positions, in the store's order (shards by name, lines in order)."""
    recs: List[Dict[str, Any]] = []
    for shard in sorted((data / "val").glob("shard-*.jsonl")):
        for line in shard.read_text().splitlines():
            if line.strip():
                recs.append(json.loads(line))
                if len(recs) >= n:
                    return recs
    return recs


def evaluate(path: Optional[Path], recs: List[Dict[str, Any]], device: str) -> Dict[str, Any]:
    """The paper's metrics of the model in ``path`` (None: the shipped model) on ``recs``: on the native
    engine on ``device`` (the CUDA engine on the GPU); where that cannot run (a build without the kernels),
    torch on the GPU, else the CPU engine."""
    from mavgame.model import MAVModel
    from mavgame.model.inference import evaluate_records
    t0 = time.time()
    where = str(path) if path is not None else None
    try:
        model, used = MAVModel.load(where, backend="native", device=device, threads=8), f"native {device}"
    except ValueError as e:
        say(f"evaluation: the native engine cannot run on {device} ({e})")
        try:
            import torch
            gpu = device.startswith("cuda") and torch.cuda.is_available()
        except ImportError:
            gpu = False
        if gpu:
            model, used = MAVModel.load(where, backend="torch", device=device), f"torch {device}"
        else:
            model, used = MAVModel.load(where, backend="native", device="cpu", threads=8), "native cpu"
    m = evaluate_records(model, "connect_four", recs, batch_size=256)
    m["device"] = used
    m["seconds"] = round(time.time() - t0, 1)
    return m


def train_phase(args: argparse.Namespace) -> Dict[str, Any]:
    t_start = time.time()
    work, out = Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)   # a new run each time (a warm machine's earlier one would resume)
    report: Dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "budget_s": args.budget,
                              "tiny": bool(args.tiny)}
    if (work / "data_info.json").exists():
        report["data"] = json.loads((work / "data_info.json").read_text())
    try:
        import torch
        report["torch"] = torch.__version__
        report["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception as e:   # the trainer says it better
        report["torch"] = repr(e)
    steps = args.steps
    if not steps or args.calibrate:
        cal = calibrate(args, data, work)
        report["calibration"] = cal
        left = args.budget - (time.time() - t_start) - cal["fixed_s"] - 5.0
        steps = int(max(args.min_steps, min(args.max_steps, left / (cal["step_s"] * 1.05))))
        say(f"train: {steps} steps for the {left:.0f} s left of the budget")
    export = run / "model.safetensors"
    cmd = train_args(args, data, run, steps, export)
    report["command"] = " ".join(cmd[2:])
    report["steps_planned"] = steps
    t0 = time.time()
    remaining = args.budget - (t0 - t_start)
    rc = run_logged(cmd, work / "train.log", timeout=max(60.0, remaining + args.overrun), env=child_env())
    report["train_s"] = round(time.time() - t0, 1)
    log = read_log(run)
    report["train_log_last"] = next((r for r in reversed(log) if "loss" in r), None)
    report["val_log"] = [r for r in log if "val_loss" in r]
    if rc != 0 or not export.exists():
        say(f"train: the run ended with exit {rc}; exporting its checkpoint")
        report["interrupted"] = True
        rc2 = run_logged([sys.executable, "tools/export_checkpoint.py", str(run), str(export), "--dtype", "float16"],
                         work / "train.log", timeout=300, env=child_env())
        if rc2 != 0 or not export.exists():
            report["error"] = f"training exit {rc}, export exit {rc2}"
            write_report(out / "train_report.json", report)
            raise SystemExit(f"gpu_train train: no model (training exit {rc}); see {work / 'train.log'}")
    report["steps_done"] = max((r.get("step", 0) for r in log), default=0)
    stopped = re.findall(r"training interrupted at step (\d+)", (work / "train.log").read_text())
    if report.get("interrupted") and stopped:
        report["steps_done"] = int(stopped[-1])   # the checkpoint's step (the log has every 20th)
    report["model_sha256"] = sha256(export)
    report["model_bytes"] = export.stat().st_size
    report["model_files"] = split_file(export, out, args.part_bytes)
    recs = val_records(data, args.eval_positions)
    device = args.eval_device or ("cpu" if args.device == "cpu" else "cuda")
    report["eval_positions"] = len(recs)
    say(f"evaluation: {len(recs)} held-out positions, the new model and the shipped one")
    report["eval"] = {"trained": evaluate(export, recs, device), "shipped": evaluate(None, recs, device)}
    tr, sh = report["eval"]["trained"], report["eval"]["shipped"]
    report["better_than_shipped"] = bool(tr["best_action_optimal"] > sh["best_action_optimal"]
                                         and all(tr[k] >= min(0.99, sh[k]) for k in TABLE2))
    report["better_rule"] = ("best_action_optimal above the shipped model's on the same positions, and every Table-2 "
                             "rate at least min(0.99, the shipped model's)")
    report["total_s"] = round(time.time() - t_start, 1)
    write_report(out / "train_report.json", report)
    shutil.copyfile(work / "train.log", out / "train.log")
    if (run / "log.jsonl").exists():
        shutil.copyfile(run / "log.jsonl", out / "train_log.jsonl")
    keys = ("best_action_optimal", *TABLE2, "outcome_accuracy", "value_mae_mean")
    for name in ("trained", "shipped"):
        say(f"{name}: " + ", ".join(f"{k} {report['eval'][name].get(k, float('nan')):.4f}" for k in keys))
    say(f"better than the shipped model: {report['better_than_shipped']}; {report['total_s']:.0f} s in all")
    return report


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="phase", required=True)
    p = sub.add_parser("prepare", help="the annotation cache from the repository's history into DIR")
    p.add_argument("dir")
    for name in ("data", "train", "all"):
        q = sub.add_parser(name)
        q.add_argument("--work", required=True, help="working folder (data/, run/, logs)")
        q.add_argument("--tiny", action="store_true", help="the CPU dry run: a few games, steps and positions")
        if name in ("data", "all"):
            q.add_argument("--cache", default=str(ROOT / ".gpu" / CACHE_NAME),
                           help="the carried annotation cache (prepare's output)")
            q.add_argument("--games", type=int, default=0,
                           help=f"games to generate (default: {CACHED_GAMES} with the cache, 600 without; tiny: 12)")
            q.add_argument("--gen-workers", type=int, default=0, help="generation processes (default: cores - 1)")
            q.add_argument("--data-timeout", type=float, default=240.0)
        if name in ("train", "all"):
            q.add_argument("--out", required=True, help="the lease's output folder")
            q.add_argument("--budget", type=float, default=240.0,
                           help="seconds for calibration and training together (evaluation comes after)")
            q.add_argument("--overrun", type=float, default=30.0, help="seconds past the budget before SIGINT")
            q.add_argument("--steps", type=int, default=0, help="steps (default: sized by the calibration run)")
            q.add_argument("--calibrate-steps", type=int, default=60)
            q.add_argument("--calibrate", action="store_true",
                           help="size the steps by a calibration run even when --steps (or --tiny) gives them")
            q.add_argument("--min-steps", type=int, default=200)
            q.add_argument("--max-steps", type=int, default=20000)
            q.add_argument("--batch-size", type=int, default=256)
            q.add_argument("--lr", type=float, default=7e-4)
            q.add_argument("--warmup", type=int, default=200)
            q.add_argument("--seed", type=int, default=0)
            q.add_argument("--loader-workers", type=int, default=6)
            q.add_argument("--device", default="cuda")
            q.add_argument("--precision", default="bf16", choices=["auto", "fp32", "bf16", "fp16"])
            q.add_argument("--eval-positions", type=int, default=2000,
                           help="held-out positions (each in both forms) for both models")
            q.add_argument("--eval-device", default="", help="default: cuda, or cpu when --device is cpu")
            q.add_argument("--part-bytes", type=int, default=PART_BYTES)
    args = ap.parse_args(argv)
    if args.phase == "prepare":
        prepare(Path(args.dir))
        return 0
    if args.tiny and args.phase in ("train", "all"):
        args.steps = args.steps or 12
        args.batch_size = min(args.batch_size, 8)
        args.device, args.precision = "cpu", "fp32"
        args.loader_workers = 0
        args.eval_positions = min(args.eval_positions, 6)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.phase in ("data", "all"):
        data_phase(args)
    if args.phase in ("train", "all"):
        train_phase(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
