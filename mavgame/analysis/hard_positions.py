"""The positions a MAV model plays wrong: hard-example mining for a fine-tune.

    python -m mavgame.analysis.hard_positions MODEL SRC --out OUT [--workers 2] [--mirror] [--scoring mean]
    python -m mavgame.datasets.merge MIX SRC... OUT:4      # the hard positions four times in the stream

Reads the training split of SRC (a position set: `mavgame train --generate-only`, `mavgame.analysis.c4_play_positions`
or `mavgame.datasets.merge` output; a position listed several times is asked once), asks the model every live
annotated position in the plain form (`%state %top_all %best_action`), and picks the move the searchless agent
would play (`MAVGreedyAgent`'s rule: the highest value, `%best_action` among near ties; `--mirror` as
`mav:mirror=1`, both views averaged). OUT gets the records whose move is not a best move by the annotation (a
position set with a train split only, the records as SRC has them). The solver's labels are exact, so a
position the model plays wrong is hard, not mislabelled.

The work is done in chunks of `--chunk` positions, each written to OUT/parts when finished; run the command
again after a stop and it asks only the chunks that are missing. The summary (positions asked, played wrong,
by phase where the game has phases) is printed and stored in the set's manifest (`info`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple


def distinct_live(src: Path) -> List[Dict[str, Any]]:
    """SRC's training records, each state once, those with values and not finished."""
    from ..datasets.store import PositionStore
    store = PositionStore(src / "train")
    seen, out = set(), []
    for i in range(len(store)):
        rec = store.record(i)
        st = rec["state"]
        if st in seen or not rec.get("values") or rec.get("result", "*") != "*":
            continue
        seen.add(st)
        out.append(rec)
    return out


def played_wrong(model_path: str, game: str, records: List[Dict[str, Any]], scoring: str,
                 mirror: bool) -> List[bool]:
    """For each record: does the searchless agent's move miss the annotation's best value?"""
    from .. import State
    from ..agents.mav import MAVGreedyAgent
    from ..datasets.records import is_best_move
    agent = MAVGreedyAgent(model_path, scoring=scoring, mirror=mirror)
    agent.setup(game, seed=0)
    return [not is_best_move(r["values"], agent.decide(State(game, r["state"]))[0]) for r in records]


def _work(args: Tuple[str, str, List[Dict[str, Any]], str, bool, str]) -> None:
    """Ask one chunk and write its part file (the count asked, then the records played wrong) atomically."""
    model_path, game, recs, scoring, mirror, part = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    wrong = played_wrong(model_path, game, recs, scoring, mirror)
    tmp = part + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps({"asked": len(recs)}) + "\n")
        for r, w in zip(recs, wrong):
            if w:
                f.write(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n")
    os.replace(tmp, part)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.hard_positions",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("model", help="an exported MAV model (.safetensors)")
    ap.add_argument("src", help="a position set (a folder with train/)")
    ap.add_argument("--out", required=True, help="the position set of hard positions to write")
    ap.add_argument("--scoring", choices=("mean", "max"), default="mean")
    ap.add_argument("--mirror", action="store_true", help="the agent averages both views (Connect Four)")
    ap.add_argument("--workers", type=int, default=1, help="processes (one model each)")
    ap.add_argument("--chunk", type=int, default=5000, help="positions per resumable chunk")
    ap.add_argument("--limit", type=int, default=0, help="ask only the first N distinct live positions")
    args = ap.parse_args(argv)
    if args.workers < 1 or args.chunk < 1 or args.limit < 0:
        ap.error("--workers and --chunk must be positive, --limit not negative")
    from ..datasets.store import PositionStore, PositionWriter
    src, out = Path(args.src), Path(args.out)
    game = PositionStore(src / "train").game
    mirror = bool(args.mirror)
    if mirror:
        from ..datasets.symmetry import require_mirror
        require_mirror(game, "--mirror")
    recs = distinct_live(src)
    if args.limit:
        recs = recs[:args.limit]
    parts = out / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    stamp = {"model": str(args.model), "src": str(src), "scoring": args.scoring, "mirror": mirror,
             "chunk": args.chunk, "limit": args.limit}
    stamp_path = parts / "recipe.json"
    if stamp_path.exists() and json.loads(stamp_path.read_text()) != stamp:
        sys.exit(f"{parts} was started with another recipe ({stamp_path.read_text().strip()}); "
                 f"remove {out} or use the same options")
    stamp_path.write_text(json.dumps(stamp, sort_keys=True))
    jobs = []
    for i in range(0, len(recs), args.chunk):
        part = str(parts / f"part-{i // args.chunk:05d}.jsonl")
        if not os.path.exists(part):
            jobs.append((args.model, game, recs[i:i + args.chunk], args.scoring, mirror, part))
    print(f"{len(recs)} distinct live positions, {len(jobs)} of {-(-len(recs) // args.chunk)} chunks to ask",
          file=sys.stderr)
    if jobs:
        from .._progress import tqdm
        bar = tqdm(total=len(jobs), desc="chunks", unit="chunk")
        if args.workers == 1:
            for job in jobs:
                _work(job)
                bar.update(1)
        else:
            from ..workers import pool as worker_pool
            with worker_pool(args.workers) as pool:
                for _ in pool.imap_unordered(_work, jobs):
                    bar.update(1)
        bar.close()
    asked = 0
    hard: List[Dict[str, Any]] = []
    for part in sorted(parts.glob("part-*.jsonl")):
        with open(part, encoding="utf-8") as f:
            asked += json.loads(f.readline())["asked"]
            for line in f:
                hard.append(json.loads(line))
    wrong = len(hard)
    summary: Dict[str, Any] = {"asked": asked, "played_wrong": wrong,
                               "rate_best": round(1 - wrong / asked, 4) if asked else None, **stamp}
    phases = _phases(game)
    if phases and all("ply" in r for r in recs):
        by = {}
        for name, lo, hi in phases:
            n = sum(lo <= r["ply"] <= hi for r in recs)
            w = sum(lo <= r["ply"] <= hi for r in hard)
            by[name] = {"asked": n, "played_wrong": w, "rate_best": round(1 - w / n, 4) if n else None}
        summary["by_phase"] = by
    for split in ("train", "val"):
        if (out / split / "manifest.json").exists():
            (out / split / "manifest.json").unlink()
    with PositionWriter(out, game, val_fraction=0.0, info={"hard_positions": summary}) as w:
        for r in hard:
            w.add(r)
    print(json.dumps(summary, indent=1, sort_keys=True))
    return 0


def _phases(game: str):
    from ..games import registry
    return registry.get(game).phases if game in registry.names() else ()


if __name__ == "__main__":
    sys.exit(main())
