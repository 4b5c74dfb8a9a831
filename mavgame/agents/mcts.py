"""Search agents, registered as the kinds ``mcts`` (:class:`mavgame.MCTS` with an evaluator: random playouts,
the Connect Four solver, Stockfish, a constant), ``uct`` (the basic random-playout UCT baseline) and
``solver_mcts`` (MCTS guided by the perfect Connect Four solver). ``movetime`` (milliseconds per move, as for
the UCI agents) gives each move a time budget; ``sims`` then caps the search (default :data:`MOVETIME_SIMS`).
Their options: :func:`mavgame.agents.spec.describe_kinds`.
"""
from __future__ import annotations

import os
import random as _random
from typing import Any, Optional

import numpy as np

from .. import _core
from ..search.mcts import MCTS
from ..search.uct import playout_uct
from .base import Agent, AgentError, Move, mix_seeds
from .spec import Option, options_of, register_agent

__all__ = ["MCTSAgent", "UCTAgent", "MOVETIME_SIMS", "MCTS_EVALUATORS", "MCTS_CHOICES"]

#: the simulation cap of a search with a ``movetime`` and no ``sims`` (memory: one node per simulation)
MOVETIME_SIMS = 100_000


def movetime_seconds(movetime) -> Optional[float]:
    """``movetime`` (milliseconds per move, as for UCI engines) in seconds; None stays None."""
    if movetime is None:
        return None
    if isinstance(movetime, bool) or not isinstance(movetime, (int, float, np.integer, np.floating)) or not (
            np.isfinite(movetime) and movetime > 0):
        raise ValueError(f"movetime must be a positive number of milliseconds, not {movetime!r}")
    return float(movetime) / 1000.0


def check_sims(sims) -> int:
    """A simulation count from an agent spec: an integer >= 1 (ValueError naming the value)."""
    if isinstance(sims, bool) or not isinstance(sims, (int, np.integer)) or sims < 1:
        raise ValueError(f"sims must be a number of simulations >= 1, not {sims!r}")
    return int(sims)


class MCTSAgent(Agent):
    """:class:`mavgame.MCTS` with any evaluator (a name, a capsule or a Python callable).

    The tree is rebuilt before each game (``seed`` per game) and reused between the agent's moves.
    ``movetime`` (milliseconds) gives each move a time budget (``sims`` stays the cap; None for
    ``sims`` means :data:`MOVETIME_SIMS` then); ``max_seconds`` is the same in seconds. The search
    options (``mcts_kwargs``, those of :class:`mavgame.MCTS`) are checked when the agent is made."""

    def __init__(self, evaluator: Any = "playout", sims: Optional[int] = 200, *, name: Optional[str] = None,
                 games: Optional[tuple] = None, movetime: Optional[float] = None, **mcts_kwargs):
        self.evaluator = evaluator
        if movetime is not None:
            mcts_kwargs["max_seconds"] = movetime_seconds(movetime)
        if sims is None:
            if not mcts_kwargs.get("max_seconds"):
                raise ValueError("sims=None needs a time budget (movetime or max_seconds)")
            sims = MOVETIME_SIMS
        self.sims = check_sims(sims)
        self.kwargs = mcts_kwargs
        self.games = games
        ev_name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", type(evaluator).__name__)
        self.name = name or f"mcts-{ev_name}-{self.sims}"
        self._mcts = None
        self._ev_instance = None
        self._seed = mcts_kwargs.pop("seed", 0)
        # the search's own checks now, not at the first move (the evaluator is resolved by the search)
        MCTS("constant", num_simulations=self.sims, seed=int(self._seed) & 0x7FFFFFFF, **self.kwargs)

    def _new(self, seed):
        ev = self.evaluator
        if callable(ev) and getattr(ev, "_agent_factory", False):
            # an evaluator built in the process that plays (an engine), once, reused across games;
            # one inherited through fork belongs to the parent process and is left alone
            if getattr(self, "_ev_pid", None) != os.getpid():
                self._ev_instance = None
            if self._ev_instance is None:
                self._ev_instance = ev()
                self._ev_pid = os.getpid()
            ev = self._ev_instance
        self._mcts = MCTS(ev, num_simulations=self.sims, seed=int(seed) & 0x7FFFFFFF, **self.kwargs)

    def close(self) -> None:
        inst = getattr(self, "_ev_instance", None)
        if inst is not None and hasattr(inst, "close") and getattr(self, "_ev_pid", None) == os.getpid():
            inst.close()
        self._ev_instance = None
        self._mcts = None

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self._new(mix_seeds(self._seed, seed))

    #: how the agent's search errors name it ("MCTS agent 'x': ...")
    _label = "MCTS agent"

    def _search(self, state):
        """The agent's search at ``state`` (its tree made on first use); a search error as AgentError."""
        self.check_game(state.game)
        if self._mcts is None:
            self._new(self._seed)
        from ..search.results import SearchError
        try:
            return self._mcts.search(state)
        except SearchError as e:
            raise AgentError(f"{self._label} {self.name!r}: {e}") from e

    def act(self, state) -> Move:
        res = self._search(state)
        if res.best_action is not None:
            return int(res.best_action)
        if res.best_move is None:
            raise AgentError(f"MCTS agent {self.name!r} found no move in position {state.text()!r} "
                             f"(search counters: {res.stats})")
        return res.best_move

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_mcts"] = None
        d["_ev_instance"] = None
        return d


class UCTAgent(Agent):
    """The basic MCTS baseline: UCT with uniformly random playouts (:func:`mavgame.search.uct.playout_uct`,
    the core's ``playout_mcts``): its most visited action."""

    def __init__(self, sims: Optional[int] = 200, *, c: Optional[float] = None, name: Optional[str] = None,
                 seed: int = 0, movetime: Optional[float] = None):
        self.max_seconds = movetime_seconds(movetime) or 0.0
        if sims is None:
            if not self.max_seconds:
                raise ValueError("sims=None needs a movetime")
            sims = MOVETIME_SIMS
        self.sims = check_sims(sims)
        if self.sims > _core.PLAYOUT_MAX_SIMULATIONS:
            raise ValueError(f"uct: sims must be <= {_core.PLAYOUT_MAX_SIMULATIONS:,} (the playout UCT's tree), "
                             f"got {self.sims:,}")
        self.c = None if c is None else float(c)   # None: the core's exploration constant
        self.name = name or (f"uct-{movetime}ms" if movetime is not None else f"uct-{self.sims}")
        self._seed = seed
        self._rng = _random.Random(seed)

    def setup(self, game, *, seed=None, player=None):
        self._rng = _random.Random(mix_seeds(self._seed, seed))

    def act(self, state) -> Move:
        return playout_uct(state, self.sims, seed=self._rng.getrandbits(31), c=self.c,
                           max_seconds=self.max_seconds).best_action


#: the evaluators of the ``mcts`` spec (stockfish and uci: a UCI engine's evaluation at ``nodes``)
MCTS_EVALUATORS = ("playout", "constant", "c4_solver", "solver", "stockfish", "uci")
#: the named values of :class:`mavgame.MCTS`'s options (MCTS checks them; shown in the help of every MCTS kind)
MCTS_CHOICES = {"virtual_count": ("dynamic", "static", "none"), "prior": ("mav", "policy"),
                "invalid": ("exclude", "loss")}


def _budget_label(sims, kw) -> str:
    """``200`` or ``100ms`` (with ``movetime`` and no ``sims``) or ``200-100ms``, for agent names."""
    mt = kw.get("movetime")
    if mt is None:
        return str(sims)
    return f"{mt}ms" if sims is None else f"{sims}-{mt}ms"


def _make_mcts(sims: Optional[int] = None, evaluator: str = "playout", batch: int = 1, nodes: int = 2000, **kw):
    if sims is None:
        sims = None if kw.get("movetime") is not None else 200
    if evaluator not in MCTS_EVALUATORS:
        raise ValueError(f"evaluator must be one of {', '.join(MCTS_EVALUATORS)}, not {evaluator!r}")
    games = None
    ev: Any = evaluator
    if "path" in kw and evaluator not in ("stockfish", "uci"):
        raise ValueError(f"path is the engine of the stockfish or uci evaluator, not of {evaluator!r}")
    path = kw.pop("path", "stockfish")
    if evaluator in ("stockfish", "uci"):

        def factory(path=path, nodes=nodes):
            from ..search.evaluators import UCIEvaluator
            return UCIEvaluator(path, nodes=nodes)
        factory._agent_factory = True  # type: ignore[attr-defined]
        ev = factory
        games = ("chess",)
    elif evaluator in ("c4_solver", "solver"):
        games = ("connect_four",)
    name = kw.pop("name", None) or f"mcts-{evaluator}-{_budget_label(sims, kw)}"
    return MCTSAgent(ev, sims, batch_size=batch, name=name, games=games, **kw)


def _make_uct(sims: Optional[int] = None, **kw):
    if sims is None and kw.get("movetime") is None:
        sims = 200
    return UCTAgent(sims, **kw)


def _make_solver_mcts(sims: Optional[int] = None, **kw):
    if sims is None and kw.get("movetime") is None:
        sims = 50
    name = kw.pop("name", None) or f"solver-mcts-{_budget_label(sims, kw)}"
    return MCTSAgent("c4_solver", sims, name=name, games=("connect_four",), **kw)


_SIMS = "simulations a move; none with movetime: {} at most"
register_agent("mcts", _make_mcts,
               options=options_of(_make_mcts, MCTSAgent, MCTS, skip=("games", "num_simulations", "batch_size"),
                                  choices={"evaluator": MCTS_EVALUATORS, **MCTS_CHOICES},
                                  help={"sims": "default 200; " + _SIMS.format(MOVETIME_SIMS), "movetime": "ms a move",
                                        "batch": "leaves per evaluator call", "nodes": "stockfish evaluator"},
                                  extra=[Option("path", str, "stockfish", help="stockfish evaluator")]),
               help="mavgame.MCTS with an evaluator (playout, c4_solver, stockfish, constant); movetime ms a move; "
                    "invalid=exclude (the paper's minus infinity for an unusable answer, the default) or loss (-1); "
                    "the other options are those of mavgame.MCTS")
register_agent("uct", _make_uct,
               options=options_of(_make_uct, UCTAgent, help={"sims": "default 200; " + _SIMS.format(MOVETIME_SIMS),
                                                              "movetime": "ms a move"}),
               help="the basic random-playout UCT baseline (sims, c, movetime as for mcts)")
register_agent("solver_mcts", _make_solver_mcts,
               options=options_of(_make_solver_mcts, MCTSAgent, MCTS, skip=("games", "num_simulations", "evaluator"),
                                  choices=MCTS_CHOICES,
                                  help={"sims": "default 50; " + _SIMS.format(MOVETIME_SIMS), "movetime": "ms a move"}),
               help="MCTS guided by the perfect Connect Four solver (sims, movetime as for mcts)")
