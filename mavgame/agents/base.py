"""The agent interface: anything that picks a move in a game state.

The interface is small::

    class Agent:
        name: str
        def setup(self, game, *, seed=None, player=None): ...   # optional, before each game
        def act(self, state) -> move                              # an int action or a move string
        def close(self): ...                                      # optional, release engines

``state`` is a :class:`mavgame.State` (or one of the game classes) that the agent must not keep
modified: it may push and pop, but must leave it as it found it.  :class:`CallableAgent` wraps any Python
function, :func:`resolve_move` turns an agent's answer into a legal action, :func:`mix_seeds` derives the
per-game seed of an agent that has its own.  The agent kinds of specs (``random``, ``mcts:sims=200``, ...)
are in :mod:`mavgame.agents.spec`.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import numpy as np

__all__ = ["Agent", "AgentError", "CallableAgent", "resolve_move", "mix_seeds", "Move"]

Move = Union[int, str]


def mix_seeds(a: Optional[int], b: Optional[int]) -> int:
    """A deterministic 31-bit seed from two optional seeds (an agent's own seed and the game's)."""
    return ((int(a or 0) * 1_000_003) ^ (int(b or 0) * 7_919 + 12_345)) & 0x7FFFFFFF


class AgentError(RuntimeError):
    """An agent could not produce a legal move (the message names the agent and the position)."""


def resolve_move(state, move: Any, who: str = "agent") -> int:
    """An agent's answer (int action, numpy int or move string) as a legal action of ``state``."""
    if isinstance(move, (bool, np.bool_)):
        raise AgentError(f"{who} returned {move!r}, not a move, in position {state.text()!r}")
    if isinstance(move, (int, np.integer)):
        a = int(move)
        if not state.is_legal(a):
            raise AgentError(f"{who} returned the illegal action {a} in position {state.text()!r}")
        return a
    if isinstance(move, str):
        try:
            return int(state.action_from_str(move))
        except ValueError as e:
            raise AgentError(f"{who} returned the illegal move {move!r} in position {state.text()!r}: {e}") from None
    raise AgentError(f"{who} returned {move!r} ({type(move).__name__}), not a move, in position {state.text()!r}")


class Agent:
    """Base class; subclasses override :meth:`act` (and :meth:`setup` / :meth:`close` if needed).

    ``games``: the games the agent can play (None: any)."""

    name: str = "agent"
    games: Optional[tuple] = None
    spec: Optional[str] = None  # the spec string that rebuilds this agent, when built from one

    def setup(self, game: str, *, seed: Optional[int] = None, player: Optional[int] = None) -> None:
        """Called before each game with its name, a per-game seed and the player (0 or 1)."""

    def act(self, state) -> Move:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (engine processes)."""

    def check_game(self, game: str) -> None:
        if self.games is not None and game not in self.games:
            raise AgentError(f"agent {self.name!r} cannot play {game!r} (it plays {', '.join(self.games)})")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class CallableAgent(Agent):
    """Any Python callable ``fn(state) -> move`` as an agent.

    ``setup`` (optional) is called as ``setup(game, seed=..., player=...)`` before each game."""

    def __init__(self, fn: Callable[[Any], Move], name: Optional[str] = None,
                 setup: Optional[Callable[..., None]] = None, games: Optional[tuple] = None):
        if not callable(fn):
            raise TypeError(f"CallableAgent needs a callable, not {type(fn).__name__}")
        self.fn = fn
        self._setup = setup
        self.games = games
        self.name = name or getattr(fn, "__name__", "callable")

    def setup(self, game, *, seed=None, player=None):
        if self._setup is not None:
            self._setup(game, seed=seed, player=player)

    def act(self, state) -> Move:
        return self.fn(state)
