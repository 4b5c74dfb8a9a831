"""The Gardner minichess commands of the ``mavgame`` command line (registered by mavgame.cli).

    mavgame gardner-prove FEN --mate N [--side white|black]    prove or refute "side mates in <= N moves"
    mavgame gardner-prove FEN --no-loss PLIES [--side ...]      prove or refute "side cannot lose within PLIES plies"
    mavgame gardner-proof [--details] [--engine-nodes N]       check the paper's oracles (mavgame.games.gardner_oracle)
"""
from __future__ import annotations

import argparse


__all__ = ["add_commands"]


def _fail(msg: str) -> SystemExit:
    return SystemExit(f"mavgame: {msg}")


def cmd_gardner_prove(args: argparse.Namespace) -> int:
    from .games.gardner import START_FEN
    from .games.gardner_prover import Prover
    from . import _core
    fen = START_FEN if args.fen == "startpos" else args.fen
    try:
        board = _core.State("gardner", fen)
    except ValueError as e:
        raise _fail(f"FEN {args.fen!r}: {e}")
    try:
        prover = Prover(args.tt_log2, method=args.method)
        if args.mate is not None:
            r = prover.mates_in(board, args.mate, args.side, max_nodes=args.max_nodes, max_seconds=args.max_seconds)
        else:
            r = prover.cannot_lose(board, args.no_loss, args.side, max_nodes=args.max_nodes,
                                   max_seconds=args.max_seconds)
    except ValueError as e:
        raise _fail(str(e))
    print(f"{r.claim}: {r.status.value}")
    if r.mate_plies is not None:
        cut = "" if len(r.line) == r.mate_plies else " (the line's reconstruction ran out of budget)"
        what = "mate in" if args.method == "alphabeta" else "mate within (proof tree depth)"
        print(f"{what} {r.mate_plies} plies: {' '.join(r.line)}{cut}" + ("" if r.rule50_safe else
                                                                          " (the fifty-move rule may cut it)"))
    print(f"{r.nodes} nodes in {r.seconds:.3f} s ({r.nodes / max(r.seconds, 1e-9) / 1e6:.1f} M nodes/s)" +
          (f"; no mate within {r.depth_done} plies" if r.depth_done >= 0 else "") +
          ("" if r.stop == "done" else f"; stopped by the {r.stop}"))
    return 0 if not r.unknown else 3


def cmd_gardner_proof(args: argparse.Namespace) -> int:
    import json
    from .games.gardner_oracle import check, load_oracles
    try:
        lines = load_oracles(args.oracles)
    except (OSError, ValueError) as e:
        raise _fail(f"--oracles: {e}")
    for name in ("mate_nodes", "draw_nodes", "cover_nodes", "engine_nodes", "retry_moves"):
        if getattr(args, name) < 0:
            raise _fail(f"--{name.replace('_', '-')} must be >= 0 (0: no limit), not {getattr(args, name)}")
    engine = None
    if args.engine_nodes > 0:
        from .engines.fairy import find_fairy_stockfish, open_engine
        if find_fairy_stockfish() is None:
            raise _fail("--engine-nodes: Fairy-Stockfish not found (apt-get install fairy-stockfish, or --engine-nodes 0)")
        engine = open_engine()
    try:
        rep = check(lines, mate_nodes=args.mate_nodes, draw_plies=args.draw_plies, draw_nodes=args.draw_nodes,
                    cover_moves=args.cover_moves, cover_nodes=args.cover_nodes, engine=engine,
                    engine_nodes=args.engine_nodes, engine_cp=args.engine_cp, progress=not args.no_progress,
                    mate_method=args.mate_method, retry_moves=args.retry_moves, tt_log2=args.tt_log2)
    except ValueError as e:
        raise _fail(str(e))
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


def add_commands(sub) -> None:
    """Add the Gardner subcommands to the ``mavgame`` subparsers ``sub``."""
    gp = sub.add_parser("gardner-prove", help="prove or refute a bounded mate in Gardner minichess",
                        description="Prove or refute 'SIDE mates in at most N moves' (--mate N) or 'SIDE cannot "
                        "lose within N plies' (--no-loss N) with the C prover (alpha-beta with a transposition "
                        "table and iterative deepening on the distance to mate; docs/gardner.md).  Exit status "
                        "0 when decided, 3 when a budget ran out.")
    gp.add_argument("fen", help="a Gardner FEN, or 'startpos'")
    what = gp.add_mutually_exclusive_group(required=True)
    what.add_argument("--mate", type=int, metavar="N", help="moves of SIDE (1..60)")
    what.add_argument("--no-loss", type=int, metavar="PLIES", help="plies (0..120)")
    gp.add_argument("--side", default=None, choices=["white", "black"], help="default: the side to move")
    gp.add_argument("--max-nodes", type=int, default=0, help="node budget (0: none)")
    gp.add_argument("--max-seconds", type=float, default=0.0, help="time budget in seconds (0: none)")
    gp.add_argument("--tt-log2", type=int, default=0, help="table of 2^N entries (16 bytes each, 24 for pns; default 20)")
    gp.add_argument("--method", default="alphabeta", choices=["alphabeta", "pns"],
                    help="alphabeta: exhaustive, exact mate distance (default); pns: depth-bounded proof-number "
                         "search, deeper mates, the distance an upper bound (docs/gardner.md)")
    gp.set_defaults(func=cmd_gardner_prove)

    pf = sub.add_parser("gardner-proof", help="check the paper's Gardner oracles (replay, mates, coverage)",
                        description="Replay the transcribed oracles of Mhalla & Prost (mavgame/data/gardner_oracles.txt) "
                        "for legality, recovering lost piece glyphs; try each #x leaf with the prover, each drawn leaf "
                        "with a bounded 'cannot lose' proof, and check that every reply of the oracle's opponent is in "
                        "the tree or hopeless.  Prints the report (docs/gardner.md).")
    pf.add_argument("--oracles", default=None, metavar="FILE", help="oracle file (default: the shipped transcription)")
    pf.add_argument("--mate-method", default="pns", choices=["pns", "alphabeta"],
                    help="prover for the #x leaves and the uncovered replies: pns (depth-bounded proof-number "
                         "search, default) or alphabeta (exhaustive, exact distances, shallow)")
    pf.add_argument("--mate-nodes", type=int, default=2_000_000, help="prover nodes per #x leaf (default 2000000)")
    pf.add_argument("--retry-moves", type=int, default=3,
                    help="a refuted #x leaf is retried with bounds x+1 .. x+R (default 3)")
    pf.add_argument("--tt-log2", type=int, default=20, help="prover tables of 2^N entries (default 20)")
    pf.add_argument("--draw-plies", type=int, default=8, help="plies of the 'cannot lose' proof per drawn leaf (default 8)")
    pf.add_argument("--draw-nodes", type=int, default=500_000, help="prover nodes per drawn leaf (default 500000)")
    pf.add_argument("--cover-moves", type=int, default=3,
                    help="a reply missing from the tree is hopeless if the oracle's side mates within this many moves "
                         "(default 3)")
    pf.add_argument("--cover-nodes", type=int, default=200_000, help="prover nodes per missing reply (default 200000)")
    pf.add_argument("--engine-nodes", type=int, default=0,
                    help="also let Fairy-Stockfish judge the missing replies the prover leaves open, with this many "
                         "nodes each (default 0: no engine)")
    pf.add_argument("--engine-cp", type=int, default=300,
                    help="the engine judges a reply hopeless at this score for the oracle's side (default 300)")
    pf.add_argument("--details", action="store_true", help="also list every recovery, problem, leaf and open reply")
    pf.add_argument("--json", default=None, metavar="FILE", help="write the full report as JSON")
    pf.add_argument("--no-progress", action="store_true", help="no progress bar")
    pf.set_defaults(func=cmd_gardner_proof)


