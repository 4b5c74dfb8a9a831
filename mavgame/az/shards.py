"""Sharded AlphaZero / AZdb self-play (needs ``torch``), in this process or on Ray actors (issue 50).

With ``AZConfig.selfplay_shards`` K >= 1 an iteration's ``games_per_iteration`` games are split into K fixed
shards (:func:`shard_bounds`: consecutive game numbers, sizes differing by at most one), each played by its own
batched :func:`mavgame.az.play_games` call seeded from (seed, iteration, shard) (:func:`shard_seed`), so the
examples depend on K alone, never on how many processes or actors play the shards.  The shards' results are
joined in shard order (:func:`join_results`: the ``game`` column offset by the games before each shard, the
counters added up).  K = 0 keeps the single call of the unsharded run.

``executor`` (:func:`make_executor`: None, ``"ray"`` or a :class:`mavgame.distributed_ray.RayJobs`) plays the
shards on Ray actors instead: each rebuilds the network on CPU from the trainer's ``state_dict`` and plays the
shards it is given (:func:`_shard_init`, :func:`_shard_play`), AZdb shards with their slice of the iteration's
``latents`` and the shared ``reward_weights``.  On a CPU trainer these are the same examples as the serial
shards (same torch build).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .selfplay import SelfPlayResult, play_games

__all__ = ["shard_bounds", "shard_seed", "join_results", "make_executor", "sharded_play"]

#: what a Ray actor holds between its shards (set by :func:`_shard_init`)
_WORKER: Dict[str, Any] = {}


def shard_bounds(num_games: int, shards: int) -> List[Tuple[int, int]]:
    """(first game, games) of each of ``shards`` shards of ``num_games`` games: consecutive, the first
    ``num_games % shards`` one game longer."""
    if shards < 1 or shards > num_games:
        raise ValueError(f"need 1 <= shards <= games ({shards} shards of {num_games} games)")
    q, r = divmod(int(num_games), int(shards))
    out, first = [], 0
    for k in range(shards):
        n = q + (1 if k < r else 0)
        out.append((first, n))
        first += n
    return out


def shard_seed(seed: int, iteration: int, shard: int) -> int:
    """The self-play seed of shard ``shard`` of iteration ``iteration`` of a run seeded ``seed``."""
    return (int(seed) * 1_000_003 + int(iteration) * 7_919 + (int(shard) + 1) * 104_729 + 29) & 0x7FFFFFFFFFFFFFFF


def join_results(parts: Sequence[SelfPlayResult], firsts: Sequence[int], seconds: float) -> SelfPlayResult:
    """The shards' results as one: rows in shard order, ``game`` offset by each shard's first game, the
    counters and the search and network times added up; ``seconds`` the wall time of the whole."""
    if not parts:
        raise ValueError("no shards to join")
    cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    game = np.concatenate([np.asarray(p.game) + np.asarray(f, dtype=np.asarray(p.game).dtype)
                           for p, f in zip(parts, firsts)])
    stats: Dict[str, float] = {}
    for p in parts:
        for k, v in p.stats.items():
            stats[k] = stats.get(k, 0) + v
    return SelfPlayResult(cat("obs"), cat("pi"), cat("z"), game, cat("ply"), cat("obs_after"), stats,
                          float(sum(p.search_seconds for p in parts)), float(sum(p.network_seconds for p in parts)),
                          float(seconds))


def make_executor(executor: Any, ray_address: Optional[str]) -> Any:
    """The Ray job runner that ``executor`` names (None: the shards play in this process)."""
    from ..distributed_ray import job_runner
    return job_runner(executor, ray_address)


def _start(game: str, board_size: int):
    from .. import State
    return State(game, board_size=board_size) if board_size else State(game)


def _play(evaluate: Callable, plan: Dict[str, Any], job: tuple) -> SelfPlayResult:
    """Play one shard: ``job`` = (first game, games, seed, latents or None)."""
    _first, count, seed, latents = job
    team = plan.get("team")
    return play_games(evaluate, _start(plan["game"], plan["board_size"]), num_games=int(count),
                      parallel_games=min(int(plan["parallel_games"]), int(count)), seed=int(seed),
                      latents=latents, reward_weights=None if team is None else team["reward_weights"],
                      **plan["settings"])


def _evaluator(net, plan: Dict[str, Any], device: str) -> Callable:
    team = plan.get("team")
    if team is None:
        from .network import torch_evaluator
        return torch_evaluator(net, device)
    from .team import team_evaluator
    return team_evaluator(net, team["players"], team["lambdas"], device)


def _shard_init(plan: Dict[str, Any], spec: Dict[str, Any], state: Dict[str, Any]) -> None:
    """A Ray actor's set-up: the network rebuilt on CPU from ``state`` (its ``state_dict``)."""
    import torch
    from .network import AZNet
    net = AZNet(tuple(spec["obs_shape"]), int(spec["num_actions"]), blocks=spec["blocks"],
                channels=spec["channels"], value_hidden=spec["value_hidden"], intrinsic=spec["intrinsic"])
    net.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
    net.eval()
    _WORKER["plan"] = plan
    _WORKER["evaluate"] = _evaluator(net, plan, "cpu")


def _shard_play(job: tuple) -> SelfPlayResult:
    """A Ray actor's job: one shard."""
    return _play(_WORKER["evaluate"], _WORKER["plan"], job)


def _shard_close() -> None:
    _WORKER.clear()


def sharded_play(net, spec: Dict[str, Any], plan: Dict[str, Any], bounds: Sequence[Tuple[int, int]],
                 seeds: Sequence[int], latents: Optional[np.ndarray], executor: Any, device: str,
                 progress=None) -> SelfPlayResult:
    """Play the shards ``bounds`` (seeded ``seeds``; AZdb: rows of ``latents`` by game) with ``net`` in this
    process (``executor`` None, on ``device``) or on ``executor``'s actors (CPU), joined in shard order.
    ``spec`` rebuilds the network (AZNet's arguments), ``plan`` holds game, board_size, parallel_games,
    settings (:meth:`AZConfig.selfplay_settings`) and, for a team, team = {players, lambdas, reward_weights}."""
    jobs = [(first, count, seed, None if latents is None else np.ascontiguousarray(latents[first:first + count]))
            for (first, count), seed in zip(bounds, seeds)]
    t0 = time.perf_counter()
    parts: List[SelfPlayResult] = []
    if executor is None:
        evaluate = _evaluator(net, plan, device)
        for job in jobs:
            parts.append(_play(evaluate, plan, job))
            if progress is not None:
                progress.update(int(parts[-1].stats["games_finished"]))
    else:
        state = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
        ref = executor.put(state)   # sent once, to every actor
        for res in executor.map(_shard_init, (plan, spec, ref), _shard_play, jobs, close=_shard_close):
            parts.append(res)
            if progress is not None:
                progress.update(int(res.stats["games_finished"]))
    return join_results(parts, [j[0] for j in jobs], time.perf_counter() - t0)
