"""The playout UCT baseline of the MAV paper: :func:`playout_uct` (UCT with uniformly random playouts, in C)
and its :class:`UCTResult`."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

from .. import _core

__all__ = ["playout_uct", "UCTResult"]


@dataclass(frozen=True)
class UCTResult:
    """Result of :func:`playout_uct`: per legal move the visit count and the mean score (win
    probability for the player to move, NaN if unvisited); ``value`` is the mean score of all
    simulations and ``best`` the most visited move (``best_action`` its action id); ``simulations``
    the simulations run and ``timed_out`` whether a ``max_seconds`` budget stopped the search
    before all of them."""

    best: str
    value: float
    visits: Dict[str, int]
    q: Dict[str, float]
    simulations: int = 0
    timed_out: bool = False
    best_action: int = -1

    def order(self) -> List[str]:
        """Moves by visits, then by q, best first."""
        def key(m: str):
            q = self.q[m]
            return (-self.visits[m], -(q if not math.isnan(q) else -1.0))
        return sorted(self.visits, key=key)


def playout_uct(state, simulations: int = 1000, *, seed: int = 0, c: Optional[float] = None,
                fast_playout: bool = True, max_seconds: float = 0.0) -> UCTResult:
    """UCT with uniformly random playouts, the MAV paper's basic MCTS baseline, for any game (the
    core's ``playout_mcts``, csrc/search/playout_mcts.c).  The one entry point of the baseline:
    ``agents.UCTAgent`` plays with it and ``Hex.mcts`` is a deprecated wrapper of it.

    Values are win probabilities of the player to move.  ``fast_playout`` (Hex) plays each playout
    by filling the board at random (the same outcome distribution as move-by-move random play, ~10x
    faster).  Reproducible for a given seed; the GIL is released during the search.  ``max_seconds``
    (0: none) is a time budget: the search stops then with the simulations run so far
    (``timed_out`` True; ``simulations`` caps it).  ``c`` is the UCT exploration constant (None: the
    core's default, sqrt(2)).  Bad arguments raise ValueError naming the value."""
    kw = {} if c is None else {"c": float(c)}
    r = _core.playout_mcts(state, int(simulations), seed=int(seed), fast_playout=bool(fast_playout),
                           max_seconds=float(max_seconds), **kw)
    names = [state.action_to_str(int(a)) for a in r["actions"]]
    best = int(r["best_action"])
    return UCTResult(best=state.action_to_str(best), value=float(r["value"]),
                     visits={m: int(v) for m, v in zip(names, r["visits"])},
                     q={m: float(q) for m, q in zip(names, r["q"])}, simulations=int(r["simulations"]),
                     timed_out=bool(r["timed_out"]), best_action=best)
