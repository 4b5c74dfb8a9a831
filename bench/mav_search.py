"""Speed of the internal-search traces (MAV-IS) in C against a straightforward pure-Python writer (same run).

    python bench/mav_search.py             # 300 Connect Four positions, median of 3 interleaved runs
    python bench/mav_search.py --quick     # 60 positions, one run
    python bench/mav_search.py --json out.json

Trees of depth 3 and breadth 5 (156 nodes; random action values: the writer's work does not depend on
them) from random mid-game Connect Four positions. Single thread, CPU time of the measuring thread.
  write   the trace (prompt + target) of each shape cut out of each tree:
          C: mavgame.mav.search_trace.write_trace (tree -> text, states and %state text computed in C);
          Python: the same text from the same tree with every node's state text, legal moves and
             annotation given for free (precomputed), ranking and buckets in Python.
  parse   the written traces read back with every check against the true root and the minimax choice:
          C: mavgame.mav.search_trace.parse_trace -> TraceResult (nodes as Python objects).
The two writers' outputs are compared before timing.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame import _core  # noqa: E402
from mavgame.mav.search_trace import build_search_tree, parse_trace, write_trace  # noqa: E402

SHAPES = [(2, 1), (3, 1), (3, 2), (4, 2), (5, 3)]


# ---- the pure-Python reference writer --------------------------------------------------------------------------

def py_state(game_text: str) -> str:
    """Connect Four %state from the game's text (rows top first, then the side to move)."""
    rows, side = game_text.split(" ")
    return side + " " + "".join(reversed(rows.split("/")))


def py_bucket(p: float) -> int:
    return min(63, int(p * 64))


class PyNode:
    __slots__ = ("text", "terminal", "result", "ranked", "children")

    def __init__(self, text, terminal, result, ranked):
        self.text, self.terminal, self.result, self.ranked, self.children = text, terminal, result, ranked, {}


def py_tree(tree):
    """The tree with what the Python writer is given for free: per node its game text, outcome and annotation
    (moves ranked by value, best first among equals, then annotation order), children by move."""
    states, nodes = [], []
    for i, (parent, action, acts, vals, best) in enumerate(tree.nodes):
        st = tree.root.copy() if i == 0 else states[parent].copy()
        move = None
        if i:
            move = states[parent].action_to_str(action)
            st.push(action)
        states.append(st)
        ranked = None
        if acts is not None:
            order = sorted(range(len(acts)), key=lambda k: (-vals[k], acts[k] != best, k))
            ranked = [(st.action_to_str(int(acts[k])), float(vals[k])) for k in order]
        nodes.append(PyNode(st.text(), st.is_terminal(), _core.State.result(st) if st.is_terminal() else "*", ranked))
        if i:
            nodes[parent].children[move] = nodes[-1]
    return nodes[0]


def py_write(root: PyNode, breadth: int, depth: int) -> str:
    out = [f"Minimax breadth={breadth} depth={depth}\n<mav game=connect_four> %state %top_all %best_action </mav>\n"
           f"[%state {py_state(root.text)}]\n"]

    def node(n: PyNode, path: str, d: int, is_root: bool) -> int:
        out.append(f"Evaluation for node: {path}\n")
        if not is_root:
            out.append(f"[%state {py_state(n.text)}]\n")
        if n.terminal:
            out.append(f"[%top_all invalid : \"{n.result}\"]\n[%best_action invalid]\n")
            return 32 if n.result == "1/2-1/2" else 0
        out.append("[%top_all " + " ".join(f"{m}:<ctrl{py_bucket(v)}>" for m, v in n.ranked) + "]\n")
        out.append(f"[%best_action {n.ranked[0][0]}]\n")
        if d == depth:
            m, v = n.ranked[0]
            out.append(f"Decision for node: {path}\nSelecting {m} : \"<ctrl{py_bucket(v)}>\"\n")
            return py_bucket(v)
        kids = [m for m, _ in n.ranked[:breadth]]
        paths = [path[:-1] + " " + m + ">" for m in kids]
        out.append(f"Expand from node {path}: " + " ".join(paths) + "\n")
        vals = [63 - node(n.children[m], p, d + 1, False) for m, p in zip(kids, paths)]
        sel = max(range(len(vals)), key=lambda k: (vals[k], -k))
        out.append(f"Decision for node: {path}\n" + " ".join(f"{m}:<ctrl{v}>" for m, v in zip(kids, vals))
                   + f"\nSelecting {kids[sel]} : \"<ctrl{vals[sel]}>\"\n")
        if is_root:
            out.append(f"Playing {kids[sel]}!\n")
        return vals[sel]

    node(root, "<root>", 0, True)
    return "".join(out)


# ---- measurement -----------------------------------------------------------------------------------------------

def trees(n, seed=1):
    rng = np.random.default_rng(seed)

    def annotate(st):
        return {m: float(rng.random()) for m in st.legal_moves}, None
    out = []
    while len(out) < n:
        s = _core.State("connect_four")
        for _ in range(int(rng.integers(6, 20))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        t = None if s.is_terminal() else build_search_tree(s, annotate, 3, 5)
        if t is not None:
            out.append(t)
    return out


def clock(fn):
    t = time.thread_time()
    r = fn()
    return time.thread_time() - t, r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    n, runs = (60, 1) if a.quick else (a.positions, a.runs)
    ts = trees(n)
    pys = [py_tree(t) for t in ts]
    for t, p in zip(ts, pys):  # the two writers agree
        for b, d in SHAPES:
            assert write_trace(t, b, d).text == py_write(p, b, d), (b, d)
    rows = []
    for b, d in SHAPES:
        cw, pw, cp = [], [], []
        texts = [write_trace(t, b, d) for t in ts]
        for _ in range(runs):  # interleaved
            cw.append(clock(lambda: [write_trace(t, b, d) for t in ts])[0])
            pw.append(clock(lambda: [py_write(p, b, d) for p in pys])[0])
            cp.append(clock(lambda: [parse_trace(tr.text, t.root, choice=tr.choice) for t, tr in zip(ts, texts)])[0])
        c, p, q = statistics.median(cw), statistics.median(pw), statistics.median(cp)
        size = float(np.mean([len(tr.text) for tr in texts]))
        rows.append({"shape": f"{b}x{d}", "bytes": size, "c_write_per_s": n / c, "py_write_per_s": n / p,
                     "ratio": p / c, "c_parse_per_s": n / q})
    print(f"MAV-IS traces, Connect Four, {n} trees (depth 3, breadth 5), single thread (thread CPU time), "
          f"median of {runs} interleaved run(s)")
    print(f"{'shape':>6} {'bytes':>7} {'C write/s':>10} {'Py write/s':>11} {'C/Py':>6} {'C parse/s':>10}")
    for r in rows:
        print(f"{r['shape']:>6} {r['bytes']:7.0f} {r['c_write_per_s']:10.0f} {r['py_write_per_s']:11.0f} "
              f"{r['ratio']:5.1f}x {r['c_parse_per_s']:10.0f}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
