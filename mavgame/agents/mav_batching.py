"""Many games at once for the MAV-MCTS agents (:class:`mavgame.agents.mav.MAVMCTSAgent`): their searches in
several games run as one :func:`mavgame.search.multi.search_many`, the leaves of all of them in one call of their
shared C evaluator (the concurrent game loop, :mod:`mavgame.play.concurrent`, asks through ``act_many``)."""
from __future__ import annotations

import copy
from typing import Any, List, Sequence

import numpy as np

from .base import AgentError

__all__ = ["MCTSBatching"]


class MCTSBatching:
    """What an :class:`mavgame.agents.mcts.MCTSAgent` subclass with a random fallback (``stats``, ``_rng``) needs to
    play many games at once: a key for the agents that search together, its copies for concurrent games, and the
    moves of many agents from one multi-search."""

    #: a league with this agent plays several games at once by default (when it batches: a C evaluator)
    auto_concurrent = True

    def batches_across_games(self) -> bool:
        """True when the searches of several games can share one batched evaluator call (a C evaluator)."""
        return callable(getattr(self.evaluator, "capsule", None))

    def batch_key(self):
        """Agents with equal keys search together (:meth:`act_many`): those over the same C evaluator."""
        return id(self.evaluator) if self.batches_across_games() else None

    def prepare_concurrent(self, n: int) -> None:
        """Before ``n`` games at once: a native evaluator generates the leaves of all their searches at once."""
        widen = getattr(self.evaluator, "widen", None)
        if callable(widen):
            widen(int(n) * int(self.kwargs.get("batch_size", 1)))

    def fork(self) -> "MCTSBatching":
        """Another player of this agent for a concurrent game: its own tree and generator, the same evaluator."""
        twin = copy.copy(self)
        twin._mcts = None
        twin.stats = self.stats           # one set of counters for the agent
        twin._rng = np.random.default_rng(self._seed)
        return twin

    @classmethod
    def act_many(cls, agents: Sequence["MCTSBatching"], states: Sequence[Any]) -> List[Any]:
        """The moves of ``agents[i]`` in ``states[i]`` (each agent in its own game), their searches run together
        (:func:`mavgame.search.multi.search_many`): each move is the one ``agents[i].act(states[i])`` plays."""
        from ..search.multi import search_many
        from ..search.results import SearchError
        for ag, st in zip(agents, states):
            ag.check_game(st.game)
            if ag._mcts is None:
                ag._new(ag._seed)
        results = search_many([ag._mcts for ag in agents], states, return_errors=True)
        moves: List[Any] = []
        for ag, st, res in zip(agents, states, results):
            ag.stats["moves"] += 1
            if isinstance(res, SearchError):
                ag.stats["random_fallback"] += 1
                ag._mcts.reset()
                legal = list(st.legal_moves)
                moves.append(legal[int(ag._rng.integers(len(legal)))])
            elif res.best_action is not None:
                moves.append(int(res.best_action))
            elif res.best_move is None:
                raise AgentError(f"MCTS agent {ag.name!r} found no move in position {st.text()!r} "
                                 f"(search counters: {res.stats})")
            else:
                moves.append(res.best_move)
        return moves
