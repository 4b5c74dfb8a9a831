"""Fastest runs of mavgame perft against Gigantua, interleaved (2026-12-03).

    python experiments/2026-12-02-perft-gigantua/minrun.py REPO_ROOT ROUNDS   # Gigantua at /tmp/gig/giga

Each round: a Gigantua depth-1 run (its start-up), mavgame Chess.perft (thread CPU time), a Gigantua run at the
depth (process CPU time).  Prints the minimum and median of each side and both ratios (> 1: mavgame faster).
"""
import os, sys, time, subprocess, statistics
root = sys.argv[1]; rounds = int(sys.argv[2])
sys.path.insert(0, root)
from mavgame import Chess
G = "/tmp/gig/giga"
P = [("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6, 119060324),
     ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5, 193690690)]
def gig(fen, d, n):
    p = subprocess.Popen([G, fen, str(d), str(n)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, st, ru = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(st) == 0
    return ru.ru_utime + ru.ru_stime
for name, fen, d, n in P:
    c = Chess(fen)
    m, g, s = [], [], []
    for r in range(rounds):
        s.append(gig(fen, 1, 48 if name == "kiwipete" else 20))
        t = time.thread_time(); assert c.perft(d) == n; m.append(time.thread_time() - t)
        g.append(gig(fen, d, n))
    st = min(s)
    print(f"{name}: mavgame min {min(m):.4f} med {statistics.median(m):.4f}; gigantua min {min(g)-st:.4f} med {statistics.median(g)-statistics.median(s):.4f} (start-up min {st:.4f}); ratio(min) {(min(g)-st)/min(m):.3f}x ratio(med) {(statistics.median(g)-statistics.median(s))/statistics.median(m):.3f}x")
