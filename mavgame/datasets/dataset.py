"""Training examples from a position store: the example order, the MAV encoder, padding, the torch dataset.

Example order: epoch ``e`` visits the records in the permutation ``rng(seed, e).permutation(N)``; the
stream of all epochs is cut into consecutive batches of ``batch_size`` examples (a batch may span the
end of an epoch, so nothing is dropped and nothing repeats within an epoch). Batch ``j`` is produced by
worker ``j mod W`` of ``W`` workers and its randomisation is seeded by ``(seed, j)``; the DataLoader's
round-robin order then gives the same batch sequence for any number of workers, and resuming at batch
``j`` continues exactly where a run stopped.

PyTorch is needed only by :class:`MAVDataset`; the rest works with NumPy alone.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

try:  # PyTorch is optional: the store and the generators work without it.
    import torch
    from torch.utils.data import IterableDataset, get_worker_info
    _HAVE_TORCH = True
except ImportError:  # pragma: no cover - exercised only without torch
    torch = None
    IterableDataset = object
    _HAVE_TORCH = False

def _require_torch():
    if not _HAVE_TORCH:
        raise ImportError("this part of mavgame.datasets needs PyTorch: pip install torch")

from .records import _new_state
from .store import PositionStore


def epoch_permutation(n: int, seed: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x4D4156, int(epoch)]).permutation(n)


class ExampleOrder:
    """Maps global stream positions to (epoch, record index); caches one epoch's permutation.

    ``repeats`` (optional, one int >= 1 per record): how many times each record occurs in every epoch (an
    epoch is then the permutation of ``np.repeat(arange(n), repeats)``; without it each record occurs once)."""

    def __init__(self, n: int, seed: int, repeats: Optional[np.ndarray] = None):
        if n <= 0:
            raise ValueError("an empty position set has no examples")
        self.seed = seed
        self._items: Optional[np.ndarray] = None
        if repeats is not None:
            repeats = np.asarray(repeats)
            if repeats.shape != (n,) or (repeats < 1).any():
                raise ValueError(f"repeats must hold one count >= 1 for each of the {n} records, got shape "
                                 f"{repeats.shape} with minimum {repeats.min() if repeats.size else None}")
            if (repeats > 1).any():
                self._items = np.repeat(np.arange(n, dtype=np.int64), repeats)
        self.n = n if self._items is None else len(self._items)
        self._epoch, self._perm = -1, None

    def __call__(self, pos: int) -> Tuple[int, int]:
        e, k = divmod(int(pos), self.n)
        if e != self._epoch:
            self._epoch, self._perm = e, epoch_permutation(self.n, self.seed, e)
        i = int(self._perm[k])
        return e, i if self._items is None else int(self._items[i])


def finished_repeats(store: PositionStore, repeat: int) -> Optional[np.ndarray]:
    """Per-record repeat counts that give every finished position (a record whose ``result`` is not "*")
    ``repeat`` occurrences per epoch and every other position one; None when ``repeat`` is 1."""
    if repeat < 1:
        raise ValueError(f"the finished-position repeat must be >= 1, got {repeat}")
    if repeat == 1:
        return None
    return np.array([repeat if store.record(i).get("result", "*") != "*" else 1 for i in range(len(store))],
                    dtype=np.int64)


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
    """The C tokenizer of vocabulary ``vocab_version``, made on first use and not pickled (encoders go to
    DataLoader workers)."""

    _tok = None
    vocab_version = 1

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_tok"] = None
        return d

    def tokenizer(self):
        if self._tok is None:
            from ..mav import Tokenizer
            self._tok = Tokenizer(self.vocab_version)
        return self._tok


class MAVEncoder(LazyTokenizer):
    """Records -> randomised MAV training examples with loss masks (mavgame.mav.ExampleBuilder).

    Each batch gets a fresh builder seeded with the batch seed, so an example depends only on
    (seed, batch index, record). ``options`` are ExampleBuilder's randomisation probabilities
    (p_transition, p_top_all, k_slack, p_best, p_after, p_shuffle, ...), plus ``outcome_weight`` W (default
    1): the loss weight, as the mask value W, of the token that says whether the game is finished (see
    :meth:`outcome_token`), and ``p_mirror`` (default 0): the probability that a record is replaced by its
    mirror image before the example is built (:mod:`mavgame.datasets.symmetry`; Connect Four). Picklable
    (DataLoader workers).
    """

    def __init__(self, game: str, vocab_version: int = 1, **options):
        self.game = game
        self.vocab_version = int(vocab_version)
        self.options = dict(options)
        self._tok = None
        self.board_size = int(self.options.pop("board_size", 0))
        self.outcome_weight = int(self.options.pop("outcome_weight", 1))
        if not 1 <= self.outcome_weight <= 255:
            raise ValueError(f"outcome_weight must be an integer in 1..255, got {self.outcome_weight}")
        self.p_mirror = float(self.options.pop("p_mirror", 0.0))
        if not 0.0 <= self.p_mirror <= 1.0:
            raise ValueError(f"p_mirror must be in [0, 1], got {self.p_mirror}")
        if self.p_mirror > 0.0:
            from .symmetry import require_mirror
            require_mirror(game, "p_mirror")

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
        if self.p_mirror > 0.0:
            from .symmetry import mirror_records
            records = mirror_records(self.game, records, self.p_mirror, seed)
        batch = b.build(self.items(records))
        out = [(batch.tokens[i, :n], batch.loss_mask[i, :n].astype(np.uint8))
               for i, n in enumerate(batch.lengths.tolist())]
        if self.outcome_weight > 1:
            for toks, mask in out:
                k = self.outcome_token(toks, mask)
                if k >= 0:
                    mask[k] = self.outcome_weight
        return out

    def outcome_token(self, toks: np.ndarray, mask: np.ndarray) -> int:
        """Index of the answer token that says whether the game is finished: the first target token after
        the first target ``%top_N`` / ``%top_all`` (or, without one, ``%best_action``) and its space, which
        is ``invalid`` in a finished position and a move otherwise; -1 if the example has none."""
        tok = self.tokenizer()
        space = tok.token_to_id(" ")
        for names in (("%top_", "%top_all"), ("%best_action",)):
            ids = [tok.token_to_id(n) for n in names]
            at = np.flatnonzero(np.isin(toks, ids) & (mask > 0))
            if len(at):
                k = int(at[0]) + 1
                while k < len(toks) and toks[k] != space:
                    k += 1
                return k + 1 if k + 1 < len(toks) and mask[k + 1] else -1
        return -1


def mav_encoder(game: str, vocab_version: int = 1, **options) -> Tuple[MAVEncoder, Dict[str, Any]]:
    """(encoder, tokenizer info {vocab_size, pad_id, bos_id, eos_id, vocab_version}) for a game, in MAV
    vocabulary ``vocab_version`` (MAV text encodes to the same ids in v1 and v2)."""
    enc = MAVEncoder(game, vocab_version, **options)
    tok = enc.tokenizer()
    from ..mav import vocab_fingerprint
    return enc, {"vocab_size": tok.size, "pad_id": tok.pad_id, "bos_id": tok.bos_id, "eos_id": tok.eos_id,
                 "newline_id": tok.token_to_id("\n"), "vocab_version": str(tok.version),
                 "vocab_fingerprint": vocab_fingerprint(tok)}


class MAVDataset(IterableDataset):
    """Streams batches ``{"tokens": LongTensor[B, T], "mask": uint8 Tensor[B, T], "index": LongTensor[B],
    "epoch": LongTensor[B], "batch": int}`` (use ``DataLoader(ds, batch_size=None, num_workers=W)``).
    ``repeats``: per-record occurrences per epoch (see :class:`ExampleOrder`, :func:`finished_repeats`).

    ``encoder(records, seed)`` turns a list of records into (token ids, loss mask) pairs; mask 1 marks a
    target token. ``start_batch`` resumes the stream; ``num_batches`` bounds it (None: endless, epoch after
    epoch).
    """

    def __init__(self, store: PositionStore, encoder: Encoder, batch_size: int, seed: int = 0,
                 start_batch: int = 0, num_batches: Optional[int] = None, pad_id: int = 0, max_len: int = 1 << 30,
                 rank: int = 0, world_size: int = 1, repeats: Optional[np.ndarray] = None):
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
        self.repeats = repeats
        self.examples_per_epoch = ExampleOrder(len(store), seed, repeats).n  # (also checks repeats)

    def batches_per_epoch(self) -> float:
        return self.examples_per_epoch / self.batch_size

    def make_batch(self, j: int, order: Optional[ExampleOrder] = None) -> Dict[str, Any]:
        """Batch number j of the stream (also usable without a DataLoader)."""
        order = order or ExampleOrder(len(self.store), self.seed, self.repeats)
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
        # rank r's k-th batch is batch start + k * world_size + r, whatever the number of workers: worker w of
        # rank r makes every nw-th of them (the DataLoader's round robin puts them back in order)
        first = self.start_batch + self.rank + wid * self.world_size
        end = None if self.num_batches is None else self.start_batch + self.num_batches
        order = ExampleOrder(len(self.store), self.seed, self.repeats)
        j = first
        while end is None or j < end:
            yield self.make_batch(j, order)
            j += stride


__all__ = ["epoch_permutation", "ExampleOrder", "finished_repeats", "batch_seed", "Encoder", "pad_batch",
           "LazyTokenizer", "MAVEncoder", "mav_encoder", "MAVDataset"]
