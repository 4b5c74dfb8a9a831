"""The one place that creates worker processes (annotation, leagues, data generation) and sizes their
thread pools.

- Start method: ``fork`` where it is safe (fast, nothing to pickle); ``forkserver`` once PyTorch is
  loaded in this process (a forked child that runs torch after the parent did can hang in the
  inherited thread pool); ``spawn`` where there is no fork.
- Threads: each worker gets ``threads_per_worker(workers)`` threads (the CPUs this process may use,
  shared out over the workers, at least one), so that N workers running a MAV model or a BLAS call do
  not each start a thread per CPU and oversubscribe the machine (with torch installed, the default
  thread count made MAV agents in a league 4-20x slower on two cores).  The limit is set in the child
  before anything runs there: ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` (read by
  libraries loaded later, PyTorch included) and ``torch.set_num_threads`` when torch is already loaded.
  ``MAVGAME_WORKER_THREADS`` overrides the count.
- Orphans: a worker exits when the process that started it dies, however it dies (``kill -9`` included),
  instead of waiting forever on its task queue with the parent's files (a league's ``.sqlite``) open: on
  Linux the kernel sends it SIGKILL (``prctl(PR_SET_PDEATHSIG)``, :func:`die_with_parent`); elsewhere, for
  a worker started by a thread other than the main thread, and under ``forkserver`` (where the parent is
  the fork server), a thread in the worker notices within half a second.  A subprocess that a worker (or
  any process) starts, such as a UCI engine, goes with it when started with
  ``preexec_fn=die_with_parent_preexec()``.

A pool initializer that opens something (a UCI engine, a solver) calls :func:`close_at_exit` so that
it is closed when the worker process exits.

Ray actors (:mod:`mavgame.distributed_ray`, :mod:`mavgame.play.distributed`) call :func:`limit_threads` with their CPU reservation.

    >>> from mavgame.workers import pool, process_pool_executor
    >>> with pool(2, initializer=init, initargs=(cfg,)) as p: ...      # multiprocessing.pool.Pool
    >>> ex = process_pool_executor(2, initializer=init, initargs=(cfg,))  # concurrent.futures
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.context
import multiprocessing.pool
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

__all__ = ["available_cpus", "threads_per_worker", "limit_threads", "worker_context", "pool",
           "process_pool_executor", "close_at_exit", "die_with_parent", "die_with_parent_preexec"]

_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def threads_per_worker(workers: int) -> int:
    """Threads for each of ``workers`` processes: the available CPUs shared out, at least 1
    (``MAVGAME_WORKER_THREADS`` overrides)."""
    env = os.environ.get("MAVGAME_WORKER_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"MAVGAME_WORKER_THREADS must be a positive integer, not {env!r}") from None
        if n < 1:
            raise ValueError(f"MAVGAME_WORKER_THREADS must be a positive integer, not {env!r}")
        return n
    return max(1, available_cpus() // max(1, int(workers)))


def limit_threads(n: int) -> None:
    """Limit this process's compute thread pools to ``n`` threads (see the module docstring)."""
    n = max(1, int(n))
    for k in _THREAD_ENV:
        os.environ[k] = str(n)
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.set_num_threads(n)
        except Exception:  # noqa: BLE001 - a torch build without a thread pool
            pass


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PRCTL = None  # libc's prctl once looked up (False: there is none)


def _prctl():
    """libc's ``prctl`` (Linux), or None."""
    global _PRCTL
    if _PRCTL is None:
        _PRCTL = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                f = ctypes.CDLL(None, use_errno=True).prctl
                f.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
                f.restype = ctypes.c_int
                _PRCTL = f
            except (ImportError, OSError, AttributeError):
                pass
    return _PRCTL or None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, which has exited, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # no /proc: os.kill said it exists


def _watch(alive: Callable[[], bool], interval: float = 0.5) -> None:
    """A daemon thread that kills this process (SIGKILL) once ``alive()`` is false."""
    def watch():
        while alive():
            time.sleep(interval)
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=watch, name="mavgame-parent-watch", daemon=True).start()


def die_with_parent(parent: Optional[int] = None, *, kernel: bool = True) -> None:
    """Make this process die (SIGKILL) when its parent process exits, however the parent ends.

    With ``kernel`` on Linux the kernel sends the signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); the kernel
    counts the *thread* that started this process as the parent, so a process started by a thread other
    than its parent's main thread passes ``kernel=False``.  Otherwise (or without prctl) a daemon thread
    checks ``os.getppid()`` every half second.  ``parent``: the parent's pid, to catch a parent that died
    before the call (this process then dies at once; default: the parent at the time of the call).  The
    worker processes of :func:`worker_context` call it before anything else runs."""
    prctl = _prctl() if kernel else None
    if prctl is not None and prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
        if parent is not None and os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)  # the parent died before the prctl
        return
    parent = os.getppid() if parent is None else parent
    _watch(lambda: os.getppid() == parent)


def die_with_parent_preexec() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that has the child (a UCI engine) killed (SIGKILL) when
    this process exits, by the kernel (Linux: ``prctl(PR_SET_PDEATHSIG)``, which lasts across ``exec``).

    None (nothing to do) where there is no prctl, and when called from a thread other than the main thread:
    the kernel ties the signal to the thread that starts the child, so a child started by a thread that
    ends before the process would die with that thread."""
    prctl = _prctl()
    if prctl is None or threading.current_thread() is not threading.main_thread():
        return None
    parent, sig = os.getpid(), int(signal.SIGKILL)

    def preexec() -> None:  # in the child, between fork and exec: no locks, no allocation to speak of
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # this process died before the prctl
            os._exit(1)
    return preexec


def _start_method() -> str:
    methods = mp.get_all_start_methods()
    if "torch" in sys.modules and "forkserver" in methods:
        return "forkserver"
    return "fork" if "fork" in methods else "spawn"


def _process_class(method: str):
    """A Process class of the start method whose run() limits the threads first (module level, so that
    spawn and forkserver can pickle its instances)."""
    return _PROCESS_CLASSES[method]


def _start_recorded(self, base) -> None:
    # the kernel's parent of a forked or spawned worker is the thread that starts it (die_with_parent)
    self._mavgame_main_thread = threading.current_thread() is threading.main_thread()
    base.start(self)


def _run_limited(self, base) -> None:
    creator = self._parent_pid  # the process that started this one (multiprocessing's record)
    if getattr(self, "_start_method", None) == "forkserver":
        # the parent is the fork server, which outlives the creator as long as its workers do (they hold
        # its liveness pipe): watch the creator itself
        _watch(lambda: _alive(creator))
    else:
        die_with_parent(creator, kernel=getattr(self, "_mavgame_main_thread", True))
    threads = getattr(self, "_mavgame_threads", None)
    if threads:
        limit_threads(threads)
    base.run(self)


class _ForkProcess(mp.context.ForkProcess if hasattr(mp.context, "ForkProcess") else mp.Process):  # type: ignore
    def start(self) -> None:
        _start_recorded(self, _ForkProcess.__mro__[1])

    def run(self) -> None:
        _run_limited(self, _ForkProcess.__mro__[1])


class _SpawnProcess(mp.context.SpawnProcess if hasattr(mp.context, "SpawnProcess") else mp.Process):  # type: ignore
    def start(self) -> None:
        _start_recorded(self, _SpawnProcess.__mro__[1])

    def run(self) -> None:
        _run_limited(self, _SpawnProcess.__mro__[1])


class _ForkServerProcess(mp.context.ForkServerProcess if hasattr(mp.context, "ForkServerProcess")  # type: ignore
                         else mp.Process):
    def start(self) -> None:
        _start_recorded(self, _ForkServerProcess.__mro__[1])

    def run(self) -> None:
        _run_limited(self, _ForkServerProcess.__mro__[1])


_PROCESS_CLASSES = {"fork": _ForkProcess, "spawn": _SpawnProcess, "forkserver": _ForkServerProcess}


class _WorkerContext:
    """A multiprocessing context whose processes limit their threads before they run (everything but
    ``Process`` is the standard context's)."""

    def __init__(self, method: str, threads: int):
        self._base = mp.get_context(method)
        self._cls = _process_class(method)
        self.threads = int(threads)

    def Process(self, *args, **kwargs):  # noqa: N802 - multiprocessing's name
        p = self._cls(*args, **kwargs)
        p._mavgame_threads = self.threads
        return p

    def get_context(self, method: Optional[str] = None):
        return self if method is None else self._base.get_context(method)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def __repr__(self) -> str:
        return f"<mavgame worker context {self._base.get_start_method()!r}, {self.threads} thread(s) per worker>"


def worker_context(workers: int = 1, threads: Optional[int] = None) -> _WorkerContext:
    """The multiprocessing context for ``workers`` worker processes (start method and threads per
    worker as in the module docstring; ``threads`` overrides the count)."""
    return _WorkerContext(_start_method(), threads if threads is not None else threads_per_worker(workers))


def pool(workers: int, initializer: Optional[Callable] = None, initargs: Sequence = (),
         threads: Optional[int] = None) -> multiprocessing.pool.Pool:
    """A ``multiprocessing.pool.Pool`` of ``workers`` processes from :func:`worker_context`."""
    return multiprocessing.pool.Pool(workers, initializer, tuple(initargs),
                                     context=worker_context(workers, threads))


def process_pool_executor(workers: int, initializer: Optional[Callable] = None, initargs: Sequence = (),
                          threads: Optional[int] = None):
    """A ``concurrent.futures.ProcessPoolExecutor`` of ``workers`` processes from :func:`worker_context`
    (an initializer that raises breaks the pool once, instead of a respawn loop)."""
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(workers, mp_context=worker_context(workers, threads), initializer=initializer,
                               initargs=tuple(initargs))


def close_at_exit(obj: Any, close: Optional[Callable[[], Any]] = None) -> None:
    """In a worker process: call ``close`` (default ``obj.close``) when the process exits (engines and
    solvers opened by a pool initializer); the call is dropped if ``obj`` is collected first."""
    from multiprocessing.util import Finalize
    Finalize(obj, close if close is not None else obj.close, exitpriority=10)
