"""``mavgame book build|info``: the Connect Four solver's opening book."""
from __future__ import annotations

import argparse
import json

from .. import _core
from .options import (fail)

DESCRIPTION = ('Exact scores of every Connect Four position up to a ply (a position and its mirror once), for '
               'the solver: see mavgame.games.c4_book.  `book build` resumes from OUT.partial when it exists.')


def add_arguments(p: argparse.ArgumentParser) -> None:
    bsub = p.add_subparsers(dest="book_cmd", required=True)
    bb = bsub.add_parser("build", help="solve every position up to --ply stones and write the book")
    bb.add_argument("--ply", type=int, required=True, help="deepest ply (stones on the board) of the book")
    bb.add_argument("--out", required=True, help="the book file to write (progress goes to OUT.partial)")
    bb.add_argument("--root", default="", help="only the positions below these moves (columns 1..7, e.g. 4453)")
    bb.add_argument("--tt-log2", type=int, default=24, help="solver table of 2^N 8-byte entries (default: 24)")
    bb.add_argument("--max-seconds", type=float, default=None,
                    help="stop after about this long (run again to continue)")
    bb.add_argument("--shard", default=None, metavar="I/N",
                    help="solve only shard I of N of the deepest ply (one process per core; OUT.partial.I); "
                    "a run without --shard then finishes the book")
    bb.add_argument("--no-progress", action="store_true", help="no progress bar")
    bb.set_defaults(func=cmd_book_build)
    bi = bsub.add_parser("info", help="check a book file and print its plies and size")
    bi.add_argument("file", help="a book file")
    bi.set_defaults(func=cmd_book_info)


def cmd_book_build(args: argparse.Namespace) -> int:
    from ..games.c4_book import build_book, parse_shard
    try:
        shard = parse_shard(args.shard) if args.shard else None
        stats = build_book(args.ply, args.out, root=args.root, tt_log2=args.tt_log2, progress=not args.no_progress,
                           max_seconds=args.max_seconds, shard=shard)
    except ValueError as e:
        raise fail(f"book build: {e}")
    print(json.dumps(stats, sort_keys=True))
    return 0


def cmd_book_info(args: argparse.Namespace) -> int:
    from ..games.c4_book import read_book
    try:
        data = read_book(args.file)
    except (OSError, ValueError) as e:
        raise fail(f"book info: {e}")
    lo, hi, n = _core.c4_book_info(data)
    print(f"{args.file}: Connect Four book, plies {lo}..{hi}, {n} positions, {len(data)} bytes")
    return 0


def run(args: argparse.Namespace) -> int:
    return cmd_book_build(args) if args.book_cmd == "build" else cmd_book_info(args)
