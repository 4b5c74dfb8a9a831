"""Perft speed of mavgame's chess against Stockfish's `go perft` and python-chess.

    python bench/perft.py            # startpos depth 6, Kiwipete depth 5; median of 3 runs
    python bench/perft.py --quick    # depths 5 and 4, one run (a sanity check)
    python bench/perft.py --json out.json

All three count leaves single-threaded with bulk counting at the last ply (Stockfish's perft does
so too; python-chess here counts the legal moves of the depth-1 positions).  python-chess runs two
plies shallower (its speed is measured in nodes/s, which hardly depends on depth).  Node counts
are checked to agree.  Stockfish is found on PATH or in /usr/games (Debian's package); it is
skipped with a note when absent.  Run it on an otherwise idle machine: timings are wall clock.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame import Chess  # noqa: E402

POSITIONS = [
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5),
]


def timed(fn, runs):
    """(median seconds, result) over `runs` calls."""
    times, result = [], None
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def python_chess_perft(board, depth):
    if depth == 1:
        return board.legal_moves.count()
    n = 0
    for m in board.legal_moves:
        board.push(m)
        n += python_chess_perft(board, depth - 1)
        board.pop()
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="timed runs per measurement (median is reported)")
    ap.add_argument("--quick", action="store_true", help="one run, depths 5 / 4 (sanity check)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--stockfish", default=None, help="path of the Stockfish binary")
    args = ap.parse_args(argv)
    runs = 1 if args.quick else max(1, args.runs)

    try:
        import chess
    except ImportError:
        chess = None
        print("python-chess not installed (pip install chess): its column is skipped")
    engine = None
    try:
        from mavgame.engines.uci import UCIEngine, find_stockfish

        path = args.stockfish or find_stockfish()
        if path:
            engine = UCIEngine(path, options={"Threads": 1})
        else:
            print("Stockfish not found (apt install stockfish): its column is skipped")
    except Exception as e:  # a broken engine should not stop the benchmark
        print(f"Stockfish unavailable: {e}")

    rows = []
    for name, fen, depth in POSITIONS:
        if args.quick:
            depth -= 1
        board = Chess(fen)
        board.perft(depth - 2)  # warm up
        sec, nodes = timed(lambda: board.perft(depth), runs)
        row = {"position": name, "depth": depth, "nodes": nodes, "mavgame_s": sec, "mavgame_nps": nodes / sec}
        if engine is not None:
            engine.perft(max(1, depth - 3), fen)  # warm up
            sf_sec, (sf_nodes, _) = timed(lambda: engine.perft(depth, fen), runs)
            if sf_nodes != nodes:
                raise SystemExit(f"node counts differ on {name}: mavgame {nodes}, Stockfish {sf_nodes}")
            row.update(stockfish_s=sf_sec, stockfish_nps=nodes / sf_sec)
        if chess is not None:
            pdepth = depth - 2
            pb = chess.Board(fen)
            pc_sec, pc_nodes = timed(lambda: python_chess_perft(pb, pdepth), 1)
            if pc_nodes != Chess(fen).perft(pdepth):
                raise SystemExit(f"node counts differ on {name} at depth {pdepth}: python-chess {pc_nodes}")
            row.update(python_chess_depth=pdepth, python_chess_nodes=pc_nodes, python_chess_s=pc_sec,
                       python_chess_nps=pc_nodes / pc_sec)
        rows.append(row)
    if engine is not None:
        engine.close()

    print(f"perft, single thread, median of {runs} run(s)")
    header = f"{'position':<10} {'depth':>5} {'nodes':>12} {'mavgame Mnps':>13} {'Stockfish Mnps':>15} " \
             f"{'python-chess knps':>18} {'vs Stockfish':>13} {'vs python-chess':>16}"
    print(header)
    for r in rows:
        sf = f"{r['stockfish_nps'] / 1e6:15.1f}" if "stockfish_nps" in r else f"{'-':>15}"
        pc = f"{r['python_chess_nps'] / 1e3:18.1f}" if "python_chess_nps" in r else f"{'-':>18}"
        vs_sf = f"{r['mavgame_nps'] / r['stockfish_nps']:12.2f}x" if "stockfish_nps" in r else f"{'-':>13}"
        vs_pc = f"{r['mavgame_nps'] / r['python_chess_nps']:15.0f}x" if "python_chess_nps" in r else f"{'-':>16}"
        print(f"{r['position']:<10} {r['depth']:>5} {r['nodes']:>12} {r['mavgame_nps'] / 1e6:13.1f} {sf} {pc} "
              f"{vs_sf} {vs_pc}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
