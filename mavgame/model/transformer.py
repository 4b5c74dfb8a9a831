"""The reference MAV transformer (PyTorch): a decoder-only model in the Gemini/Llama family.

Pre-norm blocks with RMSNorm, rotary position embeddings (rotate-half form), grouped-query attention
(multi-query when ``n_kv_heads == 1``), a gated MLP (SwiGLU or GeGLU), no biases, and an output layer
optionally tied to the token embedding.

Two ways to run it:

* training / scoring: ``model(tokens)`` on right-padded sequences with a causal mask;
* generation: ``model(tokens, positions=..., key_valid=..., cache=cache)`` with a :class:`KVCache`, for
  left-padded batches of prompts (``positions`` counts from each row's first real token, ``key_valid``
  masks the padding keys). :func:`greedy_generate` is the plain decoding loop over it.

PyTorch is an optional dependency of mavgame: this module imports it at the top, so import it only where
torch is wanted (``mavgame.model.inference`` also has a NumPy path for the exported model).
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import MAVConfig


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def rope_tables(head_dim: int, max_len: int, theta: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables [max_len, head_dim/2] for the rotary embedding."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    ang = torch.arange(max_len, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x [B, H, T, D] by cos/sin [B or 1, 1, T, D/2] (rotate-half pairing: i with i + D/2)."""
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h].float(), x[..., h:].float()
    out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return out.to(x.dtype)


class KVCache:
    """Per-layer key/value buffers [B, n_kv_heads, capacity, head_dim] plus the filled length."""

    def __init__(self, cfg: MAVConfig, batch: int, capacity: int, device=None, dtype=torch.float32):
        if capacity > cfg.max_seq_len:
            raise ValueError(f"KV cache capacity {capacity} exceeds the model's max_seq_len {cfg.max_seq_len}")
        shape = (batch, cfg.n_kv_heads, capacity, cfg.head_dim)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.length = 0
        self.capacity = capacity
        # position of the first token of each row's current line (for MAVConfig.line_pos)
        self.line_start = torch.zeros(batch, dtype=torch.long, device=device)

    def reorder(self, index: torch.Tensor) -> None:
        """Keep only the batch rows in `index` (e.g. drop finished sequences)."""
        self.k = [k.index_select(0, index) for k in self.k]
        self.v = [v.index_select(0, index) for v in self.v]
        self.line_start = self.line_start.index_select(0, index)


def line_positions(tokens: torch.Tensor, positions: torch.Tensor, newline_id: int, n: int,
                   line_start: Optional[torch.Tensor] = None):
    """(index of each token within its text line [B, T], the next line start [B]); ``line_start`` [B]: where
    the current line began (positions), from earlier tokens (a KV cache), else 0."""
    B, T = tokens.shape
    nl_next = torch.where(tokens == newline_id, positions + 1, torch.full_like(positions, -1))
    start = torch.cummax(nl_next, dim=1).values
    before = torch.cat([torch.full((B, 1), -1, dtype=start.dtype, device=start.device), start[:, :-1]], dim=1)
    base = torch.zeros(B, dtype=positions.dtype, device=positions.device) if line_start is None else line_start
    begin = torch.maximum(before, base[:, None])
    return (positions - begin).clamp(0, n - 1), torch.maximum(base, start[:, -1])


class Attention(nn.Module):
    def __init__(self, cfg: MAVConfig):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.wq = nn.Linear(cfg.d_model, cfg.n_heads * cfg.head_dim, bias=False)
        self.wk = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.wv = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_heads * cfg.head_dim, cfg.d_model, bias=False)

    def forward(self, x, cos, sin, mask, cache: Optional[KVCache], layer: int):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if cache is not None:
            start = cache.length
            cache.k[layer][:, :, start:start + T] = k.to(cache.k[layer].dtype)
            cache.v[layer][:, :, start:start + T] = v.to(cache.v[layer].dtype)
            k = cache.k[layer][:, :, :start + T].to(q.dtype)
            v = cache.v[layer][:, :, :start + T].to(q.dtype)
        rep = self.n_heads // self.n_kv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        if mask is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.wo(y.transpose(1, 2).reshape(B, T, self.n_heads * self.hd))


class GatedMLP(nn.Module):
    def __init__(self, cfg: MAVConfig):
        super().__init__()
        self.gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)
        self.geglu = cfg.mlp == "geglu"

    def forward(self, x):
        g = self.gate(x)
        g = F.gelu(g, approximate="tanh") if self.geglu else F.silu(g)
        return self.down(g * self.up(x))


class Block(nn.Module):
    def __init__(self, cfg: MAVConfig):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.mlp_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = GatedMLP(cfg)

    def forward(self, x, cos, sin, mask, cache, layer):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask, cache, layer)
        return x + self.mlp(self.mlp_norm(x))


class MAVTransformer(nn.Module):
    """Decoder-only transformer; ``forward`` returns logits [B, T, vocab] (or hidden states)."""

    def __init__(self, cfg: MAVConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_embed = nn.Embedding(cfg.max_seq_len, cfg.d_model) if cfg.abs_pos else None
        self.line_embed = nn.Embedding(cfg.line_pos, cfg.d_model) if cfg.line_pos else None
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = None if cfg.tie_embeddings else nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        cos, sin = rope_tables(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.cfg.init_std
        # Output projections of each residual branch get the GPT-2 style depth scaling.
        out_std = std / math.sqrt(2 * self.cfg.n_layers)
        for name, p in self.named_parameters():
            if name.endswith("norm.weight"):
                nn.init.ones_(p)
            elif name.endswith("wo.weight") or name.endswith("down.weight"):
                nn.init.normal_(p, 0.0, out_std)
            else:
                nn.init.normal_(p, 0.0, std)

    def output_weight(self) -> torch.Tensor:
        return self.embed.weight if self.lm_head is None else self.lm_head.weight

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits from final hidden states (already normalised by ``forward(..., return_hidden=True)``)."""
        return F.linear(hidden, self.output_weight())

    def forward(self, tokens: torch.Tensor, positions: Optional[torch.Tensor] = None,
                key_valid: Optional[torch.Tensor] = None, cache: Optional[KVCache] = None,
                return_hidden: bool = False) -> torch.Tensor:
        """tokens [B, T] int64.

        Without ``positions``/``key_valid``/``cache``: a plain causal pass (positions 0..T-1).
        ``positions`` [B, T]: rotary positions of the tokens. ``key_valid`` [B, L]: which keys may be
        attended, for all L = cache length + T keys (False on padding). ``cache``: append this step's keys
        and values and attend over everything cached so far.
        """
        cfg = self.cfg
        if tokens.dim() != 2:
            raise ValueError(f"tokens must be [batch, time], got shape {tuple(tokens.shape)}")
        B, T = tokens.shape
        past = cache.length if cache is not None else 0
        if past + T > cfg.max_seq_len:
            raise ValueError(f"sequence of {past + T} tokens exceeds max_seq_len {cfg.max_seq_len}")
        if cache is not None and past + T > cache.capacity:
            raise ValueError(f"KV cache capacity {cache.capacity} exceeded ({past + T} tokens)")
        if positions is None:
            positions = torch.arange(past, past + T, device=tokens.device).expand(B, T)
        if positions.shape != (B, T):
            raise ValueError(f"positions must have shape {(B, T)}, got {tuple(positions.shape)}")
        cos = self.rope_cos[positions].unsqueeze(1)
        sin = self.rope_sin[positions].unsqueeze(1)

        mask = None
        if cache is not None or key_valid is not None:
            L = past + T
            qpos = torch.arange(past, L, device=tokens.device)
            kpos = torch.arange(L, device=tokens.device)
            causal = kpos[None, :] <= qpos[:, None]                       # [T, L]
            if key_valid is None:
                allowed = causal.expand(B, T, L)
            else:
                if key_valid.shape != (B, L):
                    raise ValueError(f"key_valid must have shape {(B, L)}, got {tuple(key_valid.shape)}")
                # A padding query may see nothing valid: let every query see itself so rows stay finite.
                allowed = (causal[None] & key_valid[:, None, :]) | (kpos[None, None, :] == qpos[None, :, None])
            mask = allowed.unsqueeze(1)                                   # [B, 1, T, L]

        x = self.embed(tokens)
        if self.pos_embed is not None:
            x = x + self.pos_embed(positions)
        if self.line_embed is not None:
            lp, nxt = line_positions(tokens, positions, cfg.newline_id, cfg.line_pos,
                                     cache.line_start if cache is not None else None)
            x = x + self.line_embed(lp)
            if cache is not None:
                cache.line_start = nxt
        for i, blk in enumerate(self.blocks):
            x = blk(x, cos, sin, mask, cache, i)
        if cache is not None:
            cache.length = past + T
        x = self.norm(x)
        return x if return_hidden else self.logits(x)


def left_pad(prompts: List[List[int]], pad_id: int, device=None):
    """Left-pad token lists: (tokens [B, T], positions [B, T], valid [B, T])."""
    if not prompts:
        raise ValueError("no prompts to pad")
    T = max(len(p) for p in prompts)
    if T == 0:
        raise ValueError("empty prompt")
    B = len(prompts)
    tokens = torch.full((B, T), pad_id, dtype=torch.long)
    valid = torch.zeros((B, T), dtype=torch.bool)
    for b, p in enumerate(prompts):
        if len(p) == 0:
            raise ValueError(f"prompt {b} is empty")
        tokens[b, T - len(p):] = torch.as_tensor(p, dtype=torch.long)
        valid[b, T - len(p):] = True
    pad = (~valid).sum(1, keepdim=True)
    positions = (torch.arange(T)[None, :] - pad).clamp_min(0)
    return tokens.to(device), positions.to(device), valid.to(device)


@torch.no_grad()
def greedy_generate(model: MAVTransformer, prompts: List[List[int]], max_new_tokens: int, stop_id: int,
                    pad_id: int = 0, keep_logits_for=None):
    """Greedy decoding with a KV cache for a batch of token-id prompts.

    Returns (outputs, kept): outputs[b] is the list of generated ids (up to and including ``stop_id``);
    if ``keep_logits_for`` is a LongTensor of vocabulary ids, kept[b] lists (step, logits over those ids)
    for every step whose greedy token is one of them.
    """
    model.eval()
    dev = next(model.parameters()).device
    tokens, positions, valid = left_pad(prompts, pad_id, dev)
    B, T = tokens.shape
    cap = min(model.cfg.max_seq_len, T + max_new_tokens)
    if T >= model.cfg.max_seq_len:
        raise ValueError(f"prompt of {T} tokens does not fit max_seq_len {model.cfg.max_seq_len}")
    cache = KVCache(model.cfg, B, cap, device=dev, dtype=torch.float32)
    logits = model(tokens, positions=positions, key_valid=valid, cache=cache)[:, -1]
    next_pos = positions[:, -1] + 1
    outputs: List[List[int]] = [[] for _ in range(B)]
    kept: List[list] = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    keep_set = None
    if keep_logits_for is not None:
        keep_logits_for = keep_logits_for.to(dev)
        keep_set = torch.zeros(model.cfg.vocab_size, dtype=torch.bool, device=dev)
        keep_set[keep_logits_for] = True
    for step in range(cap - T):
        nxt = logits.argmax(-1)
        if keep_set is not None:
            hit = keep_set[nxt] & ~done
            for b in torch.nonzero(hit).flatten().tolist():
                kept[b].append((step, logits[b, keep_logits_for].float().cpu()))
        for b in torch.nonzero(~done).flatten().tolist():
            outputs[b].append(int(nxt[b]))
        done |= nxt == stop_id
        if bool(done.all()) or step == cap - T - 1:
            break
        valid = torch.cat([valid, torch.ones(B, 1, dtype=torch.bool, device=dev)], dim=1)
        logits = model(nxt[:, None], positions=next_pos[:, None], key_valid=valid, cache=cache)[:, -1]
        next_pos = next_pos + 1
    return outputs, kept
