"""The Gardner minichess commands of the ``mavgame`` command line (registered by mavgame.cli).

    mavgame gardner-prove FEN --mate N [--side white|black]    prove or refute "side mates in <= N moves"
    mavgame gardner-prove FEN --no-loss PLIES [--side ...]      prove or refute "side cannot lose within PLIES plies"
"""
from __future__ import annotations

import argparse


__all__ = ["add_commands"]


def _fail(msg: str) -> SystemExit:
    return SystemExit(f"mavgame: {msg}")


def cmd_gardner_prove(args: argparse.Namespace) -> int:
    from .games.gardner import START_FEN
    from .gardner_prover import Prover
    from . import _core
    fen = START_FEN if args.fen == "startpos" else args.fen
    try:
        board = _core.State("gardner", fen)
    except ValueError as e:
        raise _fail(f"FEN {args.fen!r}: {e}")
    try:
        prover = Prover(args.tt_log2)
        if args.mate is not None:
            r = prover.mates_in(board, args.mate, args.side, max_nodes=args.max_nodes, max_seconds=args.max_seconds)
        else:
            r = prover.cannot_lose(board, args.no_loss, args.side, max_nodes=args.max_nodes,
                                   max_seconds=args.max_seconds)
    except ValueError as e:
        raise _fail(str(e))
    print(f"{r.claim}: {r.status.value}")
    if r.mate_plies is not None:
        print(f"mate in {r.mate_plies} plies: {' '.join(r.line)}" + ("" if r.rule50_safe else
                                                                     " (the fifty-move rule may cut it)"))
    print(f"{r.nodes} nodes in {r.seconds:.3f} s ({r.nodes / max(r.seconds, 1e-9) / 1e6:.1f} M nodes/s); "
          f"no mate within {r.depth_done} plies" + ("" if r.stop == "done" else f"; stopped by the {r.stop}"))
    return 0 if not r.unknown else 3


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
    gp.add_argument("--tt-log2", type=int, default=0, help="table of 2^N entries of 16 bytes (default 20)")
    gp.set_defaults(func=cmd_gardner_prove)


