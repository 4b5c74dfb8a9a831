"""Position records of the MAV training data: the format's names, validation, the train/val split.

A record (one JSON object per line of a shard, see :mod:`mavgame.datasets.store`) describes one position and
its annotation::

    {"state": <the game's own text>, "prev_state": <text or null>, "prev_action": <move or null>,
     "values": {<move>: <win probability of the side to move after the move>, ...},
     "best": <the engine's move or null>, "result": "*" | "1-0" | "0-1" | "1/2-1/2", "ply": <int>}

``values`` covers every legal move; a terminal position has no values and its ``result``.
"""
from __future__ import annotations

import hashlib
from typing import Any, Dict, Optional

MANIFEST = "manifest.json"
DATA_FORMAT = "mavgame-positions-1"


def is_best_move(values: Dict[str, float], move: Optional[str]) -> bool:
    """Whether ``move`` has the best value among a record's ``values`` (ties count; False for None or a move
    without a value)."""
    return move is not None and move in values and values[move] >= max(values.values()) - 1e-9


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


def _new_state(game: str, board_size: int = 0, text: Optional[str] = None):
    """A new state of `game` (a `board_size` board; 0: the default), from `text` if given."""
    from .. import _core
    return _core.State(game, text, board_size, 0)


__all__ = ["MANIFEST", "DATA_FORMAT", "position_split", "validate_record", "is_best_move"]
