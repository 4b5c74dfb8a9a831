"""AZdb pieces (Zahavy et al., "Diversifying AI: towards creative chess with AlphaZero",
shared/papers/001_*): the latent input that selects a player of the team, the diversity features
phi(s, a), the players' expected features psi_i, and the diversity reward of equation 8.

The torch pieces (the team's network, evaluator and training targets) are in :mod:`mavgame.az.team`,
matchmaking in :mod:`mavgame.az.matchmaking`, sub-additive planning in :mod:`mavgame.az.subadditive`.

- :func:`latent_planes`: the observation of player ``i`` of ``num_players``: the game's planes followed
  by ``num_players`` constant planes, plane ``i`` all ones (the paper's one-hot latent as input planes).
- :func:`diversity_features`: phi(s, a), "the board after taking action a from s: the locations of
  the pieces and the castling rights", read from the observation of the position after the move
  (``SelfPlayResult.obs_after``): the stone / piece planes of the game, plus one scalar per castling
  right (chess); side to move, empty cells and the en passant square are left out (the paper removes
  side to play and the 50-move counter from phi).
- :class:`FeatureMeans`: psi_i = E[phi] under player i's moves, a running mean.
- :func:`diversity_reward`: r_d^i(s, a) = (1 - (||psi_i - psi_j*|| / l0)^3) phi(s, a) . (psi_i - psi_j*),
  j* = argmin_{j != i} ||psi_i - psi_j||^2 (equation 8, the gradient of equation 7's utility).
- :func:`combined_reward`: r = (1 - lambda_i) r_d + lambda_i r_e (equation 6), lambda_0 = 1.
- :func:`lcb_action`: the Lower-Confidence-Bound root-move choice the paper plays with (argmax_a Q - U over
  visited actions, "switching the sign of the exploration term" of PUCT), for ``az`` and ``azdb`` agents'
  ``move=lcb``.
- :func:`search_value`: the value a player's search backs up at a leaf, lambda_i v + (1 - lambda_i)
  s (R + own v_d), R the intrinsic rewards summed from the root to the leaf (self-play and play time).
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["PHI_PLANES", "latent_planes", "diversity_features", "FeatureMeans", "nearest_other",
           "diversity_reward", "combined_reward", "player_lambdas", "reward_weights", "intrinsic_targets",
           "search_value", "SEARCH_REWARDS", "MOVE_RULES", "lcb_action",
           "L0", "LAMBDA", "N_TD"]

#: the paper's text does not give l0 (the distance between players' psi at which the diversity reward
#: vanishes) or lambda (the weight of the game result for players i > 0); our choices
L0 = 1.0
LAMBDA = 0.5
#: TD steps of the intrinsic value target z_d(s_t) = sum_{k < N_TD/2} r_d(s_{t+2k}) + v_d(s_{t+N_TD}); the
#: paper asks for an even number and does not give it; our choice
N_TD = 8

#: per game: (observation planes copied cell by cell into phi, planes contributing one scalar each);
#: see the observation table in docs/binding.md
PHI_PLANES: Dict[str, Tuple[Tuple[int, ...], Tuple[int, ...]]] = {
    "connect_four": ((0, 1), ()),
    "tictactoe": ((0, 1), ()),
    "hex": ((0, 1), ()),
    "gardner": (tuple(range(12)), ()),
    "chess": (tuple(range(12)), (13, 14, 15, 16)),
    "chess960": (tuple(range(12)), (13, 14, 15, 16)),
}


def latent_planes(obs: np.ndarray, latent: Union[int, np.ndarray], num_players: int) -> np.ndarray:
    """``obs`` (n, planes, rows, cols) with ``num_players`` one-hot latent planes appended:
    (n, planes + num_players, rows, cols), plane ``planes + latent[k]`` of row k all ones.  ``latent``
    is one player index for the batch or one per row."""
    obs = np.asarray(obs, np.float32)
    if obs.ndim != 4:
        raise ValueError(f"latent_planes: obs must be (n, planes, rows, cols), not shape {obs.shape}")
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or num_players < 1:
        raise ValueError(f"num_players must be an int >= 1, not {num_players!r}")
    n, p, r, c = obs.shape
    lat = np.broadcast_to(np.asarray(latent), (n,)).astype(np.int64)
    bad = (lat < 0) | (lat >= num_players)
    if bad.any():
        raise ValueError(f"latent {int(lat[bad][0])} is not a player in [0, {num_players})")
    out = np.zeros((n, p + num_players, r, c), np.float32)
    out[:, :p] = obs
    out[np.arange(n), p + lat] = 1.0
    return out


def diversity_features(obs_after: np.ndarray, game: str) -> np.ndarray:
    """phi(s, a) for each row of ``obs_after`` (observations of the positions after the moves, as
    ``SelfPlayResult.obs_after``): float32 (n, features)."""
    if game not in PHI_PLANES:
        raise ValueError(f"no diversity features for game {game!r} (known: {', '.join(sorted(PHI_PLANES))})")
    board, flags = PHI_PLANES[game]
    obs = np.asarray(obs_after, np.float32)
    if obs.ndim != 4 or obs.shape[1] <= max(board + flags):
        raise ValueError(f"diversity_features: obs_after of shape {obs.shape} is not a batch of {game} observations")
    n = len(obs)
    parts = [obs[:, list(board)].reshape(n, -1)]
    if flags:
        parts.append(obs[:, list(flags), 0, 0])
    return np.concatenate(parts, axis=1)


class FeatureMeans:
    """psi_i, the expected features of each player's moves: the mean of every phi recorded for player i
    until ``window`` moves, then a moving average where a batch of m moves has weight min(1, m / window),
    so that psi follows a player that changes."""

    def __init__(self, num_players: int, num_features: int, window: int = 100_000):
        if num_players < 2:
            raise ValueError(f"a team needs at least 2 players, not {num_players}")
        if window < 1:
            raise ValueError(f"window must be >= 1, not {window}")
        self.psi = np.zeros((int(num_players), int(num_features)), np.float64)
        self.count = np.zeros(int(num_players), np.int64)
        self.window = int(window)

    def update(self, player: int, phi: np.ndarray) -> None:
        """Record the features ``phi`` (n, features) of n moves of ``player``."""
        phi = np.asarray(phi, np.float64)
        if phi.ndim != 2 or phi.shape[1] != self.psi.shape[1]:
            raise ValueError(f"phi must be (n, {self.psi.shape[1]}), not shape {phi.shape}")
        if not 0 <= player < len(self.psi):
            raise ValueError(f"player {player} is not in [0, {len(self.psi)})")
        m = len(phi)
        if m == 0:
            return
        c = int(self.count[player])
        w = m / (c + m) if c + m <= self.window else min(1.0, m / self.window)
        self.psi[player] += w * (phi.mean(0) - self.psi[player])
        self.count[player] += m

    def state_dict(self) -> dict:
        return {"psi": self.psi.copy(), "count": self.count.copy(), "window": self.window}

    @classmethod
    def from_state_dict(cls, d: dict) -> "FeatureMeans":
        fm = cls(len(d["psi"]), d["psi"].shape[1], int(d["window"]))
        fm.psi[:] = d["psi"]
        fm.count[:] = d["count"]
        return fm


def nearest_other(psi: np.ndarray, i: int) -> int:
    """j* = argmin over j != i of ||psi_i - psi_j||^2 (the lowest index among ties)."""
    psi = np.asarray(psi, np.float64)
    d = ((psi - psi[i]) ** 2).sum(1)
    d[i] = np.inf
    return int(np.argmin(d))


def diversity_reward(phi: np.ndarray, psi: np.ndarray, i: int, l0: float = L0) -> np.ndarray:
    """Equation 8 for player ``i``: (1 - (||psi_i - psi_j*|| / l0)^3) phi . (psi_i - psi_j*), one
    reward per row of ``phi``.  It vanishes once player i is l0 away from its nearest teammate and
    turns negative (attractive) beyond."""
    if not (l0 > 0):
        raise ValueError(f"l0 must be > 0, not {l0!r}")
    psi = np.asarray(psi, np.float64)
    j = nearest_other(psi, i)
    d = psi[i] - psi[j]
    scale = 1.0 - (np.sqrt((d ** 2).sum()) / l0) ** 3
    return (scale * (np.asarray(phi, np.float64) @ d)).astype(np.float32)


def player_lambdas(num_players: int, lam: float = LAMBDA) -> np.ndarray:
    """lambda_i: 1 for player 0 (the game result only), ``lam`` for the others (the paper's choice)."""
    out = np.full(int(num_players), float(lam))
    out[0] = 1.0
    return out


def combined_reward(r_d: np.ndarray, r_e: np.ndarray, lam_i: float) -> np.ndarray:
    """Equation 6: (1 - lambda_i) r_d + lambda_i r_e."""
    if not 0.0 <= lam_i <= 1.0:
        raise ValueError(f"lambda {lam_i!r} is not in [0, 1]")
    return (1.0 - lam_i) * np.asarray(r_d, np.float64) + lam_i * np.asarray(r_e, np.float64)


def reward_weights(psi: np.ndarray, game: str, obs_shape: Tuple[int, int, int], lambdas: np.ndarray,
                   l0: float = L0) -> np.ndarray:
    """Equation 8 as linear weights on the observation after the move: w (players, planes, rows, cols)
    with w[i] . obs_after == :func:`diversity_reward` (phi(obs_after), psi, i, l0) for every player with
    lambda_i < 1, and w[i] = 0 for players with lambda_i = 1 (player 0).  The C self-play sums these
    rewards over the searching player's moves from the root to each leaf (``AZSelfPlay.set_team``)."""
    board, flags = PHI_PLANES[game]
    psi = np.asarray(psi, np.float64)
    p, r, c = (int(x) for x in obs_shape)
    w = np.zeros((len(psi), p, r, c), np.float64)
    nb = len(board) * r * c
    if psi.shape[1] != nb + len(flags):
        raise ValueError(f"psi has {psi.shape[1]} features, {game} with observation {obs_shape} has {nb + len(flags)}")
    for i in range(len(psi)):
        if lambdas[i] >= 1.0:
            continue
        j = nearest_other(psi, i)
        d = psi[i] - psi[j]
        scale = 1.0 - (np.sqrt((d ** 2).sum()) / l0) ** 3
        w[i, list(board)] = (scale * d[:nb]).reshape(len(board), r, c)
        for k, pl in enumerate(flags):
            w[i, pl, 0, 0] = scale * d[nb + k]
    return w.astype(np.float32)


#: what a player's search adds to lambda_i v at play time: ``path`` (the paper's: the intrinsic rewards
#: summed from the root to the leaf and v_d), ``vd`` (v_d only), ``extrinsic`` (v alone)
SEARCH_REWARDS = ("path", "vd", "extrinsic")


def search_value(v: np.ndarray, vd: np.ndarray, reward: np.ndarray, own: np.ndarray, lam: Union[float, np.ndarray],
                 rewards: str = "path") -> np.ndarray:
    """The value backed up at each leaf of player i's search, for the player to move at the leaf:
    lambda_i v + (1 - lambda_i) s (R + own v_d), clipped to [-1, 1].  ``v``, ``vd``: the network's
    value and intrinsic value at the leaf; ``reward`` R: player i's intrinsic rewards summed over its
    moves from the root to the leaf; ``own``: player i is to move at the leaf (s = +1, else -1: the
    tree backs up zero-sum values; v_d counts only at i's own leaves, the opponent's intrinsic rewards
    are zero).  ``rewards``: ``path`` as above (the paper's self-play and evaluation searches), ``vd``
    without R, ``extrinsic`` v alone (the paper's "extrinsic only at test time" ablation)."""
    if rewards not in SEARCH_REWARDS:
        raise ValueError(f"rewards must be one of {', '.join(SEARCH_REWARDS)}, not {rewards!r}")
    v = np.asarray(v, np.float64)
    if rewards == "extrinsic":
        return np.clip(v, -1.0, 1.0)
    own = np.asarray(own, bool)
    r = np.asarray(reward, np.float64) if rewards == "path" else 0.0
    lam = np.asarray(lam, np.float64)
    intr = np.where(own, 1.0, -1.0) * (r + np.where(own, np.asarray(vd, np.float64), 0.0))
    return np.clip(lam * v + (1.0 - lam) * intr, -1.0, 1.0)


def intrinsic_targets(r_d: np.ndarray, game: np.ndarray, ply: np.ndarray, n_td: int = N_TD
                      ) -> Tuple[np.ndarray, np.ndarray]:
    """The n-step part of z_d(s_t) = sum_{k < n_td/2} r_d(s_{t+2k}) + v_d(s_{t+n_td}) for every move
    (rows: moves of whole games, any order; ``r_d`` already zero where it does not apply): returns
    (partial sums, bootstrap row: the row of (game, ply + n_td) or -1 when the game ended before).
    The caller adds v_d of the bootstrap rows (the mover's own state, ``n_td`` even)."""
    if n_td < 2 or n_td % 2:
        raise ValueError(f"n_td must be an even number >= 2, not {n_td!r}")
    game = np.asarray(game, np.int64)
    ply = np.asarray(ply, np.int64)
    r_d = np.asarray(r_d, np.float64)
    stride = int(ply.max(initial=0)) + n_td + 1
    key = game * stride + ply
    order = np.argsort(key)
    skey = key[order]

    def row_of(k):
        pos = np.searchsorted(skey, k)
        pos = np.minimum(pos, len(skey) - 1)
        ok = skey[pos] == k if len(skey) else np.zeros(len(k), bool)
        return np.where(ok, order[pos], -1)

    total = np.zeros(len(r_d))
    for k in range(n_td // 2):
        rows = row_of(key + 2 * k)
        total += np.where(rows >= 0, r_d[np.maximum(rows, 0)], 0.0)
    return total.astype(np.float32), row_of(key + n_td)


#: how an AlphaZero agent picks its move from its root statistics: ``visits`` (the most visited action,
#: AlphaZero's) or ``lcb`` (:func:`lcb_action`, the AZdb paper's play and evaluation rule)
MOVE_RULES = ("visits", "lcb")


def lcb_action(actions: np.ndarray, visits: np.ndarray, q: np.ndarray, u: np.ndarray) -> int:
    """The root action with the largest lower confidence bound Q(s, a) - U(s, a) among the visited
    actions (the AZdb paper's LCB selection, Tirinzoni et al. 2023: PUCT's exploration term with its sign
    switched); ties go to more visits, then the lower index.  ``q`` from the root mover's view (NaN when
    unvisited), ``u`` PUCT's U per action (``SearchResult.u``)."""
    actions = np.asarray(actions)
    n = np.asarray(visits, np.float64)
    q = np.asarray(q, np.float64)
    u = np.asarray(u, np.float64)
    if not (len(actions) == len(n) == len(q) == len(u)) or len(actions) == 0:
        raise ValueError(f"lcb_action needs equal non-empty actions, visits, q, u (lengths {len(actions)}, "
                         f"{len(n)}, {len(q)}, {len(u)})")
    ok = (n > 0) & np.isfinite(q) & np.isfinite(u)
    if not ok.any():
        raise ValueError("lcb_action: no root action was visited (a search of at least 2 simulations is needed)")
    lcb = np.where(ok, q - u, -np.inf)
    order = np.lexsort((np.arange(len(n)), -n, -lcb))
    return int(actions[order[0]])
