"""Board symmetries of annotated position records, for training-data augmentation.

A Connect Four position and its mirror image (columns reversed) have the same value, and the mirror of
every move has the value of the move: the solver's annotation carries over exactly. Mirroring a record
doubles the distinct boards a model sees without a single new solve (AlphaZero-style augmentation; the MAV
paper's data has no such step, so it is an option, off by default).

Records are the position store's dicts (``state``, ``values``, ``best``, ``prev_state``, ``prev_action``,
``result``, ...); see docs/model.md "Files".
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence

import numpy as np

__all__ = ["mirror_record", "mirror_games", "mirror_records"]


def _c4_board(state: str) -> List[str]:
    if not isinstance(state, str) or " " not in state:
        raise ValueError(f"not a Connect Four state: {state!r}")
    board, _, side = state.rpartition(" ")
    rows = board.split("/")
    if not rows or any(len(r) != len(rows[0]) or not r for r in rows):
        raise ValueError(f"not a Connect Four state (rows of unequal length): {state!r}")
    return rows + [side]


def _c4_mirror_state(state: str) -> str:
    *rows, side = _c4_board(state)
    return "/".join(r[::-1] for r in rows) + " " + side


def _c4_mirror_move(move: str, width: int) -> str:
    try:
        c = int(move)
    except (TypeError, ValueError):
        raise ValueError(f"not a Connect Four move: {move!r}") from None
    if not 1 <= c <= width or str(c) != move:
        raise ValueError(f"not a Connect Four move on a board {width} wide: {move!r}")
    return str(width + 1 - c)


def _c4_mirror(record: Dict[str, Any]) -> Dict[str, Any]:
    width = len(_c4_board(record["state"])[0])
    out = dict(record)
    out["state"] = _c4_mirror_state(record["state"])
    if record.get("values"):
        out["values"] = {_c4_mirror_move(m, width): v for m, v in record["values"].items()}
    if record.get("best") is not None:
        out["best"] = _c4_mirror_move(record["best"], width)
    if record.get("prev_state") is not None:
        out["prev_state"] = _c4_mirror_state(record["prev_state"])
    if record.get("prev_action") is not None:
        out["prev_action"] = _c4_mirror_move(record["prev_action"], width)
    return out


_MIRRORS: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = {"connect_four": _c4_mirror}


def mirror_games() -> List[str]:
    """The games that have a mirror symmetry here."""
    return sorted(_MIRRORS)


def mirror_record(game: str, record: Dict[str, Any]) -> Dict[str, Any]:
    """The record of the mirror-image position (a new dict; ``record`` is not changed). ValueError naming
    the game if it has no mirror here, or naming the field that is not the game's notation."""
    fn = _MIRRORS.get(game)
    if fn is None:
        raise ValueError(f"no mirror symmetry for game {game!r} (available: {', '.join(mirror_games())})")
    return fn(record)


def mirror_records(game: str, records: Sequence[Dict[str, Any]], p: float, seed: int,
                   ) -> List[Dict[str, Any]]:
    """Each record mirrored with probability ``p``, the draws seeded by ``seed`` alone (the same records and
    seed give the same result)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"mirror probability must be in [0, 1], got {p}")
    if p == 0.0:
        return list(records)
    flips = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x6D6972]).random(len(records)) < p
    return [mirror_record(game, r) if f else r for r, f in zip(records, flips)]
