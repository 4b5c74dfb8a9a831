#!/usr/bin/env python
"""Token counts of search traces (prompt + target, docs/format.md section 10) in MAV vocabularies v1 and v2.

    python tools/trace_tokens.py                      # the Connect Four midgame of docs/format.md
    python tools/trace_tokens.py --moves "4 4 3"      # another Connect Four position (moves from the start)
    python tools/trace_tokens.py --form full          # the full child form (each child repeats its inputs)

The tree is annotated by the Connect Four solver (depth 3, breadth 5, as the paper's targets); each shape's
trace is cut out of it and encoded with both vocabularies (no <bos>/<eos>).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame import _core, mav  # noqa: E402
from mavgame.mav.search_trace import build_search_tree, write_trace  # noqa: E402
from mavgame.datasets import make_annotator  # noqa: E402

SHAPES = [(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (2, 2), (3, 2), (4, 2), (2, 3)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", default="4 4 3 5 3 3 2 6 5 4 4 1 1 7", help="Connect Four moves to the root")
    ap.add_argument("--form", choices=["short", "full"], default="short", help="child form of the traces")
    args = ap.parse_args()
    s = _core.State("connect_four")
    for m in args.moves.split():
        s.push(m)
    tree = build_search_tree(s, make_annotator("connect_four", {"max_nodes": 1_000_000}), 3, 5)
    if tree is None:
        raise SystemExit("the solver gave up on a node (or the root is finished)")
    t1, t2 = mav.Tokenizer(1), mav.Tokenizer(2)
    print(f"root {s.text()}, child form {args.form}")
    print("| shape | v1 tokens | v2 tokens | v2 / v1 |")
    print("| --- | --- | --- | --- |")
    for b, d in SHAPES:
        text = write_trace(tree, b, d, args.form).text
        n1, n2 = len(t1.encode(text)), len(t2.encode(text))
        assert t2.decode(t2.encode(text)) == text
        print(f"| B{b} D{d} | {n1:,} | {n2:,} | {n2 / n1:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
