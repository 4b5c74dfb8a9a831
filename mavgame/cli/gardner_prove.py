"""``mavgame gardner-prove``: prove or refute a bounded mate (or a bounded no-loss) in Gardner minichess
(docs/gardner.md)."""
from __future__ import annotations

import argparse

from .options import fail

DESCRIPTION = ("Prove or refute 'SIDE mates in at most N moves' (--mate N) or 'SIDE cannot lose within N plies' "
               '(--no-loss N) with the C prover (alpha-beta with a transposition table and iterative deepening '
               'on the distance to mate; docs/gardner.md).  Exit status 0 when decided, 3 when a budget ran out.')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("fen", help="a Gardner FEN, or 'startpos'")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--mate", type=int, metavar="N", help="moves of SIDE (1..60)")
    what.add_argument("--no-loss", type=int, metavar="PLIES", help="plies (0..120)")
    p.add_argument("--side", default=None, choices=["white", "black"], help="default: the side to move")
    p.add_argument("--max-nodes", type=int, default=0, help="node budget (0: none)")
    p.add_argument("--max-seconds", type=float, default=0.0, help="time budget in seconds (0: none)")
    p.add_argument("--tt-log2", type=int, default=0, help="table of 2^N entries (16 bytes each, 24 for pns; default 20)")
    p.add_argument("--method", default="alphabeta", choices=["alphabeta", "pns"],
                    help="alphabeta: exhaustive, exact mate distance (default); pns: depth-bounded proof-number "
                         "search, deeper mates, the distance an upper bound (docs/gardner.md)")


def cmd_gardner_prove(args: argparse.Namespace) -> int:
    from ..games.gardner import START_FEN
    from ..games.gardner_prover import Prover
    from .. import _core
    fen = START_FEN if args.fen == "startpos" else args.fen
    try:
        board = _core.State("gardner", fen)
    except ValueError as e:
        raise fail(f"FEN {args.fen!r}: {e}")
    try:
        prover = Prover(args.tt_log2, method=args.method)
        if args.mate is not None:
            r = prover.mates_in(board, args.mate, args.side, max_nodes=args.max_nodes, max_seconds=args.max_seconds)
        else:
            r = prover.cannot_lose(board, args.no_loss, args.side, max_nodes=args.max_nodes,
                                   max_seconds=args.max_seconds)
    except ValueError as e:
        raise fail(str(e))
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


run = cmd_gardner_prove
