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

A pool initializer that opens something (a UCI engine, a solver) calls :func:`close_at_exit` so that
it is closed when the worker process exits.

Ray actors (:mod:`mavgame.play.distributed`) call :func:`limit_threads` with their CPU reservation.

    >>> from mavgame.workers import pool, process_pool_executor
    >>> with pool(2, initializer=init, initargs=(cfg,)) as p: ...      # multiprocessing.pool.Pool
    >>> ex = process_pool_executor(2, initializer=init, initargs=(cfg,))  # concurrent.futures
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.context
import multiprocessing.pool
import os
import sys
from typing import Any, Callable, Optional, Sequence

__all__ = ["available_cpus", "threads_per_worker", "limit_threads", "worker_context", "pool",
           "process_pool_executor", "close_at_exit"]

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


def _start_method() -> str:
    methods = mp.get_all_start_methods()
    if "torch" in sys.modules and "forkserver" in methods:
        return "forkserver"
    return "fork" if "fork" in methods else "spawn"


def _process_class(method: str):
    """A Process class of the start method whose run() limits the threads first (module level, so that
    spawn and forkserver can pickle its instances)."""
    return _PROCESS_CLASSES[method]


def _run_limited(self, base) -> None:
    threads = getattr(self, "_mavgame_threads", None)
    if threads:
        limit_threads(threads)
    base.run(self)


class _ForkProcess(mp.context.ForkProcess if hasattr(mp.context, "ForkProcess") else mp.Process):  # type: ignore
    def run(self) -> None:
        _run_limited(self, _ForkProcess.__mro__[1])


class _SpawnProcess(mp.context.SpawnProcess if hasattr(mp.context, "SpawnProcess") else mp.Process):  # type: ignore
    def run(self) -> None:
        _run_limited(self, _SpawnProcess.__mro__[1])


class _ForkServerProcess(mp.context.ForkServerProcess if hasattr(mp.context, "ForkServerProcess")  # type: ignore
                         else mp.Process):
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
