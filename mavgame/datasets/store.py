"""The on-disk position store: sharded JSON-lines files with a manifest per split.

``PositionWriter`` writes records (:mod:`mavgame.datasets.records`) into ``<root>/train`` and ``<root>/val``
(split by position) and can resume an interrupted set from its shards' record counts;
``PositionStore`` gives random access to every record of one split (memory-mapped, shared by DataLoader
workers).
"""
from __future__ import annotations

import json
import mmap
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from .._atomic import write_json_atomic
from .records import DATA_FORMAT, MANIFEST, position_split, validate_record


class PositionWriter:
    """Writes records into ``<root>/<split>/shard-NNNNN.jsonl`` files and a manifest per split.

    Use as a context manager; ``add(record)`` routes a record to train or val by its state text.
    ``resume`` ({split: [records per shard]}, as ``shard_counts()`` returned it) continues a set whose
    writing was interrupted: each shard is cut back to its recorded records (later lines and a partly
    written last line are dropped) and later shards are removed. ``flush()`` makes what was added durable.
    """

    def __init__(self, root, game: str, shard_size: int = 100_000, val_fraction: float = 0.02,
                 info: Optional[Dict[str, Any]] = None, resume: Optional[Dict[str, List[int]]] = None):
        if shard_size <= 0:
            raise ValueError(f"shard_size must be positive, got {shard_size}")
        if not 0.0 <= val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
        self.root = Path(root)
        self.game = game
        self.shard_size = shard_size
        self.val_fraction = val_fraction
        self.info = dict(info or {})
        self._files: Dict[str, Any] = {}
        self._counts: Dict[str, List[int]] = {"train": [], "val": []}
        for split in ("train", "val"):
            d = self.root / split
            if (d / MANIFEST).exists():
                raise FileExistsError(f"{d} already holds a data set (remove it or write elsewhere)")
            d.mkdir(parents=True, exist_ok=True)
        for split in ("train", "val"):
            counts = [int(n) for n in (resume or {}).get(split, [])]
            if any(n <= 0 or n > shard_size for n in counts):
                raise ValueError(f"{self.root}: bad shard record counts {counts} for {split} "
                                 f"(each must be in 1..{shard_size})")
            for i, n in enumerate(counts):
                _truncate_lines(self._shard_path(split, i), n)
            keep = {self._shard_path(split, i).name for i in range(len(counts))}
            for path in (self.root / split).glob("shard-*.jsonl"):  # shards of an unrecorded (or older) part
                if path.name not in keep:
                    path.unlink()
            self._counts[split] = counts
            if counts and counts[-1] < shard_size:
                self._files[split] = open(self._shard_path(split, len(counts) - 1), "a", encoding="utf-8")

    def _shard_path(self, split: str, i: int) -> Path:
        return self.root / split / f"shard-{i:05d}.jsonl"

    def add(self, rec: Dict[str, Any]) -> str:
        validate_record(rec)
        split = position_split(rec["state"], self.val_fraction)
        counts = self._counts[split]
        if not counts or counts[-1] >= self.shard_size:
            if split in self._files:
                _sync_close(self._files.pop(split))
            counts.append(0)
            self._files[split] = open(self._shard_path(split, len(counts) - 1), "w", encoding="utf-8")
        self._files[split].write(json.dumps(rec, separators=(",", ":"), sort_keys=True) + "\n")
        counts[-1] += 1
        return split

    def shard_counts(self) -> Dict[str, List[int]]:
        """{split: [records in each shard]} of what was added so far."""
        return {split: list(c) for split, c in self._counts.items()}

    def flush(self) -> None:
        """Write what was added through to the disk (fsync), so that ``shard_counts()`` can be relied on."""
        for f in self._files.values():
            f.flush()
            os.fsync(f.fileno())

    def states(self) -> Iterator[str]:
        """The state texts of the records written so far, shard by shard (flushes first)."""
        self.flush()
        for split, counts in self._counts.items():
            for i in range(len(counts)):
                with open(self._shard_path(split, i), encoding="utf-8") as f:
                    for line in f:
                        yield json.loads(line)["state"]

    def close(self) -> Dict[str, int]:
        for f in self._files.values():
            _sync_close(f)
        self._files.clear()
        out = {}
        # val first: train/manifest.json is what marks a finished set (mavgame train looks for it)
        for split in ("val", "train"):
            counts = self._counts[split]
            manifest = {"format": DATA_FORMAT, "game": self.game, "split": split,
                        "shards": [{"file": f"shard-{i:05d}.jsonl", "records": n} for i, n in enumerate(counts)],
                        "records": int(sum(counts)), "info": self.info}
            write_json_atomic(self.root / split / MANIFEST, manifest, indent=1)
            out[split] = int(sum(counts))
        return {"train": out["train"], "val": out["val"]}

    def __enter__(self) -> "PositionWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _sync_close(f) -> None:
    f.flush()
    os.fsync(f.fileno())
    f.close()




def _truncate_lines(path: Path, n: int) -> None:
    """Cut a JSON-lines file back to its first ``n`` complete lines (ValueError if it has fewer)."""
    if not path.exists():
        raise ValueError(f"{path}: missing, but the progress record says it holds {n} records")
    with open(path, "r+b") as f:
        data = f.read()
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        if len(ends) < n:
            raise ValueError(f"{path}: {len(ends)} complete lines, but the progress record says {n} records")
        size = int(ends[n - 1]) + 1 if n else 0
        if size != len(data):
            f.truncate(size)


class PositionStore:
    """Random access to the records of one split directory (shards memory-mapped, line offsets indexed).

    Safe to pickle into DataLoader workers: the maps are reopened lazily in each process.
    """

    def __init__(self, path):
        self.path = Path(path)
        mpath = self.path / MANIFEST
        if not mpath.exists():
            raise FileNotFoundError(f"no {MANIFEST} in {self.path}: not a mavgame position set")
        try:
            self.manifest = json.loads(mpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"{mpath}: invalid JSON: {e}") from None
        if self.manifest.get("format") != DATA_FORMAT:
            raise ValueError(f"{mpath}: unknown data format {self.manifest.get('format')!r}")
        self.game = self.manifest["game"]
        self.shards = [s["file"] for s in self.manifest["shards"]]
        counts = [int(s["records"]) for s in self.manifest["shards"]]
        self._starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._offsets: Optional[List[np.ndarray]] = None
        self._maps: Optional[List[Any]] = None
        self._counts = counts

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_maps"] = None
        d["_files"] = None
        return d

    def _open(self) -> None:
        maps, offsets, files = [], [], []
        for name, n in zip(self.shards, self._counts):
            f = open(self.path / name, "rb")
            files.append(f)
            size = os.fstat(f.fileno()).st_size
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            arr = np.frombuffer(m, dtype=np.uint8) if size else np.zeros(0, np.uint8)
            ends = np.flatnonzero(arr == 10) + 1
            del arr
            if len(ends) != n:
                raise ValueError(f"{self.path / name}: manifest says {n} records, file has {len(ends)} lines")
            offsets.append(np.concatenate([[0], ends]).astype(np.int64))
            maps.append(m)
        self._maps, self._offsets, self._files = maps, offsets, files

    def record(self, i: int) -> Dict[str, Any]:
        """Record number i (0 <= i < len(self))."""
        n = len(self)
        if not 0 <= i < n:
            raise IndexError(f"record {i} out of range for a set of {n}")
        if self._maps is None:
            self._open()
        s = int(np.searchsorted(self._starts, i, side="right")) - 1
        j = i - int(self._starts[s])
        off = self._offsets[s]
        line = self._maps[s][int(off[j]):int(off[j + 1])]
        try:
            return json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{self.path / self.shards[s]} line {j + 1}: invalid JSON: {e}") from None

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for i in range(len(self)):
            yield self.record(i)


__all__ = ["PositionWriter", "PositionStore"]
