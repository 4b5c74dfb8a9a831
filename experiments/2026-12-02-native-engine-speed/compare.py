"""Before/after table of bench/inference.py JSON files (--json), medians over the runs of each side.

    python experiments/2026-12-02-native-engine-speed/compare.py --before b1.json b2.json --after a1.json a2.json
"""
import argparse
import json
import statistics
from typing import Dict, List


def figures(path: str) -> Dict[str, float]:
    """The headline figures of one bench/inference.py --json file, by name."""
    with open(path) as f:
        r = json.load(f)
    out: Dict[str, float] = {}
    for g in r["generation"]:
        if "ceiling_gflops" in g:
            b = g["batch"]
            out[f"batch {b:2d} native-1 GFLOP/s"] = g["native_gflops"]
            out[f"batch {b:2d} torch.matmul ceiling GFLOP/s"] = g["ceiling_gflops"]
            out[f"batch {b:2d} native-1 / ceiling %"] = 100 * g["native_gflops"] / g["ceiling_gflops"]
            out[f"batch {b:2d} native-1 / torch-1 x"] = g["native_vs_torch1"]
    mc = {m["evaluator"]: m["evals_per_s"] for m in r["mcts"] if "evaluator" in m}
    if "python/torch-1" in mc:
        out["MCTS C/native-1 leaf evals/s"] = mc["C/native-1"]
        out["MCTS C/native-1 / python/torch-1 x"] = mc["C/native-1"] / mc["python/torch-1"]
    for m in r["mcts"]:
        if "sims" in m:
            out[f"MAV-MCTS s/move at {m['sims']} sims"] = m["seconds_per_move"]
    return out


def main(argv: List[str] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    a = ap.parse_args(argv)
    before = [figures(p) for p in a.before]
    after = [figures(p) for p in a.after]
    print(f"{'figure':44s} {'before':>9s} {'after':>9s} {'after/before':>12s}")
    for k in before[0]:
        b = statistics.median(f[k] for f in before if k in f)
        x = statistics.median(f[k] for f in after if k in f)
        print(f"{k:44s} {b:9.2f} {x:9.2f} {x / b:11.2f}x")


if __name__ == "__main__":
    main()
