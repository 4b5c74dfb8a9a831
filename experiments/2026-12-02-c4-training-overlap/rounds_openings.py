"""The opening positions of the four real-play rounds of the shipped Connect Four MAV's training data
(experiments/2026-11-27-c4-mav-real-play), rebuilt exactly: the rounds' openings are drawn from their seeds
alone (``random:4:1000`` seed 21 and ``random:4:500`` seed 22 in rounds 1 and 2; ``random:6:1000`` /
``random:6:500`` seeds 61 / 62 in round 3, 71 / 72 in round 4), so every position of them up to the opening's
last move was in the round's games whatever the models played. Each is annotated by the same annotator as
the rounds' data (the perfect solver; positions of at most 7 stones come from the shipped opening book) and
split by the same state hash (``--val-fraction 0.01``), so the train split holds exactly the opening
positions the model trained on::

    python experiments/2026-12-02-c4-training-overlap/rounds_openings.py runs/c4-rounds-openings
"""
from __future__ import annotations

import sys

from mavgame import _core
from mavgame.annotators.connect_four import connect_four_annotator
from mavgame.datasets.store import PositionWriter
from mavgame.games.connect_four import ConnectFour
from mavgame.play.openings import random_openings

ROUNDS = [(4, 1000, 21), (4, 500, 22), (6, 1000, 61), (6, 500, 62), (6, 1000, 71), (6, 500, 72)]


def main(out: str) -> int:
    annotate = connect_four_annotator({"weak": 1, "max_nodes": 0, "tt_log2": 20})
    seen = set()
    with PositionWriter(out, "connect_four", val_fraction=0.01,
                        info={"source": "openings of the real-play rounds", "rounds": ROUNDS}) as w:
        for plies, n, seed in ROUNDS:
            for op in random_openings("connect_four", plies, n, seed=seed):
                s, prev = _core.State("connect_four", None, 0, 0), None
                for i in range(len(op.moves) + 1):
                    text = s.text()
                    if text not in seen:
                        seen.add(text)
                        values, best = annotate(ConnectFour(text))
                        w.add({"state": text, "prev_state": prev[0] if prev else None,
                               "prev_action": prev[1] if prev else None, "values": values, "best": best,
                               "result": "*", "ply": s.ply})
                    if i < len(op.moves):
                        prev = (text, op.moves[i])
                        s.push(op.moves[i])
    print(f"{len(seen)} distinct opening positions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
