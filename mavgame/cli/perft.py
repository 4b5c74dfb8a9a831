"""``mavgame perft``: count the leaf nodes of the legal move tree (with ``--divide`` per move)."""
from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Optional

from .options import (fail,
                      int_type, make_state)

DESCRIPTION = 'Count the leaf nodes of the legal move tree to a depth (move generator check).'


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="chess", help="game name (see `mavgame games`; default: chess)")
    p.add_argument("--fen", default=None, help="start position in the game's own text (FEN for chess)")
    p.add_argument("--depth", type=int_type(0), default=5, help="depth in plies (default: 5)")
    p.add_argument("--board-size", type=int, default=0, help="board size for sized games such as hex")
    p.add_argument("--divide", action="store_true", help="print the count below each legal move")


def estimate_seconds(state, depth: int, probe: float = 0.05) -> float:
    """A rough time for ``state.perft(depth)``: perft of growing depth until one takes ``probe`` seconds,
    then that time times the last branching factor for every ply left (0 when the probe reaches depth)."""
    prev, k = 1, 0
    while k < depth:
        t = time.perf_counter()
        n = state.perft(k + 1)
        dt = time.perf_counter() - t
        k += 1
        if n == 0:           # the tree ends before `depth` (every game over)
            return 0.0
        if dt >= probe:
            if k == depth:
                return 0.0
            return dt * max(n / max(prev, 1), 1.0) ** (depth - k)
        prev = n
    return 0.0


def _warn_later(est: float, depth: int, after: float = 0.5) -> threading.Timer:
    """A started timer that prints the long-perft warning after ``after`` seconds (cancel it when the
    perft ends first: a perft that ends at once, such as one deeper than the game lasts, says nothing)."""
    when = f"about {est / 3600:.1f} hours" if est > 3600 else f"about {est:.0f} s"
    if est > 86400 * 365:
        when = "more than a year"
    msg = f"mavgame: perft {depth} of this position may take {when} on one core; Ctrl-C stops it"
    t = threading.Timer(after, lambda: print(msg, file=sys.stderr, flush=True))
    t.daemon = True
    t.start()
    return t


def cmd_perft(args: argparse.Namespace) -> int:
    state = make_state(args.game, args.fen, args.board_size, 0)
    warning: Optional[threading.Timer] = None
    start = time.perf_counter()
    try:
        if 4 < args.depth <= 64:   # deeper is refused by perft itself, naming the bound
            est = estimate_seconds(state, args.depth)
            if est > 10:
                warning = _warn_later(est, args.depth)
        t0 = time.perf_counter()
        if args.divide:
            acts, counts = state.perft_divide(args.depth)
        else:
            total = state.perft(args.depth)
    except ValueError as e:
        raise fail(f"--depth {args.depth}: {e}")
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"perft {args.depth} stopped after {time.perf_counter() - start:.1f} s, "
                                "before it finished (no count)") from None
    finally:
        if warning is not None:
            warning.cancel()
    dt = time.perf_counter() - t0
    if args.divide:
        for a, c in sorted(zip(acts.tolist(), counts.tolist()), key=lambda x: state.action_to_str(x[0])):
            print(f"{state.action_to_str(a)}: {c}")
        total = int(counts.sum())
        print(f"\nNodes searched: {total}")
    else:
        print(f"perft({args.depth}) = {total}")
    nps = total / dt if dt > 0 else float("inf")
    print(f"time {dt:.3f} s, {nps / 1e6:.1f} M nodes/s", file=sys.stderr)
    return 0


run = cmd_perft
