"""Per-agent score, seconds of search per move, and head-to-head scores with Wilson 95% intervals, from the
league's results store (the Elo table itself: rerun the league command, which prints it without playing).

    python experiments/2026-12-02-mav-mcts-ablations/summary.py runs/mav-mcts-ablations.sqlite
"""
from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections import defaultdict
from typing import Dict, Tuple


def wilson(score: float, n: int, z: float = 1.96) -> Tuple[float, float]:
    """The Wilson score interval of a proportion (draws counted as half a win)."""
    if n == 0:
        return (0.0, 1.0)
    p = score / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def main(path: str) -> None:
    con = sqlite3.connect(path)
    rows = con.execute("select first, second, result, moves, think from games").fetchall()
    pts: Dict[str, float] = defaultdict(float)
    games: Dict[str, int] = defaultdict(int)
    think: Dict[str, float] = defaultdict(float)
    moves: Dict[str, int] = defaultdict(int)
    pair: Dict[Tuple[str, str], list] = defaultdict(lambda: [0.0, 0])
    for first, second, result, mv, th in rows:
        s1 = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
        n = len(json.loads(mv))
        t = json.loads(th)
        for who, s, k, ply in ((first, s1, 0, (n + 1) // 2), (second, 1 - s1, 1, n // 2)):
            pts[who] += s
            games[who] += 1
            think[who] += t[k]
            moves[who] += ply
        a, b = sorted((first, second))
        pair[(a, b)][0] += s1 if a == first else 1 - s1
        pair[(a, b)][1] += 1
    print(f"{len(rows)} games")
    print(f"{'agent':<24} {'games':>5} {'score':>6} {'s/move':>7}")
    for a in sorted(games):
        print(f"{a:<24} {games[a]:>5} {pts[a] / games[a]:>6.3f} {think[a] / max(moves[a], 1):>7.3f}")
    print(f"\n{'pair (score of the first)':<48} {'games':>5} {'score':>6}  95% interval")
    for (a, b), (s, n) in sorted(pair.items()):
        lo, hi = wilson(s, n)
        print(f"{a + ' vs ' + b:<48} {n:>5} {s / n:>6.3f}  [{lo:.2f}, {hi:.2f}]")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/mav-mcts-ablations.sqlite")
