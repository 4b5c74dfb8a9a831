"""The NumPy reference of the MAV transformer's forward pass (float32, with a KV cache): the same maths as the
torch module (:mod:`mavgame.model.transformer`) and the native engine (csrc/model); tests check they agree."""
from __future__ import annotations

from typing import Dict

import numpy as np

from ..config import MAVConfig

_GELU_C = np.float32(np.sqrt(2.0 / np.pi))


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


__all__ = ["NumpyTransformer"]
