"""``mavgame bench``: single-thread speed of the C core; ``--peers`` runs bench/'s comparisons with the
strongest installed peers and prints their summary.

With ``--peers``, each benchmark script in the source tree's ``bench/`` directory runs mavgame and its strongest
installed peer in the same process, interleaved, and reports medians of CPU time (docs/benchmarks.md explains
every figure).  They run one after the other in fresh processes (the default: well under a few minutes;
``--full``: the settings of the figures in docs/benchmarks.md, several minutes and callgrind instruction counts)
and their ``--json`` output is collected into one table of mavgame's figure, the peer's and the ratio.  A peer
that is not installed (OpenSpiel, Stockfish, python-chess, torch, valgrind) leaves its cells empty.  The scripts
live in the repository, not in the installed package: run this from a source checkout (or pass ``--bench-dir``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import _core
from ..games import registry
from .options import (fail,
                      positive_float)

DESCRIPTION = ('Single-thread speed of the C core for each game: perft (deepened until it takes a quarter of the '
               'budget), uniformly random playouts, the playout UCT baseline and MAV-MCTS with its playout '
               'evaluator.  See bench/ for the comparisons with other libraries.')


# ---- the peer benchmarks of bench/ (--peers) -----------------------------------------------------

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
    return Path(__file__).resolve().parents[2] / "bench"


def run_benchmarks(names: Sequence[str], full: bool, bench_dir: Path, extra: Dict[str, List[str]],
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


def run_peers(args: argparse.Namespace) -> int:
    """``mavgame bench --peers``: run the benchmarks of bench/ and print the summary table."""
    bench_dir = args.bench_dir or default_bench_dir()
    if not (bench_dir / "mcts.py").is_file():
        raise fail(f"bench --peers: no benchmark scripts in {bench_dir}: run from a mavgame source checkout or "
                   "pass --bench-dir")
    names = args.only or [n for n, b in BENCHMARKS.items() if b[4] or args.full]
    extra: Dict[str, List[str]] = {}
    if args.pons:
        extra["c4_solver"] = ["--pons", args.pons]
    if args.stockfish:
        extra["perft"] = ["--stockfish", args.stockfish]
    t0 = time.perf_counter()
    rows, errors = run_benchmarks(names, args.full, bench_dir, extra)
    print(f"\nsummary ({'full' if args.full else 'quick'}, {time.perf_counter() - t0:.0f} s; medians of interleaved "
          "runs, CPU time; ratio = mavgame / peer, higher is better for mavgame)")
    print(summary(rows))
    for name, err in errors.items():
        print(f"{name}: failed: {err}")
    if args.json:
        Path(args.json).write_text(json.dumps([list(r) for r in rows], indent=1) + "\n")
    return 1 if errors else 0


# ---- the signature (--signature): node and visit counts over fixed positions and seeds ---------------------

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def signature(model: bool = True) -> Dict[str, int]:
    """Counts that any change to move generation or search changes: perft of fixed positions, the Connect Four
    solver's nodes, the visit distributions and tree sizes of seeded MCTS searches, and (``model``) a
    MAV-MCTS search with the shipped model. ``total`` sums them: the one number quoted in commits that touch
    search or move generation (as Stockfish's ``bench``). Deterministic for one build; the MAV-MCTS part can
    differ between machines whose matrix kernels differ (AVX2 or not), so it is also given apart."""
    from .. import Chess, ConnectFour, Gardner, Hex, TicTacToe
    from ..search.mcts import MCTS
    parts: Dict[str, int] = {
        "perft chess start 5": Chess().perft(5),
        "perft kiwipete 4": Chess(KIWIPETE).perft(4),
        "perft connect_four 8": ConnectFour().perft(8),
        "perft gardner 5": Gardner().perft(5),
        "perft hex5 4": Hex(size=5).perft(4),
        "perft tictactoe 9": TicTacToe().perft(9),
    }
    from ..games.connect_four import solver as c4_solver
    for moves in ("3332221111", "4444333", "44444422"):
        r = ConnectFour.from_moves(moves).solve(solver=c4_solver(20, book=False))   # a fresh table, no book
        parts[f"solve connect_four {moves}"] = int(r.nodes) + 1000 * (int(r.score) + 100)

    def searched(res) -> int:
        v = [int(x) for x in res.visits]
        return sum((i + 1) * x for i, x in enumerate(v)) + int(res.stats["nodes"]) + int(res.stats["edges"])

    for name, state, sims in (("connect_four 44", ConnectFour.from_moves("44"), 3000),
                              ("chess start", Chess(), 2000), ("hex5", Hex(size=5), 2000)):
        parts[f"mcts playout {name}"] = searched(MCTS("playout", num_simulations=sims, seed=7).search(state))
    if model:
        from ..agents.mav import NativeMAVEvaluator
        from ..model.inference import MAVModel
        ev = NativeMAVEvaluator(MAVModel.load(threads=1), scoring="mean", batch_size=1)
        parts["mav_mcts connect_four 4453"] = searched(
            MCTS(ev, num_simulations=64, batch_size=1, seed=7).search(ConnectFour.from_moves("4453")))
    parts["total"] = sum(parts.values())
    return parts


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", action="append", help="a game to measure (repeat; default: all)")
    p.add_argument("--board-size", type=int, default=0, help="Hex board size (default: 11)")
    p.add_argument("--seconds", type=positive_float, default=0.5,
                    help="time budget per measurement (default: 0.5)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--signature", action="store_true",
                   help="instead: print the node and visit counts of fixed searches (perft, solver, MCTS, MAV-MCTS "
                        "with the shipped model) and their sum, the one number to quote in commits that touch search "
                        "or move generation")
    p.add_argument("--no-model", action="store_true", help="with --signature: leave out the MAV-MCTS search")
    p.add_argument("--peers", action="store_true",
                   help="instead: run bench/'s comparisons with the strongest installed peers and print a summary "
                        "(--full for the docs' settings)")
    p.add_argument("--full", action="store_true", help="with --peers: the settings of docs/benchmarks.md (several minutes)")
    p.add_argument("--only", action="append", choices=sorted(BENCHMARKS),
                   help="with --peers: run only this benchmark (repeat; default: all, train only with --full)")
    p.add_argument("--pons", metavar="PATH", help="with --peers: a c4solver binary built from Pascal Pons' sources")
    p.add_argument("--stockfish", metavar="PATH", help="with --peers: the Stockfish binary to compare with (perft)")
    p.add_argument("--bench-dir", type=Path, default=None,
                   help="with --peers: the bench/ directory (default: the source tree's)")
    p.add_argument("--json", help="with --peers: also write the summary rows to this file")


def cmd_bench(args: argparse.Namespace) -> int:
    if args.signature:
        parts = signature(model=not args.no_model)
        for k, v in parts.items():
            if k != "total":
                print(f"{k:<34} {v:>14,}", file=sys.stderr)
        print(f"signature {parts['total']}")
        return 0
    if args.peers or args.full or args.only or args.bench_dir:
        return run_peers(args)

    games = args.game or registry.names()
    rows = []
    try:
        from .._progress import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None
    items = [(g, k) for g in games for k in ("perft", "playouts", "uct", "mcts")]
    bar = tqdm(items, desc="bench", unit="test", disable=args.no_progress) if tqdm else items
    for g, kind in bar:
        try:
            s = registry.get(g).state(None, args.board_size)
        except ValueError as e:
            raise fail(str(e))
        budget = args.seconds
        if kind == "perft":
            depth, n, dt = 0, 0, 0.0
            while depth < 12:  # deepen until one perft takes at least the budget / 4, or the tree ends
                t = time.perf_counter()
                m = s.perft(depth + 1)
                if m == 0:     # deeper than every game lasts (tic-tac-toe past 9 plies): keep the last
                    break
                depth, n, dt = depth + 1, m, time.perf_counter() - t
                if dt >= budget / 4:
                    break
            rows.append((g, f"perft({depth})", n, dt, "nodes"))
        elif kind == "playouts":
            n, dt, k = 0, 0.0, 64
            while dt < budget:
                t = time.perf_counter()
                _core.random_playouts(s, k, seed=n)
                dt += time.perf_counter() - t
                n += k
                k = min(k * 2, 1 << 16)
            rows.append((g, "random playouts", n, dt, "playouts"))
        elif kind == "uct":
            n, dt = 0, 0.0
            while dt < budget:
                t = time.perf_counter()
                _core.playout_mcts(s, 1000, seed=n)
                dt += time.perf_counter() - t
                n += 1000
            rows.append((g, "playout UCT (1000 sims)", n, dt, "sims"))
        else:
            from ..search.mcts import MCTS
            n, dt = 0, 0.0
            while dt < budget:
                m = MCTS("playout", num_simulations=1000, seed=n, reuse_tree=False)
                t = time.perf_counter()
                m.search(s)
                dt += time.perf_counter() - t
                n += 1000
            rows.append((g, "MAV-MCTS, playout evaluator (1000 sims)", n, dt, "sims"))
    if hasattr(bar, "close"):
        bar.close()
    w = max(len(r[1]) for r in rows)
    gw = max(len(r[0]) for r in rows)
    print(f"{'game':<{gw}}  {'test':<{w}}  {'count':>12}  {'seconds':>8}  {'rate':>16}")
    for g, name, n, dt, unit in rows:
        rate = n / dt if dt > 0 else float("inf")
        print(f"{g:<{gw}}  {name:<{w}}  {n:>12}  {dt:>8.3f}  {rate:>11.3g} {unit}/s")
    print(f"(one thread; {os.cpu_count()} CPUs on this machine)", file=sys.stderr)
    return 0


run = cmd_bench
