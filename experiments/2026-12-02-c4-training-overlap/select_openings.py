"""The openings of the real-play rounds (rounds 2 to 4 of experiments/2026-11-27-c4-mav-real-play) whose
games can share positions with the league's games beyond the opening: a round opening is kept when the
position it ends in (4 or 6 stones), or its mirror image, occurs in a league game at that ply.  Writes one
openings file per (round, opponent) with the round's opening names (``random-N``), so that a match with the
round's seed gives every game the per-game seed it had in the round (``League``'s seeds hash the seed and
the game's key, which holds the opening name)::

    python experiments/2026-12-02-c4-training-overlap/select_openings.py runs/c4-overlap/*.sqlite --out runs/c4-replay
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mavgame import _core
from mavgame.analysis.training_overlap import canonical_key, game_positions, read_games
from mavgame.play.openings import random_openings, write_openings

# (round, opponent, plies, openings, seed): the rounds' match commands (c4_real_play.sh; round 1 is the
# fifth run's model, which was never shipped, so it cannot be replayed)
SETS = [(2, "mcts-100", 4, 1000, 21), (2, "mcts-400", 4, 500, 22), (3, "mcts-100", 6, 1000, 61),
        (3, "mcts-400", 6, 500, 62), (4, "mcts-100", 6, 1000, 71), (4, "mcts-400", 6, 500, 72)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    league = {}
    for rec in read_games(args.stores):
        for ply, text, _mover, _opening in game_positions(rec):
            league.setdefault(ply, set()).add(canonical_key("connect_four", text, mirror=True))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for rnd, opp, plies, n, seed in SETS:
        keep = []
        for op in random_openings("connect_four", plies, n, seed=seed):
            s = _core.State("connect_four", None, 0, 0)
            for m in op.moves:
                s.push(m)
            if canonical_key("connect_four", s.text(), mirror=True) in league.get(plies, ()):
                keep.append(op)
        path = Path(args.out) / f"round{rnd}-{opp}.txt"
        write_openings(str(path), keep, header=f"round {rnd} against {opp}: random:{plies}:{n} seed {seed}, "
                                                f"the {len(keep)} openings whose end position is in the league")
        print(f"{path}: {len(keep)} of {n} openings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
