"""mavgame.workers: the one place that creates worker processes (issue 11) and sizes their threads from the
worker count (issue 21: with torch installed, every worker used a thread per CPU and MAV agents in a league
ran 4-20x slower on two cores)."""
import subprocess
import sys
import textwrap

import pytest

import workers_probe
from mavgame import workers
from fake_uci import REPO


def test_threads_per_worker_shares_out_the_cpus(monkeypatch):
    monkeypatch.delenv("MAVGAME_WORKER_THREADS", raising=False)
    monkeypatch.setattr(workers, "available_cpus", lambda: 16)
    assert [workers.threads_per_worker(w) for w in (1, 2, 3, 16, 64)] == [16, 8, 5, 1, 1]
    monkeypatch.setenv("MAVGAME_WORKER_THREADS", "3")
    assert workers.threads_per_worker(2) == 3
    monkeypatch.setenv("MAVGAME_WORKER_THREADS", "0")
    with pytest.raises(ValueError, match="MAVGAME_WORKER_THREADS"):
        workers.threads_per_worker(2)


@pytest.mark.parametrize("kind", ["pool", "executor"])
def test_workers_get_threads_from_the_worker_count(kind, tmp_path, monkeypatch):
    monkeypatch.delenv("MAVGAME_WORKER_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    n = workers.threads_per_worker(2)
    log = tmp_path / "init.txt"
    if kind == "pool":
        with workers.pool(2, workers_probe.init_record, (str(log),), threads=n) as p:
            got = p.map(workers_probe.threads, range(4))
    else:
        ex = workers.process_pool_executor(2, workers_probe.init_record, (str(log),), threads=n)
        try:
            got = list(ex.map(workers_probe.threads, range(4)))
        finally:
            ex.shutdown()
    for _, omp, torch_threads, _ in got:
        assert omp == str(n)
        assert torch_threads in (None, n)       # torch, when installed, reads the limit
    assert set(log.read_text().split()) == {str(n)}   # set before the initializer runs


@pytest.mark.slow
def test_torch_loaded_in_the_parent_gives_forkserver_workers_with_their_share():
    """The league's fix, now for every pool: forkserver once torch is loaded, and torch in the worker
    limited to its share (a plain forkserver worker would use a thread per CPU)."""
    pytest.importorskip("torch")
    code = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{REPO!r}, {REPO + '/tests'!r}]
        import torch
        from mavgame import workers
        import workers_probe
        ctx = workers.worker_context(2, threads=1)
        assert ctx.get_start_method() == "forkserver", ctx
        with workers.pool(2, threads=1) as p:
            print(p.map(workers_probe.threads, range(2)))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = eval(p.stdout.strip())
    assert all(omp == "1" and t == 1 and not had for _, omp, t, had in got), got


def test_every_process_pool_comes_from_mavgame_workers():
    """No module but mavgame.workers picks a start method, builds a pool or registers a worker's exit
    handler itself."""
    from pathlib import Path
    import re
    pkg = Path(REPO) / "mavgame"
    bad = []
    for f in pkg.rglob("*.py"):
        if f.name == "workers.py":
            continue
        text = f.read_text()
        for pat in (r"get_context\(", r"\.Pool\(", r"ProcessPoolExecutor\(", r"get_all_start_methods",
                    r"Finalize\(", r"set_start_method"):
            if re.search(pat, text):
                bad.append(f"{f.relative_to(pkg)}: {pat}")
    assert not bad, bad


def test_ray_actor_bodies_limit_their_threads(monkeypatch):
    from mavgame.play import distributed
    seen = []
    monkeypatch.setattr(workers, "limit_threads", lambda n: seen.append(n))
    distributed._actor_threads(4)
    distributed._actor_threads(0.5)
    assert seen == [4, 1]
