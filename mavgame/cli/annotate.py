"""``mavgame annotate``: engine values for every legal move of chess (or Gardner) positions."""
from __future__ import annotations

import argparse
import os
import sys
import time

from ..games import registry
from .options import (check_writable, fail,
                      int_type)

DESCRIPTION = ('Label positions with Stockfish (or any UCI engine): the value of every legal move as a win '
               "probability for the side to move (the MAV format's formula; mates 1 or 0) and the best move.  "
               "Input: one position per line, a FEN optionally followed by 'moves m1 m2 ...' (UCI), or "
               "'startpos'; '#' starts a comment.  Output: JSON lines, written as they finish, so an interrupted "
               'run resumes.')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="file of positions ('-' for standard input)")
    p.add_argument("-o", "--output", default=None, help="output JSON-lines file (default: INPUT.annotated.jsonl)")
    p.add_argument("--engine", default="stockfish", help="UCI engine binary (default: stockfish)")
    p.add_argument("--nodes", type=int_type(1), default=None,
                    help="nodes per position (default 100000 if no limit given)")
    p.add_argument("--movetime", type=int_type(1), default=None, help="milliseconds per position")
    p.add_argument("--depth", type=int_type(1), default=None, help="search depth per position")
    p.add_argument("--workers", type=int_type(1), default=max(1, min(os.cpu_count() or 1, 2)),
                    help="engine processes (one thread each; default: min(2, CPUs))")
    p.add_argument("--hash", type=int_type(1), default=16, help="engine hash in MB per process (default: 16)")
    p.add_argument("--game", default="chess", choices=["chess", "gardner"],
                    help="gardner: Gardner 5x5 minichess positions, annotated by Fairy-Stockfish (UCI_Variant "
                         "gardner; the default engine then is fairy-stockfish)")
    p.add_argument("--chess960", action="store_true",
                    help="Chess960 castling for every position (otherwise detected from the FEN's castling field)")
    p.add_argument("--mav", default=None, metavar="COMMANDS",
                    help="also write each position as MAV text (field 'mav') with these commands, e.g. "
                         "'%%state %%top_all %%best_action' (see docs/format.md)")
    p.add_argument("--fresh", action="store_true", help="overwrite the output instead of resuming")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def cmd_annotate(args: argparse.Namespace) -> int:
    import shutil

    from ..engines.annotate import Annotator, annotate_file, check_positions
    from ..engines.uci import find_stockfish
    from ..engines.uci_protocol import EngineError

    engine = args.engine
    variant = registry.get(args.game).uci_variant
    game = args.game if variant else None   # None: standard chess or Chess960, told apart by the FEN
    if variant and engine == "stockfish":
        from ..engines.fairy import find_fairy_stockfish
        if find_fairy_stockfish() is None:
            raise fail(f"--game {args.game}: Fairy-Stockfish not found (apt-get install fairy-stockfish, "
                        "or --engine PATH)")
    elif engine == "stockfish" and find_stockfish() is None:
        raise fail("--engine stockfish: Stockfish not found (apt-get install stockfish, or --engine PATH)")
    if engine != "stockfish" and shutil.which(engine) is None:
        raise fail(f"--engine {engine}: no such executable")
    if args.input != "-" and not os.path.isfile(args.input):
        raise fail(f"input file {args.input} not found")
    out = args.output or (os.path.splitext(args.input)[0] + ".annotated.jsonl" if args.input != "-" else None)
    if out is None:
        raise fail("give -o OUTPUT when reading positions from stdin")
    check_writable("--output", out)
    inp = args.input
    tmp = None
    if inp == "-":
        import tempfile
        tmp = tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False)
        tmp.write(sys.stdin.buffer.read())
        tmp.close()
        inp = tmp.name
    try:
        try:   # every line checked (UTF-8, FEN, legal moves) before an engine starts
            n_in = len(check_positions(inp, args.chess960, game))
        except ValueError as e:
            raise fail(str(e).replace(inp, "standard input") if tmp is not None else str(e))
        limits = {"nodes": args.nodes, "movetime": args.movetime, "depth": args.depth}
        limits = {k: v for k, v in limits.items() if v is not None}
        try:   # the engine must start and speak UCI before any work
            Annotator(engine, hash_mb=args.hash, chess960=args.chess960, game=game, **limits).close()
        except (EngineError, OSError) as e:
            raise fail(f"--engine {engine}: {e}")
        t0 = time.perf_counter()
        try:
            n = annotate_file(inp, out, workers=args.workers, progress=not args.no_progress, resume=not args.fresh,
                              mav_commands=args.mav, engine=engine, chess960=args.chess960, hash_mb=args.hash,
                              game=game, **limits)
        except (EngineError, ValueError) as e:
            raise fail(f"{e} (annotations finished so far are kept in {out}; run again to resume)")
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
    dt = time.perf_counter() - t0
    print(f"{n} position(s) annotated in {dt:.1f} s ({n_in} in {args.input}); results in {out}", file=sys.stderr)
    return 0


run = cmd_annotate
