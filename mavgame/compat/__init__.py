"""Adapters that run mavgame's games inside the RL ecosystem (docs/compat.md).

Each module needs its library and is imported on its own (this package imports none of them):

- :mod:`mavgame.compat.openspiel`: every game registered as an OpenSpiel (``pyspiel``) Python game,
  ``pyspiel.load_game("mavgame_connect_four")``, so that OpenSpiel's algorithms (MCTS, minimax, CFR,
  evaluate_bots, ...) run on mavgame's C rules;
- :mod:`mavgame.compat.pettingzoo`: a PettingZoo AEC environment, ``env(game="connect_four")``;
- :mod:`mavgame.compat.gymnasium`: a Gymnasium single-agent environment against a mavgame agent,
  ``MavgameEnv("connect_four", opponent="uct:sims=50")``.

The three share :mod:`mavgame.compat._games` (which games, their parameters, their core states), so a
game's action ids, observation planes and rewards are the same in all of them, and the same as mavgame's
own (``State.legal_actions()``, ``State.observation_tensor()``).
"""

__all__ = ["openspiel", "pettingzoo", "gymnasium"]
