"""A mavgame game as a Gymnasium single-agent environment: you play one side, a mavgame agent the other.

::

    import gymnasium
    import mavgame.compat.gymnasium                     # registers mavgame/<game>-v0

    env = gymnasium.make("mavgame/connect_four-v0", opponent="uct:sims=50", player=0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action = env.action_space.sample(info["action_mask"])   # mask: only legal actions
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated

or ``MavgameEnv("hex", opponent="random", board_size=7)`` directly.

- ``opponent``: an agent spec (``"random"``, ``"uct:sims=50"``, ``"mcts:sims=200"``, ``"perfect"``, ...:
  ``mavgame --help`` lists the kinds), a :class:`mavgame.agents.Agent`, or a function ``state -> move``.
  It is set up before each game with a seed drawn from the environment's ``np_random``, so ``reset(seed=s)``
  replays the same game for the same actions.
- ``player``: your side, 0 (first: White, 'x'), 1, or ``"random"`` (drawn at each reset); ``info["player"]``.
- Observations are mavgame's C planes, float32 ``(planes, rows, cols)`` in ``Box(0, 1)``, absolute colours
  with a side-to-move plane (docs/binding.md, "Observation tensors").
- Actions are mavgame's action ids, ``Discrete(n)`` as in :mod:`mavgame.compat.openspiel`;
  ``info["action_mask"]`` is int8 over them (1: legal now; all zeros once the game is over), and
  ``info["opponent_action"]`` the opponent's reply (None when it had none).
- Reward: +1 if you win, -1 if you lose, 0 for a draw, given on the step that ends the game; 0 before.
  Games end by their rules only (chess draws by the fifty-move rule and threefold repetition are
  automatic), so ``truncated`` is always False.
- **An illegal action raises** :class:`mavgame.IllegalMoveError` (a ValueError) naming the action and the
  position, and changes nothing; with ``illegal="lose"`` it ends the game instead as a loss (reward -1,
  ``info["illegal_action"]``), for learners that do not mask.  A step after the end raises RuntimeError.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from .. import _core
from ..errors import IllegalMoveError
from . import _games

__all__ = ["MavgameEnv", "register", "env_ids"]

_WINNER = {1: 0, 2: 1}    # enum mg_result -> the player who won (3: a draw)


class MavgameEnv(gymnasium.Env):
    """One side of a mavgame game against ``opponent`` (see the module's documentation)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, game: str = "connect_four", opponent: Any = "random", player: Union[int, str] = 0,
                 render_mode: Optional[str] = None, illegal: str = "raise", **params: Any):
        from ..agents.spec import make_agent

        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if player not in (0, 1, "random"):
            raise ValueError(f"player must be 0, 1 or 'random', not {player!r}")
        if illegal not in ("raise", "lose"):
            raise ValueError(f"illegal must be 'raise' or 'lose', not {illegal!r}")
        self._compat = _games.get(game)
        self.game = game
        self.params = self._compat.params(params)
        self._start = self._compat.state(self.params)
        self.opponent = make_agent(opponent)
        self.opponent.check_game(game)
        self.player_choice = player
        self.player = 0 if player == "random" else player
        self.render_mode = render_mode
        self.illegal = illegal
        self._num_actions = self._compat.actions(self.params)
        self.action_space = spaces.Discrete(self._num_actions)
        self.observation_space = spaces.Box(0.0, 1.0, tuple(self._start.observation_shape), np.float32)
        self.mavgame_state = self._start.copy()
        self._over = False

    # -- helpers
    def _mask(self) -> np.ndarray:
        s = self.mavgame_state
        if s.is_terminal():
            return np.zeros(self._num_actions, np.int8)
        return s.legal_actions_mask()[: self._num_actions].astype(np.int8)

    def _info(self, **extra: Any) -> Dict[str, Any]:
        return {"action_mask": self._mask(), "player": self.player, **extra}

    def _reward(self) -> float:
        res = _core.State.outcome(self.mavgame_state)[0]
        if res == 0 or res == 3:
            return 0.0
        return 1.0 if _WINNER[res] == self.player else -1.0

    def _opponent_moves(self) -> int:
        from ..agents.base import resolve_move

        s = self.mavgame_state
        move = self.opponent.act(s.copy())
        a = resolve_move(s, move, f"opponent {self.opponent.name!r}")
        s.push(a)
        return a

    # -- the Gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
              ) -> Tuple[np.ndarray, Dict[str, Any]]:
        super().reset(seed=seed)
        if self.player_choice == "random":
            self.player = int(self.np_random.integers(2))
        game_seed = int(self.np_random.integers(2 ** 31))
        self.opponent.setup(self.game, seed=game_seed, player=1 - self.player)
        self.mavgame_state = self._start.copy()
        self._over = False
        reply = None
        if self.mavgame_state.to_move != self.player:
            reply = self._opponent_moves()
        self._over = self.mavgame_state.is_terminal()
        if self.render_mode == "human":
            self.render()
        return self.mavgame_state.observation_tensor(), self._info(opponent_action=reply)

    def step(self, action) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        """Play ``action``, then the opponent's reply: ``(observation, reward, terminated, truncated, info)``
        as Gymnasium's ``Env.step`` (``truncated`` is always False: games end by their rules only).  An
        illegal action raises IllegalMoveError, or with ``illegal="lose"`` ends the episode with reward -1."""
        if self._over:
            raise RuntimeError("the game is over: call reset() before step()")
        s = self.mavgame_state
        a = int(action)
        if self.illegal == "lose" and not (0 <= a < s.num_actions and s.is_legal(a)):
            self._over = True
            return (s.observation_tensor(), -1.0, True, False,
                    {"action_mask": np.zeros(self._num_actions, np.int8), "player": self.player,
                     "opponent_action": None, "illegal_action": a})
        try:
            s.push(a)      # IllegalMoveError names the action and the position; nothing changed
        except IllegalMoveError as e:
            raise IllegalMoveError(f"{e} (mask actions with info['action_mask'])") from None
        reply = None
        if not s.is_terminal():
            reply = self._opponent_moves()
        self._over = s.is_terminal()
        if self.render_mode == "human":
            self.render()
        return s.observation_tensor(), self._reward(), self._over, False, self._info(opponent_action=reply)

    def render(self) -> Optional[str]:
        """``"ansi"``: the board as text (the game class's drawing and the position's text);
        ``"human"``: printed."""
        return _games.render(self.render_mode, self.game, self.mavgame_state, gymnasium.logger.warn,
                             "render_mode='ansi'")

    def close(self) -> None:
        self.opponent.close()


def env_ids() -> list:
    """The Gymnasium ids of mavgame's games: ``["mavgame/tictactoe-v0", ...]``."""
    return [f"mavgame/{n}-v0" for n in _games.names()]


def register() -> list:
    """Register ``mavgame/<game>-v0`` for every game with Gymnasium (done on import; again does nothing)."""
    for name, env_id in zip(_games.names(), env_ids()):
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=f"{__name__}:MavgameEnv", kwargs={"game": name})
    return env_ids()


register()
