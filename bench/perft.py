"""Perft speed of mavgame's chess against Stockfish's `go perft` and python-chess, same run.

    python bench/perft.py            # startpos depth 6, Kiwipete depth 5; median of 5 interleaved runs
    python bench/perft.py --quick    # depths 5 and 4, 3 runs (callgrind: depths 5 / 4 in both modes)
    python bench/perft.py --stockfish ~/Stockfish/src/stockfish   # a Stockfish built for this CPU
    python bench/perft.py --json out.json
    python bench/perft.py --gigantua /tmp/gig/giga   # also Gigantua (built in /tmp, never committed)

All three count leaves single-threaded with bulk counting at the last ply (Stockfish's perft does so too;
python-chess here counts the legal moves of the depth-1 positions).  python-chess runs two plies shallower
(its speed is measured in nodes/s, which hardly depends on depth).  Node counts are checked to agree.

mavgame and Stockfish alternate (mavgame, Stockfish, Stockfish, mavgame, ...); the table gives the median of
CPU time: mavgame's thread CPU time around ``Chess.perft`` (it runs in the calling thread) and Stockfish's
process CPU time (all its threads, /proc/PID/task/*/schedstat) around its ``go perft``.  The peer's build matters: Debian's
``stockfish`` package is a generic x86-64 build (SSE2), while mavgame's hot code has run-time dispatched x86-64-v3 (AVX2, BMI2) copies;
the script prints Stockfish's own ``compiler`` report so the reader sees which was compared.  Build one for
this CPU (``make -j build ARCH=x86-64-bmi2`` in Stockfish's src/) and pass it with --stockfish for the
like-for-like figure.

With ``--gigantua PATH`` (a Gigantua binary built as /work/shared/peers/gigantua/README.md says; it takes
``FEN DEPTH EXPECTED`` and exits 0 when its count matches) Gigantua runs the same positions and depths in the same
interleaving (mavgame, Gigantua, Gigantua, mavgame, ...), one process per run, its CPU time (user + system of the
child, os.wait4) less the median CPU time of a depth-1 run of the same position (its start-up: it fills its
tables at start-up, where mavgame's are filled at import and not counted); the table's ``vs Gigantua`` is
mavgame's speed over Gigantua's (> 1: mavgame faster).  ``best vs`` is the same ratio of each side's fastest run
(Gigantua's less its fastest start-up): on a shared machine whose other tenants slow it in bursts, the medians
of the two sides can be taken in different weather, the minima rarely.  Both count leaves in bulk at the last ply.

Instruction counts (when valgrind is installed; skipped with a note otherwise), a figure that machine load does
not disturb: under ``valgrind --tool=callgrind`` at depth 5 (startpos) / 4 (Kiwipete), mavgame's count is
collected inside its C perft only (``--toggle-collect=mg_perft_cancel``); Stockfish's (a stripped binary) is a
run at that depth minus a run at depth 1, divided by the extra leaves.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame import Chess  # noqa: E402

POSITIONS = [
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5),
]
ROOT = Path(__file__).resolve().parents[1]


def proc_cpu(pid: int) -> float:
    """CPU seconds used so far by all threads of process `pid`, in nanosecond resolution (Linux
    /proc/PID/task/*/schedstat; /proc/PID/stat counts in clock ticks of 10 ms, too coarse for one perft)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def stockfish_build(path: str) -> str:
    """Stockfish's version line and its 'compiler' report (compiler, settings such as BMI2 / AVX2)."""
    try:
        out = subprocess.run([path, "compiler"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{path} (no compiler report: {e})"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    version = lines[0].split(" by ")[0] if lines else "?"
    comp = next((ln for ln in lines if ln.startswith("Compiled by")), "")
    settings = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Compilation settings")), "?")
    return f"{version}, {path}, {comp.replace('Compiled by ', 'built with ')}, settings: {settings}"


def mavgame_build() -> str:
    """How this mavgame was compiled (setup.py's default: -march=x86-64-v2 with x86-64-v3 copies of the hot code
    picked at run time; MAVGAME_NATIVE=1: -march=native)."""
    import sysconfig
    native = os.environ.get("MAVGAME_NATIVE", "") not in ("", "0")
    flags = "-march=native (MAVGAME_NATIVE=1)" if native else "-march=x86-64-v2 + x86-64-v3 (AVX2/BMI2) dispatch"
    return f"mavgame C core as built by setup.py: {flags}, CC {sysconfig.get_config_var('CC')}"


def gigantua_cpu(path: str, fen: str, depth: int, nodes: int) -> float:
    """CPU seconds (user + system) of one Gigantua process counting perft(depth) of `fen`; exits the script when
    Gigantua's count differs from `nodes` (it exits 0 only when they match)."""
    proc = subprocess.Popen([path, fen, str(depth), str(nodes)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"Gigantua ({path}) disagrees on perft({depth}) of {fen} = {nodes} (exit {proc.returncode})")
    return ru.ru_utime + ru.ru_stime


def python_chess_perft(board, depth):
    if depth == 1:
        return board.legal_moves.count()
    n = 0
    for m in board.legal_moves:
        board.push(m)
        n += python_chess_perft(board, depth - 1)
        board.pop()
    return n


def _callgrind(cmd, stdin=None, toggle=None):
    """Instructions executed by `cmd` under callgrind (only inside function `toggle` when given; None if the run
    failed)."""
    opts = ["--callgrind-out-file=/dev/null"]
    if toggle:
        opts += ["--collect-atstart=no", f"--toggle-collect={toggle}"]
    p = subprocess.run(["valgrind", "--tool=callgrind"] + opts + cmd, input=stdin, capture_output=True, text=True,
                       cwd="/tmp", env=dict(os.environ, PYTHONHASHSEED="0"))
    m = re.search(r"Collected\s*:\s*(\d+)", p.stderr) or re.search(r"refs:\s*([\d,]+)", p.stderr)
    return int(m.group(1).replace(",", "")) if m else None


def instructions_per_leaf(fen: str, depth: int, stockfish: str):
    """{side: instructions per leaf} under callgrind.  mavgame: only the instructions inside mg_perft_cancel (the
    C perft behind Chess.perft).  Stockfish (a stripped binary): a run at `depth` minus a run at depth 1."""
    if not shutil.which("valgrind"):
        return None
    nodes = Chess(fen).perft(depth)
    code = ("import sys; sys.path.insert(0, %r); from mavgame import Chess; Chess(%r).perft(int(sys.argv[1]))"
            % (str(ROOT), fen))
    out = {}
    a = _callgrind([sys.executable, "-c", code, str(depth)], toggle="mg_perft_cancel")
    if a:
        out["mavgame"] = a / nodes
    if stockfish:
        def uci(d):
            return f"uci\nsetoption name Threads value 1\nposition fen {fen}\ngo perft {d}\nquit\n"
        a, b = _callgrind([stockfish], uci(depth)), _callgrind([stockfish], uci(1))
        if a and b:
            out["stockfish"] = (a - b) / (nodes - Chess(fen).perft(1))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="interleaved runs per measurement (median is reported)")
    ap.add_argument("--quick", action="store_true", help="3 runs, depths 5 / 4")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--stockfish", default=None, help="path of the Stockfish binary (default: PATH, /usr/games)")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    ap.add_argument("--gigantua", default=None, metavar="PATH",
                    help="also time this Gigantua binary (FEN DEPTH EXPECTED interface) on the same positions")
    args = ap.parse_args(argv)
    runs = 3 if args.quick else max(1, args.runs)

    try:
        import chess
    except ImportError:
        chess = None
        print("python-chess not installed (pip install chess): its column is skipped")
    engine = path = None
    try:
        from mavgame.engines.uci import UCIEngine, find_stockfish

        path = args.stockfish or find_stockfish()
        if path:
            engine = UCIEngine(path, options={"Threads": 1})
        else:
            print("Stockfish not found (apt install stockfish): its column is skipped")
    except Exception as e:  # a broken engine should not stop the benchmark
        print(f"Stockfish unavailable: {e}")
    if engine is not None:
        print(f"peer: {stockfish_build(path)}")
    print(f"ours: {mavgame_build()}")
    if args.gigantua:
        if not os.access(args.gigantua, os.X_OK):
            raise SystemExit(f"--gigantua {args.gigantua}: not an executable file")
        print(f"peer: Gigantua, {args.gigantua} (CPU time per process less its start-up: a depth-1 run's median)")
    if not args.no_callgrind and not shutil.which("valgrind"):
        print("valgrind not installed (apt-get install valgrind): instruction counts skipped")

    rows = []
    for name, fen, depth in POSITIONS:
        if args.quick:
            depth -= 1
        board = Chess(fen)
        board.perft(depth - 2)  # warm up
        ours, theirs, giga, nodes = [], [], [], None
        if args.gigantua:
            want = Chess(fen).perft(depth)
            n1 = Chess(fen).perft(1)
            starts = [gigantua_cpu(args.gigantua, fen, 1, n1) for _ in range(max(3, runs))]
            giga_start = statistics.median(starts)
        if engine is not None:
            engine.perft(max(1, depth - 3), fen)  # warm up
            pid = engine._proc.pid
        for r in range(runs):
            for side in (("m", "s", "g") if r % 2 == 0 else ("g", "s", "m")):
                if side == "g":
                    if args.gigantua:
                        giga.append(gigantua_cpu(args.gigantua, fen, depth, want))
                elif side == "m":
                    c = time.thread_time()
                    nodes = board.perft(depth)
                    ours.append(time.thread_time() - c)
                elif engine is not None:
                    c = proc_cpu(pid)
                    sf_nodes, _ = engine.perft(depth, fen)
                    theirs.append(proc_cpu(pid) - c)
                    if sf_nodes != Chess(fen).perft(depth):
                        raise SystemExit(f"node counts differ on {name}: Stockfish {sf_nodes}")
        sec = statistics.median(ours)
        row = {"position": name, "depth": depth, "nodes": nodes, "mavgame_s": sec, "mavgame_nps": nodes / sec}
        if theirs:
            sf_sec = max(statistics.median(theirs), 1e-9)
            row.update(stockfish_s=sf_sec, stockfish_nps=nodes / sf_sec)
        if giga:
            g_sec = max(statistics.median(giga) - giga_start, 1e-9)
            # the best runs: each side's least disturbed run (the minimum; Gigantua's less its fastest start-up),
            # steadier than the medians when another tenant slows the machine in bursts
            g_best = max(min(giga) - min(starts), 1e-9)
            row.update(gigantua_s=g_sec, gigantua_nps=nodes / g_sec, gigantua_startup_s=giga_start,
                       vs_gigantua=(nodes / sec) / (nodes / g_sec), mavgame_best_s=min(ours), gigantua_best_s=g_best,
                       vs_gigantua_best=g_best / min(ours))
        if chess is not None:
            pdepth = depth - 2
            pb = chess.Board(fen)
            c = time.thread_time()
            pc_nodes = python_chess_perft(pb, pdepth)
            pc_sec = time.thread_time() - c
            if pc_nodes != Chess(fen).perft(pdepth):
                raise SystemExit(f"node counts differ on {name} at depth {pdepth}: python-chess {pc_nodes}")
            row.update(python_chess_depth=pdepth, python_chess_nodes=pc_nodes, python_chess_s=pc_sec,
                       python_chess_nps=pc_nodes / pc_sec)
        if not args.no_callgrind:
            cg_depth = min(depth, 5 if name == "startpos" else 4)   # millions of leaves: start-up noise negligible
            ipl = instructions_per_leaf(fen, cg_depth, path if engine is not None else None)
            if ipl:
                row.update({f"{k}_instructions_per_leaf": v for k, v in ipl.items()})
                row["callgrind_depth"] = cg_depth
        rows.append(row)
    if engine is not None:
        engine.close()

    print(f"perft, single thread, median of {runs} interleaved run(s), CPU time (Stockfish: its process)")
    print(f"{'position':<10} {'depth':>5} {'nodes':>12} {'mavgame Mnps':>13} {'Stockfish Mnps':>15} "
          f"{'python-chess knps':>18} {'vs Stockfish':>13} {'vs python-chess':>16}")
    for r in rows:
        sf = f"{r['stockfish_nps'] / 1e6:15.1f}" if "stockfish_nps" in r else f"{'-':>15}"
        pc = f"{r['python_chess_nps'] / 1e3:18.1f}" if "python_chess_nps" in r else f"{'-':>18}"
        vs_sf = f"{r['mavgame_nps'] / r['stockfish_nps']:12.2f}x" if "stockfish_nps" in r else f"{'-':>13}"
        vs_pc = f"{r['mavgame_nps'] / r['python_chess_nps']:15.0f}x" if "python_chess_nps" in r else f"{'-':>16}"
        print(f"{r['position']:<10} {r['depth']:>5} {r['nodes']:>12} {r['mavgame_nps'] / 1e6:13.1f} {sf} {pc} "
              f"{vs_sf} {vs_pc}")
    if any("gigantua_nps" in r for r in rows):
        print(f"against Gigantua (CPU time, median of {runs} interleaved runs; > 1: mavgame faster; best: the two "
              f"fastest runs)")
        print(f"{'position':<10} {'depth':>5} {'mavgame s':>10} {'Gigantua s':>11} {'start-up s':>11} "
              f"{'mavgame Mnps':>13} {'Gigantua Mnps':>14} {'vs Gigantua':>12} {'best mavgame s':>15} "
              f"{'best Gigantua s':>16} {'best vs':>8}")
        for r in rows:
            if "gigantua_nps" in r:
                print(f"{r['position']:<10} {r['depth']:>5} {r['mavgame_s']:10.4f} {r['gigantua_s']:11.4f} "
                      f"{r['gigantua_startup_s']:11.4f} {r['mavgame_nps'] / 1e6:13.1f} "
                      f"{r['gigantua_nps'] / 1e6:14.1f} {r['vs_gigantua']:11.2f}x {r['mavgame_best_s']:15.4f} "
                      f"{r['gigantua_best_s']:16.4f} {r['vs_gigantua_best']:7.2f}x")
    cg = [r for r in rows if "mavgame_instructions_per_leaf" in r]
    if cg:
        print("instructions per leaf (callgrind; lower is better)")
        for r in cg:
            m, s = r["mavgame_instructions_per_leaf"], r.get("stockfish_instructions_per_leaf")
            tail = f"   Stockfish {s:6.1f}   Stockfish/mavgame {s / m:.2f}x" if s else ""
            print(f"  {r['position']:<10} depth {r['callgrind_depth']}: mavgame {m:6.1f}{tail}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
