"""Training data for MAV models: annotated positions in sharded files, streamed as tokenised examples.

Pipeline::

    games (self-play / epsilon-greedy, or PGN for chess)  ->  positions annotated by an engine
        ->  PositionWriter: sharded JSON-lines files + manifest.json (train/ and val/ split by position)
        ->  PositionStore: random access to every record (memory-mapped, shared by DataLoader workers)
        ->  MAVDataset (torch IterableDataset): batches of (tokens, loss mask) built with the MAV
            format's randomisation, deterministic by seed, split over workers without duplicates or gaps.

A record (one JSON object per line) describes one position and its annotation::

    {"state": <the game's own text>, "prev_state": <text or null>, "prev_action": <move or null>,
     "values": {<move>: <win probability of the side to move after the move>, ...},
     "best": <the engine's move or null>, "result": "*" | "1-0" | "0-1" | "1/2-1/2", "ply": <int>}

``values`` covers every legal move; a terminal position has no values and its ``result``.

Example order: epoch ``e`` visits the records in the permutation ``rng(seed, e).permutation(N)``; the
stream of all epochs is cut into consecutive batches of ``batch_size`` examples (a batch may span the
end of an epoch, so nothing is dropped and nothing repeats within an epoch). Batch ``j`` is produced by
worker ``j mod W`` of ``W`` workers and its randomisation is seeded by ``(seed, j)``; the DataLoader's
round-robin order then gives the same batch sequence for any number of workers, and resuming at batch
``j`` continues exactly where a run stopped.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

try:  # PyTorch is optional: the store and the generators work without it.
    import torch
    from torch.utils.data import IterableDataset, get_worker_info
    _HAVE_TORCH = True
except ImportError:  # pragma: no cover - exercised only without torch
    torch = None
    IterableDataset = object
    _HAVE_TORCH = False

MANIFEST = "manifest.json"
DATA_FORMAT = "mavgame-positions-1"


def _require_torch():
    if not _HAVE_TORCH:
        raise ImportError("this part of mavgame.model needs PyTorch: pip install torch")


def position_split(state_text: str, val_fraction: float, salt: str = "") -> str:
    """'val' or 'train' for a position, by a hash of its text (so a position is never in both)."""
    if val_fraction <= 0:
        return "train"
    h = hashlib.blake2b((salt + state_text).encode("utf-8"), digest_size=8).digest()
    u = int.from_bytes(h, "little") / 2.0 ** 64
    return "val" if u < val_fraction else "train"


def validate_record(rec: Any, where: str = "record") -> Dict[str, Any]:
    """Check a position record's fields; raise ValueError naming the bad field."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: not a JSON object")
    st = rec.get("state")
    if not isinstance(st, str) or not st:
        raise ValueError(f"{where}: 'state' must be a non-empty string, got {st!r}")
    vals = rec.get("values", {})
    if not isinstance(vals, dict):
        raise ValueError(f"{where}: 'values' must be an object, got {type(vals).__name__}")
    for m, v in vals.items():
        if not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"{where}: value of move {m!r} must be a win probability in [0, 1], got {v!r}")
    best = rec.get("best")
    if best is not None and best not in vals:
        raise ValueError(f"{where}: best move {best!r} has no value")
    if (rec.get("prev_state") is None) != (rec.get("prev_action") is None):
        raise ValueError(f"{where}: 'prev_state' and 'prev_action' must be given together")
    res = rec.get("result", "*")
    if res not in ("*", "1-0", "0-1", "1/2-1/2"):
        raise ValueError(f"{where}: invalid result {res!r}")
    if res == "*" and not vals:
        raise ValueError(f"{where}: an ongoing position needs values for its legal moves")
    return rec


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
            _write_json_atomic(self.root / split / MANIFEST, manifest, indent=1)
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


def _write_json_atomic(path: Path, obj: Any, indent: Optional[int] = None) -> None:
    """Write JSON to a temporary name beside ``path``, fsync, then rename it over ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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


# ---- example order ----------------------------------------------------------------------------------

def epoch_permutation(n: int, seed: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x4D4156, int(epoch)]).permutation(n)


class ExampleOrder:
    """Maps global stream positions to (epoch, record index); caches one epoch's permutation."""

    def __init__(self, n: int, seed: int):
        if n <= 0:
            raise ValueError("an empty position set has no examples")
        self.n, self.seed = n, seed
        self._epoch, self._perm = -1, None

    def __call__(self, pos: int) -> Tuple[int, int]:
        e, k = divmod(int(pos), self.n)
        if e != self._epoch:
            self._epoch, self._perm = e, epoch_permutation(self.n, self.seed, e)
        return e, int(self._perm[k])


def batch_seed(seed: int, batch_index: int) -> int:
    return int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, 0x62617463, int(batch_index)]).generate_state(1)[0])


Encoder = Callable[[Sequence[Dict[str, Any]], int], List[Tuple[Sequence[int], Sequence[int]]]]


def pad_batch(examples: Sequence[Tuple[Sequence[int], Sequence[int]]], pad_id: int, max_len: int):
    """Right-pad (tokens, mask) pairs into int64 [B, T] tokens and uint8 [B, T] masks."""
    T = max(len(t) for t, _ in examples)
    if T > max_len:
        raise ValueError(f"an example of {T} tokens exceeds the maximum length {max_len}")
    toks = np.full((len(examples), T), pad_id, dtype=np.int64)
    mask = np.zeros((len(examples), T), dtype=np.uint8)
    for b, (t, m) in enumerate(examples):
        if len(t) != len(m):
            raise ValueError(f"example {b}: {len(t)} tokens but {len(m)} mask entries")
        toks[b, :len(t)] = t
        mask[b, :len(m)] = m
    return toks, mask


class LazyTokenizer:
    """The C tokenizer, made on first use and not pickled (encoders go to DataLoader workers)."""

    _tok = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_tok"] = None
        return d

    def tokenizer(self):
        if self._tok is None:
            from ..mav import Tokenizer
            self._tok = Tokenizer()
        return self._tok


class MAVEncoder(LazyTokenizer):
    """Records -> randomised MAV training examples with loss masks (mavgame.mav.ExampleBuilder).

    Each batch gets a fresh builder seeded with the batch seed, so an example depends only on
    (seed, batch index, record). ``options`` are ExampleBuilder's randomisation probabilities
    (p_transition, p_top_all, k_slack, p_best, p_after, p_shuffle, ...). Picklable (DataLoader workers).
    """

    def __init__(self, game: str, **options):
        self.game = game
        self.options = dict(options)
        self._tok = None
        self.board_size = int(self.options.pop("board_size", 0))

    def items(self, records: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
        out = []
        for r in records:
            st = _new_state(self.game, self.board_size, r["state"])
            it: Dict[str, Any] = {"state": st, "annotation": None}
            if r.get("values"):
                it["annotation"] = {"values": r["values"], "best": r.get("best")}
            if r.get("prev_state") is not None:
                it["prev_state"] = _new_state(self.game, self.board_size, r["prev_state"])
                it["prev_action"] = r["prev_action"]
            out.append(it)
        return out

    def __call__(self, records: Sequence[Dict[str, Any]], seed: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        from ..mav import ExampleBuilder
        b = ExampleBuilder(seed=int(seed), tokenizer=self.tokenizer(), **self.options)
        batch = b.build(self.items(records))
        return [(batch.tokens[i, :n], batch.loss_mask[i, :n].astype(np.uint8))
                for i, n in enumerate(batch.lengths.tolist())]


def mav_encoder(game: str, **options) -> Tuple[MAVEncoder, Dict[str, Any]]:
    """(encoder, tokenizer info {vocab_size, pad_id, bos_id, eos_id, vocab_version}) for a game."""
    enc = MAVEncoder(game, **options)
    tok = enc.tokenizer()
    from .inference import vocab_fingerprint
    return enc, {"vocab_size": tok.size, "pad_id": tok.pad_id, "bos_id": tok.bos_id, "eos_id": tok.eos_id,
                 "newline_id": tok.token_to_id("\n"), "vocab_version": str(tok.version),
                 "vocab_fingerprint": vocab_fingerprint(tok)}


class MAVDataset(IterableDataset):
    """Streams batches ``{"tokens": LongTensor[B, T], "mask": uint8 Tensor[B, T], "index": LongTensor[B],
    "epoch": LongTensor[B], "batch": int}`` (use ``DataLoader(ds, batch_size=None, num_workers=W)``).

    ``encoder(records, seed)`` turns a list of records into (token ids, loss mask) pairs; mask 1 marks a
    target token. ``start_batch`` resumes the stream; ``num_batches`` bounds it (None: endless, epoch after
    epoch).
    """

    def __init__(self, store: PositionStore, encoder: Encoder, batch_size: int, seed: int = 0,
                 start_batch: int = 0, num_batches: Optional[int] = None, pad_id: int = 0, max_len: int = 1 << 30,
                 rank: int = 0, world_size: int = 1):
        _require_torch()
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if len(store) == 0:
            raise ValueError(f"{store.path}: no records")
        self.store, self.encoder = store, encoder
        self.batch_size, self.seed = batch_size, seed
        self.start_batch, self.num_batches = start_batch, num_batches
        self.pad_id, self.max_len = pad_id, max_len
        self.rank, self.world_size = rank, world_size

    def batches_per_epoch(self) -> float:
        return len(self.store) / self.batch_size

    def make_batch(self, j: int, order: Optional[ExampleOrder] = None) -> Dict[str, Any]:
        """Batch number j of the stream (also usable without a DataLoader)."""
        order = order or ExampleOrder(len(self.store), self.seed)
        pos = range(j * self.batch_size, (j + 1) * self.batch_size)
        where = [order(p) for p in pos]
        recs = [self.store.record(i) for _, i in where]
        examples = self.encoder(recs, batch_seed(self.seed, j))
        if len(examples) != len(recs):
            raise ValueError(f"encoder returned {len(examples)} examples for {len(recs)} records")
        toks, mask = pad_batch(examples, self.pad_id, self.max_len)
        return {"tokens": torch.from_numpy(toks), "mask": torch.from_numpy(mask),
                "index": torch.tensor([i for _, i in where], dtype=torch.long),
                "epoch": torch.tensor([e for e, _ in where], dtype=torch.long), "batch": j}

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        stride = nw * self.world_size
        first = self.start_batch + self.rank * nw + wid
        end = None if self.num_batches is None else self.start_batch + self.num_batches
        order = ExampleOrder(len(self.store), self.seed)
        j = first
        while end is None or j < end:
            yield self.make_batch(j, order)
            j += stride


# ---- position generation ----------------------------------------------------------------------------

def _connect_four_annotator(options: Dict[str, Any]):
    """The perfect Connect Four solver (mavgame._core.C4Solver): values 1 / 0.5 / 0 for a won / drawn / lost
    move, the best move the fastest win (slowest loss), ties to the most central column.

    Options: ``max_seconds`` / ``max_nodes`` per position (0: no limit); a position whose solve does not
    finish within the budget gets no annotation (None) and is left out of the data; ``tt_log2``. Use
    ``max_nodes`` for data that is reproducible on any machine (a time budget depends on its speed).
    """
    from ..games.connect_four import ConnectFour, solver as new_solver
    solver = new_solver(int(options.get("tt_log2", 22)))
    max_s = float(options.get("max_seconds", 0.0))
    max_n = int(options.get("max_nodes", 0))

    def annotate(state):
        res = ConnectFour(state.text()).solve(max_nodes=max_n, max_seconds=max_s, solver=solver)
        legal = state.legal_moves()
        if not res.complete or sorted(res.move_scores) != sorted(legal):
            return None
        vals = {m: 1.0 if sc > 0 else 0.0 if sc < 0 else 0.5 for m, sc in sorted(res.move_scores.items())}
        return vals, res.central_best_move()
    annotate.reset = solver.clear
    return annotate


def _exhaustive_annotator(options: Dict[str, Any]):
    """Exact values by exhaustive negamax with memoisation (tiny games such as tic-tac-toe only;
    :class:`mavgame.negamax.NegamaxSolver`, the minimax agent's search).

    Values: 1 win, 0.5 draw, 0 loss for the mover; the best move wins fastest (or loses slowest), the
    first such move in legal order."""
    from ..games.negamax import NegamaxSolver
    solver = NegamaxSolver()

    def annotate(state) -> Tuple[Dict[str, float], Optional[str]]:
        vals, best, best_s = {}, None, None
        for a, c in solver.action_values(state).items():
            mv = state.action_to_str(a)
            vals[mv] = 1.0 if c > 0 else 0.0 if c < 0 else 0.5
            if best_s is None or c > best_s:
                best, best_s = mv, c
        return vals, best
    return annotate


class _DefaultAnnotatorOptions(Mapping):
    """{game: its annotator's default options}, read from the game registry (``GameInfo.annotator_options``:
    a per-position budget that keeps generation finite; an unbudgeted Connect Four solve of an opening
    position can take many minutes).  Games whose annotator takes no options are left out."""

    def _table(self) -> Dict[str, Dict[str, Any]]:
        from ..games import registry
        return {g.name: dict(g.annotator_options) for g in registry.infos() if g.annotator and g.annotator_options}

    def __getitem__(self, game: str) -> Dict[str, Any]:
        return self._table()[game]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table())


DEFAULT_ANNOTATOR_OPTIONS: Mapping[str, Dict[str, Any]] = _DefaultAnnotatorOptions()


def make_annotator(game: str, options: Optional[Dict[str, Any]] = None):
    """annotate(state) -> ({move: value}, best move) for `game`'s engine: the annotator of the game's
    registry entry (``GameInfo.make_annotator``; ValueError naming the game if it is unknown or has none)."""
    from ..games import registry
    return registry.get(game).make_annotator(options)


def __getattr__(name: str):
    # Names that moved: the annotators are reached through the game registry now.
    import warnings
    if name == "ANNOTATORS":
        warnings.warn("mavgame.model.data.ANNOTATORS is deprecated: use make_annotator(game) or "
                      "mavgame.games.registry.get(game).make_annotator()", DeprecationWarning, stacklevel=2)
        from ..games import registry
        return {g.name: registry._resolve(g.annotator) for g in registry.infos() if g.annotator}
    if name == "hex_annotator":
        warnings.warn("mavgame.model.data.hex_annotator moved to mavgame.model.hex_annotate", DeprecationWarning,
                      stacklevel=2)
        from .hex_annotate import hex_annotator
        return hex_annotator
    if name == "_chess_annotator":
        warnings.warn("mavgame.model.data._chess_annotator moved to mavgame.annotate.chess_annotator",
                      DeprecationWarning, stacklevel=2)
        from ..engines.annotate import chess_annotator
        return chess_annotator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new_state(game: str, board_size: int = 0, text: Optional[str] = None):
    from .. import _core
    return _core.State(game, text, board_size, 0)


def play_annotated_game(game: str, annotate, rng: np.random.Generator, epsilon: float, max_plies: int = 0,
                        board_size: int = 0, cache: Optional[Dict[str, Any]] = None, random_opening: int = 0):
    """One epsilon-greedy game: every position annotated; greedy moves are drawn uniformly among the moves
    of maximal value, a uniformly random legal move with probability epsilon. The first ``random_opening``
    plies are random moves, neither annotated nor recorded. Returns the records from there on, terminal
    position included, with ``{"skipped": True, "ply": n}`` for positions the annotator gave up on
    (``annotate`` returned None; a random move is played there)."""
    st = _new_state(game, board_size)
    recs: List[Optional[Dict[str, Any]]] = []
    prev: Optional[Tuple[str, str]] = None
    while st.ply < random_opening and not st.is_terminal():
        moves = st.legal_moves()
        mv = moves[int(rng.integers(len(moves)))]
        prev = (st.text(), mv)
        st.push(mv)
    while True:
        text = st.text()
        rec: Dict[str, Any] = {"state": text, "prev_state": prev[0] if prev else None,
                               "prev_action": prev[1] if prev else None, "ply": st.ply}
        if st.is_terminal() or (max_plies and st.ply >= max_plies):
            if st.is_terminal():
                rec.update(values={}, best=None, result=st.result())
                recs.append(rec)
            break
        if cache is not None and text in cache:
            ann = cache[text]
        else:
            ann = annotate(st)
            if cache is not None:
                cache[text] = ann
        moves = st.legal_moves()
        if ann is None:  # the engine could not annotate it within its budget: left out, random move
            recs.append({"skipped": True, "ply": st.ply})
            mv = moves[int(rng.integers(len(moves)))]
            prev = (text, mv)
            st.push(mv)
            continue
        values, best = ann
        rec.update(values=values, best=best, result="*")
        recs.append(rec)
        if rng.random() < epsilon:
            mv = moves[int(rng.integers(len(moves)))]
        else:
            top = max(values.values())
            greedy = sorted(m for m, v in values.items() if v >= top - 1e-12)
            mv = greedy[int(rng.integers(len(greedy)))]
        prev = (text, mv)
        st.push(mv)
    return recs


_WORKER: Dict[str, Any] = {}


def _gen_init(game, options, in_pool=False):
    ann = make_annotator(game, options)
    _WORKER["annotate"] = ann
    _WORKER["cache"] = {}
    if in_pool and hasattr(ann, "close"):
        from ..workers import close_at_exit
        close_at_exit(ann)


def _gen_games(job):
    game, seed, first, count, epsilon, max_plies, board_size, random_opening = job
    # Each chunk of games starts from a fresh engine state and cache, so that budgeted annotations (which
    # depend on what the engine's tables hold) do not depend on which worker ran which chunk before.
    ann = _WORKER["annotate"]
    if hasattr(ann, "reset"):
        ann.reset()
    _WORKER["cache"].clear()
    out = []
    for i in range(first, first + count):
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x67616D65, i])
        out.append(play_annotated_game(game, _WORKER["annotate"], rng, epsilon, max_plies, board_size,
                                       _WORKER["cache"], random_opening))
    return out


def _run_jobs(game: str, opts, jobs, workers: int, job_fn, consume) -> None:
    """Run job_fn over jobs, in this process (workers <= 1) or a pool of annotating workers, passing
    each job's result to consume() in job order (so the output does not depend on the worker count).
    A caller resuming an interrupted run passes only the jobs still to do; with none, no engine starts."""
    if not jobs:
        return
    if workers <= 1:
        _gen_init(game, opts)
        try:
            for job in jobs:
                consume(job_fn(job))
        finally:
            ann = _WORKER.pop("annotate", None)
            if hasattr(ann, "close"):
                ann.close()
        return
    from ..workers import pool as worker_pool
    pool = worker_pool(workers, _gen_init, (game, opts, True))
    try:
        for res in pool.imap(job_fn, jobs):
            consume(res)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


PROGRESS = "progress.json"
PROGRESS_FORMAT = "mavgame-generation-progress-1"


def _load_progress(root: Path, signature: Dict[str, Any], n_games: int, chunk: int) -> Optional[Dict[str, Any]]:
    """The progress record of an interrupted generation into ``root`` (None: none), checked against this
    call's arguments."""
    path = root / PROGRESS
    if not path.exists():
        return None
    try:
        prog = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: invalid JSON: {e} (remove {root} to start over)") from None
    if not isinstance(prog, dict) or prog.get("format") != PROGRESS_FORMAT:
        raise ValueError(f"{path}: not a mavgame generation progress record (remove {root} to start over)")
    theirs = prog.get("signature", {})
    ours = json.loads(json.dumps(signature))
    diff = [f"{k} {theirs.get(k)!r} there, {ours.get(k)!r} here" for k in sorted(set(ours) | set(theirs))
            if theirs.get(k) != ours.get(k)]
    if diff:
        raise ValueError(f"{root} holds an interrupted generation with other arguments ({'; '.join(diff)}): "
                         f"rerun with its arguments to resume it, or remove {root} to start over")
    done = int(prog["games_done"])
    if done > n_games or (done % chunk and done != n_games):
        raise ValueError(f"{root} holds an interrupted generation with {done} games done, which a run of "
                         f"{n_games} games cannot continue (rerun with its --games, or remove {root})")
    return prog


def generate_positions(game: str, out, n_games: int, seed: int = 0, epsilon: float = 0.2, workers: int = 1,
                       val_fraction: float = 0.02, shard_size: int = 100_000, max_plies: int = 0,
                       board_size: int = 0, random_opening: int = 0, annotator_options: Optional[Dict] = None,
                       progress: bool = True, chunk: int = 16) -> Dict[str, Any]:
    """Play ``n_games`` epsilon-greedy games with the game's annotating engine, keep every distinct position
    once (its first occurrence in game order), and write them to ``out/train`` and ``out/val`` (split by
    position). Deterministic for a seed and chunk size whatever the number of workers (with a node budget,
    not a time budget, for budgeted annotators). Returns the data statistics (also stored in both
    manifests).

    Resumable: after each chunk of games the shards are flushed and ``out/progress.json`` records the
    arguments, the games done, the shards' record counts and the statistics; calling again with the same
    arguments after an interruption continues from there (ValueError if they differ), and the result is
    the same, byte for byte, as an uninterrupted run's (but for the ``seconds`` statistic, which adds up the
    runs). The progress file is removed once the manifests are written."""
    import time
    if n_games <= 0:
        raise ValueError(f"n_games must be positive, got {n_games}")
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    if chunk <= 0:
        raise ValueError(f"chunk must be positive, got {chunk}")
    opts = dict(annotator_options or DEFAULT_ANNOTATOR_OPTIONS.get(game, {}))
    root = Path(out)
    signature = {"game": game, "seed": seed, "epsilon": epsilon, "random_opening": random_opening,
                 "max_plies": max_plies, "board_size": board_size, "annotator_options": opts,
                 "val_fraction": val_fraction, "shard_size": shard_size, "chunk": chunk}
    prog = _load_progress(root, signature, n_games, chunk)
    jobs = [(game, seed, s, min(chunk, n_games - s), epsilon, max_plies, board_size, random_opening)
            for s in range(0, n_games, chunk)]
    seen = set()
    stats: Dict[str, Any] = {"game": game, "games": n_games, "seed": seed, "epsilon": epsilon,
                             "random_opening": random_opening, "max_plies": max_plies,
                             "annotator": opts, "positions_seen": 0, "results": {},
                             "unique_by_ply": {}, "unannotated_by_ply": {}, "terminal": 0, "moves_annotated": 0,
                             "value_histogram": [0] * 8}
    done, lengths, seconds_before = 0, 0, 0.0
    if prog is not None:
        # manifests beside a progress record are from a finish that was cut short: it is done again
        for split in ("train", "val"):
            (root / split / MANIFEST).unlink(missing_ok=True)
        done, lengths = int(prog["games_done"]), int(prog["lengths"])
        seconds_before = float(prog.get("seconds", 0.0))
        stats = dict(prog["stats"], games=n_games)
    t0 = time.perf_counter()
    writer = PositionWriter(out, game, shard_size=shard_size, val_fraction=val_fraction,
                            resume=prog["shards"] if prog is not None else None)
    seen.update(writer.states())
    counts = {split: sum(c) for split, c in writer.shard_counts().items()}
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=n_games, initial=done, desc=f"{game} games", unit="game", dynamic_ncols=True)

    def save_progress():
        writer.flush()
        _write_json_atomic(root / PROGRESS, {
            "format": PROGRESS_FORMAT, "signature": signature, "games_done": done, "lengths": lengths,
            "shards": writer.shard_counts(), "stats": stats,
            "seconds": round(seconds_before + time.perf_counter() - t0, 1)})

    def consume(games):
        nonlocal lengths, done
        for recs in games:
            res = recs[-1].get("result", "*")
            stats["results"][res] = stats["results"].get(res, 0) + 1
            lengths += len(recs) - (1 if res != "*" else 0)
            for r in recs:
                stats["positions_seen"] += 1
                if r.get("skipped"):
                    ply = str(r["ply"])
                    stats["unannotated_by_ply"][ply] = stats["unannotated_by_ply"].get(ply, 0) + 1
                    continue
                key = r["state"]
                if key in seen:
                    continue
                seen.add(key)
                ply = str(r["ply"])
                stats["unique_by_ply"][ply] = stats["unique_by_ply"].get(ply, 0) + 1
                if not r["values"]:
                    stats["terminal"] += 1
                for v in r["values"].values():
                    stats["value_histogram"][min(7, int(v * 8))] += 1
                stats["moves_annotated"] += len(r["values"])
                counts[writer.add(r)] += 1
            if bar is not None:
                bar.update(1)
        done += len(games)
        save_progress()

    try:
        _run_jobs(game, opts, jobs[done // chunk:] if done < n_games else [], workers, _gen_games, consume)
    finally:
        if bar is not None:
            bar.close()
    stats["positions_unique"] = len(seen)
    stats["train"], stats["val"] = counts["train"], counts["val"]
    stats["recorded_plies_per_game"] = lengths / n_games
    stats["seconds"] = round(seconds_before + time.perf_counter() - t0, 1)
    writer.info = {"stats": stats}
    writer.close()
    (root / PROGRESS).unlink(missing_ok=True)
    return stats


def random_chess_positions(n: int, seed: int = 0, max_pieces: int = 30) -> List[str]:
    """The MAV paper's out-of-distribution chess positions: random placements, not positions of games.

    Each position has both kings and a uniformly random number (0..``max_pieces``) of other pieces, each of
    a uniformly random kind (queen, rook, bishop, knight, pawn) and colour on a random empty square (pawns
    off the first and last ranks), and a random side to move; no castling or en passant rights.  Kept when
    the chess reader accepts it (so the side not to move is not in check: never both kings, and no move
    buffer can overflow) and the side to move is not checkmated.  Returns ``n`` distinct FENs, the same for
    a seed."""
    from ..games.chess import Chess
    if n < 0 or max_pieces < 0 or max_pieces > 62:
        raise ValueError(f"n must be >= 0 and max_pieces in 0..62, not n={n}, max_pieces={max_pieces}")
    rng = np.random.default_rng(seed)
    out: List[str] = []
    seen: set = set()
    while len(out) < n:
        board = [""] * 64
        for king in "Kk":
            free = [i for i in range(64) if not board[i]]
            board[free[int(rng.integers(len(free)))]] = king
        for _ in range(int(rng.integers(max_pieces + 1))):
            kind = "qrbnp"[int(rng.integers(5))]
            free = [i for i in range(64) if not board[i] and (kind != "p" or 8 <= i < 56)]
            board[free[int(rng.integers(len(free)))]] = kind.upper() if rng.integers(2) else kind
        rows = []
        for r in range(7, -1, -1):
            row, empty = "", 0
            for c in range(8):
                pc = board[8 * r + c]
                if pc:
                    row += (str(empty) if empty else "") + pc
                    empty = 0
                else:
                    empty += 1
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + (" w" if rng.integers(2) else " b") + " - - 0 1"
        try:
            st = Chess(fen)
        except ValueError:
            continue
        if st.is_checkmate() or fen in seen:
            continue
        seen.add(fen)
        out.append(fen)
    return out


def ood_positions(game: str, out, n_games: int, exclude: Sequence[Any] = (), seed: int = 10_000,
                  random_opening: int = 0, board_size: int = 0, annotator_options: Optional[Dict] = None,
                  workers: int = 1, progress: bool = True) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Out-of-distribution test positions: games of uniformly random moves (epsilon 1), annotated by the
    same engine, written to ``out`` (reused when already there), minus every position that also occurs in
    the position sets ``exclude`` (directories or PositionStores, e.g. the training and validation sets).

    Random play reaches boards that the engines' (near-)best play of the training games rarely or never
    does: loose, scattered, often lost for one side long before the end. Returns (records, info) with
    info = {games, generated, in_excluded, positions, epsilon, random_opening, seed}."""
    root = Path(out)
    if not (root / "train" / MANIFEST).exists():
        generate_positions(game, root, n_games, seed=seed, epsilon=1.0, workers=workers, val_fraction=0.0,
                           board_size=board_size, random_opening=random_opening,
                           annotator_options=annotator_options, progress=progress)
    seen = set()
    for ex in exclude:
        store = ex if isinstance(ex, PositionStore) else PositionStore(ex)
        seen.update(r["state"] for r in store)
    recs = list(PositionStore(root / "train"))
    keep = [r for r in recs if r["state"] not in seen]
    info = {"games": n_games, "generated": len(recs), "in_excluded": len(recs) - len(keep),
            "positions": len(keep), "epsilon": 1.0, "random_opening": random_opening, "seed": seed}
    return keep, info


# ---- chess positions from PGN files -----------------------------------------------------------------------

_PGN_RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}


def read_pgn(text: str) -> Iterator[Tuple[Dict[str, str], List[str]]]:
    """(headers, SAN moves of the main line) for every game of a PGN text.

    Comments (``{...}`` and ``;`` to the end of the line), variations (nested parentheses), NAGs
    (``$n``), move numbers and results are skipped."""
    headers: Dict[str, str] = {}
    moves: List[str] = []
    in_moves = False
    i, n = 0, len(text)
    depth = 0
    while i < n:
        c = text[i]
        if c == "{":
            j = text.find("}", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "(":
            depth += 1
            i += 1
            continue
        if c == ")":
            depth = max(0, depth - 1)
            i += 1
            continue
        if depth:
            i += 1
            continue
        if c == "[":   # a tag pair: a new game starts if moves were read without a result token
            if in_moves:
                yield headers, moves
                headers, moves, in_moves = {}, [], False
            j = text.find("]", i)
            if j < 0:
                break
            tag = text[i + 1:j].strip()
            k = tag.find(" ")
            if k > 0:
                headers[tag[:k]] = tag[k:].strip().strip('"')
            i = j + 1
            continue
        if c.isspace():
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] not in "{}();[":
            j += 1
        tok = text[i:j]
        i = j
        in_moves = True
        if tok in _PGN_RESULTS:
            yield headers, moves
            headers, moves, in_moves = {}, [], False
            continue
        if tok.startswith("$"):
            continue
        tok = {"0-0": "O-O", "0-0-0": "O-O-O"}.get(tok.rstrip("+#"), tok)
        tok = tok.lstrip("0123456789").lstrip(".")
        if tok:
            moves.append(tok.rstrip("!?"))
    if moves or headers:
        yield headers, moves


def _pgn_game_records(headers: Dict[str, str], sans: List[str], annotate, every: int, skip_plies: int,
                      cache: Dict[str, Any]):
    from ..games.chess import Chess, Chess960
    variant = headers.get("Variant", "").lower()
    fen = headers.get("FEN")
    st = Chess960(fen=fen) if "960" in variant or "fischer" in variant else Chess(fen)
    recs: List[Dict[str, Any]] = []
    prev: Optional[Tuple[str, str]] = None
    for ply in range(len(sans) + 1):
        if ply >= skip_plies and (ply - skip_plies) % every == 0:
            text = st.text()
            rec: Dict[str, Any] = {"state": text, "prev_state": prev[0] if prev else None,
                                   "prev_action": prev[1] if prev else None, "ply": ply}
            if st.is_terminal():
                rec.update(values={}, best=None, result=st.result())
                recs.append(rec)
                break
            ann = cache.get(text)
            if ann is None:
                ann = cache[text] = annotate(st)
            if ann is not None:
                rec.update(values=ann[0], best=ann[1], result="*")
                recs.append(rec)
        if ply == len(sans) or st.is_terminal():
            break
        text = st.text()
        try:
            a = st.push_san(sans[ply])
        except ValueError:
            recs.append({"skipped": True, "ply": ply, "pgn_error": True})
            break
        st.pop()
        mv = st.action_to_str(a)
        st.push(a)
        prev = (text, mv)
    return st.game, recs


def _pgn_job(job):
    games, every, skip_plies = job
    ann = _WORKER["annotate"]
    return [_pgn_game_records(h, s, ann, every, skip_plies, _WORKER["cache"]) for h, s in games]


def positions_from_pgn(pgn_paths: Sequence[str], out, every: int = 1, skip_plies: int = 0, max_games: int = 0,
                       workers: int = 1, val_fraction: float = 0.02, shard_size: int = 100_000,
                       annotator_options: Optional[Dict[str, Any]] = None, progress: bool = True,
                       chunk: int = 8) -> Dict[str, Any]:
    """Chess (and Chess960, by the ``Variant`` tag) positions of PGN games, annotated by Stockfish, into a
    position set like :func:`generate_positions`'s: every ``every``-th position from ply ``skip_plies`` of
    each main line, each distinct position once. A move that does not parse ends its game (counted)."""
    import time
    games: List[Tuple[Dict[str, str], List[str]]] = []
    for p in pgn_paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            for g in read_pgn(f.read()):
                games.append(g)
                if max_games and len(games) >= max_games:
                    break
        if max_games and len(games) >= max_games:
            break
    if not games:
        raise ValueError(f"no games in {', '.join(map(str, pgn_paths))}")
    variants = {("chess960" if "960" in h.get("Variant", "").lower() or "fischer" in h.get("Variant", "").lower()
                 else "chess") for h, _ in games}
    game = "chess960" if variants == {"chess960"} else "chess"
    if len(variants) > 1:
        raise ValueError("PGN files mix chess and Chess960 games: write them to separate position sets")
    opts = dict(annotator_options or DEFAULT_ANNOTATOR_OPTIONS[game])
    jobs = [(games[s:s + chunk], every, skip_plies) for s in range(0, len(games), chunk)]
    writer = PositionWriter(out, game, shard_size=shard_size, val_fraction=val_fraction)
    seen = set()
    stats: Dict[str, Any] = {"game": game, "source": [str(p) for p in pgn_paths], "games": len(games),
                             "every": every, "skip_plies": skip_plies, "annotator": opts, "pgn_errors": 0,
                             "positions_seen": 0, "unannotated": 0, "terminal": 0, "moves_annotated": 0}
    counts = {"train": 0, "val": 0}
    t0 = time.perf_counter()
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=len(games), desc="pgn games", unit="game", dynamic_ncols=True)

    def consume(results):
        for _, recs in results:
            for r in recs:
                stats["positions_seen"] += 1
                if r.get("skipped"):
                    stats["pgn_errors" if r.get("pgn_error") else "unannotated"] += 1
                    continue
                if r["state"] in seen:
                    continue
                seen.add(r["state"])
                stats["terminal"] += int(not r["values"])
                stats["moves_annotated"] += len(r["values"])
                counts[writer.add(r)] += 1
            if bar is not None:
                bar.update(1)

    try:
        _run_jobs(game, opts, jobs, workers, _pgn_job, consume)
    finally:
        if bar is not None:
            bar.close()
    stats.update(positions_unique=len(seen), train=counts["train"], val=counts["val"],
                 seconds=round(time.perf_counter() - t0, 1))
    writer.info = {"stats": stats}
    writer.close()
    return stats
