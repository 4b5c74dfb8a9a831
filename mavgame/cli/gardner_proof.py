"""``mavgame gardner-proof``: check the paper's transcribed Gardner oracles (docs/gardner.md)."""
from __future__ import annotations

import argparse

from .options import fail

DESCRIPTION = ('Replay the transcribed oracles of Mhalla & Prost (mavgame/data/gardner_oracles.txt) for '
               'legality, recovering lost piece glyphs; try each #x leaf with the prover, each drawn leaf with a '
               "bounded 'cannot lose' proof, and check that every reply of the oracle's opponent is in the tree "
               'or hopeless.  Prints the report (docs/gardner.md).')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--oracles", default=None, metavar="FILE", help="oracle file (default: the shipped transcription)")
    p.add_argument("--mate-method", default="pns", choices=["pns", "alphabeta"],
                    help="prover for the #x leaves and the uncovered replies: pns (depth-bounded proof-number "
                         "search, default) or alphabeta (exhaustive, exact distances, shallow)")
    p.add_argument("--mate-nodes", type=int, default=2_000_000, help="prover nodes per #x leaf (default 2000000)")
    p.add_argument("--retry-moves", type=int, default=3,
                    help="a refuted #x leaf is retried with bounds x+1 .. x+R (default 3)")
    p.add_argument("--tt-log2", type=int, default=20, help="prover tables of 2^N entries (default 20)")
    p.add_argument("--draw-plies", type=int, default=8, help="plies of the 'cannot lose' proof per drawn leaf (default 8)")
    p.add_argument("--draw-nodes", type=int, default=500_000, help="prover nodes per drawn leaf (default 500000)")
    p.add_argument("--cover-moves", type=int, default=3,
                    help="a reply missing from the tree is hopeless if the oracle's side mates within this many moves "
                         "(default 3)")
    p.add_argument("--cover-nodes", type=int, default=200_000, help="prover nodes per missing reply (default 200000)")
    p.add_argument("--engine-nodes", type=int, default=0,
                    help="also let Fairy-Stockfish judge the missing replies the prover leaves open, with this many "
                         "nodes each (default 0: no engine)")
    p.add_argument("--engine-cp", type=int, default=300,
                    help="the engine judges a reply hopeless at this score for the oracle's side (default 300)")
    p.add_argument("--details", action="store_true", help="also list every recovery, problem, leaf and open reply")
    p.add_argument("--json", default=None, metavar="FILE", help="write the full report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def cmd_gardner_proof(args: argparse.Namespace) -> int:
    import json
    from ..games.gardner_oracle import check, load_oracles
    try:
        lines = load_oracles(args.oracles)
    except (OSError, ValueError) as e:
        raise fail(f"--oracles: {e}")
    for name in ("mate_nodes", "draw_nodes", "cover_nodes", "engine_nodes", "retry_moves"):
        if getattr(args, name) < 0:
            raise fail(f"--{name.replace('_', '-')} must be >= 0 (0: no limit), not {getattr(args, name)}")
    engine = None
    if args.engine_nodes > 0:
        from ..engines.fairy import find_fairy_stockfish, open_engine
        if find_fairy_stockfish() is None:
            raise fail("--engine-nodes: Fairy-Stockfish not found (apt-get install fairy-stockfish, or --engine-nodes 0)")
        engine = open_engine()
    try:
        rep = check(lines, mate_nodes=args.mate_nodes, draw_plies=args.draw_plies, draw_nodes=args.draw_nodes,
                    cover_moves=args.cover_moves, cover_nodes=args.cover_nodes, engine=engine,
                    engine_nodes=args.engine_nodes, engine_cp=args.engine_cp, progress=not args.no_progress,
                    mate_method=args.mate_method, retry_moves=args.retry_moves, tt_log2=args.tt_log2)
    except ValueError as e:
        raise fail(str(e))
    finally:
        if engine is not None:
            engine.close()
    print(rep.text() if args.details else rep.text().split("\n\n", 1)[0])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": rep.summary(), "recoveries": rep.recoveries, "problems": rep.problems,
                       "mate_leaves": rep.mate_leaves, "draw_leaves": rep.draw_leaves, "replies": rep.coverage}, f,
                      indent=1)
    return 0


run = cmd_gardner_proof
