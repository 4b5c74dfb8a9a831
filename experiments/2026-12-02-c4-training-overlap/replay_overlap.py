"""The overlap with the replayed real-play games taken as data without their annotation (the README's
estimate while replay_rounds.sh's annotation step had not finished): every position of the replayed games
that the rounds' 1 % validation split would put in ``train`` counts as trained on, including the positions
over the rounds' 2M-node budget that their data left out (about 10 % of a round's positions, most near ply 8),
so this part is an upper estimate of the replayed component::

    python experiments/2026-12-02-c4-training-overlap/replay_overlap.py runs/c4-overlap/*.sqlite \\
        --replay runs/c4-replay/round*.sqlite --data empty-board=runs/h54-c4data-full \\
        --data rounds-openings=runs/c4-rounds-openings --out overlap.json --plot overlap.png
"""
from __future__ import annotations

import argparse
import json
import sys

from mavgame.analysis.training_overlap import (DataSource, canonical_key, game_positions, key_hash, load_data,
                                               overlap, plot, read_games)
from mavgame.datasets.records import position_split


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="+")
    ap.add_argument("--replay", nargs="+", required=True, help="the replayed rounds' match stores")
    ap.add_argument("--data", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--out", required=True)
    ap.add_argument("--plot")
    args = ap.parse_args(argv)
    games = read_games(args.games)
    sources = [load_data(s, "connect_four") for s in args.data]
    rep_src = DataSource("replay (unannotated)", ",".join(args.replay), "connect_four", mirror=set())
    for rec in read_games(args.replay):
        for _ply, text, _mover, _opening in game_positions(rec):
            if position_split(text, 0.01) == "train":
                rep_src.records += 1
                rep_src.exact.add(key_hash(canonical_key("connect_four", text)))
                rep_src.mirror.add(key_hash(canonical_key("connect_four", text, mirror=True)))
    rep = overlap(games, sources + [rep_src])
    rep["games_files"] = list(args.games)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(rep, f, indent=1)
    ov = rep["overall"]
    for k in ("played", "all"):
        print(k, {kind: ov[k][kind] for kind in ("exact", "mirror")}, ov[k]["positions"])
    for ph in rep["phases"]:
        print(ph["phase"], ph["positions"], ph["exact"], ph["mirror"])
    print(" ".join(f"{r['ply']}:{r['exact']['fraction']:.3f}/{r['mirror']['fraction']:.3f}" for r in rep["by_ply"][:20]))
    if args.plot:
        plot(rep, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
