"""Leagues and annotation jobs on a Ray cluster (Ray is optional: ``pip install ray``).

The same API as on one machine, with the work spread over Ray actors (one per worker; each holds
its own agents or engine, started on first use)::

    >>> from mavgame.play.distributed import RayExecutor, annotate_ray
    >>> lg = League(agents, "chess", openings=20, path="league.sqlite", executor=RayExecutor(num_workers=64))
    >>> lg.run()                         # each result is sent back and stored by this process, resumable as usual
    >>> for a in annotate_ray(fens, num_workers=64, nodes=100000): ...

``address`` is passed to ``ray.init`` ("auto" joins a running cluster; None starts a local one
when Ray is not initialised yet).  Each actor limits its compute threads to the CPUs it reserves
(``num_cpus``, :func:`mavgame.workers.limit_threads`), as the process pools on one machine do.  Agents travel to the actors by (cloud)pickle: specs, Agent
objects (engine processes are not pickled; each actor starts its own) and plain functions work.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

__all__ = ["RayExecutor", "annotate_ray", "ray_available"]


def ray_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("ray") is not None


def _ray():
    try:
        import ray
    except ImportError:
        raise ImportError("Ray is not installed: pip install ray (mavgame runs without it on one machine)") from None
    return ray


def _ensure_init(address: Optional[str], init_kwargs: Optional[dict]) -> Any:
    ray = _ray()
    if not ray.is_initialized():
        kw = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        kw.update(init_kwargs or {})
        ray.init(address=address, **kw)
    return ray


def _default_workers(ray) -> int:
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:  # noqa: BLE001
        return 1


def _each_done(ray, actors: list, items: Iterable[Any], submit: Callable[[Any, Any], Any], running: Dict[Any, int],
               stop: Optional[Callable[[], bool]] = None) -> Iterator[Any]:
    """Runs ``items`` on the actors, one call at a time on each (``submit(actor, item)`` -> object
    ref), handing out the next item as an actor frees up (none once ``stop()`` says so), and yields
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


def _release(ray, actors: list, running: Iterable[Any] = ()) -> None:
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
    from ..workers import limit_threads
    limit_threads(max(1, int(num_cpus)))


class _GameWorker:
    """A Ray actor body: plays league games with its own agents."""

    def __init__(self, config: dict, num_cpus: float = 1):
        _actor_threads(num_cpus)
        from .executors import _WorkerState
        self.ws = _WorkerState(config)

    def play(self, task) -> Tuple[Any, str, Any]:
        from .executors import _run_task
        status, payload = _run_task(self.ws, task)
        return task, status, payload

    def close(self) -> None:
        self.ws.close()


class RayExecutor:
    """Runs a :class:`mavgame.play.league.League`'s games on Ray actors (``League(..., executor=RayExecutor())``).

    ``num_workers`` actors (default: the cluster's CPUs), each asking for ``num_cpus`` CPUs."""

    def __init__(self, address: Optional[str] = None, num_workers: Optional[int] = None, num_cpus: float = 1,
                 init_kwargs: Optional[dict] = None):
        self.address = address
        self.num_workers = num_workers
        self.num_cpus = num_cpus
        self.init_kwargs = init_kwargs
        self.config: Optional[dict] = None

    def bind(self, config: dict) -> "RayExecutor":
        ex = RayExecutor(self.address, self.num_workers, self.num_cpus, self.init_kwargs)
        ex.config = config
        return ex

    def run(self, tasks: List[Any], stop: Callable[[], bool]) -> Iterator[Tuple[Any, str, Any]]:
        if self.config is None:
            raise ValueError("RayExecutor.run needs a league configuration (League binds it)")
        if not tasks:
            return
        ray = _ensure_init(self.address, self.init_kwargs)
        n = self.num_workers or _default_workers(ray)
        n = max(1, min(n, len(tasks)))
        Actor = ray.remote(num_cpus=self.num_cpus)(_GameWorker)
        actors = [Actor.remote(self.config, self.num_cpus) for _ in range(n)]
        running: Dict[Any, int] = {}
        try:
            yield from _each_done(ray, actors, tasks, lambda a, t: a.play.remote(t), running, stop)
        finally:
            _release(ray, actors, running)


class _AnnotateWorker:
    def __init__(self, kwargs: dict, num_cpus: float = 1):
        _actor_threads(num_cpus)
        from ..engines.annotate import Annotator
        self.ann = Annotator(**kwargs)

    def annotate(self, idx: int, fen: str, moves: List[str]):
        from ..engines.uci_protocol import EngineError
        try:
            return idx, self.ann.annotate(fen, moves).to_dict(), None
        except (EngineError, ValueError) as e:
            return idx, None, f"{type(e).__name__}: {e}"

    def close(self) -> None:
        self.ann.close()


def annotate_ray(positions: Iterable[Union[str, Tuple[str, Sequence[str]]]], *, num_workers: Optional[int] = None,
                 address: Optional[str] = None, progress: bool = False, init_kwargs: Optional[dict] = None,
                 **kwargs) -> Iterator[Any]:
    """Like :func:`mavgame.engines.annotate.annotate_many` (same positions, same keyword arguments for the
    :class:`~mavgame.engines.annotate.Annotator`), with one engine per Ray actor; yields in input order."""
    from ..engines.annotate import EngineAnnotation, check_line, parse_position
    from ..engines.uci_protocol import EngineError

    items = []
    for i, p in enumerate(positions):
        fen, mv = parse_position(p) if isinstance(p, str) else (p[0], list(p[1]))
        try:   # checked here, before any actor starts (an engine would skip an illegal move silently)
            check_line(fen, mv, bool(kwargs.get("chess960")))
        except ValueError as e:
            raise type(e)(f"position {i} ({fen!r} moves {' '.join(mv) or '-'}): {e}") from None
        items.append((i, fen, list(mv)))
    if not items:
        return
    ray = _ensure_init(address, init_kwargs)
    n = max(1, min(num_workers or _default_workers(ray), len(items)))
    Actor = ray.remote(num_cpus=1)(_AnnotateWorker)
    actors = [Actor.remote(kwargs, 1) for _ in range(n)]
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=len(items), desc="annotate (ray)", unit="pos")
    done: Dict[int, dict] = {}
    nxt = 0
    try:
        for idx, d, err in _each_done(ray, actors, items, lambda a, item: a.annotate.remote(*item), {}):
            if err is not None:
                raise EngineError(f"position {idx} ({items[idx][1]!r}): {err}")
            done[idx] = d
            if bar:
                bar.update(1)
            while nxt in done:
                yield EngineAnnotation.from_dict(done.pop(nxt))
                nxt += 1
    finally:
        if bar:
            bar.close()
        _release(ray, actors)
