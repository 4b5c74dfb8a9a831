"""Summarise the matchmaker comparison of run.sh: per matchmaker the puzzle solve rates (each player,
max-over-latents, the sub-additive rules) with Wilson 95 % intervals, the final payoff matrix (white x
black, mean result for white) and game counts, the interaction graphs the matchmaker would draw from next,
and the players' psi distances; writes JSON and prints a Markdown table.  Missing runs are skipped.

    python experiments/2026-12-02-azdb-matchmakers/summarise.py --runs runs/azdb_mm --seed 1 --out results.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Dict, List

import numpy as np

MATCHMAKERS = ("selfplay", "uniform", "psro", "psro-uniform", "psro-rectified", "psro-cycle")
ROWS = ("player0", "player1", "player2", "max_over_latents", "visits", "value", "lcb", "gap")


def wilson(k: int, n: int, z: float = 1.96) -> List[float]:
    """The Wilson score interval of k successes in n trials, in percent."""
    if n == 0:
        return [float("nan"), float("nan")]
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(100 * (c - h), 1), round(100 * (c + h), 1)]


def summarise(runs: str, seed: int) -> Dict[str, dict]:
    from mavgame.az.matchmaking import Matchmaker
    from mavgame.az.train import load_checkpoint
    out: Dict[str, dict] = {}
    for m in MATCHMAKERS:
        d = os.path.join(runs, f"{m}_s{seed}")
        ck = os.path.join(d, "checkpoint.pt")
        if not os.path.exists(ck):
            continue
        c = load_checkpoint(ck)
        mm = Matchmaker.from_state_dict(c["matchmaker"])
        w, b = mm.interaction_graphs()
        psi = np.asarray(c["features"]["psi"])
        dist = np.sqrt(((psi[:, None] - psi[None]) ** 2).sum(-1))
        rec = {"iterations": int(c["iteration"]), "games": int(mm.count.sum()),
               "payoff_white_black": np.round(mm.payoff(), 3).tolist(), "games_white_black": mm.count.tolist(),
               "sigma_white": np.round(w, 3).tolist(), "sigma_black": np.round(b, 3).tolist(),
               "psi_distances": np.round(dist, 3).tolist(),
               "positions_kept": int(sum(h.get("kept", 0) for h in c["history"]))}
        pz = os.path.join(d, "puzzles.json")
        if os.path.exists(pz):
            s = json.load(open(pz))
            n = int(s["puzzles"])
            rec["puzzles"] = n
            for r in ROWS:
                v = np.asarray(s[f"team:{r}"], np.float64)
                rec[r] = {"solved": int(v.sum()), "rate": round(100 * v.mean(), 1), "ci95": wilson(int(v.sum()), n)}
        out[m] = rec
    return out


def table(res: Dict[str, dict]) -> str:
    head = "| matchmaker | games | " + " | ".join(ROWS) + " |"
    lines = [head, "|" + "---|" * (len(ROWS) + 2)]
    for m, r in res.items():
        cells = [f"{r[k]['rate']:.1f} [{r[k]['ci95'][0]:.0f}, {r[k]['ci95'][1]:.0f}]" if k in r else "-" for k in ROWS]
        lines.append(f"| {m} | {r['games']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", default="runs/azdb_mm")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    res = summarise(a.runs, a.seed)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    print(table(res))
    for m, r in res.items():
        print(f"\n{m}: payoff (white x black) {r['payoff_white_black']}, games {r['games_white_black']}")
        print(f"  sigma_white {r['sigma_white']}\n  sigma_black {r['sigma_black']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
