"""The IDP report's chess policy network (shared/papers/002; docs/policy.md), searched by ``guided_ab``.

- :mod:`mavgame.policy.network`: the PyTorch network, its supervised training from PGN, move matching
  (importing it needs PyTorch)
- :mod:`mavgame.policy.inputs`: the report's alternative input representations, computed inside the network
- :mod:`mavgame.policy.rl`: its reinforcement-learning stage (self-play against a fixed opponent; PyTorch)
- :mod:`mavgame.policy.export`: the exported file of the native engine and loading it back (no PyTorch)

The agents that use the network are in :mod:`mavgame.agents.policy`. Nothing is imported here, so that the
torch-free export module loads without PyTorch.
"""
