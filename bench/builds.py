"""Speed of two builds of mavgame on the same calls (perft, solvers), interleaved, with the ratio.

    # e.g. the portable default against -march=native, from two copies of the source tree:
    (cd /tmp/a && python setup.py -q build_ext --inplace)                    # portable (default)
    (cd /tmp/b && MAVGAME_NATIVE=1 python setup.py -q build_ext --inplace)   # -march=native
    python bench/builds.py /tmp/b /tmp/a --rounds 4

Each round runs one fresh process per build (alternating which goes first); a process times each
call 3 times in CPU time of the calling thread (the C work runs there; CPU time is less disturbed
than wall time on a shared, loaded machine) and keeps the fastest.  The table shows the median
over rounds for each build and the ratio B/A (above 1: B is slower).  Results are checked to agree.
"""
import argparse
import json
import statistics
import subprocess
import sys

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import mavgame
from mavgame import Chess, ConnectFour, Hex, _core
assert mavgame.__file__.startswith(sys.argv[1]), mavgame.__file__

def best(fn, k=3):
    ts, r = [], None
    for _ in range(k):
        t = time.thread_time(); r = fn(); ts.append(time.thread_time() - t)
    return min(ts), r

def hex_solve():
    h = Hex(5); h.push("c3"); h.push("b3")
    return h.solve().value

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
CALLS = {
    "chess perft(6)": lambda: Chess().perft(6),
    "kiwipete perft(5)": lambda: Chess(KIWIPETE).perft(5),
    "connect four perft(10)": lambda: ConnectFour().perft(10),
    "c4 solve 444444333": lambda: ConnectFour.from_moves("444444333").solve(solver=_core.C4Solver(20)).score,
    "hex 5x5 solve (c3 b3)": hex_solve,
}
print(json.dumps({k: best(f) for k, f in CALLS.items()}))
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="source tree with a built extension (A)")
    ap.add_argument("b", help="source tree with a built extension (B)")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    res = {args.a: [], args.b: []}
    for i in range(args.rounds):
        for tree in (args.a, args.b) if i % 2 == 0 else (args.b, args.a):
            p = subprocess.run([sys.executable, "-c", CHILD, tree], capture_output=True, text=True, cwd="/")
            if p.returncode:
                print(f"builds.py: {tree}: {p.stderr.strip()}", file=sys.stderr)
                return 1
            res[tree].append(json.loads(p.stdout))
    print(f"A = {args.a}\nB = {args.b}\nmedian of {args.rounds} rounds (each the best of 3 calls, thread CPU time)")
    print(f"{'call':24s} {'A':>10s} {'B':>10s} {'B/A':>6s}")
    for k in res[args.a][0]:
        if {r[k][1] for r in res[args.a] + res[args.b]} != {res[args.a][0][k][1]}:
            print(f"builds.py: results of {k} differ between the builds", file=sys.stderr)
            return 1
        x = statistics.median(r[k][0] for r in res[args.a])
        y = statistics.median(r[k][0] for r in res[args.b])
        print(f"{k:24s} {x * 1e3:8.1f}ms {y * 1e3:8.1f}ms {y / x:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
