"""Agents: anything that picks a move in a game state, and the agent specs that name them.

- :mod:`mavgame.agents.base`: the :class:`Agent` interface, :class:`AgentError`, :func:`resolve_move`,
  :class:`CallableAgent`, the seed mixing (:func:`mix_seeds`);
- :mod:`mavgame.agents.spec`: the spec grammar (``kind:key=value,...``), the registry of kinds
  (:func:`register_agent`, :func:`make_agent`, :func:`agent_kinds`) and the help text (:func:`describe_kinds`);
- one module per family, each registering its kinds when imported (the registry imports a family when one of
  its kinds is asked for): :mod:`~mavgame.agents.basic` (random, minimax, perfect, python),
  :mod:`~mavgame.agents.engines` (uci, stockfish, fairy), :mod:`~mavgame.agents.mcts` (mcts, uct,
  solver_mcts), :mod:`~mavgame.agents.mav` (mav, mav_mcts, mav_is), :mod:`~mavgame.agents.policy`
  (alphabeta, guided_ab, policy, policy_rollouts), :mod:`~mavgame.agents.alphazero` (az, azdb; PyTorch).

This package is the top layer of the play code: the league (:mod:`mavgame.play`) uses the interface and
:func:`make_agent`; the families use the games, the search, the engines and the model.
"""
from .base import Agent, AgentError, CallableAgent, Move, mix_seeds, resolve_move
from .spec import (AgentDependencyError, AgentKind, AgentSpecError, Option, agent_kind, agent_kinds, describe_kinds,
                   make_agent, options_of, parse_spec, register_agent)

__all__ = ["Agent", "AgentError", "CallableAgent", "Move", "mix_seeds", "resolve_move", "AgentDependencyError",
           "AgentKind", "AgentSpecError", "Option", "agent_kind", "agent_kinds", "describe_kinds", "make_agent",
           "options_of", "parse_spec", "register_agent"]
