"""What an MCTS search returns: :class:`SearchResult` (the root's edges, the best move, the principal
variation, the counters) and :class:`SearchError` (a search that found no move).

A result of :meth:`mavgame.search.mcts.MCTS.search` is made from one C object, ``mavgame._core.MCTSResult``: a
copy of the tree's root edges, principal variation and counters taken when the search ended (so that a later
search of the same tree changes nothing in it). Each field (its NumPy arrays, move lists, the stats dict) is
built from that copy the first time it is read and then kept, with the values the dataclass would have held
had it been given them all at once: reading none of them costs nothing (issue 52). A result made by calling
:class:`SearchResult` itself holds its fields as given. Either way it is the same dataclass: equality,
``repr``, :func:`dataclasses.fields`, :func:`dataclasses.replace`, :func:`copy.copy` and pickling see every
field (a copy or a pickle holds the fields themselves, not the C object)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

import numpy as np

from .. import _core

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

    The result of a search builds each field from a C copy of the tree's root when it is first read (see the
    module docstring); one made by calling the class holds what it was given.
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

    def __getstate__(self) -> Dict[str, Any]:
        """The instance dict for pickling and :mod:`copy`, every field built (without the C copy it came from)."""
        d = self.__dict__
        if "_snapshot" not in d:
            return d
        for name in _FIELD_NAMES:
            getattr(self, name)
        return {k: v for k, v in d.items() if k != "_snapshot"}

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


_FIELD_NAMES = tuple(f.name for f in fields(SearchResult))
# After @dataclass made __init__ and the fields (so none gets a default from this): each field on the class is a C
# non-data descriptor, asked only when the instance dict lacks the field, i.e. for a result that MCTSTree.snapshot
# made (``into=SearchResult``, no __init__) whose field was not read yet; it builds the value from the instance's
# ``_snapshot`` (an MCTSResult) and keeps it in the instance dict (csrc/bind/py_mcts_result.c).
for _name in _FIELD_NAMES:
    setattr(SearchResult, _name, _core.MCTSResultField(_name))
del _name
