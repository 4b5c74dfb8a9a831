"""AZdb training pieces that need torch: the team's evaluator for self-play (latent planes, the combined
search value) and the turning of a team self-play's games into training positions (diversity rewards,
intrinsic value targets, the exploiter's moves only).  :class:`mavgame.az.train.AZTrainer` uses them
when ``players > 1``; the NumPy pieces live in :mod:`mavgame.az.azdb` and :mod:`mavgame.az.matchmaking`.

Search value (the paper's "combined value estimate" with the intrinsic rewards "from the root to the
leaf"), for the player to move at the leaf, searching player i (the root's; its latent conditions the
whole search, both sides):

    value = lambda_i v + (1 - lambda_i) s (R + own * v_d),   clipped to [-1, 1]

R: player i's intrinsic rewards summed over its moves from the root to the leaf (C, ``row_info``);
s = +1 when player i is to move at the leaf, -1 otherwise (the tree's backup is zero-sum: the
leaf mover's view); own * v_d: the intrinsic value head at leaves where player i is to move (at the
other leaves v_d would be the opponent's, whose intrinsic rewards the paper zeroes).  For player 0
(lambda 1) this is plain AlphaZero.  The (1 - lambda) weight on R follows equation 6; the paper's text
says only that R is "added to v".
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np
import torch

from .azdb import FeatureMeans, diversity_features, diversity_reward, intrinsic_targets, latent_planes, search_value

__all__ = ["team_evaluator", "team_examples"]


def team_evaluator(net, players: int, lambdas: np.ndarray, device: str = "cpu") -> Callable:
    """``evaluate(obs, game, latent, reward, own) -> (logits, values)`` for team self-play."""
    dev = torch.device(device)
    lam_all = np.asarray(lambdas, np.float64)

    def evaluate(obs, game, latent, reward, own):
        net.eval()
        x = latent_planes(obs, latent, players)
        with torch.no_grad():
            logits, v, vd = net(torch.from_numpy(x).to(dev))
        v = v.double().cpu().numpy()
        vd = vd.double().cpu().numpy()
        val = search_value(v, vd, reward, own, lam_all[np.asarray(latent)])
        return logits.float().cpu().numpy(), val.astype(np.float32)
    return evaluate


def team_examples(sp, latents: np.ndarray, exploiter_side: np.ndarray, features: FeatureMeans, game: str,
                  lambdas: np.ndarray, l0: float, n_td: int, net, device: str = "cpu") -> Dict[str, Any]:
    """Training positions of a team self-play (``sp``: a :class:`mavgame.az.SelfPlayResult` of games
    from the start position, side 0 moving at even plies): every move's diversity reward r_d (eq. 8,
    with the players' psi before this batch; 0 for lambda_i = 1), the intrinsic value targets over
    ``n_td`` steps (bootstrapped with the current network's v_d), then psi updated with every move of
    each player, and only the exploiter's moves kept (both sides when a player meets itself).
    Returns obs (with latent planes), pi, z, zd, the white/black latents and white's result per game,
    and per-player means of r_d."""
    players = len(features.psi)
    side = (np.asarray(sp.ply) % 2).astype(np.int64)
    g = np.asarray(sp.game, np.int64)
    lat = np.asarray(latents)[g, side].astype(np.int64)
    phi = diversity_features(sp.obs_after, game)
    r_d = np.zeros(len(lat), np.float32)
    for i in range(players):
        m = lat == i
        if m.any() and lambdas[i] < 1.0:
            r_d[m] = diversity_reward(phi[m], features.psi, i, l0)
    zd, boot = intrinsic_targets(r_d, g, sp.ply, n_td)
    x = latent_planes(sp.obs, lat, players)
    b = np.nonzero(boot >= 0)[0]
    if len(b):
        net.eval()
        with torch.no_grad():
            out = net(torch.from_numpy(x[boot[b]]).to(torch.device(device)))
        zd[b] += out[2].float().cpu().numpy()
    zd[np.asarray(lambdas)[lat] >= 1.0] = 0.0
    for i in range(players):
        features.update(i, phi[lat == i])
    own = (side == np.asarray(exploiter_side)[g]) | (np.asarray(latents)[g, 0] == np.asarray(latents)[g, 1])
    first = np.asarray(sp.ply) == 0
    white = np.asarray(latents)[g[first], 0]
    black = np.asarray(latents)[g[first], 1]
    mean_rd = [float(r_d[lat == i].mean()) if (lat == i).any() else 0.0 for i in range(players)]
    return {"obs": x[own], "pi": np.asarray(sp.pi)[own], "z": np.asarray(sp.z)[own], "zd": zd[own],
            "white": white, "black": black, "white_result": np.asarray(sp.z)[first], "mean_rd": mean_rd,
            "kept": int(own.sum())}
