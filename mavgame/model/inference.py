"""Inference for exported MAV models: batched greedy generation with a KV cache.

``MAVModel.load(path)`` reads a model exported by :mod:`mavgame.model.export` (safetensors) and runs it with
the native C engine (``backend="native"``, csrc/model: the default where the extension has it), with PyTorch,
or with the NumPy implementation in this module (the references: all agree to float32 rounding; tests check
it). Generation is greedy, batched over prompts of different lengths
(left padding), with a key/value cache; at every generated value token (the 64 bucket tokens ``<ctrl0>`` ..
``<ctrl63>``) the model's 64-way distribution over the buckets is kept, so that both max scoring (the mode)
and mean scoring (the expectation over bucket midpoints) are available to agents.
"""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .config import MAVConfig
from .export import load_exported
from .records import is_best_move

NUM_BUCKETS = 64


class _BlasThreads:
    """Set the number of OpenBLAS threads NumPy uses for the duration of a block (restored after).

    Small matrix products from many threads on a busy machine are several times slower than from one
    (measured: 9 ms against 1.1 ms per generated token for the small preset on 2 shared cores). Works with
    the OpenBLAS builds NumPy wheels bundle; a no-op where none is found."""

    _fns = None

    @classmethod
    def _find(cls):
        if cls._fns is None:
            cls._fns = ()
            try:
                import ctypes
                with open("/proc/self/maps") as f:
                    libs = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln})
                for path in libs:
                    lib = ctypes.CDLL(path)
                    for get, set_ in (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                                      ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                                      ("openblas_get_num_threads", "openblas_set_num_threads")):
                        if hasattr(lib, get) and hasattr(lib, set_):
                            g, s = getattr(lib, get), getattr(lib, set_)
                            g.restype = ctypes.c_int
                            s.argtypes = [ctypes.c_int]
                            cls._fns = (g, s)
                            return cls._fns
            except (OSError, AttributeError):
                cls._fns = ()
        return cls._fns

    def __init__(self, n: int):
        self.n = int(n)
        self.old = None

    def __enter__(self):
        fns = self._find() if self.n > 0 else ()
        if fns:
            self.old = fns[0]()
            fns[1](self.n)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            self._find()[1](self.old)


_GELU_C = np.float32(np.sqrt(2.0 / np.pi))


def _size_arg(name: str, v, lo: int, hi: int = 2 ** 31 - 1) -> int:
    """An int parameter (generate's batch_size and max_new_tokens, threads): TypeError naming it for a
    non-integer, ValueError naming it and the value outside [lo, hi]."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(v).__name__} {v!r:.60}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], not {v}")
    return int(v)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


class NumpyTransformer:
    """The MAV transformer's forward pass in NumPy (float32), with a KV cache; same maths as the torch one.

    Threads: the weights are read-only and every generation has its own cache (:meth:`new_cache`), so
    concurrent calls are safe; the OpenBLAS thread count set while generating is process-wide."""

    def __init__(self, weights: Dict[str, np.ndarray], cfg: MAVConfig, threads: int = 1):
        self.cfg = cfg
        self.w = weights
        self.threads = threads  # BLAS threads during generation (0: leave NumPy's setting)
        hd = cfg.head_dim
        inv = 1.0 / (cfg.rope_theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
        ang = np.arange(cfg.max_seq_len, dtype=np.float64)[:, None] * inv[None, :]
        self.cos = np.cos(ang).astype(np.float32)
        self.sin = np.sin(ang).astype(np.float32)
        self.out_w = weights["embed.weight"] if cfg.tie_embeddings else weights["lm_head.weight"]
        # Pre-transposed matrices for x @ W^T.
        self.t = {k: np.ascontiguousarray(v.T) for k, v in weights.items()
                  if v.ndim == 2 and k not in ("embed.weight", "pos_embed.weight", "line_embed.weight")}
        self.out_t = np.ascontiguousarray(self.out_w.T)

    def _norm(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.cfg.norm_eps)) * w

    def _rope(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def new_cache(self, batch: int, capacity: int):
        c = self.cfg
        shape = (batch, c.n_kv_heads, capacity, c.head_dim)
        return {"k": [np.zeros(shape, np.float32) for _ in range(c.n_layers)],
                "v": [np.zeros(shape, np.float32) for _ in range(c.n_layers)], "length": 0,
                "line_start": np.zeros(batch, np.int64)}

    @staticmethod
    def select_cache(cache, rows: np.ndarray):
        return {"k": [k[rows] for k in cache["k"]], "v": [v[rows] for v in cache["v"]], "length": cache["length"],
                "line_start": cache["line_start"][rows]}

    def forward(self, tokens: np.ndarray, positions: np.ndarray, key_valid: np.ndarray, cache) -> np.ndarray:
        """tokens/positions [B, T]; key_valid [B, L] for L = cached + T keys. Returns the last hidden [B, d]
        state's logits [B, vocab] (only the last position is projected: that is all generation needs)."""
        c = self.cfg
        B, T = tokens.shape
        past = cache["length"]
        L = past + T
        if L > cache["k"][0].shape[2]:
            raise ValueError(f"KV cache capacity {cache['k'][0].shape[2]} exceeded ({L} tokens)")
        H, KV, hd = c.n_heads, c.n_kv_heads, c.head_dim
        rep = H // KV
        cos = self.cos[positions][:, None, :, :]
        sin = self.sin[positions][:, None, :, :]
        qpos = np.arange(past, L)
        kpos = np.arange(L)
        allowed = ((kpos[None, :] <= qpos[:, None])[None] & key_valid[:, None, :]) | (kpos[None, None, :] == qpos[None, :, None])
        neg = np.where(allowed, 0.0, -np.inf).astype(np.float32)[:, None, None, :, :]   # [B,1,1,T,L]
        x = self.w["embed.weight"][tokens]
        if c.abs_pos:
            x = x + self.w["pos_embed.weight"][positions]
        if c.line_pos:
            pos = np.asarray(positions, np.int64)
            nl_next = np.where(tokens == c.newline_id, pos + 1, -1)
            start = np.maximum.accumulate(nl_next, axis=1)
            before = np.concatenate([np.full((B, 1), -1, np.int64), start[:, :-1]], axis=1)
            begin = np.maximum(before, cache["line_start"][:, None])
            x = x + self.w["line_embed.weight"][np.clip(pos - begin, 0, c.line_pos - 1)]
            cache["line_start"] = np.maximum(cache["line_start"], start[:, -1])
        scale = np.float32(1.0 / np.sqrt(hd))   # a float64 scalar would promote the whole residual stream
        for i in range(c.n_layers):
            p = f"blocks.{i}."
            h = self._norm(x, self.w[p + "attn_norm.weight"])
            q = (h @ self.t[p + "attn.wq.weight"]).reshape(B, T, H, hd).transpose(0, 2, 1, 3)
            k = (h @ self.t[p + "attn.wk.weight"]).reshape(B, T, KV, hd).transpose(0, 2, 1, 3)
            v = (h @ self.t[p + "attn.wv.weight"]).reshape(B, T, KV, hd).transpose(0, 2, 1, 3)
            q = self._rope(q, cos, sin)
            k = self._rope(k, cos, sin)
            cache["k"][i][:, :, past:L] = k
            cache["v"][i][:, :, past:L] = v
            K = cache["k"][i][:, :, :L]
            V = cache["v"][i][:, :, :L]
            qg = q.reshape(B, KV, rep, T, hd)
            s = np.matmul(qg, K[:, :, None].transpose(0, 1, 2, 4, 3)) * scale + neg      # [B,KV,rep,T,L]
            a = _softmax(s, -1)
            o = np.matmul(a, V[:, :, None]).reshape(B, H, T, hd).transpose(0, 2, 1, 3).reshape(B, T, H * hd)
            x = x + o @ self.t[p + "attn.wo.weight"]
            h = self._norm(x, self.w[p + "mlp_norm.weight"])
            g = h @ self.t[p + "mlp.gate.weight"]
            if c.mlp == "geglu":
                g = np.float32(0.5) * g * (np.float32(1.0) + np.tanh(_GELU_C * (g + np.float32(0.044715) * g ** 3)))
            else:
                g = g / (1.0 + np.exp(-g))
            x = x + (g * (h @ self.t[p + "mlp.up.weight"])) @ self.t[p + "mlp.down.weight"]
        cache["length"] = L
        last = self._norm(x[:, -1], self.w["norm.weight"])
        return last @ self.out_t

    def logits_all(self, tokens: np.ndarray) -> np.ndarray:
        """Logits at every position of unpadded sequences [B, T] (for tests and scoring)."""
        B, T = tokens.shape
        out = np.zeros((B, T, self.cfg.vocab_size), np.float32)
        cache = self.new_cache(B, T)
        valid = np.ones((B, T), bool)
        for t in range(T):
            out[:, t] = self.forward(tokens[:, t:t + 1], np.full((B, 1), t), valid[:, :t + 1], cache)
        return out


def default_torch_threads() -> int:
    """Intra-op threads for torch inference when the caller gives none: the ``OMP_NUM_THREADS`` the user set
    (torch reads it too), else 1. The MAV models are small: at the batch sizes of search, per-op dispatch and
    thread hand-off dominate, and torch's default (every core) is 3-33x slower than one thread on a 2-core
    machine (issue 12); one thread per process also suits league and annotation worker pools."""
    import os
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        n = 0
    return n if n > 0 else 1


class _TorchThreads:
    """Set torch's intra-op thread count for the duration of a block (restored after; 0: leave it)."""

    def __init__(self, n: int):
        self.n = int(n)
        self.old = 0

    def __enter__(self):
        if self.n > 0:
            import torch
            self.old = torch.get_num_threads()
            if self.old != self.n:
                torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        if self.n > 0 and self.old and self.old != self.n:
            import torch
            torch.set_num_threads(self.old)


class _TorchBackend:
    """Runs the torch MAVTransformer behind the same prefill/step interface as NumpyTransformer.

    ``threads``: torch intra-op threads while this backend generates (0: :func:`default_torch_threads`); the
    process-wide setting is restored after each generation call, so the caller's own torch work keeps its
    thread count. A backend wrapping a training module (:meth:`from_module`) leaves the setting alone.

    Threads: every generation has its own KV cache and the module runs under ``no_grad``, so concurrent calls
    are safe (not while the module trains); they race on the process-wide intra-op thread count."""

    def __init__(self, weights: Dict[str, np.ndarray], cfg: MAVConfig, device: str, threads: int = 0):
        import torch

        from .transformer import MAVTransformer
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        self.threads = threads or default_torch_threads()
        self.cfg = cfg
        self.device = torch.device(device)
        self.model = MAVTransformer(cfg)
        self.model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
        self.model.to(self.device).eval()

    @classmethod
    def from_module(cls, model, device=None) -> "_TorchBackend":
        self = cls.__new__(cls)
        import torch
        self.cfg = model.cfg
        self.model = model
        self.threads = 0
        self.device = next(model.parameters()).device if device is None else torch.device(device)
        return self

    def threads_scope(self) -> "_TorchThreads":
        return _TorchThreads(self.threads)

    def new_cache(self, batch: int, capacity: int):
        from .transformer import KVCache
        return KVCache(self.cfg, batch, capacity, device=self.device)

    @staticmethod
    def select_cache(cache, rows: np.ndarray):
        import torch
        cache.reorder(torch.as_tensor(rows, dtype=torch.long, device=cache.k[0].device))
        return cache

    def forward(self, tokens: np.ndarray, positions: np.ndarray, key_valid: np.ndarray, cache) -> np.ndarray:
        import torch
        with torch.no_grad():
            dev = self.device
            h = self.model(torch.as_tensor(tokens, dtype=torch.long, device=dev),
                           positions=torch.as_tensor(positions, dtype=torch.long, device=dev),
                           key_valid=torch.as_tensor(key_valid, dtype=torch.bool, device=dev), cache=cache,
                           return_hidden=True)
            return self.model.logits(h[:, -1]).float().cpu().numpy()


def _torch_auto_device() -> str:
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def native_available() -> bool:
    """True when the C extension has the native inference engine (csrc/model)."""
    from .. import _core
    return hasattr(_core, "MavEngine")


def native_device_error(device: str) -> Optional[str]:
    """None if the native engine can run on ``device``, else why not, in one sentence: a device other than
    'cpu', 'cuda' or 'cuda:0', or (for 'cuda') the CUDA kernels (kernels/, ``_core.WITH_CUDA``) missing
    from this build, or no usable CUDA device (``_core.cuda_status()`` says which)."""
    from .. import _core
    device = str(device)
    if device == "cpu":
        return None
    if device not in ("cuda", "cuda:0"):
        return f"the native backend runs on 'cpu' or 'cuda' (the first GPU, 'cuda:0'), not on {device!r}"
    n, why = _core.cuda_status()
    if n == 0:
        return f"device={device!r}: {why}; the native backend runs on the CPU with device='cpu'"
    return None


def native_device(device: str) -> str:
    """The device the native engine uses for ``device``: 'cpu', 'cuda' (ValueError saying why where it
    cannot), or for 'auto' the GPU when the build has the CUDA kernels and a device is usable, else the CPU
    (with a one-line note on stderr, once, when the build has the kernels but no GPU is usable)."""
    from .. import _core
    if device != "auto":
        why = native_device_error(device)
        if why is not None:
            raise ValueError(why)
        return "cpu" if device == "cpu" else "cuda"
    n, why = _core.cuda_status()
    if n > 0:
        return "cuda"
    if _core.WITH_CUDA:
        _note_once(f"mavgame: native engine on the CPU ({why})")
    return "cpu"


@functools.lru_cache(maxsize=None)
def _note_once(line: str) -> None:
    print(line, file=sys.stderr)


class NativeBackend:
    """The native C inference engine (``mavgame._core.MavEngine``, csrc/model) behind :func:`generate_ids`.

    Loads the file itself (the C loader validates it and names the offending field of a malformed one),
    runs prefill and the decode loop in C with the GIL released, with ``threads`` threads (0: 1) and up to
    ``max_batch`` sequences at once; ``prefix_sharing`` computes every prefix shared by a group of a batch's
    prompts (their MAV header, a state-tracking ``%prev_state``) once. Results do not depend on the thread
    count, the batch size or prefix sharing. ``device``: ``"cpu"``, ``"cuda"`` (the engine's CUDA forward pass,
    kernels/forward.cu: weights uploaded once, KV cache and token choice on the GPU; ValueError saying why where
    the build or the machine cannot) or ``"auto"`` (the GPU when usable, else the CPU).

    Threads: one generation (or ``logits``) at a time; a call from another thread while one runs raises
    RuntimeError "MavEngine is in use by another thread" (serialise the calls, or make one backend per thread)."""

    def __init__(self, path, threads: int = 0, max_batch: int = 64, prefix_sharing: bool = True, simd: bool = True,
                 device: str = "cpu"):
        from .. import _core
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        if not Path(path).is_file():
            raise FileNotFoundError(f"no MAV model file at {path}")
        self.path = str(path)
        self.threads = threads or 1
        self.max_batch = max_batch
        self.prefix_sharing = prefix_sharing
        self.simd = simd
        self.device = native_device(device)
        self.engine = _core.MavEngine(self.path, threads=self.threads, max_batch=max_batch, simd=simd,
                                      device=self.device)
        self.cfg = MAVConfig.from_json(self.engine.config_json)

    def ensure_prefix_cache(self, tokens: int) -> None:
        """Grow the engine's cross-batch prefix cache (keys and values of prompt prefixes kept between
        requests, least recently used blocks replaced) to at least ``tokens`` tokens; a larger one is kept.
        Generation that continues its own output in several requests (a MAV-IS trace with copied lines)
        then recomputes only what each request adds."""
        if self.engine.prefix_cache < tokens:
            self.engine.set_prefix_cache(int(tokens))

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("engine")           # a C object: reloaded from the file on unpickling
        d["_prefix_cache"] = self.engine.prefix_cache
        return d

    def __setstate__(self, d):
        from .. import _core
        cache = d.pop("_prefix_cache", 0)
        self.__dict__.update(d)
        self.engine = _core.MavEngine(self.path, threads=self.threads, max_batch=self.max_batch, simd=self.simd,
                                      device=getattr(self, "device", "cpu"), prefix_cache=cache)

    def generate_ids(self, prompts, max_new_tokens, stop_ids, bucket_ids=None, group_ids=None) -> List["Generation"]:
        if len(prompts) == 0:
            return []
        if _size_arg("max_new_tokens", max_new_tokens, 0) == 0:
            return [Generation([]) for _ in prompts]
        group = sorted(set(int(t) for t in group_ids)) if group_ids is not None else None
        raw = self.engine.generate([np.asarray(p, dtype=np.int64) for p in prompts], int(max_new_tokens),
                                   list(stop_ids), group_ids=group, bucket_ids=bucket_ids,
                                   prefix_sharing=self.prefix_sharing)
        outs = []
        for ids, steps, probs, finished in raw:
            g = Generation(ids.tolist(), steps.tolist(), finished=bool(finished))
            if len(steps):
                g.value_probs = probs
            outs.append(g)
        return outs

    def logits(self, prompt) -> np.ndarray:
        """Logits [V] at the last position of one token-id prompt."""
        return self.engine.logits(np.asarray(prompt, dtype=np.int64))

    def stats(self) -> Dict[str, float]:
        """Token counters of the engine: prompt tokens, tokens computed, tokens saved by prefix sharing..."""
        return self.engine.stats()


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


def bucket_midpoints(n: int = NUM_BUCKETS) -> np.ndarray:
    return (np.arange(n) + 0.5) / n


def mean_value(p: np.ndarray) -> np.ndarray:
    """Mean scoring: expected win probability under the bucket distribution(s) p [..., 64] (the C scorer of
    csrc/format/values.c, shared with the native MCTS evaluator)."""
    from .. import mav
    return mav.score(np.asarray(p), "mean")


def max_value(p: np.ndarray) -> np.ndarray:
    """Max scoring: the midpoint of the most likely bucket (the lowest on ties)."""
    from .. import mav
    return mav.score(np.asarray(p), "max")


# ---- MAV models on text ----------------------------------------------------------------------------------

def value_scorer(scoring: str):
    """:func:`mean_value` for ``"mean"``, :func:`max_value` for ``"max"`` (ValueError naming anything else)."""
    if scoring not in ("mean", "max"):
        raise ValueError(f"scoring must be 'mean' or 'max', not {scoring!r}")
    return mean_value if scoring == "mean" else max_value


def vocab_fingerprint(tokenizer) -> str:
    """A short hash of the vocabulary's token texts (detects a vocabulary changed under the same version)."""
    import hashlib
    h = hashlib.sha256("\n".join(tokenizer.vocab).encode("utf-8", "surrogateescape")).hexdigest()
    return h[:16]


@dataclass
class MAVOutput:
    """One generated MAV output: ``text`` (the output lines), its token ids, ``finished`` (ended with
    <eos>), and ``value_dists``: {move: 64-way bucket distribution} for every ``move:<ctrlN>`` entry the
    model wrote (first occurrence of a move). ``value_entries`` lists every such entry in the order written,
    repeats included, as (index in ``ids`` of the move's token, move, distribution): a search trace writes one
    ``%top_all`` line per node, and the entries' positions say which node each belongs to."""

    text: str
    ids: List[int]
    finished: bool
    value_dists: Dict[str, np.ndarray] = field(default_factory=dict)
    value_entries: List[Tuple[int, str, np.ndarray]] = field(default_factory=list)

    def values(self, scoring: str = "mean") -> Dict[str, float]:
        """{move: win probability} by mean scoring (expectation) or max scoring (the mode's midpoint)."""
        f = value_scorer(scoring)
        return {m: float(f(p)) for m, p in self.value_dists.items()}


class MAVModel:
    """A trained MAV model on MAV text: ``MAVModel.load(path)`` then :meth:`generate` / :meth:`analyse`.

    ``backend``: ``"native"`` (the C engine of csrc/model), ``"torch"``, ``"numpy"`` or ``"auto"`` (native when the
    extension has it and can run on ``device``, else torch when installed, else NumPy). ``device``: ``"cpu"``,
    ``"cuda"`` (the native engine's CUDA forward pass where the build has the kernels and a GPU is usable, else a
    ValueError saying which is missing) or ``"auto"`` (the GPU when usable, else the CPU). The file's vocabulary
    version picks the tokenizer (``mavgame.mav.Tokenizer(version)``: v1 for the shipped models, v2 for MAV-IS models
    with the trace keyword tokens); an unknown version, a vocabulary size that does not match the version, a file
    that declares none and a fingerprint that differs from the installed vocabulary's are refused.

    Threads, by backend (the weights are read-only everywhere; what differs is the working state):

    - ``native``: the engine (:class:`NativeBackend`) holds the KV cache and scratch of one generation: a call
      from a second thread while one runs raises RuntimeError ("MavEngine is in use by another thread").
      Share a native model between threads behind a lock, or load one per thread; the MCTS evaluators made
      from one engine (``mcts_mav_evaluator``) have their own buffers and may run concurrently, one search each.
    - ``torch`` and ``numpy``: each generation builds its own KV cache, so concurrent calls are safe and give
      the results each would alone; the intra-op thread count they set while generating (torch's, OpenBLAS's)
      is process-wide, so concurrent calls race on that setting (the count restored after may be another
      call's). One call with a bigger batch is faster anyway.
    """

    def __init__(self, backend, cfg: MAVConfig, vocab_version: str = "", info: Optional[dict] = None,
                 tokenizer=None, path: Optional[str] = None):
        from .. import mav
        self.backend = backend
        self.cfg = cfg
        self.info = dict(info or {})
        self.path = path
        where = f"model {path}" if path else "model"
        # the vocabulary: the one the file declares (a known version of the model's size), else the given
        # tokenizer's, else (a model made in memory) the version of the model's size
        if vocab_version:
            try:
                version = mav.check_model_vocab(vocab_version, cfg.vocab_size)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None
        elif path is not None:
            raise ValueError(f"{where} declares no MAV vocabulary (metadata vocab_version is empty)")
        else:
            version = tokenizer.version if tokenizer is not None else mav.version_of_size(cfg.vocab_size)
        if tokenizer is not None and tokenizer.version != version:
            raise ValueError(f"{where} uses MAV vocabulary v{version}, the tokenizer given is v{tokenizer.version}")
        self.tokenizer = tokenizer or mav.Tokenizer(version)
        self.vocab_version = version
        tok = self.tokenizer
        fp = self.info.get("vocab_fingerprint")
        if fp and fp != vocab_fingerprint(tok):
            raise ValueError(f"{where} was trained with a different MAV vocabulary v{tok.version} "
                             f"(fingerprint {fp}, installed {vocab_fingerprint(tok)})")
        if cfg.vocab_size != tok.size:
            raise ValueError(f"model vocabulary size {cfg.vocab_size} != tokenizer size {tok.size}")
        self.game = self.info.get("game")
        # the child form of the search traces it was trained on (MAV-IS); a model without the field: short
        self.trace_form = self.info.get("trace_form") or "short"
        if self.trace_form not in ("short", "full"):
            raise ValueError(f"{where}: unknown trace_form {self.trace_form!r} in its metadata (short or full)")
        self.decoding = "grouped"
        self._move_tokens: Dict[str, List[int]] = {}
        self._tok_ids = _top_tok_ids(tok)

    def __getstate__(self):
        d = dict(self.__dict__)
        d["tokenizer"] = None   # a C object: rebuilt on unpickling (the version was checked at load)
        return d

    def __setstate__(self, d):
        from .. import mav
        self.__dict__.update(d)
        self.tokenizer = mav.Tokenizer(self.__dict__.get("vocab_version", mav.VOCAB_VERSION))

    @classmethod
    def load(cls, path=None, backend: str = "auto", device: str = "cpu", threads: int = 0) -> "MAVModel":
        """Load an exported model (``path``; None: the Connect Four model shipped in ``mavgame/data``).

        Every backend refuses a file whose weights hold NaN or inf (ValueError naming the file and the tensor):
        such a model answers nothing usable. ``threads``: an integer >= 0 (0: the backend's default)."""
        threads = _size_arg("threads", threads, 0)
        if path is None:
            path = shipped_model_path("connect_four")
        if backend not in ("auto", "native", "torch", "numpy"):
            raise ValueError(f"backend must be 'auto', 'native', 'torch' or 'numpy', not {backend!r}")
        if backend == "auto":
            if native_available() and (device == "auto" or native_device_error(device) is None):
                backend = "native"
            else:
                try:
                    import torch
                    backend = "torch"
                except ImportError:
                    backend = "numpy"
                if str(device).startswith("cuda") and (backend == "numpy" or not torch.cuda.is_available()):
                    # neither the native engine nor torch can run there: say why, as the native backend would
                    raise ValueError(native_device_error(device) or f"device={device!r}: no CUDA device usable")
        if backend == "native":
            be = NativeBackend(path, threads=threads, device=device)
            try:
                info = json.loads(be.engine.info)
            except json.JSONDecodeError:
                raise ValueError(f"{path}: metadata 'info' is not valid JSON") from None
            return cls(be, be.cfg, be.engine.vocab_version, info, path=str(path))
        weights, cfg, vv, info = load_exported(path)
        if device == "auto":
            device = "cpu" if backend == "numpy" else _torch_auto_device()
        if backend == "torch":
            be = _TorchBackend(weights, cfg, device, threads)
        else:
            be = NumpyTransformer(weights, cfg, threads=threads or 1)
        return cls(be, cfg, vv, info, path=str(path))

    @classmethod
    def from_module(cls, module, game: Optional[str] = None, tokenizer=None, backend: str = "torch",
                    threads: int = 0) -> "MAVModel":
        """A MAVModel of a torch MAVTransformer (e.g. during training). ``backend="torch"`` wraps the module
        itself; ``"native"`` exports its current weights (float32, to a temporary file) into the native
        engine, much faster for generating many answers; ``"auto"``: native where the extension has it."""
        if backend == "auto":
            backend = "native" if native_available() else "torch"
        from .. import mav
        tok = tokenizer or mav.Tokenizer(mav.version_of_size(module.cfg.vocab_size))
        if backend == "torch":
            return cls(_TorchBackend.from_module(module), module.cfg, str(tok.version), {"game": game}, tok)
        if backend != "native":
            raise ValueError(f"backend must be 'auto', 'native' or 'torch', not {backend!r}")
        import os
        import tempfile

        from .export import export_model
        fd, path = tempfile.mkstemp(suffix=".safetensors", prefix="mavgame-")
        os.close(fd)
        try:
            export_model(path, module.state_dict(), module.cfg, str(tok.version), info={"game": game})
            be = NativeBackend(path, threads=threads)      # the engine reads the whole file: it can go
        finally:
            os.unlink(path)
        return cls(be, be.cfg, str(tok.version), {"game": game}, tok)

    def encode_prompt(self, prompt: str) -> List[int]:
        return [self.tokenizer.bos_id] + self.tokenizer.encode(prompt).tolist()

    def move_tokens(self, game: str) -> List[int]:
        """Token ids that can start a move of ``game`` (every move of the game, not only the legal ones:
        the first token of each of the core's move tokens, ``mavgame.mav.move_tokens``, which Hex's
        ``swap`` is one of)."""
        if game not in self._move_tokens:
            from .. import mav
            tok = self.tokenizer
            self._move_tokens[game] = sorted({int(enc[0]) for enc in map(tok.encode, mav.move_tokens(game))
                                              if len(enc)})
        return self._move_tokens[game]

    def generate(self, prompts: Sequence[str], max_new_tokens: int = 0, batch_size: int = 64,
                 decoding: Optional[str] = None) -> List[MAVOutput]:
        """Outputs for MAV prompts (header + input lines), in batches of ``batch_size``.

        ``decoding`` (default: the model's ``decoding`` attribute, ``"grouped"``): ``"greedy"`` is plain
        greedy decoding; ``"grouped"`` is greedy with the game's move tokens grouped (:func:`grouped_argmax`):
        a model trained on shuffled move lists spreads the probability of "a move comes next" over every
        move it could list next, so plain greedy lets a single other token (``invalid``, the outcome marker
        of a finished game, or ``]``) win with as little as 1/8 of the probability against seven moves.
        Grouping compares "some move" with each alternative as the MAV format means it.

        ``max_new_tokens``: an integer >= 0 (0: as many as the model's ``max_seq_len`` leaves); ``batch_size``: an
        integer >= 1. Anything else raises (TypeError / ValueError naming the parameter and the value).
        """
        if isinstance(prompts, (str, bytes)):
            raise TypeError("MAVModel.generate takes a list of prompts, not a single "
                            f"{type(prompts).__name__} (wrap it: generate([prompt]))")
        decoding = decoding or self.decoding
        if decoding not in ("greedy", "grouped"):
            raise ValueError(f"decoding must be 'greedy' or 'grouped', not {decoding!r}")
        batch_size = _size_arg("batch_size", batch_size, 1)
        max_new_tokens = _size_arg("max_new_tokens", max_new_tokens, 0)   # 0: up to the model's max_seq_len
        outs: List[MAVOutput] = []
        tok = self.tokenizer
        bucket_ids = tok.bucket_ids.tolist()
        for s in range(0, len(prompts), batch_size):
            chunk = [self.encode_prompt(p) for p in prompts[s:s + batch_size]]
            group = self.group_ids(prompts[s:s + batch_size]) if decoding == "grouped" else None
            longest = max(len(c) for c in chunk)
            budget = max_new_tokens or (self.cfg.max_seq_len - longest)
            budget = min(budget, self.cfg.max_seq_len - longest)
            if budget <= 0:
                raise ValueError(f"a prompt of {longest} tokens leaves no room in max_seq_len {self.cfg.max_seq_len}")
            gens = generate_ids(self.backend, chunk, budget, stop_ids=[tok.eos_id], pad_id=tok.pad_id,
                                bucket_ids=bucket_ids, group_ids=group)
            outs += [self.output(g.ids[:-1] if g.finished else g.ids, g.finished, g.value_steps, g.value_probs)
                     for g in gens]
        return outs

    def group_ids(self, prompts: Sequence[str]) -> List[int]:
        """The move tokens grouped by ``"grouped"`` decoding for these prompts (their games' move tokens)."""
        games = {self.game or game_of_prompt(p) for p in prompts}
        return sorted({t for g in games for t in self.move_tokens(g)})

    def output(self, ids: Sequence[int], finished: bool, value_steps: Sequence[int], value_probs: np.ndarray
               ) -> MAVOutput:
        """The MAVOutput of generated ``ids`` (without the end token): its text and value entries, from the
        bucket distributions ``value_probs`` kept at the positions ``value_steps`` of ``ids``."""
        entries = value_entries(self.tokenizer, ids, value_steps, value_probs, self._tok_ids)
        dists: Dict[str, np.ndarray] = {}
        for _at, move, p in entries:
            dists.setdefault(move, p)
        return MAVOutput(self.tokenizer.decode(ids), list(ids), finished, dists, entries)

    def analyse(self, states: Sequence[Any], commands: str = "%state %top_all %best_action",
                batch_size: int = 64) -> List[Tuple[Any, MAVOutput]]:
        """Prompt the model with each state; returns (mavgame.mav.ParseResult, MAVOutput) pairs."""
        from .. import mav
        prompts = [mav.prompt(s, commands) for s in states]
        outs = self.generate(prompts, batch_size=batch_size)
        return [(mav.parse(s.game, p + o.text, true_state=s), o) for s, p, o in zip(states, prompts, outs)]


def _top_tok_ids(tok) -> Tuple[int, ...]:
    """The token ids the C reader of value entries needs (mg_mav_tok_ids)."""
    return (tok.token_to_id(":"), tok.token_to_id(" "), tok.token_to_id("["), tok.token_to_id("]"),
            tok.token_to_id("\n"), tok.token_to_id("%top_all"), tok.token_to_id("%top_"), int(tok.bucket_ids[0]),
            len(tok.bucket_ids))


def value_entries(tokenizer, ids: Sequence[int], value_steps: Sequence[int], value_probs: np.ndarray,
                  tok_ids: Optional[Tuple[int, ...]] = None) -> List[Tuple[int, str, np.ndarray]]:
    """(index of the move token, move, bucket distribution) of every well-formed ``move:<ctrlN>`` entry of
    the %top lines in ``ids``, in order, as mavgame.mav.parse reads them: `` move:<ctrlN>`` followed by a
    space, ``]`` or the end of the output, on a line that starts with ``[%top_all`` or ``[%top_k`` (the C
    reader csrc/format/mav_tokens.c, shared with the native MCTS evaluator). ``value_steps``: the indices in
    ``ids`` of the generated bucket tokens, ``value_probs`` their distributions (rows); steps past ``ids`` are
    ignored."""
    from .. import _core
    ids = list(ids)
    keep = [k for k, s in enumerate(value_steps) if s < len(ids)]
    if not keep:
        return []
    steps = [value_steps[k] for k in keep]
    moves = _core.mav_value_moves(ids, steps, tok_ids or _top_tok_ids(tokenizer)).tolist()
    return [(at, tokenizer.decode([ids[at]]), value_probs[keep[j]]) for j, at in enumerate(moves) if at >= 0]


def game_of_prompt(prompt: str) -> str:
    """The game named in a MAV prompt's header (``<mav game=NAME> ...``; a search-trace prompt's preamble
    line before it is skipped), read by the core's MAV parser (ValueError naming the problem if the
    header names no known game)."""
    from .. import _core
    lines = prompt.split("\n", 3)[:3]
    head = next((ln for ln in lines if ln.startswith("<mav")), lines[0])
    return _core.mav_header_game(head)


#: kinds of shipped model: the MAV (``mav_GAME.safetensors``) and the internal-search fine-tune of it
#: (``mav_is_GAME.safetensors``, which also answers MAV prompts)
SHIPPED_KINDS = ("mav", "mav_is")


def shipped_model_path(game: str = "connect_four", kind: str = "mav") -> Path:
    """Path of the model of `kind` (SHIPPED_KINDS) shipped with mavgame for `game` (FileNotFoundError if
    there is none)."""
    if kind not in SHIPPED_KINDS:
        raise ValueError(f"shipped model kind must be one of {SHIPPED_KINDS}, not {kind!r}")
    p = Path(__file__).resolve().parent.parent / "data" / f"{kind}_{game}.safetensors"
    if not p.exists():
        label = "MAV" if kind == "mav" else "MAV-IS"
        raise FileNotFoundError(f"no {label} model for {game!r} shipped with this mavgame (looked for {p})")
    return p


PLAIN = "%state %top_all %best_action"
TRANSITION = "%prev_state %prev_action %state %top_all %best_action"


def evaluate_records(model: MAVModel, game: str, records: Sequence[Dict[str, Any]], batch_size: int = 64,
                     board_size: int = 0, max_new_tokens: int = 384) -> Dict[str, Any]:
    """The paper's metrics (Table 2) on annotated positions (records of mavgame.model.records).

    Every position is asked in the plain form (``%state %top_all %best_action``) and, when it has a
    previous position, in the transition form (``%prev_state %prev_action %state %top_all %best_action``).
    Returns the mavgame.mav.metrics rates over all of them (best_action_legal, top_all_precision /
    recall / f1, next_state_accuracy, outcome_accuracy, parsed_ok_rate) plus value quality against the
    annotation: ``best_action_optimal`` (the %best_action has the annotation's best value) and
    ``value_mae_mean`` / ``value_mae_max`` (mean absolute error of mean / max scored values of the legal
    moves listed). Where the records have plies and the game has phases (``GameInfo.phases``),
    ``by_phase`` holds the same rates for each phase's positions (with ``positions``, their count).
    """
    from .. import _core, mav
    prompts, states, recs = [], [], []
    for r in records:
        st = _core.State(game, r["state"], board_size, 0)
        prompts.append(mav.prompt(st, PLAIN))
        states.append(st)
        recs.append(r)
        if r.get("prev_state") is not None:
            prev = _core.State(game, r["prev_state"], board_size, 0)
            prompts.append(mav.prompt(st, TRANSITION, prev_state=prev, prev_action=r["prev_action"]))
            states.append(st)
            recs.append(r)
    outs = model.generate(prompts, max_new_tokens=max_new_tokens, batch_size=batch_size)
    texts = [p + o.text for p, o in zip(prompts, outs)]
    m = mav.metrics(game, texts, states)
    parsed = [mav.parse(game, t, true_state=st) if r.get("values") else None
              for st, r, t in zip(states, recs, texts)]

    def value_metrics(idx: Sequence[int]) -> Dict[str, float]:
        opt_n = opt_ok = 0
        err: Dict[str, List[float]] = {"mean": [], "max": []}
        for i in idx:
            vals, pr = recs[i].get("values") or {}, parsed[i]
            if pr is None:
                continue
            if pr.best_present:
                opt_n += 1
                opt_ok += int(is_best_move(vals, pr.best))
            for scoring in ("mean", "max"):
                for mv, v in outs[i].values(scoring).items():
                    if mv in vals:
                        err[scoring].append(abs(v - vals[mv]))
        return {"best_action_optimal": opt_ok / opt_n if opt_n else float("nan"),
                "value_mae_mean": float(np.mean(err["mean"])) if err["mean"] else float("nan"),
                "value_mae_max": float(np.mean(err["max"])) if err["max"] else float("nan")}

    m.update(value_metrics(range(len(recs))))
    from ..games import registry
    phases = registry.get(game).phases if game in registry.names() else ()
    if phases and all("ply" in r for r in records):
        m["by_phase"] = {}
        for name, lo, hi in phases:
            idx = [i for i, r in enumerate(recs) if lo <= int(r["ply"]) <= hi]
            if not idx:
                continue
            pm = mav.metrics(game, [texts[i] for i in idx], [states[i] for i in idx])
            pm.update(value_metrics(idx))
            pm["positions"] = sum(1 for r in records if lo <= int(r["ply"]) <= hi)
            m["by_phase"][name] = pm
    m["positions"] = len(records)
    m["prompts"] = len(prompts)
    return m


def trainer_metrics(trainer, n_positions: Optional[int] = None, full: bool = False) -> Dict[str, Any]:
    """Generation metrics of a training run's current model on its first held-out positions (the main
    rates; ``full``: everything :func:`evaluate_records` returns)."""
    n = trainer.cfg.gen_eval_positions if n_positions is None else n_positions
    store = trainer.val_store
    if store is None or n <= 0:
        return {}
    recs = [store.record(i) for i in range(min(n, len(store)))]
    model = MAVModel.from_module(trainer.model, trainer.game, backend="auto")
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        m = evaluate_records(model, trainer.game, recs)
    finally:
        trainer.model.train(was_training)
    if full:
        return m
    keys = ("parsed_ok_rate", "best_action_legal", "top_all_precision", "top_all_recall", "top_all_f1",
            "next_state_accuracy", "outcome_accuracy", "best_action_optimal", "value_mae_mean")
    return {k: float(m[k]) for k in keys if k in m}
