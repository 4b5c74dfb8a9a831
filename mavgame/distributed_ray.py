"""Ray actors for mavgame's jobs (Ray is optional: ``pip install ray``), low in the package so that every
layer can use it: :mod:`mavgame.play.distributed` (leagues, Stockfish annotation) and
:mod:`mavgame.datasets.positions` (MAV data generation, ``generate_positions(..., executor="ray")``).

:class:`RayJobs` runs a module-level job function over a list of jobs on Ray actors, each set up once by an
initialiser (as a process pool's ``initializer`` sets up its workers), and yields the results in job
order, so that a caller that consumes them in order writes the same bytes whatever the number of actors::

    >>> from mavgame.distributed_ray import RayJobs
    >>> for res in RayJobs(num_workers=64).map(init, (cfg,), job_fn, jobs): consume(res)

``address`` is passed to ``ray.init`` when Ray is not initialised yet (``"auto"`` joins a running cluster;
None starts a local instance, or joins the one ``ray start`` runs on this machine).  Each actor limits its
compute threads to the CPUs it reserves (``num_cpus``, :func:`mavgame.workers.limit_threads`).  Functions
travel by reference (module-level functions of an installed mavgame), their arguments by pickle.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence

__all__ = ["RayJobs", "job_runner", "ray_available"]


def ray_available() -> bool:
    """Whether Ray can be imported here."""
    import importlib.util
    return importlib.util.find_spec("ray") is not None


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("Ray is not installed: pip install ray (mavgame runs without it on one machine)") from None
    return ray


def _ensure_init(address: Optional[str], init_kwargs: Optional[dict]) -> Any:
    """The ``ray`` module, initialised (``ray.init(address, **init_kwargs)`` unless it is already)."""
    ray = _ray()
    if not ray.is_initialized():
        kw = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        kw.update(init_kwargs or {})
        ray.init(address=address, **kw)
    return ray


def _default_workers(ray: Any) -> int:
    """The cluster's CPUs (at least 1)."""
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:  # noqa: BLE001
        return 1


def _each_done(ray: Any, actors: list, items: Iterable[Any], submit: Callable[[Any, Any], Any],
               running: Dict[Any, int], stop: Optional[Callable[[], bool]] = None) -> Iterator[Any]:
    """Runs ``items`` on the actors, one call at a time on each (``submit(actor, item)`` -> object
    ref), handing out the next item as an actor frees up (none while ``stop()`` says so), and yields
    each result as it completes.  ``running`` (ref -> actor index) holds the calls under way, for the
    caller to cancel."""
    idle = list(range(len(actors)))
    it = iter(items)
    exhausted = False
    while True:
        while idle and not exhausted and (stop is None or not stop()):
            try:
                item = next(it)
            except StopIteration:
                exhausted = True
                break
            k = idle.pop()
            running[submit(actors[k], item)] = k
        if not running:
            break
        ready, _ = ray.wait(list(running), num_returns=1)
        ref = ready[0]
        idle.append(running.pop(ref))
        yield ray.get(ref)


def _release(ray: Any, actors: list, running: Iterable[Any] = ()) -> None:
    """Cancels the calls in ``running``, then closes and kills every actor (errors ignored)."""
    for ref in list(running):
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001
            pass
    for a in actors:
        try:
            ray.get(a.close.remote(), timeout=10)
        except Exception:  # noqa: BLE001
            pass
        try:
            ray.kill(a)
        except Exception:  # noqa: BLE001
            pass


def _actor_threads(num_cpus: float) -> None:
    """Limit an actor's compute threads to the CPUs it reserves."""
    from .workers import limit_threads
    limit_threads(max(1, int(num_cpus)))


class _JobWorker:
    """A Ray actor body: ``init(*init_args)`` once, then ``fn(job)`` for each job it is given."""

    def __init__(self, init: Optional[Callable[..., Any]], num_cpus: float, close: Optional[Callable[[], Any]],
                 *init_args: Any):   # top-level arguments, so that Ray hands object refs over as their values
        _actor_threads(num_cpus)
        self._close = close
        if init is not None:
            init(*init_args)

    def run(self, index: int, fn: Callable[[Any], Any], job: Any) -> tuple:
        return index, fn(job)

    def close(self) -> None:
        if self._close is not None:
            self._close()


class RayJobs:
    """Runs jobs on Ray actors, results in job order (:meth:`map`); the Ray counterpart of a process
    pool's ``imap``.

    ``num_workers`` actors (None or <= 0: one per CPU of the cluster; never more than jobs), each asking
    for ``num_cpus`` CPUs; ``window`` bounds the results held back waiting for an earlier job (default:
    twice the actors).  An actor lost with its node stops the run (``RayActorError``) unless
    ``max_restarts`` > 0 restarts it and runs its job again (safe for jobs that depend on their arguments
    alone; Ray warns that a restart fails if object-store arguments of the initialiser are lost)."""

    def __init__(self, address: Optional[str] = None, num_workers: Optional[int] = None, num_cpus: float = 1,
                 init_kwargs: Optional[dict] = None, window: Optional[int] = None, max_restarts: int = 0):
        self.address = address
        self.num_workers = num_workers
        self.num_cpus = num_cpus
        self.init_kwargs = init_kwargs
        self.window = window
        self.max_restarts = max_restarts

    def __repr__(self) -> str:
        return (f"RayJobs(address={self.address!r}, num_workers={self.num_workers!r}, "
                f"num_cpus={self.num_cpus!r})")

    def put(self, value: Any) -> Any:
        """``value`` in Ray's object store (initialising Ray), to pass to every actor's initialiser once."""
        return _ensure_init(self.address, self.init_kwargs).put(value)

    def map(self, init: Optional[Callable[..., Any]], init_args: Sequence[Any], fn: Callable[[Any], Any],
            jobs: Sequence[Any], close: Optional[Callable[[], Any]] = None) -> Iterator[Any]:
        """Yields ``fn(job)`` for each job, in job order, computed on actors set up by ``init(*init_args)``
        (object refs among ``init_args`` arrive as their values); ``close()`` runs in each actor at the end.
        Stopping the iteration (or an error) cancels the jobs under way and kills the actors."""
        jobs = list(jobs)
        if not jobs:
            return
        ray = _ensure_init(self.address, self.init_kwargs)
        n = self.num_workers if self.num_workers and self.num_workers > 0 else _default_workers(ray)
        n = max(1, min(int(n), len(jobs)))
        window = max(n, int(self.window or 2 * n))
        Actor = ray.remote(num_cpus=self.num_cpus, max_restarts=self.max_restarts,
                           max_task_retries=self.max_restarts)(_JobWorker)
        actors: List[Any] = [Actor.remote(init, self.num_cpus, close, *init_args) for _ in range(n)]
        fn_ref = ray.put(fn)
        running: Dict[Any, int] = {}
        held: Dict[int, Any] = {}
        nxt = [0]
        submitted = [0]

        def submit(actor: Any, item: tuple) -> Any:
            submitted[0] += 1
            return actor.run.remote(item[0], fn_ref, item[1])

        try:
            for idx, res in _each_done(ray, actors, enumerate(jobs), submit, running,
                                       stop=lambda: submitted[0] - nxt[0] >= window):
                held[idx] = res
                while nxt[0] in held:
                    out = held.pop(nxt[0])
                    nxt[0] += 1
                    yield out
        finally:
            _release(ray, actors, running)


def job_runner(executor: Any, ray_address: Optional[str], local: Sequence[Optional[str]] = (None,),
               num_workers: Optional[int] = None) -> Optional["RayJobs"]:
    """The Ray job runner that an ``executor`` argument names: None for the names in ``local`` (the work stays
    on this machine), a new :class:`RayJobs` for ``"ray"`` (at ``ray_address``, ``num_workers`` actors), or a
    RayJobs-like object given as is.  ValueError / TypeError naming the value otherwise, or for a
    ``ray_address`` without ``"ray"``."""
    names = ", ".join(repr(n) if n else "None" for n in (*local, "ray")) + " or a RayJobs"
    if executor in local:
        if ray_address is not None:
            raise ValueError("ray_address needs executor='ray'")
        return None
    if executor == "ray":
        return RayJobs(address=ray_address, num_workers=num_workers)
    if isinstance(executor, str):
        raise ValueError(f"executor must be {names}, not {executor!r}")
    if not (hasattr(executor, "map") and hasattr(executor, "put")):
        raise TypeError(f"executor must be {names}, not {type(executor).__name__}")
    if ray_address is not None:
        raise ValueError("ray_address goes with executor='ray' (a RayJobs has its own address)")
    return executor
