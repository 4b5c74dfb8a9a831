"""No job wedges or leaks after a crash (issue 53).

Default run (a few seconds each):

- a book partial torn mid-entry (or mid-header) by a kill resumes to the book an uninterrupted build
  writes, as does one killed among the shallower plies; a partial damaged by an older build is named;
- the worker processes of ``mavgame league --workers 2`` die with the league when it is killed with
  ``kill -9`` (they used to wait on their task queue forever, holding the store open), and so do their UCI
  engines (a fake engine that ignores the end of its input; Stockfish too when it is installed);
- the same for every pool of :mod:`mavgame.workers` under every start method, and for a pool started by
  a thread that ends (its workers must not die with that thread).

Slow (``-m slow``): ``kill -9`` at several seeded random moments of ``mavgame league``, ``mavgame book
build``, ``mavgame train`` and ``mavgame az``, each rerun until it finishes; no process may outlive a
kill, and the result must be the one an uninterrupted run gives (the same games, the same book) or, for
training, a finished run whose final checkpoint loads.

Processes are found through /proc (psutil is not needed).
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_uci import write_fake_engine
from mavgame.cli import main
from mavgame.games import c4_book

REPO = Path(__file__).resolve().parents[1]
ROOT = "444444333333"  # the book below this opening: plies 12..15 build in a fraction of a second

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")


# ---- processes -----------------------------------------------------------------------------------

def _stat(pid: int):
    """(state, ppid) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie has exited


def _descendants(pid: int):
    """The live processes below ``pid`` (children, their children, ...)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st is not None and st[0] not in ("Z", "X"):
                kids.setdefault(st[1], []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return sorted(out)


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _start(argv, cwd):
    """``python -m mavgame ARGV`` in the background (its output in cwd/out.txt)."""
    out = open(Path(cwd) / "out.txt", "ab")
    try:
        return subprocess.Popen([sys.executable, "-m", "mavgame", *argv], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=cwd, env=_env())
    finally:
        out.close()


def _wait_for(cond, timeout: float, what: str, proc=None):
    t0 = time.monotonic()
    while True:
        v = cond()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the command ended (status {proc.returncode}) before {what}")
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"no {what} within {timeout} s")
        time.sleep(0.05)


def _kill9(proc) -> None:
    try:
        proc.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _left_after(groups, timeout: float = 5.0) -> dict:
    """{what: pids} of the pids of ``groups`` ({what: pids}) still alive after ``timeout`` s; those are then
    killed, so that no test leaves processes behind."""
    pids = [p for g in groups.values() for p in g]
    t0 = time.monotonic()
    while any(_alive(p) for p in pids) and time.monotonic() - t0 < timeout:
        time.sleep(0.05)
    left = {what: [p for p in g if _alive(p)] for what, g in groups.items()}
    for p in (p for g in left.values() for p in g):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return {what: g for what, g in left.items() if g}


def _league_killed_leaves_nothing(tmp_path, agents, game="connect_four", engines=0, extra=()):
    """Start a 2-worker league, wait for its workers (and ``engines`` engines each), kill -9 it: every
    process below it goes."""
    argv = ["league", "--game", game, "--workers", "2", "--rounds", "50", "--out", str(tmp_path / "lg.sqlite"),
            "--no-progress", *extra]
    for a in agents:
        argv += ["--agent", a]
    p = _start(argv, tmp_path)
    below = []
    try:
        def started():
            kids = [c for c in _descendants(p.pid) if (_stat(c) or ("", 0))[1] == p.pid]
            if len(kids) < 2:
                return None
            if engines and not all(len(_descendants(k)) >= engines for k in kids[:2]):
                return None
            return _descendants(p.pid)
        below = _wait_for(started, 30, f"two workers{f' with {engines} engines each' if engines else ''}", p)
        time.sleep(0.3)  # games in flight
        assert p.poll() is None, (tmp_path / "out.txt").read_text()
    finally:
        _kill9(p)
        left = _left_after({"processes below the league": below})
    assert len(below) >= 2 + 2 * engines
    assert not left, f"still alive 5 s after the kill -9 of the league: {left}"


# ---- default run -----------------------------------------------------------------------------------

def test_a_torn_book_partial_resumes_to_the_uninterrupted_book(tmp_path, capsys):
    ref = tmp_path / "ref.bin"
    assert main(["book", "build", "--ply", "15", "--root", ROOT, "--out", str(ref), "--no-progress"]) == 0
    out = tmp_path / "b.bin"
    part = Path(str(out) + ".partial")
    argv = ["book", "build", "--ply", "15", "--root", ROOT, "--out", str(out), "--no-progress"]
    for _ in range(5):   # --max-seconds 0: one position a run
        assert main(argv + ["--max-seconds", "0"]) == 0
    assert not out.exists() and part.stat().st_size == 24 + 5 * 8
    with open(part, "r+b") as f:   # killed while writing the last entry: 5 of its 8 bytes on disk
        f.truncate(24 + 4 * 8 + 5)
    for _ in range(3):   # resumed (and stopped) after the torn entry, then finished
        assert main(argv + ["--max-seconds", "0"]) == 0
        assert (part.stat().st_size - 24) % 8 == 0, "an entry was appended after the torn bytes"
    assert main(argv) == 0
    assert out.read_bytes() == ref.read_bytes()
    assert not part.exists() and not list(tmp_path.glob("b.bin.*"))
    capsys.readouterr()
    assert main(["book", "info", str(out)]) == 0
    assert "plies 12..15" in capsys.readouterr().out


def test_a_book_killed_among_the_shallower_plies_resumes(tmp_path):
    """A partial holding the deepest ply and some of the next: the solver's book of the deeper plies must
    not take the shallower entries too (the reader refuses entries outside its header's plies)."""
    ref = tmp_path / "ref.bin"
    c4_book.build_book(15, str(ref), root=ROOT, progress=False)
    scores = dict(c4_book.book_positions(str(ref)))
    root = c4_book._root(ROOT)
    keys = [k for k, _ in c4_book.positions_at(root, 15)] + [k for k, _ in c4_book.positions_at(root, 14)][:3]
    out = tmp_path / "s.bin"
    Path(str(out) + ".partial").write_bytes(c4_book._header(12, 15, 0) + b"".join(
        (k << 8 | (scores[k] + 64)).to_bytes(8, "little") for k in keys))
    st = c4_book.build_book(15, str(out), root=ROOT, progress=False)
    assert st["finished"] and st["resumed_positions"] == len(keys)
    assert out.read_bytes() == ref.read_bytes()


def test_a_torn_book_header_or_damaged_partial_is_not_a_wedge(tmp_path, capsys):
    ref = tmp_path / "ref.bin"
    c4_book.build_book(14, str(ref), root=ROOT, progress=False)
    out = tmp_path / "h.bin"
    Path(str(out) + ".partial").write_bytes(c4_book._header(12, 14, 0)[:11])   # killed writing the header
    assert main(["book", "build", "--ply", "14", "--root", ROOT, "--out", str(out), "--no-progress"]) == 0
    assert out.read_bytes() == ref.read_bytes()
    # a partial damaged by a build before the fix (entries misaligned after a torn one): named, not solved
    bad = tmp_path / "d.bin"
    Path(str(bad) + ".partial").write_bytes(c4_book._header(12, 14, 0) + (64 + 40).to_bytes(8, "little"))
    with pytest.raises(SystemExit, match=r"d\.bin\.partial: entry 0 \(key 0x0, score 40\) is not a solved position"):
        main(["book", "build", "--ply", "14", "--root", ROOT, "--out", str(bad), "--no-progress"])


def test_league_workers_die_with_a_killed_league(tmp_path):
    _league_killed_leaves_nothing(tmp_path, ["a=uct:sims=3000", "b=uct:sims=3000"])


POOL_CHILD = """
import os, sys, time
from mavgame import workers
method, kind, marks = sys.argv[1:4]
workers._start_method = lambda: method

def task(i):
    open(os.path.join(marks, str(os.getpid())), "w").close()
    time.sleep(120)

if __name__ == "__main__":
    if kind == "executor":   # the league's pool
        ex = workers.process_pool_executor(2)
        futures = [ex.submit(task, i) for i in range(2)]
    elif kind == "thread":   # started by a thread that then ends: the workers must outlive the thread
        import threading
        held = []
        t = threading.Thread(target=lambda: held.append(workers.process_pool_executor(2)) or
                             held.extend(held[0].submit(task, i) for i in range(2)))
        t.start()
        t.join()
    else:                    # the data generation's and the annotator's
        p = workers.pool(2)
        r = p.map_async(task, range(2), chunksize=1)
    time.sleep(120)
"""


@pytest.mark.parametrize("kind", ["executor", "pool", "thread"])
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_workers_die_with_their_parent(tmp_path, method, kind):
    """Every pool of mavgame.workers, under every start method (forkserver: the fork server is the
    workers' parent and outlives the killed process while they live, so they watch the process itself),
    and a pool started by a thread that ends (the kernel would take its workers with the thread: they
    watch their parent instead)."""
    import multiprocessing
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    (tmp_path / "child.py").write_text(POOL_CHILD)
    marks = tmp_path / "marks"
    marks.mkdir()
    p = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), method, kind, str(marks)], cwd=tmp_path,
                         env=_env(), stdin=subprocess.DEVNULL)
    below = []
    try:
        _wait_for(lambda: len(list(marks.iterdir())) >= 2, 30, "two workers running a task", p)
        below = _descendants(p.pid)
        if kind == "thread":
            time.sleep(1.0)
            assert all(_alive(int(m.name)) for m in marks.iterdir()), "a worker died with the thread that started it"
    finally:
        _kill9(p)
        left = _left_after({"processes below": below})
    assert {int(m.name) for m in marks.iterdir()} <= set(below)
    assert not left, f"{method} {kind}: still alive 5 s after the kill -9 of their parent: {left}"


def _deaf_engine(directory) -> str:
    """The fake UCI engine, made to stay alive after the end of its input (as an engine busy in a search
    that does not read it would): only the kernel's parent-death signal ends it."""
    path = write_fake_engine(directory, "ok", name="deaf_to_eof.py")
    with open(path, "a") as f:
        f.write("\nimport time\nif line != 'quit':\n    time.sleep(300)\n")
    return path


def test_league_engines_die_with_a_killed_league(tmp_path):
    eng = _deaf_engine(tmp_path)
    _league_killed_leaves_nothing(tmp_path, [f"a=uci:path={eng}", f"b=uci:path={eng}"], game="chess",
                                  engines=2, extra=["--max-plies", "40"])


def _stockfish():
    return shutil.which("stockfish") or (shutil.which("/usr/games/stockfish"))


@pytest.mark.skipif(not _stockfish(), reason="stockfish not installed")
def test_league_stockfish_engines_die_with_a_killed_league(tmp_path):
    sf = _stockfish()
    _league_killed_leaves_nothing(tmp_path, [f"a=uci:path={sf},skill=0,movetime=20",
                                             f"b=uci:path={sf},skill=1,movetime=20"], game="chess",
                                  engines=2, extra=["--max-plies", "40"])


# ---- slow: kill -9 loops ---------------------------------------------------------------------------

def _changes(path):
    """A ``ready`` for :func:`_kill_loop`: true once ``path`` has changed (size or time) since the call."""
    def key():
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns
    before = key()
    return lambda: key() not in (None, before)


def _prints(path, text: str):
    """A ``ready`` for :func:`_kill_loop`: true once ``text`` appears in ``path`` once more than at the call."""
    def count():
        try:
            return Path(path).read_text(errors="replace").count(text)
        except OSError:
            return 0
    before = count()
    return lambda: count() > before


def _kill_loop(argv, cwd, *, kills: int, seed: int, window, ready=None, after_kill=None, timeout: float = 120):
    """Run ``mavgame ARGV`` ``kills`` times, each killed with SIGKILL at a random moment (seeded) unless it
    ends first; no process it started may outlive it.  The moment is ``window`` (seconds) after the start
    or, with ``ready`` (called at each start, it returns a predicate), after the run shows progress.
    ``after_kill(i, rng)`` runs after the i-th kill.  Then the command runs once more, to the end.
    Returns the number of runs killed."""
    rng = random.Random(seed)
    killed = 0
    for i in range(kills):
        progressed = ready() if ready is not None else None
        p = _start(argv, cwd)
        try:
            if progressed is not None:
                t0 = time.monotonic()
                while not progressed() and p.poll() is None and time.monotonic() - t0 < timeout:
                    time.sleep(0.02)
            p.wait(timeout=rng.uniform(*window))
        except subprocess.TimeoutExpired:
            below = _descendants(p.pid)
            _kill9(p)
            killed += 1
            left = _left_after({"processes": below})
            assert not left, f"run {i}: still alive 5 s after the kill -9 of mavgame: {left}"
            if after_kill is not None:
                after_kill(killed, rng)
        else:
            assert p.returncode == 0, f"run {i} failed:\n{(Path(cwd) / 'out.txt').read_text()[-3000:]}"
    p = _start(argv, cwd)
    try:
        assert p.wait(timeout=timeout) == 0, (Path(cwd) / "out.txt").read_text()[-3000:]
    finally:
        if p.poll() is None:
            _kill9(p)
    return killed


def _games(path):
    from mavgame.play.store import read_league_store
    games = read_league_store(str(path))[1]
    keys = [g.key for g in games]
    assert len(keys) == len(set(keys)), f"{path}: a game stored twice"
    return sorted((g.key, g.first, g.second, g.opening, g.round, g.seed, tuple(g.moves), g.result) for g in games)


@pytest.mark.slow
def test_league_killed_at_random_moments_resumes_to_the_same_games(tmp_path):
    league = ["league", "--game", "connect_four", "--agent", "a=uct:sims=10000", "--agent", "b=uct:sims=20000",
              "--rounds", "2", "--workers", "2", "--seed", "3", "--no-progress"]   # 80 games, about 10 s
    ref = tmp_path / "ref"
    ref.mkdir()
    assert subprocess.run([sys.executable, "-m", "mavgame", *league, "--out", "ref.sqlite"], cwd=ref, env=_env(),
                          capture_output=True, timeout=300).returncode == 0
    run = tmp_path / "run"
    run.mkdir()
    # killed 0.3-1.5 s after it starts playing (it prints its schedule first)
    killed = _kill_loop(league + ["--out", "lg.sqlite"], run, kills=6, seed=53, window=(0.3, 1.5),
                        ready=lambda: _prints(run / "out.txt", "80 games; results in"))
    assert killed >= 4
    assert _games(run / "lg.sqlite") == _games(ref / "ref.sqlite")


@pytest.mark.slow
def test_book_build_killed_at_random_moments_resumes_to_the_same_book(tmp_path, capsys):
    root, ply = "4444443333", 17   # about 8 s of solving (22,342 positions), little of enumerating them
    ref = tmp_path / "ref.bin"
    c4_book.build_book(ply, str(ref), root=root, tt_log2=20, progress=False)
    out = tmp_path / "b.bin"
    part = Path(str(out) + ".partial")

    torn = []

    def tear(i, rng):  # every other kill also tears the last entry written (as a kill in the middle of a write)
        if i % 2 and part.exists() and part.stat().st_size > 24:
            with open(part, "r+b") as f:
                f.truncate(part.stat().st_size - rng.randint(1, 7))
            torn.append(i)

    argv = ["book", "build", "--ply", str(ply), "--root", root, "--out", str(out), "--tt-log2", "20", "--no-progress"]
    killed = _kill_loop(argv, tmp_path, kills=6, seed=530, window=(0.0, 1.0), ready=lambda: _changes(part),
                        after_kill=tear)
    assert killed >= 4 and torn and min(torn) < killed, (killed, torn)   # a killed run resumed after a tear
    assert out.read_bytes() == ref.read_bytes()
    assert not part.exists()
    capsys.readouterr()
    assert main(["book", "info", str(out)]) == 0
    assert "plies 10..17" in capsys.readouterr().out


@pytest.mark.slow
def test_train_killed_at_random_moments_finishes_with_a_checkpoint_that_loads(tmp_path):
    pytest.importorskip("torch")
    from mavgame.model.train_config import load_checkpoint
    data = tmp_path / "ttt"
    assert main(["train", "--game", "tictactoe", "--data", str(data), "--games", "30", "--generate-only",
                 "--no-progress"]) == 0
    steps = 400
    argv = ["train", "--game", "tictactoe", "--data", str(data), "--out", str(tmp_path / "run"), "--preset", "tiny",
            "--steps", str(steps), "--batch-size", "8", "--warmup", "1", "--eval-every", "100",
            "--checkpoint-every", "10", "--threads", "1", "--workers", "0", "--final-eval-positions", "3",
            "--gen-eval-positions", "2", "--ood-games", "0", "--no-progress"]
    ck = tmp_path / "run" / "checkpoint.pt"   # written every 10 steps: killed at most 1.5 s after one
    killed = _kill_loop(argv, tmp_path, kills=4, seed=5300, window=(0.0, 1.5), ready=lambda: _changes(ck),
                        timeout=300)
    assert killed >= 3
    assert load_checkpoint(ck)["step"] == steps
    from mavgame.model.inference import MAVModel
    MAVModel.load(str(tmp_path / "run" / "model.safetensors"))


@pytest.mark.slow
def test_az_killed_at_random_moments_finishes_with_a_checkpoint_that_loads(tmp_path):
    pytest.importorskip("torch")
    import json
    iterations = 24
    argv = ["az", "--out", str(tmp_path / "run"), "--game", "tictactoe", "--iterations", str(iterations),
            "--games", "6", "--parallel", "6", "--sims", "8", "--blocks", "1", "--channels", "8", "--steps", "20",
            "--batch-size", "16", "--no-progress", "--threads", "1"]
    log = tmp_path / "run" / "log.jsonl"   # a line an iteration: killed at most 1.5 s after one
    killed = _kill_loop(argv, tmp_path, kills=5, seed=53000, window=(0.0, 1.5), ready=lambda: _changes(log),
                        timeout=300)
    assert killed >= 3
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["iteration"] for r in lines] == list(range(iterations))
    ck = tmp_path / "run" / "checkpoint.pt"
    r = subprocess.run([sys.executable, "-m", "mavgame", "match", f"az:checkpoint={ck},sims=4", "random", "--game",
                        "tictactoe", "--openings", "1", "--workers", "1", "--no-progress"], cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "2 games" in r.stdout
