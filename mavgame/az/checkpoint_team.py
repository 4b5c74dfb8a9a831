"""A team of separately trained single AlphaZero networks: the homogeneous-team control of the AZdb
experiment (issue 54).

An AZdb team (:class:`mavgame.agents.alphazero.AZdbTeam`) is one network whose players differ by a latent
and, by design, by the diversity reward.  :class:`CheckpointTeam` puts K single AlphaZero checkpoints
(``mavgame az`` without ``--players``; e.g. the same recipe run with K seeds) side by side as players
0..K-1, each with the same search as an AZdb player (:class:`mavgame.search.mcts.MCTS` with the network's
policy as prior, no root noise, first-play urgency 0, AlphaZero's c(s); a fresh tree for every search).  Its :meth:`CheckpointTeam.searches`
answers like ``AZdbTeam.searches``, so :func:`mavgame.az.puzzles.score_team` scores it with the same
max-over-latents and sub-additive rules: whatever such a team gains comes from several tries, not from
players that were made to differ.

:func:`make_team`: one path is an AZdb checkpoint, several (a list, or one string separated by commas)
a :class:`CheckpointTeam`.  Needs PyTorch (imported when a team is built).
"""
from __future__ import annotations

import os
from typing import List, Optional, Sequence, Union

import numpy as np

__all__ = ["CheckpointTeam", "make_team", "split_checkpoints"]


def split_checkpoints(spec: Union[str, Sequence[str]]) -> List[str]:
    """The checkpoint paths of ``spec``: a sequence of paths, or one string of paths separated by commas
    (ValueError on an empty entry, naming the spec)."""
    parts = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    if not parts or any(not p for p in parts):
        raise ValueError(f"a team needs checkpoint paths separated by commas, not {spec!r} (an empty entry)")
    return parts


class CheckpointTeam:
    """Players 0..K-1: the single AlphaZero networks of ``checkpoints`` (K >= 2 distinct files of one
    game), each searching ``sims`` simulations with the search of an AZdb player.  ``players``, ``game``,
    ``checkpoints``; :meth:`search` / :meth:`searches` as :class:`mavgame.agents.alphazero.AZdbTeam`'s.
    ValueError (naming the file) for fewer than two checkpoints, a repeated file, an AZdb team checkpoint,
    a file of another game or ``sims`` < 1; FileNotFoundError for a missing file."""

    def __init__(self, checkpoints: Union[str, Sequence[str]], sims: int = 100, *, device: str = "cpu",
                 c_base: float = 19652.0, c_init: float = 1.25, seed: int = 0):
        from ..agents.alphazero import AZEvaluator, load_network
        from ..search.mcts import MCTS
        paths = split_checkpoints(checkpoints)
        if len(paths) < 2:
            raise ValueError(f"a team of checkpoints needs at least 2 single AlphaZero checkpoints, got {paths!r}")
        seen = {}
        for p in paths:
            key = os.path.realpath(p)
            if key in seen:
                raise ValueError(f"checkpoint {p!r} is in the team twice (as {seen[key]!r}): its players would be "
                                 "one network")
            seen[key] = p
        if isinstance(sims, bool) or not isinstance(sims, (int, np.integer)) or sims < 1:
            raise ValueError(f"sims must be an int >= 1, not {sims!r}")
        nets = [load_network(p, device) for p in paths]
        games = {n.game for n in nets}
        if len(games) > 1:
            raise ValueError("the team's checkpoints are of different games: "
                             + ", ".join(f"{p!r} ({n.game})" for p, n in zip(paths, nets)))
        self.checkpoints = paths
        self.players = len(paths)
        self.game = nets[0].game
        self.sims = int(sims)
        self.mcts = [MCTS(AZEvaluator(net, device), num_simulations=self.sims, prior="policy", eps=0.0, fpu=0.0,
                          c_base=float(c_base), c_init=float(c_init), value_range=(-1.0, 1.0), seed=int(seed) + i,
                          reuse_tree=False)
                     for i, net in enumerate(nets)]

    def search(self, player: int, state):
        """Player ``player``'s search of ``state``: its :class:`mavgame.az.subadditive.PlayerSearch`."""
        from .subadditive import PlayerSearch
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < self.players:
            raise ValueError(f"player {player!r} is not in [0, {self.players})")
        if state.game != self.game:
            raise ValueError(f"the team plays {self.game}, not {state.game}")
        r = self.mcts[int(player)].search(state)
        return PlayerSearch(np.asarray(r.actions), np.asarray(r.visits), np.asarray(r.q), np.asarray(r.u))

    def searches(self, state) -> list:
        """Every player's search of ``state``, player 0 first."""
        return [self.search(i, state) for i in range(self.players)]


def make_team(spec: Union[str, Sequence[str]], sims: int = 100, *, rewards: Optional[str] = None,
              device: str = "cpu"):
    """The team of ``spec``: one path, an AZdb checkpoint (:class:`mavgame.agents.alphazero.AZdbTeam`,
    ``rewards`` its players' search value, default ``path``); several paths (a sequence or comma-separated),
    a :class:`CheckpointTeam`, where ``rewards`` must be left out (single networks have no intrinsic reward)."""
    paths = split_checkpoints(spec)
    if len(paths) == 1:
        from ..agents.alphazero import AZdbTeam
        return AZdbTeam(paths[0], sims, device=device, rewards=rewards or "path")
    if rewards is not None:
        raise ValueError(f"rewards={rewards!r} applies to an AZdb team (one checkpoint), not to a team of "
                         f"{len(paths)} single AlphaZero checkpoints")
    return CheckpointTeam(paths, sims, device=device)
