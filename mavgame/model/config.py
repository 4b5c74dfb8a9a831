"""Configuration of the reference MAV transformer (a small dataclass, stored with every checkpoint)."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Dict

_MLP_KINDS = ("swiglu", "geglu")


# Named model sizes (d_model, n_layers, n_heads, n_kv_heads, d_ff) for training (``--preset``).
PRESETS: Dict[str, Dict[str, int]] = {
    "tiny": dict(d_model=32, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=64),
    "small": dict(d_model=128, n_layers=4, n_heads=4, n_kv_heads=1, d_ff=384),
    "base": dict(d_model=256, n_layers=6, n_heads=8, n_kv_heads=2, d_ff=768),
}


@dataclass
class MAVConfig:
    """Shape of a decoder-only transformer in the Gemini/Llama family.

    RMSNorm before each sub-layer, rotary position embeddings, a gated MLP (``swiglu`` or ``geglu``),
    grouped-query attention (``n_kv_heads`` < ``n_heads``; 1 is multi-query attention, ``n_heads`` is plain
    multi-head attention), and optionally an output layer tied to the token embedding.

    ``abs_pos``: also add a learned absolute position embedding to the token embedding (GPT-2 style, on top
    of the rotary positions). Rotary attention sees only relative offsets, so a small model has to derive
    where a token sits on the board (e.g. its column in a fixed-layout state line) from the attention
    pattern; learned absolute positions give it directly.

    ``line_pos``: if > 0, also add a learned embedding of the token's index within its text line (0 for the
    first token after a newline, token ``newline_id``; indices clamp at ``line_pos - 1``). MAV text has one
    command per line and one token per board field, so a board field's line index is the field's square: a
    small model then knows which column a field is in without deriving it, in the prompt's state line and
    in the state it writes alike (whatever the header's length). This is what makes the MAV world-model
    task (writing the next state) learnable for small models.
    """

    vocab_size: int
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 1
    d_ff: int = 384
    max_seq_len: int = 512
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6
    mlp: str = "swiglu"
    tie_embeddings: bool = True
    init_std: float = 0.02
    abs_pos: bool = False
    line_pos: int = 0
    newline_id: int = -1

    def __post_init__(self) -> None:
        self.validate()

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        ints = ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff", "max_seq_len")
        for name in ints:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"MAVConfig.{name} must be a positive int, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"MAVConfig.d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads})")
        if self.head_dim % 2:
            raise ValueError(f"MAVConfig head dimension d_model/n_heads = {self.head_dim} must be even (rotary)")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"MAVConfig.n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                             f"({self.n_kv_heads})")
        if self.mlp not in _MLP_KINDS:
            raise ValueError(f"MAVConfig.mlp must be one of {_MLP_KINDS}, got {self.mlp!r}")
        if isinstance(self.line_pos, bool) or not isinstance(self.line_pos, int) or self.line_pos < 0:
            raise ValueError(f"MAVConfig.line_pos must be an int >= 0, got {self.line_pos!r}")
        if self.line_pos and not (isinstance(self.newline_id, int) and 0 <= self.newline_id < self.vocab_size):
            raise ValueError(f"MAVConfig.newline_id must be a token id in [0, {self.vocab_size}) when line_pos is "
                             f"on, got {self.newline_id!r}")
        if not (self.rope_theta > 0 and self.norm_eps > 0 and self.init_std > 0):
            raise ValueError("MAVConfig.rope_theta, norm_eps and init_std must be positive")

    def num_parameters(self) -> int:
        """Number of trainable parameters of the model this configuration describes."""
        d, hd = self.d_model, self.head_dim
        attn = d * self.n_heads * hd * 2 + d * self.n_kv_heads * hd * 2
        mlp = 3 * d * self.d_ff
        per_layer = attn + mlp + 2 * d
        emb = self.vocab_size * d + (self.max_seq_len * d if self.abs_pos else 0) + self.line_pos * d
        head = 0 if self.tie_embeddings else self.vocab_size * d
        return emb + head + self.n_layers * per_layer + d

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "MAVConfig":
        if not isinstance(d, dict):
            raise ValueError(f"a MAV model configuration must be a dict, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown MAVConfig fields: {', '.join(unknown)}")
        if "vocab_size" not in d:
            raise ValueError("MAVConfig needs vocab_size")
        return cls(**d)

    @classmethod
    def from_json(cls, s: str) -> "MAVConfig":
        try:
            d = json.loads(s)
        except json.JSONDecodeError as e:
            raise ValueError(f"invalid MAV model configuration JSON: {e}") from None
        return cls.from_dict(d)
