"""The GPU lease's training stage (tools/gpu_session.sh, tools/gpu_train.py) dry-run on the CPU, so that it works
the first time a GPU is lent: `STAGES=train TINY=1` generates a few games (their expensive solves from the
annotation cache that ``gpu_train.py prepare`` takes from the repository's history, where the clone has it),
trains the tiny preset for a few steps on the CPU, exports it, evaluates it and the shipped model on held-out
positions, and leaves in $OUT what a lease can send back: at most 8 files of at most 16 MiB (the model split
into parts here, as the 24M-parameter model is on the GPU), the evaluation JSON, the logs in one archive."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gpu_train  # noqa: E402

LEASE_FILES, LEASE_FILE_BYTES = 8, 16 * 1024 * 1024


def test_split_file_and_json_clean(tmp_path):
    src = tmp_path / "m.bin"
    src.write_bytes(bytes(range(256)) * 41)          # 10,496 bytes
    out = tmp_path / "out"
    out.mkdir()
    parts = gpu_train.split_file(src, out, 4096)
    assert [p["file"] for p in parts] == ["m.bin.part0", "m.bin.part1", "m.bin.part2"]
    assert [p["bytes"] for p in parts] == [4096, 4096, 2304]
    assert b"".join((out / p["file"]).read_bytes() for p in parts) == src.read_bytes()
    assert gpu_train.split_file(src, tmp_path / "out", 1 << 20) == [{"file": "m.bin", "bytes": 10496}]
    assert gpu_train.json_clean({"a": float("nan"), "b": [1.5, float("inf")], "c": Path("x")}) == \
        {"a": None, "b": [1.5, None], "c": "x"}


def test_training_stage_dry_run_on_the_cpu(tmp_path):
    pytest.importorskip("torch")
    from mavgame import _core
    if not hasattr(_core, "MavEngine"):
        pytest.skip("no native engine in this build")
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    cache = tmp_path / "prep"
    try:
        gpu_train.prepare(cache)
        cache_file = cache / gpu_train.CACHE_NAME
    except SystemExit:   # a shallow clone: the games are solved without the cache (slower, the same checks)
        cache_file = tmp_path / "none"
    out, logs, work = tmp_path / "out", tmp_path / "logs", tmp_path / "work"
    env = dict(os.environ, OUT=str(out), GPU_LOGS=str(logs), GPU_WORK=str(work), STAGES="train", TINY="1",
               GPU_CACHE=str(cache_file), TRAIN="--part-bytes 100000", GEN_WORKERS="1", SESSION_SECONDS="600",
               PYTHON=sys.executable)
    env.pop("MAVGAME_CUDA_ARCH", None)
    res = subprocess.run(["bash", "tools/gpu_session.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    files = sorted(p.name for p in out.iterdir())
    assert all(p.is_file() for p in out.iterdir())
    assert len(files) <= LEASE_FILES and all((out / f).stat().st_size <= LEASE_FILE_BYTES for f in files), files
    assert "train_report.json" in files and "logs.tar.gz" in files, files
    report = json.loads((out / "train_report.json").read_text())
    parts = [p["file"] for p in report["model_files"]]
    assert len(parts) >= 2 and parts == [f"model.safetensors.part{i}" for i in range(len(parts))], parts
    assert set(parts) <= set(files)
    whole = tmp_path / "model.safetensors"
    whole.write_bytes(b"".join((out / p).read_bytes() for p in parts))
    assert hashlib.sha256(whole.read_bytes()).hexdigest() == report["model_sha256"]
    assert whole.stat().st_size == report["model_bytes"]
    assert report["steps_done"] == report["steps_planned"] == 12 and not report.get("interrupted")
    assert report["data"]["train_positions"] > 0 and report["data"]["val_positions"] > 0
    assert report["eval_positions"] == min(6, report["data"]["val_positions"])
    for name in ("trained", "shipped"):
        ev = report["eval"][name]
        for k in gpu_train.TABLE2 + ("best_action_optimal", "examples"):
            assert k in ev, (name, k)
        assert ev["examples"] >= report["eval_positions"] and ev["device"] == "native cpu"
    # the shipped model reads held-out positions well even on this tiny set; the 12-step model does not
    assert report["eval"]["shipped"]["best_action_legal"] >= 0.9
    assert report["better_than_shipped"] is False
    assert "--preset tiny" in report["command"] and "--export-dtype float16" in report["command"]
    from mavgame.model import MAVModel
    m = MAVModel.load(str(whole), backend="native")
    assert m.cfg.d_model == 32
    with tarfile.open(out / "logs.tar.gz") as tar:
        names = {Path(n).name for n in tar.getnames()}
    assert {"session.log", "train.log", "train_log.jsonl", "data.log", "gpu_train.log"} <= names, names


def test_calibration_sizes_the_steps_to_the_budget(tmp_path):
    """The GPU run's path: no --steps, so a calibration run times the steps and the budget sets their number
    (here the tiny model on the CPU, clamped to --max-steps)."""
    pytest.importorskip("torch")
    from mavgame import _core
    if not hasattr(_core, "MavEngine"):
        pytest.skip("no native engine in this build")
    cache = tmp_path / "prep"
    try:
        gpu_train.prepare(cache)
    except SystemExit:
        pass
    work, out = tmp_path / "work", tmp_path / "out"
    rc = gpu_train.main(["all", "--work", str(work), "--out", str(out), "--tiny", "--calibrate",
                         "--cache", str(cache / gpu_train.CACHE_NAME), "--gen-workers", "1", "--games", "6",
                         "--calibrate-steps", "40", "--budget", "600", "--min-steps", "3", "--max-steps", "16"])
    assert rc == 0
    report = json.loads((out / "train_report.json").read_text())
    cal = report["calibration"]
    assert cal["steps"] == 40 and cal["step_s"] > 0 and cal["tokens_per_s"] > 0 and cal["fixed_s"] >= 0
    assert report["steps_planned"] == report["steps_done"] == 16    # a 600 s budget: the cap
    assert not (work / "calibrate").exists()                        # the calibration run is not kept
    assert [p["file"] for p in report["model_files"]] == ["model.safetensors"]
