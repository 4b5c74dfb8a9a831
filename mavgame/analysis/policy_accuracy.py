"""Move-matching accuracy of a chess policy network with intervals, overall and by game progression (the IDP
report's Table 1 and Figure 5; docs/policy.md).

Positions of one game are not independent draws, so every interval here is a bootstrap over games (the games
resampled with replacement, each bringing all its positions): :func:`clustered_interval` for one accuracy,
:func:`paired_difference` for the difference of two networks on the same positions (resampling the same games
for both, which is far tighter than two separate intervals), :func:`accuracy_by_bins` for accuracies by
move number and :func:`game_phase` for an opening / middlegame / endgame split by move number and material.

:func:`native_hits` scores an exported network (such as ``policy=shipped``) with the native engine: no PyTorch.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

from .. import _core

PHASES = ("opening", "middlegame", "endgame")
#: non-pawn material (N 3, B 3, R 5, Q 9, both sides together) at or under which a position is an endgame
ENDGAME_MATERIAL = 26
#: last fullmove of the opening phase
OPENING_LAST_MOVE = 12


def _check(hits: np.ndarray, games: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    h = np.asarray(hits, dtype=np.float64).ravel()
    g = np.asarray(games).ravel()
    if h.shape != g.shape:
        raise ValueError(f"hits and games must have the same length, got {h.shape[0]} and {g.shape[0]}")
    if h.size and not np.isin(h, (0.0, 1.0)).all():
        raise ValueError("hits must be 0/1 (or bool) per position")
    return h, g


def _game_sums(h: np.ndarray, g: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(hits, positions) per game, games in sorted order."""
    _, inv = np.unique(g, return_inverse=True)
    return np.bincount(inv, weights=h), np.bincount(inv).astype(np.float64)


def _boot_weights(n_games: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_games) multiplicities of a games bootstrap."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_games, np.full(n_games, 1.0 / n_games), size=n_boot).astype(np.float64)


def clustered_interval(hits, games, *, level: float = 0.95, n_boot: int = 2000,
                       seed: int = 0) -> Tuple[float, float, float]:
    """(accuracy, low, high): the share of hits and its percentile bootstrap interval over games. NaNs when
    there are no positions; a single game gives a zero-width interval."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    h, g = _check(hits, games)
    if h.size == 0:
        return float("nan"), float("nan"), float("nan")
    hs, ns = _game_sums(h, g)
    w = _boot_weights(len(hs), n_boot, seed)
    boot = (w @ hs) / (w @ ns)
    a = (1.0 - level) / 2
    return float(h.mean()), float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))


def paired_difference(hits_a, hits_b, games, *, level: float = 0.95, n_boot: int = 2000,
                      seed: int = 0) -> Tuple[float, float, float]:
    """(accuracy of a minus accuracy of b, low, high) on the same positions, the same games resampled for
    both."""
    ha, g = _check(hits_a, games)
    hb, _ = _check(hits_b, games)
    if ha.size == 0:
        return float("nan"), float("nan"), float("nan")
    sa, ns = _game_sums(ha, g)
    sb, _ = _game_sums(hb, g)
    w = _boot_weights(len(sa), n_boot, seed)
    boot = (w @ (sa - sb)) / (w @ ns)
    a = (1.0 - level) / 2
    return float(ha.mean() - hb.mean()), float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))


def fullmove_of(planes: np.ndarray) -> np.ndarray:
    """Fullmove numbers (n,) of 41-plane positions (plane 40 holds fullmove / 100)."""
    p = np.asarray(planes)
    if p.ndim != 4 or p.shape[1] != _core.POLICY_PLANES:
        raise ValueError(f"planes must be (n, {_core.POLICY_PLANES}, 8, 8), got {p.shape}")
    return np.rint(p[:, 40, 0, 0].astype(np.float32) * 100).astype(np.int64)


def game_phase(planes: np.ndarray, *, opening_last_move: int = OPENING_LAST_MOVE,
               endgame_material: int = ENDGAME_MATERIAL) -> np.ndarray:
    """Phase index (n,) into :data:`PHASES`: opening up to fullmove ``opening_last_move``, then endgame once
    the non-pawn material of both sides together (N 3, B 3, R 5, Q 9) is at most ``endgame_material``
    (26: e.g. a rook and two minor pieces each), middlegame otherwise. The report draws move numbers only;
    this split is ours."""
    p = np.asarray(planes)
    full = fullmove_of(p)
    counts = p[:, [1, 2, 3, 4, 7, 8, 9, 10]].astype(np.float32).sum(axis=(2, 3))
    material = counts @ np.array([3, 3, 5, 9, 3, 3, 5, 9], np.float32)
    return np.where(full <= opening_last_move, 0, np.where(material <= endgame_material, 2, 1))


def accuracy_by_bins(hits, games, keys, edges: Sequence[int], **kw) -> List[Dict]:
    """Accuracy with its games-bootstrap interval for each bin [edges[i], edges[i+1]) of ``keys`` (e.g. the
    fullmove number; the last bin is open: [edges[-1], inf)). Rows: ``lo``, ``hi`` (None: open), positions,
    games, accuracy, low, high."""
    e = [int(x) for x in edges]
    if not e or any(b <= a for a, b in zip(e, e[1:])):
        raise ValueError(f"bin edges must be increasing, got {list(edges)}")
    h, g = _check(hits, games)
    k = np.asarray(keys).ravel()
    if k.shape != h.shape:
        raise ValueError(f"keys must have one entry a position ({h.shape[0]}), got {k.shape[0]}")
    rows = []
    for i, lo in enumerate(e):
        hi = e[i + 1] if i + 1 < len(e) else None
        sel = (k >= lo) & (k < hi if hi is not None else True)
        acc, low, high = clustered_interval(h[sel], g[sel], **kw)
        rows.append({"lo": lo, "hi": hi, "positions": int(sel.sum()), "games": int(len(np.unique(g[sel]))),
                     "accuracy": acc, "low": low, "high": high})
    return rows


def native_hits(path, planes: np.ndarray, masks: np.ndarray, moves: np.ndarray, *, chunk: int = 4096,
                threads: int = 1) -> np.ndarray:
    """Bool (n,): whether an exported network's most probable legal move (native engine) is the move played."""
    from ..policy.export import load_native_policy

    p, m, y = np.asarray(planes), np.asarray(masks, dtype=bool), np.asarray(moves).ravel()
    if not (len(p) == len(m) == len(y)):
        raise ValueError(f"planes, masks and moves must have one entry a position, got {len(p)}, {len(m)}, {len(y)}")
    net = load_native_policy(path, max_batch=256, threads=threads)
    out = np.zeros(len(y), bool)
    for s in range(0, len(y), chunk):
        sl = slice(s, s + chunk)
        pr = net.policy(np.ascontiguousarray(p[sl], dtype=np.float32), np.ascontiguousarray(m[sl]))
        out[sl] = np.asarray(pr).argmax(-1) == y[sl]
    return out
