"""The ``mavgame`` command line.

    mavgame games                         list the games of the C core
    mavgame perft --game chess --depth 5  count leaf nodes (with --divide per move)
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

from . import _core


def _make_state(game: str, text: Optional[str], board_size: int, flags: int) -> "_core.State":
    try:
        return _core.State(game, text, board_size, flags)
    except ValueError as e:
        raise SystemExit(f"mavgame: {e}")


def cmd_games(args: argparse.Namespace) -> int:
    for name in _core.games():
        print(name)
    return 0


def cmd_perft(args: argparse.Namespace) -> int:
    state = _make_state(args.game, args.fen, args.board_size, 0)
    if args.divide:
        t0 = time.perf_counter()
        acts, counts = state.perft_divide(args.depth)
        dt = time.perf_counter() - t0
        for a, c in sorted(zip(acts.tolist(), counts.tolist()), key=lambda x: state.action_to_str(x[0])):
            print(f"{state.action_to_str(a)}: {c}")
        total = int(counts.sum())
        print(f"\nNodes searched: {total}")
    else:
        t0 = time.perf_counter()
        total = state.perft(args.depth)
        dt = time.perf_counter() - t0
        print(f"perft({args.depth}) = {total}")
    nps = total / dt if dt > 0 else float("inf")
    print(f"time {dt:.3f} s, {nps / 1e6:.1f} M nodes/s", file=sys.stderr)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from .model import command
    return command.run(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mavgame", description="Planning with language models in board games.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("games", help="list the games of the C core")
    g.set_defaults(func=cmd_games)

    pf = sub.add_parser("perft", help="count the leaf nodes of the legal move tree",
                        description="Count the leaf nodes of the legal move tree to a depth (move generator check).")
    pf.add_argument("--game", default="chess", help="game name (see `mavgame games`; default: chess)")
    pf.add_argument("--fen", default=None, help="start position in the game's own text (FEN for chess)")
    pf.add_argument("--depth", type=int, default=5, help="depth in plies (default: 5)")
    pf.add_argument("--board-size", type=int, default=0, help="board size for sized games such as hex")
    pf.add_argument("--divide", action="store_true", help="print the count below each legal move")
    pf.set_defaults(func=cmd_perft)

    from .model import command as _train_command
    tr = sub.add_parser("train", help="generate annotated positions and train a MAV model (needs PyTorch)",
                        description="Generate engine-annotated positions (epsilon-greedy games), train a MAV "
                        "transformer on them, export it (safetensors) and report the held-out metrics. "
                        "Resumes from OUT/checkpoint.pt when it exists.")
    _train_command.add_arguments(tr)
    tr.set_defaults(func=cmd_train)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
