"""mavgame's games as PettingZoo AEC environments (two agents taking turns).

::

    from mavgame.compat.pettingzoo import env

    e = env(game="connect_four")            # also "tictactoe", "hex" (board_size=7, swap=True), "chess", ...
    e.reset(seed=0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

The agents are ``"player_0"`` (the first player: White, 'x') and ``"player_1"``.  An observation is a dict:

- ``"observation"``: mavgame's C observation planes, float32 ``(planes, rows, cols)`` (``Box(0, 1)``), in
  absolute colours (the first player's pieces first) with a side-to-move plane, the same for both agents
  (docs/binding.md, "Observation tensors"; PettingZoo's own classic games give each agent its own
  pieces first);
- ``"action_mask"``: int8 over the game's whole action space, 1 for the legal actions of the agent to move
  (all zeros for the other agent and once the game is over).

Actions are mavgame's action ids (``Discrete(n)``, ``n`` as in :mod:`mavgame.compat.openspiel`: 7 for
Connect Four, 20,480 for chess).  The reward comes at the end: +1 to the winner, -1 to the loser, 0 to
both for a draw.  Games end by their rules only (chess: the fifty-move rule and threefold repetition
are automatic), so ``truncations`` stay False.

**Illegal actions raise** :class:`mavgame.IllegalMoveError` (a ValueError) naming the action and the
position, and leave the environment as it was: mask your policy with ``"action_mask"``.  To end the game
with a penalty instead, wrap the raw environment in PettingZoo's
``pettingzoo.utils.wrappers.TerminateIllegalWrapper(raw_env(...), illegal_reward=-1)``.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from .. import _core
from . import _games

__all__ = ["env", "raw_env"]


def env(game: str = "connect_four", render_mode: Optional[str] = None, **params: Any) -> AECEnv:
    """The AEC environment of ``game`` (a mavgame game name; ``params`` as in
    :mod:`mavgame.compat._games`: ``board_size`` and ``swap`` for Hex, ...), with PettingZoo's
    order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(game, render_mode=render_mode, **params))


class raw_env(AECEnv, EzPickle):
    """The unwrapped AEC environment (see the module's documentation).  ``mavgame_state`` is the game's
    ``mavgame.State`` (read it; moves go through :meth:`step`), ``state()`` the global state (the planes)."""

    metadata = {"render_modes": ["human", "ansi"], "name": "mavgame_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, game: str = "connect_four", render_mode: Optional[str] = None, **params: Any):
        EzPickle.__init__(self, game, render_mode, **params)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        self._compat = _games.get(game)
        self.params = self._compat.params(params)
        self._start = self._compat.state(self.params)
        self.game = game
        self.render_mode = render_mode
        self.metadata = dict(self.metadata, name=f"mavgame_{game}_v0")
        n = self._compat.actions(self.params)
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        obs = spaces.Box(0.0, 1.0, tuple(self._start.observation_shape), np.float32)
        self.observation_spaces = {a: spaces.Dict({"observation": obs,
                                                   "action_mask": spaces.Box(0, 1, (n,), np.int8)})
                                   for a in self.possible_agents}
        self._num_actions = n
        self.state_space = obs
        self.mavgame_state = self._start.copy()
        self._reset_dicts()

    def __str__(self) -> str:
        return self.metadata["name"]

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _reset_dicts(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._agent_selector = AgentSelector(self.agents)
        self.agent_selection = self._agent_selector.reset()

    def reset(self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> None:
        """A new game from the start position (the games have no randomness: ``seed`` seeds the action
        spaces' ``sample``)."""
        if seed is not None:
            for i, a in enumerate(self.possible_agents):
                self.action_spaces[a].seed(seed + i)
        self.mavgame_state = self._start.copy()
        self._reset_dicts()

    def state(self) -> np.ndarray:
        """The global state: the observation planes (perfect information: what both agents observe)."""
        return self.mavgame_state.observation_tensor()

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        s = self.mavgame_state
        idx = self.possible_agents.index(agent)
        if not s.is_terminal() and s.to_move == idx:
            mask = s.legal_actions_mask()[: self._num_actions].astype(np.int8)
        else:
            mask = np.zeros(self._num_actions, np.int8)
        return {"observation": s.observation_tensor(), "action_mask": mask}

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: None is only for an agent whose game is over")
        self.mavgame_state.push(int(action))   # IllegalMoveError names an illegal action; nothing changes then
        self._cumulative_rewards[agent] = 0
        self.rewards = {a: 0 for a in self.agents}
        res = _core.State.outcome(self.mavgame_state)[0]
        if res != 0:
            r0 = {1: 1, 2: -1, 3: 0}[res]
            self.rewards = {"player_0": r0, "player_1": -r0}
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self._agent_selector.next()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Optional[str]:
        """``"ansi"``: the board as text (the game class's drawing and the position's text);
        ``"human"``: printed."""
        return _games.render(self.render_mode, self.game, self.mavgame_state, gymnasium.logger.warn,
                             "env(..., render_mode='ansi')")

    def close(self) -> None:
        pass
