"""Analyses of trained models and stored games, each a module run with ``python -m mavgame.analysis.NAME``.

They use every layer below (models, data sets, agents, result stores), as the command line does:

- :mod:`.mav_eval`: the paper's metrics of a MAV model on annotated positions, per game phase
- :mod:`.mav_is_eval`: MAV-IS traces of held-out trees: tree shape, values, child states
- :mod:`.hard_positions`: the positions a MAV model plays wrong (hard-example mining for a fine-tune)
- :mod:`.c4_play_positions`: Connect Four positions of stored games, solver-annotated, as a position set
- :mod:`.c4_blunders`: an agent's mistakes in stored Connect Four games, by the solver
- :mod:`.elo_vs_sims`: Elo against simulations from a league store (Table 1 / Figure 7)
- :mod:`.mav_is_ladder`: every MAV-IS shape against the searchless MAV, pooled over stores
- :mod:`.policy_accuracy`: a chess policy network's move matching with games-bootstrap intervals, by move
  number or phase (used by ``mavgame policy accuracy``)
"""
