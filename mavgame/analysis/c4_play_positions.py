"""Connect Four positions from real play, solver-annotated, as a MAV data set (issue 13).

The epsilon-greedy data (``mavgame train --games``) holds the positions of near-perfect play; a MAV trained
on it meets other positions when it plays (the threats that a playout MCTS makes and leaves).  This reads the
games of league or match stores (``mavgame match ... --out FILE.sqlite``), keeps every distinct position of
them (with the position and move before it, for the transition form; finished positions included), annotates
each with the perfect solver (the same annotator and values as the generated data) and writes them with
the generated data's train / validation split (a position is in the validation split of every set made with
the same ``--val-fraction``, so a model trained on both never sees the other's validation positions)::

    python -m mavgame.analysis.c4_play_positions runs/c4play/*.sqlite --out runs/c4play-data --val-fraction 0.01
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..annotators.connect_four import connect_four_annotator
from ..games.connect_four import ConnectFour
from ..datasets.store import PositionWriter
from ..play.store import ResultStore, StoreError


def stored_games(path: str, tool: str = "c4_play_positions.py"):
    """The Connect Four games of a results store, checked by :class:`mavgame.play.store.ResultStore`, in key
    order; SystemExit naming ``tool`` and the file when it is not a store or holds refused rows."""
    try:
        st = ResultStore(path, create=False)
    except StoreError as e:
        raise SystemExit(f"{tool}: {e}") from None
    try:
        recs, refused = st.games("connect_four")
    finally:
        st.close()
    if refused:
        raise SystemExit(refused[0])
    return sorted(recs, key=lambda r: r.key)


def positions(stores):
    """(record without annotation, ConnectFour) for each distinct position of the stores' games."""
    seen = set()
    for path in stores:
        for g in stored_games(path):
            st, prev = ConnectFour(), None
            for m in g.opening_moves:
                prev = (st.text(), m)
                st.push(m)
            for m in g.moves + [None]:
                text = st.text()
                if text not in seen:
                    seen.add(text)
                    yield {"state": text, "prev_state": prev[0] if prev else None,
                           "prev_action": prev[1] if prev else None, "ply": st.ply}, st.copy()
                if m is None or st.is_terminal():
                    break
                prev = (text, m)
                st.push(m)


_ANNOTATE = None


def _init(options):
    global _ANNOTATE
    _ANNOTATE = connect_four_annotator(options)


def _annotate(text):
    """(values, best) of a live position, or None where the budget ran out."""
    return _ANNOTATE(ConnectFour(text))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.c4_play_positions",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", nargs="+", help="league / match SQLite stores of Connect Four games")
    ap.add_argument("--out", required=True, help="directory of the new data set (must not hold one)")
    ap.add_argument("--val-fraction", type=float, default=0.01,
                    help="share of positions held out, by the state's hash (the generated data's: 0.01)")
    ap.add_argument("--min-ply", type=int, default=0, help="leave out positions with fewer stones")
    ap.add_argument("--max-nodes", type=int, default=0,
                    help="solver nodes per position (0: no limit); a position over it is left out (which ones "
                         "depends on what the solver's table holds, so on the order a process meets them)")
    ap.add_argument("--workers", type=int, default=2, help="solver processes (default: 2; 1: in this process)")
    args = ap.parse_args(argv)
    for s in args.stores:
        if not Path(s).is_file():
            ap.error(f"no such store: {s!r}")
    options = {"weak": 1, "max_nodes": args.max_nodes, "tt_log2": 24}
    t0 = time.perf_counter()
    counts = {"train": 0, "val": 0, "finished": 0, "skipped_ply": 0, "skipped_budget": 0}
    items = []
    for rec, st in positions(args.stores):
        if st.ply < args.min_ply:
            counts["skipped_ply"] += 1
        elif st.is_terminal():
            items.append(dict(rec, values={}, best=None, result=st.result()))
        else:
            items.append(rec)
    live = [r["state"] for r in items if "result" not in r]
    if args.workers <= 1:
        _init(options)
        answers = {text: _annotate(text) for text in live}
    else:
        from ..workers import pool as worker_pool
        with worker_pool(args.workers, _init, (options,)) as pool:
            answers = dict(zip(live, pool.imap(_annotate, live, chunksize=8)))
    with PositionWriter(args.out, "connect_four", val_fraction=args.val_fraction,
                        info={"source": [str(s) for s in args.stores], "annotator": options}) as w:
        for rec in items:
            if "result" in rec:
                counts["finished"] += 1
            elif answers[rec["state"]] is None:
                counts["skipped_budget"] += 1
                continue
            else:
                values, best = answers[rec["state"]]
                rec.update(values=values, best=best, result="*")
            counts[w.add(rec)] += 1
    counts["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
