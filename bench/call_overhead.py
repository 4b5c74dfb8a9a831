"""Python call overhead of tiny calls: ns per call of a move, a legal-move list, a short Connect Four solve and a
one-simulation MCTS search, beside a trivial C-extension call (the floor every call pays) and python-chess.

    python bench/call_overhead.py                 # every row, median of 7 rounds
    python bench/call_overhead.py --rounds 15 --json out.json

Each row times a statement with ``timeit`` (enough repetitions for ~20 ms a round), ``--rounds`` rounds
interleaved across rows (row 1, row 2, ..., row 1, row 2, ...), and prints the median ns per call and the
median minus the baseline row ``len(x)`` (a C builtin with one argument: the interpreter's cost of any
call).  ``overhead`` is that difference for the rows whose C work is negligible (a push of a known action,
the core's own getter); for the rows that do real work (move generation, a solve, a search), the ``work``
column gives the C-level cost where it can be measured without Python (the same call's native work timed
inside C: the solver's and the search's own elapsed time), so that overhead = total - work.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import timeit
from typing import Callable, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402

Row = Tuple[str, Callable[[], object], Optional[Callable[[], float]]]


def rows() -> List[Row]:
    """(name, zero-argument callable doing one call, optional callable giving the C work in seconds)."""
    out: List[Row] = []
    x = [1, 2, 3]
    out.append(("baseline: len(list)", lambda: len(x), None))
    st = _core.State("chess")
    out.append(("baseline: State.ply (C getter)", lambda: st.ply, None))

    b = mavgame.Chess()
    e4 = b.parse_move("e2e4")
    push, pop = b.push, b.pop

    def push_pop_int() -> None:
        push(e4)
        pop()

    def push_pop_uci() -> None:
        push("e2e4")
        pop()

    out.append(("chess push(int)+pop", push_pop_int, None))
    out.append(("chess push('e2e4')+pop", push_pop_uci, None))
    out.append(("chess State.legal_actions() (ndarray)", b.legal_actions, None))
    mstrings = _core.State.legal_moves.__get__
    out.append(("chess State.legal_moves (list[str])", lambda: mstrings(b), None))
    out.append(("chess list(board.legal_moves) (Move)", lambda: list(b.legal_moves), None))
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
    from mavgame.search.mcts import MCTS
    mcts = MCTS(ev, num_simulations=1, seed=0)
    out.append(("MCTS(...).search(state), 1 simulation", lambda: mcts.search(c4s), None))
    return out


def measure(fn: Callable[[], object], target_s: float = 0.02) -> Tuple[int, float]:
    """(number, seconds for `number` calls) with number chosen for about target_s seconds."""
    t = timeit.Timer(fn)
    n, _ = t.autorange()
    n = max(1, int(n * target_s / 0.2))
    return n, t.timeit(n)


def run(rounds: int, quiet: bool = False) -> List[dict]:
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
        out.append({"call": name, "ns": ns, "minus_baseline": ns - base, "c_work_ns": wk})
        if not quiet:
            print(f"{name:44s} {ns:9.0f} {ns - base:9.0f} {'' if wk is None else f'{wk:9.0f}':>9s}")
    return out


def main(argv: Optional[List[str]] = None) -> List[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median reported)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    res = run(args.rounds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
