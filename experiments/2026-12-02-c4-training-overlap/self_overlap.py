"""How much a second set of games of the same kind would add to the overlap (the README's "What the
missing real-play positions would add"): the league's games are split by opening into two halves (openings
of even and of odd index in name order), and the positions played in each half are looked up among all the
positions of the other half, by ply, with the same keys as ``mavgame.analysis.training_overlap``::

    python experiments/2026-12-02-c4-training-overlap/self_overlap.py runs/c4-overlap/mav-vs-mcts100.sqlite \
        --out experiments/2026-12-02-c4-training-overlap/self_overlap.json

The real-play rounds of the shipped model's data were 12,000 games of this kind (an earlier model's searchless
MAV against basic MCTS, from random 4- and 6-ply openings), 40 times as many as one half here, so this is an
indication of the shape of what they add, not a measurement of it.
"""
from __future__ import annotations

import argparse
import json
import sys

from mavgame.analysis.training_overlap import DataSource, canonical_key, game_positions, key_hash, overlap, read_games


def source(name: str, games) -> DataSource:
    """A DataSource holding every position of ``games`` (openings and the finished position included)."""
    src = DataSource(name, name, games[0].game, mirror=set())
    for rec in games:
        for _ply, text, _mover, _opening in game_positions(rec):
            src.records += 1
            src.exact.add(key_hash(canonical_key(rec.game, text)))
            src.mirror.add(key_hash(canonical_key(rec.game, text, mirror=True)))
    return src


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    games = read_games(args.stores)
    names = sorted({g.opening for g in games})
    half = {n: i % 2 for i, n in enumerate(names)}
    a = [g for g in games if half[g.opening] == 0]
    b = [g for g in games if half[g.opening] == 1]
    out = {}
    for label, played, other in (("odd in even", b, a), ("even in odd", a, b)):
        rep = overlap(played, [source(label, other)], n_boot=1000)
        out[label] = {"games": len(played), "other_games": len(other), "overall": rep["overall"],
                      "by_ply": [{"ply": r["ply"], "positions": r["positions"], "exact": r["exact"]["fraction"],
                                  "mirror": r["mirror"]["fraction"]} for r in rep["by_ply"]]}
        ov = rep["overall"]["played"]
        print(f"{label}: {len(played)} games in {len(other)}: played positions exact "
              f"{ov['exact']['fraction']} [{ov['exact']['low']}, {ov['exact']['high']}], mirror "
              f"{ov['mirror']['fraction']} [{ov['mirror']['low']}, {ov['mirror']['high']}]")
        print("  by ply (exact / mirror): " + ", ".join(
            f"{r['ply']}: {r['exact']['fraction']:.2f}/{r['mirror']['fraction']:.2f}" for r in rep["by_ply"][4:16]))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
