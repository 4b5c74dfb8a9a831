"""AlphaZero in mavgame: self-play with the C MCTS and batched network calls, a replay buffer, a
residual network and its training loop, checkpoints that resume exactly; the agents that play with its
networks in leagues are :mod:`mavgame.agents.alphazero` (``az:``, ``azdb:``).

- :mod:`mavgame.az.selfplay` - many games at once through ``mavgame._core.AZSelfPlay``: C gathers the
  leaves of every game into one NumPy batch, the network runs once on it, C backs the answers up
  (no NumPy, no torch: any ``evaluate(obs) -> (logits, values)`` function plugs in).
- :mod:`mavgame.az.replay` - the replay buffer (NumPy ring).
- :mod:`mavgame.az.network` - the residual policy/value network (needs ``torch``).
- :mod:`mavgame.az.train` - :class:`AZConfig`, :class:`AZTrainer` (needs ``torch``).
- :mod:`mavgame.az.shards` - self-play in fixed shards (``selfplay_shards``), here or on Ray actors.
- :mod:`mavgame.az.azdb` - AZdb pieces: latent planes, diversity features and reward, reward weights,
  intrinsic value targets (NumPy); :mod:`mavgame.az.team` - team self-play values and training
  positions (torch); :mod:`mavgame.az.matchmaking` - the paper's six matchmakers (PSRO-Nash and the rest);
  :mod:`mavgame.az.lookup` - the per-opening player table; :mod:`mavgame.az.subadditive`
  - the selection rules of sub-additive planning; :mod:`mavgame.az.puzzles` - puzzle suites and scoring;
  :mod:`mavgame.az.checkpoint_team` - a team of separate single networks (the homogeneous-team control).
- ``mavgame az`` (``--players N`` for an AZdb team) and ``mavgame az-puzzles`` - the commands.

See docs/alphazero.md.  Importing this package does not import torch.
"""
from .replay import ReplayBuffer
from .selfplay import SelfPlayResult, play_games

__all__ = ["ReplayBuffer", "SelfPlayResult", "play_games"]
