"""Leagues and annotation jobs on a Ray cluster (Ray is optional: ``pip install ray``).

The same API as on one machine, with the work spread over Ray actors (one per worker; each holds
its own agents or engine, started on first use)::

    >>> from mavgame.play.distributed import RayExecutor, annotate_ray
    >>> lg = League(agents, "chess", openings=20, path="league.sqlite", executor=RayExecutor(num_workers=64))
    >>> lg.run()                         # each result is sent back and stored by this process, resumable as usual
    >>> for a in annotate_ray(fens, num_workers=64, nodes=100000): ...

``address`` is passed to ``ray.init`` ("auto" joins a running cluster; None starts a local one
when Ray is not initialised yet).  Each actor limits its compute threads to the CPUs it reserves
(``num_cpus``, :func:`mavgame.workers.limit_threads`), as the process pools on one machine do.  The Ray
plumbing (start-up, handing out work, releasing actors) is :mod:`mavgame.distributed_ray`'s, which MAV data
generation uses as well (``generate_positions(..., executor="ray")``).  Agents travel to the actors by (cloud)pickle: specs,
Agent objects (engine processes are not pickled; each actor starts its own) and plain functions work.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..distributed_ray import _actor_threads, _default_workers, _each_done, _ensure_init, _release

__all__ = ["RayExecutor", "annotate_ray"]


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
