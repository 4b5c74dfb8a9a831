"""AZdb's sub-additive planning (equation 9 of shared/papers/001_*): every player of the team searches
the position with its own latent; a rule picks one player from the search statistics
(N^j(s, a), Q^j(s, a), U^j(s, a)) and the team plays that player's move (its most visited action).

With V^j(s) = max_a Q^j(s, a) (over visited actions):

- ``visits``: argmax_j max_a N^j(s, a)
- ``value``:  argmax_j V^j(s)
- ``lcb``:    argmax_j max_a (Q^j(s, a) - U^j(s, a))  (over visited actions)
- ``gap``:    argmin_j V^j(s) over the candidates {j : V^j(s) >= max_k V^k(s) - Gap(s)},
              Gap(s) = max_{a, j} U^j(s, a) (the paper's choice for puzzles) unless ``gap`` is given.

Ties go to the lower player index.  ``max-over-latents`` (the oracle) is not a rule here: it needs
the solution (see :func:`mavgame.az.puzzles.score_team`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

__all__ = ["RULES", "PlayerSearch", "select_player"]

RULES = ("visits", "value", "lcb", "gap")


@dataclass
class PlayerSearch:
    """One player's root statistics: actions, visits N, Q in [-1, 1] (root mover's view, NaN if
    unvisited) and the exploration terms U, one entry per root action."""
    actions: np.ndarray
    visits: np.ndarray
    q: np.ndarray
    u: np.ndarray

    def best_action(self) -> int:
        """The most visited action (larger Q among ties): the move this player would play."""
        n = np.asarray(self.visits, np.float64)
        q = np.nan_to_num(np.asarray(self.q, np.float64), nan=-np.inf)
        order = np.lexsort((-q, -n))
        return int(self.actions[order[0]])


def _visited(s: PlayerSearch) -> np.ndarray:
    return (np.asarray(s.visits) > 0) & np.isfinite(np.asarray(s.q, np.float64))


def select_player(searches: Sequence[PlayerSearch], rule: str, gap: Optional[float] = None) -> Tuple[int, int]:
    """(player, action): the player that ``rule`` picks and its move."""
    if rule not in RULES:
        raise ValueError(f"selection rule must be one of {', '.join(RULES)}, not {rule!r}")
    if not searches:
        raise ValueError("select_player needs at least one player's search")
    score = np.full(len(searches), -np.inf)
    for j, s in enumerate(searches):
        vis = _visited(s)
        if not vis.any():
            continue
        q = np.asarray(s.q, np.float64)
        if rule == "visits":
            score[j] = float(np.max(s.visits))
        elif rule in ("value", "gap"):
            score[j] = float(q[vis].max())
        else:
            score[j] = float((q - np.asarray(s.u, np.float64))[vis].max())
    if not np.isfinite(score).any():
        j = 0
    elif rule != "gap":
        j = int(np.argmax(score))
    else:
        g = gap if gap is not None else max(float(np.max(s.u)) if len(s.u) else 0.0 for s in searches)
        cand = np.isfinite(score) & (score >= score.max() - g)
        j = int(np.argmin(np.where(cand, score, np.inf)))
    return j, searches[j].best_action()
