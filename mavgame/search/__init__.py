"""Search over the C core: MCTS (the C engine with Python evaluators) and batched evaluators."""
