"""The token loop: batched greedy generation with a KV cache over any backend, grouped greedy decoding, and the
bucket distributions kept at every generated value token (the native engine runs the same loop in C)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np

from .reference import _softmax
from .scoring import NUM_BUCKETS
from .threads import _BlasThreads


def _size_arg(name: str, v, lo: int, hi: int = 2 ** 31 - 1) -> int:
    """An int parameter (generate's batch_size and max_new_tokens, threads): TypeError naming it for a
    non-integer, ValueError naming it and the value outside [lo, hi]."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(v).__name__} {v!r:.60}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], not {v}")
    return int(v)


@dataclass
class Generation:
    """One generated output: token ids, and for every generated bucket token its position in ``ids`` and
    the model's distribution over the 64 buckets there (rows of ``value_probs``)."""

    ids: List[int]
    value_steps: List[int] = field(default_factory=list)
    value_probs: np.ndarray = field(default_factory=lambda: np.zeros((0, NUM_BUCKETS), np.float32))
    finished: bool = False


def generate_ids(backend, prompts: Sequence[Sequence[int]], max_new_tokens: int, stop_ids: Sequence[int],
                 pad_id: int = 0, bucket_ids: Optional[Sequence[int]] = None,
                 group_ids: Optional[Sequence[int]] = None) -> List[Generation]:
    """Greedy generation for a batch of token-id prompts with a KV cache (finished rows leave the batch).

    ``stop_ids``: generation of a row ends after it emits one of them (included in the output).
    ``bucket_ids``: the 64 value token ids, in bucket order; their distribution is kept at every step whose
    greedy token is one of them.
    ``group_ids``: grouped greedy decoding: at each step the tokens of the group count as one choice with
    their total probability against every other token; when the group wins, its most likely token is
    emitted. (See :meth:`MAVModel.generate`: the move tokens, whose probability a model trained on
    shuffled move lists spreads over all the moves it could write next.)
    """
    if hasattr(backend, "generate_ids"):          # the native engine runs the whole loop in C
        return backend.generate_ids(prompts, max_new_tokens, stop_ids, bucket_ids, group_ids)
    scope = backend.threads_scope() if hasattr(backend, "threads_scope") else _BlasThreads(getattr(backend, "threads", 0))
    with scope:
        return _generate_ids(backend, prompts, max_new_tokens, stop_ids, pad_id, bucket_ids, group_ids)


def grouped_argmax(logits: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per row: the group's most likely token if the group's total probability beats every other single
    token, else the most likely other token (plain argmax when ``group`` is empty)."""
    if len(group) == 0:
        return np.argmax(logits, axis=-1)
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    pg = p[:, group]
    other = p.copy()
    other[:, group] = -1.0
    best_other = other.argmax(axis=-1)
    rows = np.arange(len(p))
    return np.where(pg.sum(axis=-1) > p[rows, best_other], group[pg.argmax(axis=-1)], best_other)


def _generate_ids(backend, prompts, max_new_tokens, stop_ids, pad_id, bucket_ids, group_ids=None) -> List[Generation]:
    cfg = backend.cfg
    B = len(prompts)
    if B == 0:
        return []
    lens = [len(p) for p in prompts]
    if min(lens) == 0:
        raise ValueError(f"prompt {lens.index(0)} is empty")
    T = max(lens)
    if T >= cfg.max_seq_len:
        raise ValueError(f"a prompt of {T} tokens does not fit the model's max_seq_len {cfg.max_seq_len}")
    if _size_arg("max_new_tokens", max_new_tokens, 0) == 0:
        return [Generation([]) for _ in prompts]
    toks = np.full((B, T), pad_id, np.int64)
    valid = np.zeros((B, T), bool)
    for b, p in enumerate(prompts):
        arr = np.asarray(p, dtype=np.int64)
        if arr.min() < 0 or arr.max() >= cfg.vocab_size:
            raise ValueError(f"prompt {b} has a token id outside [0, {cfg.vocab_size})")
        toks[b, T - len(p):] = arr
        valid[b, T - len(p):] = True
    pos = np.maximum(np.arange(T)[None, :] - (T - np.asarray(lens))[:, None], 0)
    cap = min(cfg.max_seq_len, T + max_new_tokens)
    cache = backend.new_cache(B, cap)
    logits = backend.forward(toks, pos, valid, cache)
    stop = np.zeros(cfg.vocab_size, bool)
    stop[list(stop_ids)] = True
    bucket_ids = np.asarray(bucket_ids if bucket_ids is not None else [], dtype=np.int64)
    bucket_of = np.full(cfg.vocab_size, -1, np.int64)
    if len(bucket_ids):
        bucket_of[bucket_ids] = np.arange(len(bucket_ids))
    outs = [Generation([]) for _ in range(B)]
    probs: List[List[np.ndarray]] = [[] for _ in range(B)]
    rows = np.arange(B)                      # batch row -> output index
    next_pos = pos[:, -1] + 1
    group = np.asarray(sorted(set(group_ids)) if group_ids is not None else [], dtype=np.int64)
    for step in range(cap - T):
        nxt = grouped_argmax(logits, group)
        for r, b in enumerate(rows):
            t = int(nxt[r])
            if bucket_of[t] >= 0:
                outs[b].value_steps.append(len(outs[b].ids))
                probs[b].append(_softmax(logits[r, bucket_ids].astype(np.float64)).astype(np.float32))
            outs[b].ids.append(t)
        done = stop[nxt]
        for r in np.flatnonzero(done):
            outs[rows[r]].finished = True
        if done.all() or step == cap - T - 1:
            break
        keep = np.flatnonzero(~done)
        if len(keep) < len(rows):
            rows, nxt, next_pos, valid = rows[keep], nxt[keep], next_pos[keep], valid[keep]
            cache = backend.select_cache(cache, keep)
        valid = np.concatenate([valid, np.ones((len(rows), 1), bool)], axis=1)
        logits = backend.forward(nxt[:, None], next_pos[:, None], valid, cache)
        next_pos = next_pos + 1
    for b in range(B):
        if probs[b]:
            outs[b].value_probs = np.stack(probs[b])
    return outs


__all__ = ["Generation", "generate_ids", "grouped_argmax"]
