"""The homogeneous-team control's table (this folder's README.md): puzzle solve rates of the diverse AZdb
team, the two homogeneous teams and the single AlphaZero, with intervals, from the JSON files of
``run.sh eval``::

    python experiments/2026-12-02-azdb-homogeneous-control/report.py --eval runs/h54az1/eval \\
        --runs runs/h54az1 --out experiments/2026-12-02-azdb-homogeneous-control/control.json

Reads EVAL/team.json (the AZdb team), EVAL/team_nodiv.json (the team trained with lambda = 1 for every
player), EVAL/homogeneous.json (five single AlphaZero networks, seeds 1-5) and EVAL/single.json (the single
AlphaZero, seed 2, at one player's and at the team's simulations); each may instead be in parts,
NAME.partI-of-K.json (``CHUNKS=K run.sh eval``), joined here in order.  Prints markdown tables, writes OUT.

Intervals (95 %): a rate's Wilson interval over the puzzles; a paired difference (solver A - solver B on
the same puzzles) by a bootstrap over the puzzles (10,000 resamples, percentile interval, seed 0).
"best of k": max-over-latents of k of the team's players, averaged over every k-subset (the oracle's
gain from team size alone).  "distinct moves": the mean number of different moves the players choose.
"""
import argparse
import glob
import itertools
import json
import os

import numpy as np

RULES = ("visits", "value", "lcb", "gap")
TEAMS = (("diverse", "team.json", "AZdb team (diversity reward on)"),
         ("nodiv", "team_nodiv.json", "AZdb team, lambda = 1 (no diversity reward)"),
         ("homogeneous", "homogeneous.json", "5 single AlphaZero nets, seeds 1-5"))


def wilson(k: int, n: int, z: float = 1.96):
    """Wilson score interval of k successes in n."""
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return float(c - h), float(c + h)


def paired(a: np.ndarray, b: np.ndarray, reps: int = 10000, seed: int = 0):
    """mean(a - b) and its bootstrap percentile interval over the puzzles."""
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(reps, len(d)))
    means = d[idx].mean(axis=1)
    return float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def best_of_k(players: np.ndarray, k: int) -> float:
    """Mean over the k-subsets of the players (columns) of the subset's max-over-latents rate."""
    return float(np.mean([players[:, list(c)].max(axis=1).mean()
                          for c in itertools.combinations(range(players.shape[1]), k)]))


def load_scores(folder: str, name: str) -> dict:
    """EVAL/NAME.json, or its parts NAME.partI-of-K.json joined (lists concatenated, puzzles summed)."""
    path = os.path.join(folder, f"{name}.json")
    if os.path.exists(path):
        return json.load(open(path, encoding="utf-8"))
    parts = sorted(glob.glob(os.path.join(folder, f"{name}.part*-of-*.json")),
                   key=lambda f: int(f.rsplit(".part", 1)[1].split("-of-")[0]))
    if not parts:
        raise SystemExit(f"no {path} (nor its parts): run run.sh eval first")
    k = int(parts[0].rsplit("-of-", 1)[1].split(".")[0])
    if len(parts) != k:
        raise SystemExit(f"{name}: {len(parts)} of {k} parts scored")
    out: dict = {"puzzles": 0, "file": [], "parts": k}
    for f in parts:
        d = json.load(open(f, encoding="utf-8"))
        out["puzzles"] += int(d["puzzles"])
        out["file"].append(d["file"])
        for key, v in d.items():
            if isinstance(v, list):
                out.setdefault(key, []).extend(v)
    return out


def team_solvers(d: dict) -> dict:
    players = sorted(int(k[len("team:player"):]) for k in d if k.startswith("team:player"))
    out = {f"player {i}": np.asarray(d[f"team:player{i}"]) for i in players}
    out["max-over-latents"] = np.asarray(d["team:max_over_latents"])
    for r in RULES:
        out[r] = np.asarray(d[f"team:{r}"])
    return out


def run_compute(runs: str) -> dict:
    """Per run folder: games, positions, network evaluations, training steps (from log.jsonl)."""
    out = {}
    for name in sorted(os.listdir(runs)):
        log = os.path.join(runs, name, "log.jsonl")
        if not os.path.exists(log):
            continue
        recs = [json.loads(x) for x in open(log, encoding="utf-8") if x.strip()]
        out[name] = {"iterations": len(recs), "games": sum(r["games"] for r in recs),
                     "positions": sum(r["positions"] for r in recs),
                     "evaluations": sum(r["evaluations"] for r in recs), "steps": recs[-1]["step"] if recs else 0,
                     "psi_nearest": recs[-1].get("psi_nearest") if recs else None}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", required=True, help="the folder of team.json, team_nodiv.json, homogeneous.json")
    ap.add_argument("--runs", default=None, help="the run folders (for the training compute)")
    ap.add_argument("--out", required=True, help="JSON summary to write")
    a = ap.parse_args()
    data, sol = {}, {}
    for key, fname, _ in TEAMS:
        data[key] = load_scores(a.eval, fname[:-len(".json")])
        sol[key] = team_solvers(data[key])
    data["single"] = load_scores(a.eval, "single")
    n = int(data["diverse"]["puzzles"])
    for key in data:
        if int(data[key]["puzzles"]) != n or data[key]["file"] != data["diverse"]["file"]:
            raise SystemExit(f"{key}: scored on {data[key]['file']} ({data[key]['puzzles']}), not the same puzzles")
    singles = {k.split("sims=")[-1]: np.asarray(v) for k, v in data["single"].items() if k.startswith("az:")}
    summary: dict = {"puzzles": n, "file": data["diverse"]["file"], "rates": {}, "paired": {}, "best_of_k": {},
                     "distinct_moves": {}, "chosen": {}}

    def rate(name: str, v: np.ndarray) -> str:
        k = int(v.sum())
        lo, hi = wilson(k, n)
        summary["rates"][name] = {"solved": k, "rate": k / n, "wilson95": [lo, hi]}
        return f"{100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"

    print(f"{n} puzzles ({summary['file']}); rates with 95 % Wilson intervals\n")
    print("| solver | " + " | ".join(label for _, _, label in TEAMS) + " |")
    print("|---|" + "---|" * len(TEAMS))
    rows = ["player 0", "best player", "mean of players", "max-over-latents"] + list(RULES)
    for row in rows:
        cells = []
        for key, _, _ in TEAMS:
            s = sol[key]
            pl = np.stack([s[k] for k in s if k.startswith("player ")], axis=1)
            if row == "best player":
                j = int(np.argmax(pl.sum(axis=0)))
                cells.append(rate(f"{key}: best player (player {j})", pl[:, j]) + f" (p{j})")
            elif row == "mean of players":
                m = pl.mean()
                summary["rates"][f"{key}: mean of players"] = {"rate": float(m)}
                cells.append(f"{100 * m:.1f} %")
            else:
                cells.append(rate(f"{key}: {row}", s[row]))
        print(f"| {row} | " + " | ".join(cells) + " |")
    for sims, v in sorted(singles.items(), key=lambda x: int(x[0])):
        print(f"\nsingle AlphaZero (seed 2) at {sims} simulations: {rate(f'single {sims} sims', v)}")

    print("\npaired differences, points [95 % bootstrap]\n")
    pairs = [("diverse", "homogeneous"), ("diverse", "nodiv"), ("homogeneous", "nodiv")]
    print("| solver | " + " | ".join(f"{x} - {y}" for x, y in pairs) + " |")
    print("|---|" + "---|" * len(pairs))
    for row in ["max-over-latents"] + list(RULES) + ["player 0"]:
        cells = []
        for x, y in pairs:
            m, lo, hi = paired(sol[x][row], sol[y][row])
            summary["paired"][f"{row}: {x} - {y}"] = [m, lo, hi]
            cells.append(f"{100 * m:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")
        print(f"| {row} | " + " | ".join(cells) + " |")
    top = max(singles, key=int)
    for key, _, _ in TEAMS:
        for row in ("max-over-latents", "visits"):
            m, lo, hi = paired(sol[key][row], singles[top])
            summary["paired"][f"{key} {row} - single {top} sims"] = [m, lo, hi]
            print(f"{key} {row} - single at {top} sims: {100 * m:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]")

    print("\nbest of k players (oracle over k-subsets, mean over subsets), distinct moves, rules' picks\n")
    print("| team | " + " | ".join(f"k={k}" for k in range(1, 6)) + " | distinct moves (of 5) | players the rules pick |")
    print("|---|" + "---|" * 7)
    for key, _, label in TEAMS:
        s = sol[key]
        pl = np.stack([s[k] for k in s if k.startswith("player ")], axis=1)
        bk = [best_of_k(pl, k) for k in range(1, pl.shape[1] + 1)]
        summary["best_of_k"][key] = bk
        moves = np.asarray(data[key].get("team:moves", []))
        dm = float(np.mean([len(set(r)) for r in moves])) if len(moves) else float("nan")
        summary["distinct_moves"][key] = dm
        chosen = {r: np.bincount(np.asarray(data[key][f"team:chosen_{r}"]), minlength=pl.shape[1]).tolist()
                  for r in RULES}
        summary["chosen"][key] = chosen
        print(f"| {label} | " + " | ".join(f"{100 * b:.1f} %" for b in bk) + f" | {dm:.2f} | "
              + "; ".join(f"{r} {c}" for r, c in chosen.items()) + " |")
    hom = sol["homogeneous"]
    pl = np.stack([hom[f"player {i}"] for i in range(1, 5)], axis=1)
    summary["best_of_k"]["homogeneous_without_s1"] = [best_of_k(pl, k) for k in range(1, 5)]
    print("homogeneous team without seed 1 (players 1-4, seeds 2-5): best of k = 1..4: "
          + ", ".join(f"{100 * b:.1f} %" for b in summary["best_of_k"]["homogeneous_without_s1"]))
    print("players' rates: " + "; ".join(
        f"{key} " + " / ".join(f"{100 * sol[key][f'player {i}'].mean():.1f}" for i in range(5)) for key, _, _ in TEAMS))
    if a.runs:
        summary["compute"] = run_compute(a.runs)
        print("\ntraining compute")
        for name, c in summary["compute"].items():
            print(f"  {name}: {c['iterations']} iterations, {c['games']} games, {c['positions']} positions, "
                  f"{c['evaluations']} evaluations, {c['steps']} steps, psi nearest {c['psi_nearest']}")
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(f"\n{a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
