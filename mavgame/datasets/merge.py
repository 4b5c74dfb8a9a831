"""Merge position sets (or search-tree sets) into one set by manifest, without copying their shards.

    python -m mavgame.datasets.merge runs/c4trees-all runs/c4trees-d2 runs/c4trees-d2b runs/c4trees-d2c
    python -m mavgame.datasets.merge runs/mix runs/c4exp-data runs/c4play-data:2 --val-from runs/c4play-data

Each SRC is a folder with train/ and val/ splits (`mavgame train --generate-only` output, a set of positions
from real play); `SRC:K` lists its training shards K times (a weight in the stream). OUT/train and OUT/val get
a manifest and symlinks to the sources' shards; every source's val split is merged unless
--val-from names the ones to take it from. The sources must be sets of one game and one data format.
A training record whose position ("state") is also in the merged val split is dropped (its shard is written
filtered instead of linked), so that sets drawn from one pool with different seeds keep the val split held
out; --keep-val-overlap links the training shards as they are.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional, Tuple


def parse_source(text: str) -> Tuple[str, int]:
    path, sep, times = text.rpartition(":")
    if sep and times.isdigit() and path:
        if int(times) < 1:
            raise ValueError(f"{text}: the repeat count must be at least 1")
        return path, int(times)
    return text, 1


def _states(path: Path) -> set:
    with open(path) as f:
        return {json.loads(line)["state"] for line in f if line.strip()}


def _filtered_copy(src: Path, dst: Path, drop: set) -> Tuple[int, int]:
    """Copy the shard SRC to DST without the records whose state is in DROP; (kept, dropped)."""
    kept = dropped = 0
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            if not line.strip():
                continue
            if json.loads(line)["state"] in drop:
                dropped += 1
            else:
                g.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    return kept, dropped


def merge(out: str, sources: List[Tuple[str, int]], val_from: Optional[List[str]] = None,
          drop_val_overlap: bool = True) -> dict:
    """Write OUT/{train,val}/manifest.json with links to the sources' shards; returns the record counts
    (and ``dropped``: training records whose position is in the val split, left out unless
    ``drop_val_overlap`` is false)."""
    from .records import DATA_FORMAT, MANIFEST
    counts = {"dropped": 0}
    game = None
    val_states: set = set()
    filtered: dict = {}     # training shard -> (what its links point at: itself or its filtered copy, records)
    for split in ("val", "train"):
        d = Path(out) / split
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("shard-*.jsonl"):
            old.unlink()
        shards, n, notes = [], 0, []
        for src, times in sources:
            if split == "val":
                if val_from is not None and src not in val_from:
                    continue
                times = 1
            mpath = Path(src) / split / MANIFEST
            if not mpath.is_file():
                if split == "val":
                    continue
                raise ValueError(f"{src}: no {split}/{MANIFEST} (not a position set)")
            man = json.loads(mpath.read_text())
            if man.get("format") != DATA_FORMAT:
                raise ValueError(f"{src}: data format {man.get('format')!r}, not {DATA_FORMAT!r}")
            if game is None:
                game = man.get("game")
            elif man.get("game") != game:
                raise ValueError(f"{src}: game {man.get('game')!r} differs from {game!r}")
            for _ in range(times):
                for sh in man["shards"]:
                    link = d / f"shard-{len(shards):05d}.jsonl"
                    real = Path(os.path.realpath(Path(src) / split / sh["file"]))
                    records = sh["records"]
                    if split == "val" and drop_val_overlap:
                        val_states |= _states(real)
                    if split == "train" and val_states:
                        if real not in filtered:    # read each shard once; its repeats link to the result
                            kept, dropped = _filtered_copy(real, link, val_states)
                            if not dropped:
                                link.unlink()
                            filtered[real] = (link.resolve() if dropped else real, kept)
                        target, records = filtered[real]
                        counts["dropped"] += sh["records"] - records
                        if not link.exists():
                            link.symlink_to(target)
                    else:
                        link.symlink_to(real)
                    shards.append({"file": link.name, "records": records})
                    n += records
            notes.append(f"{src}" + (f" x{times}" if times > 1 else ""))
        (d / MANIFEST).write_text(json.dumps({"format": DATA_FORMAT, "game": game, "split": split, "shards": shards,
                                              "records": n, "info": {"note": " + ".join(notes)}}, indent=1))
        counts[split] = n
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.datasets.merge",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the merged set's folder")
    ap.add_argument("sources", nargs="+", help="position sets, SRC or SRC:K (training shards K times)")
    ap.add_argument("--val-from", action="append", default=None, metavar="SRC",
                    help="take the val split only from these sources (repeatable; default: all)")
    ap.add_argument("--keep-val-overlap", action="store_true",
                    help="keep training records whose position is also in the val split")
    args = ap.parse_args(argv)
    try:
        sources = [parse_source(s) for s in args.sources]
        counts = merge(args.out, sources, args.val_from, not args.keep_val_overlap)
    except (OSError, ValueError, json.JSONDecodeError) as e:
        raise SystemExit(f"merge_position_sets: {e}") from None
    print(json.dumps({"out": args.out, **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
