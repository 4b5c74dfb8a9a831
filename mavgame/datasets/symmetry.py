"""Board symmetries: mirrored positions and moves, for training-data augmentation and test-time averaging.

A Connect Four (or tic-tac-toe) position and its mirror image (columns reversed) have the same value, and the
mirror of every move has the value of the move: the solver's annotation carries over exactly. Mirroring a
record doubles the distinct boards a model sees without a single new solve (AlphaZero-style augmentation; the
MAV paper's data has no such step, so it is an option, off by default). The same maps let an agent ask the
model about both views of a position and average its values (``mav:mirror=1``,
:class:`mavgame.agents.mav.MAVGreedyAgent`), as AlphaGo Zero averaged its network over board symmetries.

Records are the position store's dicts (``state``, ``values``, ``best``, ``prev_state``, ``prev_action``,
``result``, ...); see docs/model.md "Files".
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence

import numpy as np

__all__ = ["mirror_record", "mirror_games", "mirror_records", "mirror_state_text", "mirror_move",
           "mirror_tree_record", "require_mirror"]


def _rows(game: str, state: str) -> List[str]:
    """The rows of a state text ``ROW/ROW/... SIDE`` plus the side, checked to be a rectangle."""
    if not isinstance(state, str) or " " not in state:
        raise ValueError(f"not a {_NAMES[game]} state: {state!r}")
    board, _, side = state.rpartition(" ")
    rows = board.split("/")
    if not rows or any(len(r) != len(rows[0]) or not r for r in rows):
        raise ValueError(f"not a {_NAMES[game]} state (rows of unequal length): {state!r}")
    return rows + [side]


def _mirror_rows(game: str, state: str) -> str:
    *rows, side = _rows(game, state)
    return "/".join(r[::-1] for r in rows) + " " + side


def _c4_mirror_move(move: str, width: int) -> str:
    try:
        c = int(move)
    except (TypeError, ValueError):
        raise ValueError(f"not a Connect Four move: {move!r}") from None
    if not 1 <= c <= width or str(c) != move:
        raise ValueError(f"not a Connect Four move on a board {width} wide: {move!r}")
    return str(width + 1 - c)


def _ttt_mirror_move(move: str, width: int) -> str:
    files = "abcdefghijklmnopqrstuvwxyz"[:width]
    if not isinstance(move, str) or len(move) < 2 or move[0] not in files or not move[1:].isdigit():
        raise ValueError(f"not a tic-tac-toe move on a board {width} wide: {move!r}")
    return files[width - 1 - files.index(move[0])] + move[1:]


_NAMES = {"connect_four": "Connect Four", "tictactoe": "tic-tac-toe"}
_MOVE_MIRRORS: Dict[str, Callable[[str, int], str]] = {"connect_four": _c4_mirror_move,
                                                       "tictactoe": _ttt_mirror_move}


def require_mirror(game: str, option: str = "") -> None:
    """ValueError naming ``game`` (and the ``option`` that asked, as a prefix) unless it has a mirror here."""
    if game not in _MOVE_MIRRORS:
        raise ValueError(f"{option + ': ' if option else ''}no mirror symmetry for game {game!r} "
                         f"(available: {', '.join(mirror_games())})")


def mirror_state_text(game: str, state: str) -> str:
    """The state text of the mirror-image position (columns reversed, the same side to move). ValueError
    naming the game if it has no mirror here, or the text if it is not a state of the game's notation."""
    require_mirror(game)
    return _mirror_rows(game, state)


def mirror_move(game: str, move: str, state: str) -> str:
    """The mirror image of ``move`` played in ``state`` (the board's width is read from the state text)."""
    require_mirror(game)
    return _MOVE_MIRRORS[game](move, len(_rows(game, state)[0]))


def _mirror(game: str, record: Dict[str, Any]) -> Dict[str, Any]:
    width = len(_rows(game, record["state"])[0])
    mm = _MOVE_MIRRORS[game]
    out = dict(record)
    out["state"] = _mirror_rows(game, record["state"])
    if record.get("values"):
        out["values"] = {mm(m, width): v for m, v in record["values"].items()}
    if record.get("best") is not None:
        out["best"] = mm(record["best"], width)
    if record.get("prev_state") is not None:
        out["prev_state"] = _mirror_rows(game, record["prev_state"])
    if record.get("prev_action") is not None:
        out["prev_action"] = mm(record["prev_action"], width)
    return out


def mirror_games() -> List[str]:
    """The games that have a mirror symmetry here."""
    return sorted(_MOVE_MIRRORS)


def mirror_record(game: str, record: Dict[str, Any]) -> Dict[str, Any]:
    """The record of the mirror-image position (a new dict; ``record`` is not changed). ValueError naming
    the game if it has no mirror here, or naming the field that is not the game's notation."""
    require_mirror(game)
    return _mirror(game, record)


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


def mirror_tree_record(game: str, record: Dict[str, Any]) -> Dict[str, Any]:
    """The search-tree record (:mod:`mavgame.datasets.search_data`: ``state`` and ``tree``, a list of
    ``[parent, move, values, best]``) of the mirror-image tree: the root mirrored, every node's move, values
    and best move mirrored, the node order kept (a new dict). The values keep their order, mirrored, so the
    trace written from it is the mirror image of the original's, line for line (ties in the reference order
    fall the mirrored way, as in :func:`mirror_record`'s records)."""
    require_mirror(game)
    width = len(_rows(game, record["state"])[0])
    mm = _MOVE_MIRRORS[game]
    out = dict(record)
    out["state"] = _mirror_rows(game, record["state"])
    nodes = []
    for parent, move, values, best in record["tree"]:
        nodes.append([parent, None if move is None else mm(move, width),
                      None if values is None else {mm(m, width): v for m, v in values.items()},
                      None if best is None else mm(best, width)])
    out["tree"] = nodes
    return out
