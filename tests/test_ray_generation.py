"""MAV data generation on Ray actors (issue 50): the same bytes as the one-machine run for the same seed and
chunk size, and a Ray generation whose driver is killed (kill -9) resumes to those bytes.  The tests that
start Ray (a local instance with two CPUs, a few seconds) are slow; all skip without Ray."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_uci import REPO
from mavgame.datasets import generate_positions
from mavgame.datasets.positions import CACHE, PROGRESS, load_annotation_cache

C4 = dict(seed=3, epsilon=0.2, val_fraction=0.2, random_opening=16, progress=False, chunk=2, shard_size=9,
          annotator_options={"max_nodes": 200_000, "tt_log2": 16, "exact_plies": 22})


def files(root: Path) -> dict:
    """{relative path: bytes} of a position set's shards, and its manifests without the run time."""
    out = {}
    for f in sorted(root.rglob("*")):
        if f.is_file() and f.parent.name in ("train", "val"):
            data = f.read_bytes()
            if f.name == "manifest.json":
                m = json.loads(data)
                m["info"]["stats"].pop("seconds")
                data = json.dumps(m, sort_keys=True).encode()
            out[str(f.relative_to(root))] = data
    return out


def same_cache(a: Path, b: Path) -> bool:
    ca, cb = load_annotation_cache(a / CACHE), load_annotation_cache(b / CACHE)
    return bool(ca) and {k: v[:2] for k, v in ca.items()} == {k: v[:2] for k, v in cb.items()}


def test_executor_is_checked(tmp_path):
    with pytest.raises(ValueError, match="executor must be"):
        generate_positions("connect_four", tmp_path / "a", 2, executor="dask", **C4)
    with pytest.raises(TypeError, match="executor must be"):
        generate_positions("connect_four", tmp_path / "b", 2, executor=object(), **C4)
    with pytest.raises(ValueError, match="ray_address needs executor='ray'"):
        generate_positions("connect_four", tmp_path / "c", 2, ray_address="auto", **C4)
    assert not (tmp_path / "a").exists()


def test_cli_refuses_ray_with_pgn(tmp_path):
    from mavgame.cli import main
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "x"]\n\n1. e4 e5 *\n')
    with pytest.raises(SystemExit, match="--ray generates played games"):
        main(["train", "--generate-only", "--game", "chess", "--data", str(tmp_path / "d"), "--pgn", str(pgn),
              "--ray"])


@pytest.mark.slow
def test_ray_generation_is_byte_identical(tmp_path, ray_cluster):
    from mavgame.distributed_ray import RayJobs
    one = generate_positions("connect_four", tmp_path / "one", 12, **C4)
    ray = generate_positions("connect_four", tmp_path / "ray", 12, executor=RayJobs(num_workers=2, window=2), **C4)
    a, b = files(tmp_path / "one"), files(tmp_path / "ray")
    assert len(a) > 4 and a == b
    one.pop("seconds"), ray.pop("seconds")
    assert one == ray and one["positions_unique"] > 0
    assert same_cache(tmp_path / "one", tmp_path / "ray")   # the driver wrote the actors' solves
    assert not (tmp_path / "ray" / PROGRESS).exists()


@pytest.mark.slow
def test_cli_generate_only_on_ray(tmp_path, ray_cluster, capsys):
    """``mavgame train --generate-only --ray ADDRESS``: the set of the one-machine command."""
    from mavgame.cli import main
    common = ["train", "--generate-only", "--no-progress", "--games", "20", "--data-seed", "3",
              "--random-opening", "16", "--val-fraction", "0.2", "--annotator-option", "max_nodes=200000",
              "--annotator-option", "tt_log2=16", "--annotator-option", "exact_plies=22"]
    assert main(common + ["--data", str(tmp_path / "one")]) == 0
    assert main(common + ["--data", str(tmp_path / "ray"), "--ray", ray_cluster, "--gen-workers", "2"]) == 0
    a, b = files(tmp_path / "one"), files(tmp_path / "ray")
    assert a and a == b
    import ray
    assert ray.is_initialized()   # the command leaves a Ray connection it did not open alone


KILLED = """
import os, signal, sys
from mavgame.datasets import positions
C4 = {c4!r}
real, writes = positions.write_json_atomic, [0]
def write(path, obj):
    real(path, obj)
    if path.name == positions.PROGRESS:
        writes[0] += 1
        if writes[0] == 3:                    # three chunks stored, others under way on the actors
            os.kill(os.getpid(), signal.SIGKILL)
positions.write_json_atomic = write
positions.generate_positions("connect_four", sys.argv[1], 12, executor="ray", ray_address=sys.argv[2], **C4)
"""


@pytest.mark.slow
def test_killed_ray_generation_resumes(tmp_path, ray_cluster):
    """A driver killed with -9 in the middle of a Ray generation (joined to a running cluster) leaves a
    progress record; the same call resumes it, on Ray, to the one-machine run's bytes."""
    generate_positions("connect_four", tmp_path / "one", 12, **C4)
    part = tmp_path / "part"
    env = dict(os.environ, PYTHONPATH=REPO, RAY_USAGE_STATS_ENABLED="0")
    p = subprocess.run([sys.executable, "-c", KILLED.format(c4=C4), str(part), ray_cluster], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == -9, p.stderr[-3000:]
    prog = json.loads((part / PROGRESS).read_text())
    assert prog["games_done"] == 6
    assert not (part / "train" / "manifest.json").exists()
    with open(part / CACHE, "a") as f:
        f.write('{"state": "torn')                             # killed mid-write
    generate_positions("connect_four", part, 12, executor="ray", **C4)
    assert files(part) == files(tmp_path / "one")
    assert same_cache(part, tmp_path / "one")
    assert not (part / PROGRESS).exists()
