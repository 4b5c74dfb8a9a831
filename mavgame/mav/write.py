"""Writing MAV text: annotations of a state's moves, headers, prompts, targets and %state values."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core

DEFAULT_COMMANDS = "%state %top_all %best_action"

StateLike = Any  # a mavgame._core.State (or a subclass such as mavgame.games.chess.Chess)


@dataclass
class Annotation:
    """Values of legal moves (win probabilities of the mover) and the annotator's best move.

    Build with ``Annotation.from_moves(state, {"e2e4": 0.55, ...}, best="e2e4")`` or directly with
    int action ids. ``mavgame.engines.annotate.EngineAnnotation`` objects and plain dicts are accepted wherever an
    annotation is expected."""

    actions: np.ndarray
    values: np.ndarray
    best: Optional[int] = None

    def __post_init__(self):
        self.actions = _numeric_array(self.actions, np.int32, "actions")
        self.values = _numeric_array(self.values, np.float64, "values")
        if self.actions.shape != self.values.shape:
            raise ValueError(f"annotation: {self.actions.size} actions but {self.values.size} values")

    @classmethod
    def from_moves(cls, state: StateLike, values: Mapping[str, float], best: Optional[str] = None) -> "Annotation":
        acts = [_parse_move(state, m) for m in values]
        b = None if best is None else _parse_move(state, best)
        return cls(np.array(acts, np.int32), np.array([_real(v) for v in values.values()]), b)


_INT32 = np.iinfo(np.int32)


def _numeric_array(x, dtype, what: str) -> np.ndarray:
    """``x`` as a contiguous 1-D array of ``dtype`` (np.int32 actions or np.float64 values): TypeError naming
    ``what`` for what NumPy does not read as numbers of that kind (floats as actions, strings, complex
    numbers, None) and ValueError for an action outside int32, which a cast would truncate, parse or wrap."""
    a = np.asarray(x)
    ints = np.dtype(dtype).kind == "i"
    if a.size:
        if a.dtype.kind not in ("biu" if ints else "biuf"):
            need = "integer action ids" if ints else "real numbers"
            raise TypeError(f"annotation {what} must be {need}, not an array of {a.dtype}")
        if ints and a.dtype.kind != "b" and (a.min() < _INT32.min or a.max() > _INT32.max):
            bad = a.max() if a.max() > _INT32.max else a.min()
            raise ValueError(f"annotation {what}: action {bad} is out of range")
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _real(v) -> float:
    """A value as a float: TypeError for a string or a complex number (which float() would parse or refuse)."""
    if isinstance(v, (str, bytes, complex, np.complexfloating)):
        raise TypeError(f"an annotation value must be a real number, not {type(v).__name__} {v!r:.40}")
    return float(v)


def _parse_move(state: StateLike, m) -> int:
    if isinstance(m, str):
        return state.parse_move(m)
    try:
        return operator.index(m)       # an int action (a float such as 3.7 is not truncated to one)
    except TypeError:
        raise TypeError(f"a move must be a move string or an int action, not {type(m).__name__} {m!r:.40}") from None


def _as_annotation(state: StateLike, ann) -> Optional[Annotation]:
    if ann is None or isinstance(ann, Annotation):
        return ann
    if isinstance(ann, Mapping):
        if "values" in ann and isinstance(ann["values"], Mapping):
            return Annotation.from_moves(state, ann["values"], ann.get("best"))
        return Annotation.from_moves(state, ann)
    if hasattr(ann, "values") and isinstance(getattr(ann, "values"), Mapping):  # mavgame.engines.annotate.EngineAnnotation
        return Annotation.from_moves(state, ann.values, getattr(ann, "best", None))
    if isinstance(ann, tuple) and len(ann) in (2, 3):
        moves, vals = ann[0], ann[1]
        best = ann[2] if len(ann) == 3 else None
        acts = np.array([_parse_move(state, m) for m in moves], np.int32)
        return Annotation(acts, vals, None if best is None else _parse_move(state, best))
    raise TypeError(f"an annotation must be an Annotation, a {{move: value}} dict, an object with .values and "
                    f".best, or a (moves, values[, best]) tuple, not {type(ann).__name__}")


def _check_state(state, what="state"):
    if not isinstance(state, _core.State):
        raise TypeError(f"{what} must be a mavgame game state, not {type(state).__name__}")


def header(game: Union[str, StateLike], commands: str = DEFAULT_COMMANDS) -> str:
    """The header line for a command list, e.g. ``<mav game=chess> %state %top_all </mav>\\n``."""
    return _core.mav_spec(game, commands)["header"]


def _write(state, commands, part, annotation=None, prev_state=None, prev_action=None, order=None) -> str:
    _check_state(state)
    ann = _as_annotation(state, annotation)
    kw: Dict[str, Any] = {}
    if prev_state is not None:
        _check_state(prev_state, "prev_state")
        if prev_action is None:
            raise ValueError("prev_state needs prev_action")
        kw["prev_state"] = prev_state
        kw["prev_action"] = _parse_move(prev_state, prev_action)
    if ann is not None:
        kw["actions"] = ann.actions
        kw["values"] = ann.values
        if ann.best is not None:
            kw["best"] = int(ann.best)
    if order is not None:
        kw["order"] = np.asarray(order, np.int32)
    return _core.mav_write(state, commands, part, **kw)


def prompt(state: StateLike, commands: str = DEFAULT_COMMANDS, prev_state: Optional[StateLike] = None,
           prev_action=None) -> str:
    """The prompt: header line and input lines. For transition commands (starting with %prev_state /
    %prev_fen) the previous state and action come from ``prev_state``/``prev_action`` or, if not given,
    from the state's last pushed move."""
    return _write(state, commands, "prompt", None, prev_state, prev_action)


def target(state: StateLike, annotation=None, commands: str = DEFAULT_COMMANDS,
           prev_state: Optional[StateLike] = None, prev_action=None, order: Optional[Sequence[int]] = None) -> str:
    """The output lines for ``state`` with the moves' values from ``annotation``. ``order`` permutes the
    %top moves (indices into the reference order: value descending, ties best first)."""
    return _write(state, commands, "target", annotation, prev_state, prev_action, order)


def example(state: StateLike, annotation=None, commands: str = DEFAULT_COMMANDS,
            prev_state: Optional[StateLike] = None, prev_action=None) -> Tuple[str, str]:
    """(prompt, target)."""
    return (prompt(state, commands, prev_state, prev_action),
            target(state, annotation, commands, prev_state, prev_action))


def prompts(states: Sequence[StateLike], commands: str = DEFAULT_COMMANDS) -> List[str]:
    """Prompts for many states in one C call."""
    return _core.mav_prompts(states, commands)


def state_text(state: StateLike) -> str:
    """The %state value of a state (one token per board field, see docs/format.md)."""
    return _core.mav_state_text(state)


def state_from_text(game: str, text: str, board_size: int = 0, flags: int = 0) -> StateLike:
    """A game state from a %state value (ValueError naming the bad field)."""
    game_text = _core.mav_state_to_game_text(game, text, board_size, flags)
    return _core.State(game, game_text, board_size, flags)


def move_tokens(game: str) -> List[str]:
    """Every move string of a game (at its largest board), as in the vocabulary."""
    return _core.mav_move_tokens(game)
