"""Many MCTS searches at once, the leaves of all of them evaluated together (``csrc/search/mcts_multi.c``).

    >>> import mavgame
    >>> from mavgame.search.mcts import MCTS
    >>> from mavgame.search.multi import search_many
    >>> ev = mavgame._core.mcts_constant_evaluator(0.5)
    >>> searches = [MCTS(ev, num_simulations=32, batch_size=8, seed=i) for i in range(4)]
    >>> results = search_many(searches, [mavgame.State("connect_four")] * 4)
    >>> [r.stats["simulations"] for r in results]
    [32, 32, 32, 32]

Each round gathers the next batch of every search still running (each search its own ``batch_size`` leaves,
as :meth:`MCTS.search` would), evaluates the leaves of the searches that share a C evaluator in one call (the
native MAV model then sees batches of up to the sum of the batch sizes), and backs each search's results up in
its own tree. So each search gives exactly the result of its own :meth:`MCTS.search` with the same seed when its
evaluator answers a leaf the same way whatever else is in the call (the constant evaluator, the Connect Four
solver, the native model: tests/test_mcts_multi.py checks this). The ``"playout"`` evaluator draws from one
generator: each MCTS given the name ``"playout"`` makes its own, so it stays equal to its sequential search, while
one playout capsule shared by several searches gives them other draws than sequential searches would.

Only C evaluators can be batched this way (a name, a capsule, or an object with ``capsule()``, such as
:class:`mavgame.agents.mav.NativeMAVEvaluator`): a search with a Python evaluator is refused with a TypeError
(its callable runs with the GIL once per batch of one tree, so running it here would gain nothing; batch across
games in Python by giving one callable the requests of many games instead).

A time budget (``max_seconds``, or the searches' own ``max_seconds``) holds for the whole call: the rounds stop
when it is spent and every search keeps the simulations it ran (``stats['timed_out']`` True).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from .. import _core
from .config import check_seconds
from .mcts import MCTS
from .results import SearchError, SearchResult

__all__ = ["search_many"]


def _is_capsule(ev: Any) -> bool:
    return type(ev).__name__ == "PyCapsule"


def _simulations(searches: Sequence[MCTS], num_simulations) -> List[Optional[int]]:
    if num_simulations is None or isinstance(num_simulations, int):
        return [num_simulations] * len(searches)
    sims = list(num_simulations)
    if len(sims) != len(searches):
        raise ValueError(f"search_many: {len(sims)} simulation counts for {len(searches)} searches")
    return sims


def search_many(searches: Sequence[MCTS], states: Sequence[Any],
                num_simulations: Union[None, int, Sequence[Optional[int]]] = None, *,
                max_seconds: Optional[float] = None, return_errors: bool = False,
                info: Optional[Dict[str, Any]] = None) -> List[Union[SearchResult, SearchError]]:
    """Search ``searches[i]`` from ``states[i]`` for every i together; a list of :class:`SearchResult`.

    ``num_simulations``: None (each search's own), one number for all, or one per search (None: that search's
    own). Roots are placed as :meth:`MCTS.search` places them (engine mode: a state continuing the search's
    previous root reuses its subtree; state tracking: game states). ``max_seconds``: a time budget for the whole
    call (None: the smallest of the searches' own, if any). ``return_errors``: a search that found no move
    (:class:`SearchError`) leaves its error in the list instead of raising it. ``info``, a dict, receives the
    rounds, evaluator calls, requests, the largest call and the seconds in the evaluator.

    Refused: different lengths, the same MCTS twice, a search with a Python evaluator (TypeError, see the module
    docstring)."""
    searches = list(searches)
    states = list(states)
    if len(states) != len(searches):
        raise ValueError(f"search_many: {len(searches)} searches but {len(states)} states")
    for i, s in enumerate(searches):
        if not isinstance(s, MCTS):
            raise TypeError(f"search_many: searches[{i}] is {type(s).__name__}, not an MCTS")
    seen: Dict[int, int] = {}
    for i, s in enumerate(searches):
        if id(s) in seen:
            raise ValueError(f"search_many: searches[{seen[id(s)]}] and searches[{i}] are the same MCTS "
                             "(one tree searches one position at a time)")
        seen[id(s)] = i
    for i, s in enumerate(searches):
        spec = s._evaluator_spec
        if not (isinstance(spec, str) or _is_capsule(spec) or callable(getattr(spec, "capsule", None))):
            raise TypeError(f"search_many: searches[{i}] has a Python evaluator ({type(spec).__name__}); only C "
                            "evaluators (a name, a capsule, an object with capsule()) are evaluated together; "
                            "use MCTS.search for it")
    sims = _simulations(searches, num_simulations)
    if max_seconds is not None:
        max_seconds = check_seconds(max_seconds)
    plan = []
    budgets = []
    for s, st, n in zip(searches, states, sims):
        n, budget = s._prepare(st, n)
        plan.append(n)
        if budget:
            budgets.append(budget)
    budget = max_seconds if max_seconds is not None else (min(budgets) if budgets else None)
    evs = [s._evaluator for s in searches]
    for i, ev in enumerate(evs):
        if not _is_capsule(ev):   # resolved from a name or capsule(): a C evaluator; anything else is a bug
            raise TypeError(f"search_many: searches[{i}]'s evaluator resolved to {type(ev).__name__}, not a capsule")
    timed_out, stats = _core.mcts_search_many([s._tree for s in searches], evs, plan, max_seconds=budget or 0.0)
    if info is not None:
        info.update(stats)
    out: List[Union[SearchResult, SearchError]] = []
    for s, st, n in zip(searches, states, plan):
        try:
            out.append(s._finish(st, n, timed_out))
        except SearchError as e:
            if not return_errors:
                raise
            out.append(e)
    return out
