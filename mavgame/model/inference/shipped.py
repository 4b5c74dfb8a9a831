"""The models shipped with mavgame (``mavgame/data``): their kinds and paths."""
from __future__ import annotations

from pathlib import Path


#: kinds of shipped model: the MAV (``mav_GAME.safetensors``) and the internal-search fine-tune of it
#: (``mav_is_GAME.safetensors``, which also answers MAV prompts)
SHIPPED_KINDS = ("mav", "mav_is")


def shipped_model_path(game: str = "connect_four", kind: str = "mav") -> Path:
    """Path of the model of `kind` (SHIPPED_KINDS) shipped with mavgame for `game` (FileNotFoundError if
    there is none)."""
    if kind not in SHIPPED_KINDS:
        raise ValueError(f"shipped model kind must be one of {SHIPPED_KINDS}, not {kind!r}")
    p = Path(__file__).resolve().parents[2] / "data" / f"{kind}_{game}.safetensors"
    if not p.exists():
        label = "MAV" if kind == "mav" else "MAV-IS"
        raise FileNotFoundError(f"no {label} model for {game!r} shipped with this mavgame (looked for {p})")
    return p


__all__ = ["SHIPPED_KINDS", "shipped_model_path"]
