"""Batched AlphaZero self-play: many games at once on the C MCTS (``mavgame._core.AZSelfPlay``).

Each round, C plays every game on until its search waits for the network and writes the leaves'
observation tensors into one float32 batch; ``evaluate(obs) -> (logits, values)`` runs the network
once on it; C turns the logits into priors over each leaf's legal actions and backs the values up.
No Python loop runs per position.  The search and network times are measured apart.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from .. import _core

__all__ = ["SelfPlayResult", "play_games", "SELFPLAY_DEFAULTS"]

#: AlphaZero's self-play settings (Silver et al. 2018), the defaults of :func:`play_games`
SELFPLAY_DEFAULTS = dict(num_simulations=100, temperature_plies=30, temperature=1.0, c_base=19652.0,
                         c_init=1.25, dirichlet_alpha=0.3, dirichlet_frac=0.25, fpu=0.0, batch_size=1,
                         max_plies=0, cache_log2=0)

Evaluate = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]


@dataclass
class SelfPlayResult:
    """Training positions of finished games and the time spent.

    ``obs`` (m, planes, rows, cols), ``pi`` (m, num_actions; visit counts over the root's legal
    actions, summing to 1), ``z`` (m; the result for the player to move: +1 win, 0 draw, -1 loss),
    ``game`` (m; game number) and ``ply`` (m); ``obs_after`` (like ``obs``: the position after the move
    played, for AZdb's diversity features); ``stats`` the C counters (games, wins, moves,
    evaluations, batches); ``search_seconds`` (C: trees, observations, softmax) and
    ``network_seconds`` (inside ``evaluate``)."""
    obs: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    obs_after: np.ndarray
    stats: Dict[str, float] = field(default_factory=dict)
    search_seconds: float = 0.0
    network_seconds: float = 0.0
    seconds: float = 0.0

    @property
    def positions_per_second(self) -> float:
        return len(self.z) / self.seconds if self.seconds > 0 else 0.0


def _real(a, what: str, dtype, integer: bool = False) -> np.ndarray:
    """``a`` as a ``dtype`` array; TypeError naming ``what`` for complex (or, with ``integer``, non-integer)
    values, which a cast would silently change."""
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise TypeError(f"{what} must be real numbers, got an array of dtype {arr.dtype}")
    if integer and arr.dtype.kind == "f":
        bad = arr[np.isfinite(arr) & (arr != np.round(arr))] if arr.size else arr
        if bad.size or not np.isfinite(arr).all():
            raise TypeError(f"{what} must be integers, got {arr.ravel()[:4].tolist()}...")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be numbers, got an array of dtype {arr.dtype}")
    return arr.astype(dtype)


def play_games(evaluate: Evaluate, start, *, num_games: int, parallel_games: int = 16, seed: int = 0,
               progress=None, latents: Optional[np.ndarray] = None, reward_weights: Optional[np.ndarray] = None,
               **settings) -> SelfPlayResult:
    """Play ``num_games`` games of self-play from the State ``start``, ``parallel_games`` at once.

    ``evaluate(obs)`` gets a float32 array (n, planes, rows, cols) and returns logits (n, num_actions)
    and values (n,) in [-1, 1] for the player to move (anything NumPy can turn into float32).
    ``settings`` override :data:`SELFPLAY_DEFAULTS`: num_simulations, temperature_plies, temperature,
    c_base, c_init, dirichlet_alpha, dirichlet_frac, fpu, batch_size (leaves per game and round),
    max_plies (> 0: a game reaching it is a draw), cache_log2 (> 0: an evaluation cache of 2^cache_log2
    positions shared by the games, like OpenSpiel's AlphaZero evaluator; 0: none).  ``progress``: a tqdm-like bar updated by games.

    AZdb team: ``latents`` (num_games, 2) gives the player (latent) of each side of each game and
    ``reward_weights`` (num_latents, planes, rows, cols; optional) the linear intrinsic rewards (see
    ``AZSelfPlay.set_team``); ``evaluate`` is then called as ``evaluate(obs, game, latent, reward, own)``
    with the rows' game numbers, the searching (root) player's latent, its intrinsic rewards summed
    from the root to the leaf and whether it is to move at the leaf (``AZSelfPlay.row_info``)."""
    unknown = set(settings) - set(SELFPLAY_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown self-play setting(s) {sorted(unknown)} (known: {sorted(SELFPLAY_DEFAULTS)})")
    cfg = dict(SELFPLAY_DEFAULTS, **settings)
    sp = _core.AZSelfPlay(start, parallel_games=int(parallel_games), num_games=int(num_games), seed=int(seed),
                          **cfg)
    if latents is not None:
        sp.set_team(_real(latents, "latents", np.int32, integer=True), None if reward_weights is None
                    else _real(reward_weights, "reward_weights", np.float32))
    n_actions = sp.num_actions
    t0 = time.perf_counter()
    net_s = 0.0
    done = 0
    while True:
        obs = sp.gather()
        n = len(obs)
        if n == 0:
            break
        info = sp.row_info() if latents is not None else None
        t1 = time.perf_counter()
        logits, values = evaluate(obs) if info is None else evaluate(obs, *info)
        net_s += time.perf_counter() - t1
        logits = _real(logits, "the evaluator's logits", np.float32).reshape(n, n_actions)
        values = _real(values, "the evaluator's values", np.float32).reshape(n)
        sp.scatter(logits, values)
        if progress is not None:
            fin = sp.stats()["games_finished"]
            if fin > done:
                progress.update(fin - done)
                done = fin
    seconds = time.perf_counter() - t0
    if progress is not None:
        fin = sp.stats()["games_finished"]
        if fin > done:
            progress.update(fin - done)
    obs, pi, z, game, ply, after = sp.take_examples()
    stats = sp.stats()
    return SelfPlayResult(obs, pi, z, game, ply, after, stats, float(stats["search_seconds"]), net_s, seconds)
