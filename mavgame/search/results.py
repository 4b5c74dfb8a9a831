"""What an MCTS search returns: :class:`SearchResult` (the root's edges, the best move, the principal
variation, the counters) and :class:`SearchError` (a search that found no move)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

__all__ = ["SearchResult", "SearchError"]


class SearchError(RuntimeError):
    """A search ran simulations from a position with legal moves and found no move (the evaluator never
    answered usably for the root); ``stats`` holds the search's counters."""

    def __init__(self, message: str, stats: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.stats = dict(stats or {})


@dataclass
class SearchResult:
    """The outcome of :meth:`mavgame.search.mcts.MCTS.search`.

    ``moves``/``actions``/``visits``/``q``/``prior``/``values``/``hallucinated`` describe the root
    edges (``q`` and ``root_value`` in [-1, 1] from the root player's view, NaN if unvisited, -inf for a
    hallucinated move under ``invalid="exclude"``;
    ``values`` the evaluator's win probabilities, NaN where it gave none).  ``best_move`` is the
    robust child (most visits, total value as tie-break); ``pv`` the principal variation.  ``u`` is
    PUCT's exploration term U(s, a) = c(s) P(s, a) sqrt(N(s)) / (1 + N(s, a)) of each root edge after the
    search (N, Q and U per action are what AZdb's sub-additive planning reads).
    """

    best_move: Optional[str]
    best_action: Optional[int]
    moves: List[str]
    actions: np.ndarray
    visits: np.ndarray
    q: np.ndarray
    prior: np.ndarray
    values: np.ndarray
    hallucinated: np.ndarray
    pv: List[str]
    pv_actions: np.ndarray
    root_value: float
    root_visits: int
    stats: Dict[str, Any] = field(default_factory=dict)
    u: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        """Visit-count distribution over the root edges (temperature 0: one-hot on the best)."""
        v = self.visits.astype(np.float64)
        if v.size == 0:
            return v
        if temperature <= 0:
            p = np.zeros_like(v)
            if self.best_move is not None:
                p[self.moves.index(self.best_move)] = 1.0
            return p
        v = v ** (1.0 / temperature)
        s = v.sum()
        return v / s if s > 0 else np.full_like(v, 1.0 / v.size)
