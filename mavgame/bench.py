"""Run the peer benchmarks of bench/ and print a short summary: ``python -m mavgame.bench`` or ``mavgame bench --peers``.

Each benchmark script in the source tree's ``bench/`` directory runs mavgame and its strongest installed peer in
the same process, interleaved, and reports medians of CPU time (docs/benchmarks.md explains every figure).  This
module runs them one after the other in fresh processes (``--quick``, the default: well under a few minutes;
``--full``: the settings of the figures in docs/benchmarks.md, several minutes and callgrind instruction counts)
and collects their ``--json`` output into one table of mavgame's figure, the peer's and the ratio.  A peer that is
not installed (OpenSpiel, Stockfish, python-chess, torch, valgrind) leaves its cells empty.

The scripts live in the repository, not in the installed package: run this from a source checkout (or pass
``--bench-dir``).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

Row = Tuple[str, str, Optional[float], Optional[float], str]   # benchmark, what, mavgame, peer, unit/peer note


def _rows_mcts(d: List[Dict[str, Any]]) -> List[Row]:
    return [(f"MCTS {r['game']}", f"{r['setting']}, {r['sims']} sims", r["mavgame_sims_per_s"], r["peer_sims_per_s"],
             f"sims/s vs {r['peer']}") for r in d]


def _rows_perft(d: List[Dict[str, Any]]) -> List[Row]:
    out: List[Row] = []
    for r in d:
        out.append((f"perft {r['position']}", f"depth {r['depth']}", r["mavgame_nps"], r.get("stockfish_nps"),
                    "nodes/s vs Stockfish"))
        if "mavgame_instructions_per_leaf" in r:
            m, s = r["mavgame_instructions_per_leaf"], r.get("stockfish_instructions_per_leaf")
            # instructions: lower is better, so the "rate" columns hold leaves per 1000 instructions
            out.append((f"perft {r['position']}", f"callgrind depth {r['callgrind_depth']}", 1000 / m,
                        1000 / s if s else None, "leaves per 1000 instructions vs Stockfish"))
    return out


def _rows_c4(d: Dict[str, Any]) -> List[Row]:
    out: List[Row] = []
    for r in d.get("pons", []):
        if r["resolved"]:
            out.append(("c4 solver", f"{r['set']} ({r['positions']})", 1 / r["mavgame_s"], 1 / r["pons_s"],
                        "positions/s vs Pons (same run)"))
    for k, v in d.get("overhead", {}).items():
        out.append(("c4 solve() call", k, 1 / v["solve_s"], 1 / v["raw_s"], "calls/s vs the raw binding call"))
    if not d.get("pons"):
        for r in d.get("sets", []):
            out.append(("c4 solver", f"{r['set']} ({r['positions']})", 1 / r["mean_s"], None,
                        "positions/s (no --pons binary given)"))
    return out


def _rows_mav(d: Dict[str, Any]) -> List[Row]:
    return [("MAV format", "prompts -> str", d["prompts_per_s_c_str"], d["prompts_per_s_python"], "/s vs pure Python"),
            ("MAV format", "parse -> objects", d["parses_per_s_c_entries"], d["parses_per_s_python"],
             "/s vs pure Python, like for like")]


def _rows_playout(d: List[Dict[str, Any]]) -> List[Row]:
    return [("playouts", r["game"], r["mavgame_c"], r["openspiel"], "games/s vs OpenSpiel") for r in d]


def _rows_train(d: Dict[str, Any]) -> List[Row]:
    gen = d.get("generation", [])
    out: List[Row] = []
    for b in sorted({r["batch"] for r in gen}):
        by = {r["backend"]: r["evals_per_s"] for r in gen if r["batch"] == b}
        if "native" in by:
            out.append(("MAVModel.generate", f"batch {b}", by["native"], by.get("torch"), "evals/s vs torch backend"))
    return out


# name: (script, quick arguments, full arguments, summariser, in --quick)
BENCHMARKS: Dict[str, Tuple[str, List[str], List[str], Callable[[Any], List[Row]], bool]] = {
    "mcts": ("mcts.py", ["--quick"], [], _rows_mcts, True),
    "perft": ("perft.py", ["--quick", "--no-callgrind"], [], _rows_perft, True),
    "c4_solver": ("c4_solver.py", ["--quick"], ["--sets", "end_easy,middle_easy,middle_medium,begin_easy",
                                                "--empty", "none"], _rows_c4, True),
    "mav_format": ("mav_format.py", ["--quick"], [], _rows_mav, True),
    "playout": ("playout.py", ["--quick"], [], _rows_playout, True),
    "train": ("train.py", ["--quick", "--threads", "1"], ["--threads", "1"], _rows_train, False),
}


def default_bench_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "bench"


def run(names: Sequence[str], full: bool, bench_dir: Path, extra: Dict[str, List[str]],
        echo: bool = True) -> Tuple[List[Row], Dict[str, str]]:
    """Runs the named benchmarks; (summary rows, {name: error}) ."""
    rows: List[Row] = []
    errors: Dict[str, str] = {}
    for name in names:
        script, quick_args, full_args, summarise, _ = BENCHMARKS[name]
        with tempfile.TemporaryDirectory(prefix="mavgame-bench-") as d:
            out = Path(d) / "out.json"
            cmd = [sys.executable, str(bench_dir / script)] + (full_args if full else quick_args) \
                + extra.get(name, []) + ["--json", str(out)]
            if echo:
                print(f"\n=== {name}: {' '.join(cmd[1:-2])}", flush=True)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, stdout=None if echo else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0 or not out.exists():
                errors[name] = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
                if echo:
                    print(f"=== {name}: FAILED: {errors[name]}")
                continue
            rows += summarise(json.loads(out.read_text()))
            if echo:
                print(f"=== {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    return rows, errors


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:,.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:,.1f}k"
    return f"{x:,.1f}"


def summary(rows: List[Row]) -> str:
    """The summary table (mavgame / peer per line; rates, higher is better)."""
    lines = [f"{'benchmark':<18} {'what':<32} {'mavgame':>10} {'peer':>10} {'ratio':>8}  unit, peer"]
    for bench, what, ours, theirs, note in rows:
        ratio = f"{ours / theirs:,.2f}x" if ours and theirs else "-"
        lines.append(f"{bench:<18} {what[:32]:<32} {_fmt(ours):>10} {_fmt(theirs):>10} {ratio:>8}  {note}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="short runs (the default)")
    mode.add_argument("--full", action="store_true", help="the settings of docs/benchmarks.md (several minutes)")
    ap.add_argument("--only", action="append", choices=sorted(BENCHMARKS),
                    help="run only this benchmark (repeat; default: all, train only with --full)")
    ap.add_argument("--pons", metavar="PATH", help="a c4solver binary built from Pascal Pons' sources (c4_solver)")
    ap.add_argument("--stockfish", metavar="PATH", help="the Stockfish binary to compare with (perft)")
    ap.add_argument("--bench-dir", type=Path, default=None, help="the bench/ directory (default: the source tree's)")
    ap.add_argument("--json", help="also write the summary rows to this file")
    args = ap.parse_args(argv)
    bench_dir = args.bench_dir or default_bench_dir()
    if not (bench_dir / "mcts.py").is_file():
        ap.error(f"no benchmark scripts in {bench_dir}: run from a mavgame source checkout or pass --bench-dir")
    names = args.only or [n for n, b in BENCHMARKS.items() if b[4] or args.full]
    extra: Dict[str, List[str]] = {}
    if args.pons:
        extra["c4_solver"] = ["--pons", args.pons]
    if args.stockfish:
        extra["perft"] = ["--stockfish", args.stockfish]
    t0 = time.perf_counter()
    rows, errors = run(names, args.full, bench_dir, extra)
    print(f"\nsummary ({'full' if args.full else 'quick'}, {time.perf_counter() - t0:.0f} s; medians of interleaved "
          "runs, CPU time; ratio = mavgame / peer, higher is better for mavgame)")
    print(summary(rows))
    for name, err in errors.items():
        print(f"{name}: failed: {err}")
    if args.json:
        Path(args.json).write_text(json.dumps([list(r) for r in rows], indent=1) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
