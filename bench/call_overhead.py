"""Python call overhead of tiny calls: ns per call of a move, a legal-move list, a short Connect Four solve and a
one-simulation MCTS search, beside a trivial call (the floor every call pays) and python-chess.

    python bench/call_overhead.py                       # every row, median of 7 rounds
    python bench/call_overhead.py --rounds 15 --json out.json
    python bench/call_overhead.py --compare /tmp/before # interleaved processes: a copy of an older mavgame/ in
                                                        # /tmp/before (its parent on sys.path) against this one
    python bench/call_overhead.py --callgrind           # instructions per call of each row (valgrind)
    python bench/call_overhead.py --only "legal_moves" --calls 1000   # one row, untimed (for a profiler)

Each row times a statement with ``timeit`` (enough repetitions for ~20 ms a round), ``--rounds`` rounds
interleaved across rows (row 1, row 2, ..., row 1, row 2, ...), and prints the median ns per call and the
median minus the baseline row ``len(x)`` through a lambda (a C builtin with one argument: the interpreter's
cost of any call made this way).  For the rows that do real C work (move generation, a solve, a search), the
``C work`` column gives that work's own time where the core measures it (the search's elapsed time), so that
overhead = total - baseline - work.

``--compare DIR`` runs one round of every row in a child process for DIR's mavgame, then one for this
checkout's, ``--rounds`` times alternately, and prints both medians per row (the before / after of a change on a
noisy machine).  ``--callgrind`` runs each row under ``valgrind --tool=callgrind`` twice, with ``--calls`` and
twice as many calls, and prints (Ir(2N) - Ir(N)) / N: the instructions of one call, start-up and warm-up
cancelled; with ``--pythonpath DIR`` for DIR's mavgame.

The MCTS rows search afresh each call (``reuse_tree=False``; ``set_root`` makes a new tree), so that every call
does the same work (with tree reuse each call would add a simulation to a growing tree).  A SearchResult builds
its fields when they are first read: the ``+ every field read`` and ``.best_move`` rows add that cost.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import operator
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import timeit
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def _setup_path(argv: List[str]) -> None:
    """Put --pythonpath's directory (or this checkout) first on sys.path before mavgame is imported."""
    path = ROOT
    for i, a in enumerate(argv):
        if a == "--pythonpath" and i + 1 < len(argv):
            path = argv[i + 1]
        elif a.startswith("--pythonpath="):
            path = a.split("=", 1)[1]
    sys.path.insert(0, os.path.abspath(path))


Row = Tuple[str, Callable[[], object], Optional[Callable[[], float]]]


def rows() -> List[Row]:
    """(name, zero-argument callable doing one call, optional callable giving the C work in seconds)."""
    import mavgame
    from mavgame import _core

    out: List[Row] = []
    x = [1, 2, 3]
    out.append(("baseline: len(list)", lambda: len(x), None))
    st = _core.State("chess")
    out.append(("baseline: State.ply (C getter)", lambda: st.ply, None))

    b = mavgame.Chess()
    e4 = b.parse_move("e2e4")
    e4_move = next(m for m in b.legal_moves if m == "e2e4")
    push, pop = b.push, b.pop

    def push_pop_int() -> None:
        push(e4)
        pop()

    def push_pop_uci() -> None:
        push("e2e4")
        pop()

    def push_pop_move() -> None:
        push(e4_move)
        pop()

    out.append(("chess push(int)+pop", push_pop_int, None))
    out.append(("chess push('e2e4')+pop", push_pop_uci, None))
    out.append(("chess push(Move)+pop", push_pop_move, None))
    out.append(("chess State.legal_actions() (ndarray)", b.legal_actions, None))
    mstrings = _core.State.legal_moves.__get__
    out.append(("chess State.legal_moves (list[str])", lambda: mstrings(b), None))
    out.append(("chess list(board.legal_moves) (Move)", lambda: list(b.legal_moves), None))
    out.append(("chess action_to_str(e4)", lambda: b.action_to_str(e4), None))
    try:
        import chess
        pb = chess.Board()
        mv = chess.Move.from_uci("e2e4")

        def pc_push_pop() -> None:
            pb.push(mv)
            pb.pop()

        out.append(("python-chess push(Move)+pop", pc_push_pop, None))
        out.append(("python-chess list(board.legal_moves)", lambda: list(pb.legal_moves), None))
    except ImportError:
        pass

    # a short Connect Four solve: 28 plies in, 125 nodes with a 2^10-entry table (reused between calls)
    c4 = mavgame.ConnectFour.from_moves("7627114265154321467311626324")
    solver = mavgame.games.connect_four.solver(10, book=False)
    out.append(("connect_four solve (125 nodes, moves=False)", lambda: c4.solve(solver=solver, moves=False), None))
    out.append(("connect_four solve (moves=True)", lambda: c4.solve(solver=solver), None))

    # one simulation of the C tree with the C constant evaluator, and through the Python MCTS class
    tree = _core.MCTSTree("connect_four")
    ev = _core.mcts_constant_evaluator(0.5)
    c4s = mavgame.ConnectFour()

    def tree_search() -> None:
        tree.set_root(c4s, 0)
        tree.search(ev, 1)

    # C work: the search's own elapsed time (mg_mcts_search), read after the timed calls
    out.append(("MCTSTree set_root+search(1)", tree_search, lambda: float(tree.stats()["elapsed"])))
    out.append(("MCTSTree set_root(state, 0)", lambda: tree.set_root(c4s, 0), None))
    out.append(("MCTSTree search(ev, 0)", lambda: tree.search(ev, 0), None))
    out.append(("MCTSTree search(ev, num_simulations=0) kw", lambda: tree.search(ev, num_simulations=0), None))
    from mavgame.search.mcts import MCTS
    mcts = MCTS(ev, num_simulations=1, seed=0, reuse_tree=False)
    out.append(("MCTS(...).search(c4), 1 simulation", lambda: mcts.search(c4s), None))
    mcts_chess = MCTS(ev, num_simulations=1, seed=0, reuse_tree=False)
    out.append(("MCTS(...).search(chess), 1 simulation", lambda: mcts_chess.search(b), None))
    # the same search with every field of its SearchResult read (each is built from the C copy when first read)
    from mavgame.search.results import SearchResult
    fields_of = operator.attrgetter(*(f.name for f in dataclasses.fields(SearchResult)))
    out.append(("MCTS(...).search(c4) + every field read", lambda: fields_of(mcts.search(c4s)), None))
    out.append(("MCTS(...).search(c4).best_move", lambda: mcts.search(c4s).best_move, None))
    return out


def measure(fn: Callable[[], object], target_s: float = 0.02) -> Tuple[int, float]:
    """(number, seconds for `number` calls) with number chosen for about target_s seconds."""
    t = timeit.Timer(fn)
    n, _ = t.autorange()
    n = max(1, int(n * target_s / 0.2))
    return n, t.timeit(n)


def run(rounds: int, quiet: bool = False) -> List[dict]:
    """``rounds`` interleaved rounds of every row: one dict per row (call, ns, minus_baseline, c_work_ns)."""
    rs = rows()
    samples: Dict[str, List[float]] = {name: [] for name, _, _ in rs}
    work: Dict[str, List[float]] = {name: [] for name, _, _ in rs}
    for _ in range(rounds):
        for name, fn, w in rs:
            n, s = measure(fn)
            samples[name].append(1e9 * s / n)
            if w is not None:
                work[name].append(1e9 * w())
    base = statistics.median(samples[rs[0][0]])
    out = []
    if not quiet:
        print(f"median of {rounds} interleaved rounds, ns per call; overhead = ns - baseline len(list) ({base:.0f} ns)")
        print(f"{'call':44s} {'ns/call':>9s} {'- base':>9s} {'C work':>9s}")
    for name, _, _ in rs:
        ns = statistics.median(samples[name])
        wk = statistics.median(work[name]) if work[name] else None
        out.append({"call": name, "ns": ns, "minus_baseline": ns - base, "c_work_ns": wk, "samples": samples[name]})
        if not quiet:
            print(f"{name:44s} {ns:9.0f} {ns - base:9.0f} {'' if wk is None else f'{wk:9.0f}':>9s}")
    return out


def _child(extra: List[str]) -> List[dict]:
    """One round of every row in a child process (its mavgame from --pythonpath in `extra`)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--rounds", "1", "--quiet", "--json", path] + extra,
                       check=True)
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def compare(before: str, rounds: int) -> List[dict]:
    """Alternate child processes of the `before` copy and this checkout; medians of each row's ns."""
    b: Dict[str, List[float]] = {}
    a: Dict[str, List[float]] = {}
    order: List[str] = []
    for r in range(rounds):
        for extra, acc in (([f"--pythonpath={before}"], b), ([f"--pythonpath={ROOT}"], a)):
            for row in _child(extra):
                if row["call"] not in order:
                    order.append(row["call"])
                acc.setdefault(row["call"], []).append(row["ns"])
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    out = []
    print(f"median of {rounds} interleaved rounds (a child process per version and round), ns per call")
    print(f"{'call':44s} {'before':>9s} {'after':>9s} {'ratio':>7s}")
    for name in order:
        mb = statistics.median(b[name]) if name in b else float("nan")
        ma = statistics.median(a[name]) if name in a else float("nan")
        out.append({"call": name, "before_ns": mb, "after_ns": ma, "before": b.get(name), "after": a.get(name)})
        print(f"{name:44s} {mb:9.0f} {ma:9.0f} {mb / ma:7.2f}")
    return out


def only(pattern: str, calls: int) -> None:
    """Run the first row whose name contains `pattern` `calls` times, untimed (for a profiler)."""
    for name, fn, _ in rows():
        if pattern in name:
            fn()   # warm (lazy caches, first-use allocations) before counting
            for _ in range(calls):
                fn()
            return
    raise SystemExit(f"no row matches {pattern!r}")


def _marked(calls: int, pattern: Optional[str]) -> None:
    """What --callgrind runs under valgrind: for each row, warm-up calls, then os.getppid() (the marker callgrind
    dumps its counters before), `calls` calls, the marker, 2 * `calls` calls, the marker; the row's name on stdout."""
    mark = os.getppid
    for i, (name, fn, _) in enumerate(rows()):
        if pattern and pattern not in name and i > 0:
            continue
        for _ in range(50):
            fn()
        mark()
        for _ in range(calls):
            fn()
        mark()
        for _ in range(2 * calls):
            fn()
        mark()
        print(name, flush=True)


def callgrind(calls: int, pythonpath: str, pattern: Optional[str] = None, keep: Optional[str] = None) -> List[dict]:
    """Instructions per call of each row (those whose name contains `pattern`, and the baseline): one valgrind run
    whose counters are dumped at each marker (``--dump-before=os_getppid``); a row's count is (Ir of its 2N-call
    segment - Ir of its N-call segment) / N, so start-up, warm-up and the loop's set-up cancel.  ``keep``: a
    directory to leave the dumps in (``callgrind_annotate DIR/cg.out.<3 i + 3>`` shows where row i's 2N calls
    spend)."""
    out_dir = keep or tempfile.mkdtemp(prefix="call_overhead_cg.")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.startswith("cg.out"):
            os.unlink(os.path.join(out_dir, f))
    cmd = ["valgrind", "--tool=callgrind", "--dump-before=os_getppid", "--compress-strings=no",
           f"--callgrind-out-file={out_dir}/cg.out",
           sys.executable, os.path.abspath(__file__), f"--pythonpath={pythonpath}", "--marked", "--calls", str(calls)]
    if pattern:
        cmd += ["--only", pattern]
    # the same dict layouts in every run, and no BLAS worker threads spinning: the counts repeat exactly
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"callgrind failed:\n{p.stderr[-3000:]}")
    names = p.stdout.split("\n")[:-1]

    def total(part: int) -> int:
        with open(os.path.join(out_dir, f"cg.out.{part}")) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
        raise SystemExit(f"no totals in {out_dir}/cg.out.{part}")

    out: List[dict] = []
    print(f"callgrind instructions per call: (Ir of {2 * calls} calls - Ir of {calls}) / {calls}, and minus the "
          f"first row's (the baseline); mavgame from {os.path.abspath(pythonpath)}")
    for i, name in enumerate(names):
        ir = (total(3 * i + 3) - total(3 * i + 2)) / calls
        base = out[0]["ir"] if out else ir
        out.append({"call": name, "ir": ir, "minus_baseline": ir - base, "dump": f"{out_dir}/cg.out.{3 * i + 3}"})
        print(f"{name:44s} {ir:9.0f} {ir - base:9.0f}")
    if not keep:
        shutil.rmtree(out_dir, ignore_errors=True)
    return out


def main(argv: Optional[List[str]] = None) -> List[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median reported)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--quiet", action="store_true", help="print nothing (with --json)")
    ap.add_argument("--pythonpath", default=ROOT, help="the directory whose mavgame/ is measured (default: this checkout)")
    ap.add_argument("--compare", metavar="DIR", help="before/after: DIR's mavgame against --pythonpath's, interleaved")
    ap.add_argument("--callgrind", action="store_true", help="instructions per call of each row (valgrind)")
    ap.add_argument("--only", metavar="PATTERN", help="run the first row matching PATTERN --calls times, untimed "
                    "(with --callgrind: measure only the rows matching it)")
    ap.add_argument("--calls", type=int, default=2000, help="calls for --only / --callgrind (default 2000)")
    ap.add_argument("--keep", metavar="DIR", help="with --callgrind: leave the callgrind dumps in DIR")
    ap.add_argument("--marked", action="store_true", help=argparse.SUPPRESS)   # the process --callgrind measures
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    if args.calls < 1:
        ap.error(f"--calls must be >= 1, got {args.calls}")
    if args.marked:
        _marked(args.calls, args.only)
        return []
    if args.callgrind:
        res = callgrind(args.calls, args.pythonpath, args.only, args.keep)
    elif args.only:
        only(args.only, args.calls)
        return []
    elif args.compare:
        res = compare(args.compare, args.rounds)
    else:
        res = run(args.rounds, quiet=args.quiet)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    _setup_path(sys.argv[1:])
    main()
