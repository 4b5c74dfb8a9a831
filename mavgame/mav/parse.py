"""Reading MAV text: the C parser's typed result (issues, %top entries, state slots) and the
hallucination report against a reference state."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Union

import numpy as np

from .. import _core
from .values import BUCKETS
from .write import StateLike, _check_state


class Issue(NamedTuple):
    """A format error: 1-based line and byte column (0: the whole line / text) and what was expected."""
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        if self.line == 0:
            return self.message
        if self.col == 0:
            return f"line {self.line}: {self.message}"
        return f"line {self.line}, col {self.col}: {self.message}"


class MoveEntry(NamedTuple):
    """One ``move:<ctrlN>`` entry of a %top line.

    status: 'legal' (in the reference state), 'illegal' (a move of the game, not legal there),
    'malformed' (not a move of the game) or 'unchecked' (no reference state); bucket -1 if the value
    token is malformed."""
    move: str
    action: int
    bucket: int
    status: str
    duplicate: bool
    line: int
    col: int

    @property
    def value(self) -> Optional[float]:
        return (self.bucket + 0.5) / BUCKETS if self.bucket >= 0 else None


class StateSlot(NamedTuple):
    """A state in the text: 'prev' (%prev_state/%prev_fen), 'cur' (%state/%fen), 'after' (after the best
    action). ``correct`` compares with the reference (None: no reference or not present)."""
    present: bool
    valid: bool
    is_input: bool
    correct: Optional[bool]
    text: str       # the game's own text of the parsed state ("" if invalid)
    ref_text: str   # the game's own text of the reference state ("" if unknown)


@dataclass
class ParseResult:
    """Structured content of a MAV text and, given a reference, the hallucination report."""
    game: str
    ok: bool                        # no format errors
    complete: bool                  # every header command had its line
    header: Optional[str]
    transition: bool
    issues: List[Issue]
    n_issues: int                   # may exceed len(issues) (at most 24 are kept)
    prev: StateSlot
    cur: StateSlot
    after: StateSlot
    prev_action: str
    top_present: bool
    top_k: int                      # 0 for %top_all
    top_moves: List[str]            # the %top entries' move texts
    top_table: np.ndarray           # int32 [n, 6]: action, bucket, status code, duplicate, line, col
    outcome: Optional[str]          # "1-0", "0-1", "1/2-1/2" for an `invalid : "..."` %top line
    best_present: bool
    best_invalid: bool              # written as `invalid` (terminal state)
    best: str
    best_action: int                # legal action id of %best_action, -1 if not legal / unchecked
    best_status: str
    has_ref: bool
    ref_n_legal: int = 0
    ref_result: str = "*"
    n_illegal: int = 0
    n_malformed: int = 0
    n_duplicate: int = 0
    n_missing: int = 0
    n_correct: int = 0
    count_expected: int = 0
    outcome_correct: Optional[bool] = None
    missing: List[str] = field(default_factory=list)
    missing_actions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    _board_size: int = 0
    _flags: int = 0
    _outcome_line: bool = False
    _top: Optional[List[MoveEntry]] = None
    _text: Union[str, bytes] = field(default="", repr=False)   # the text parsed (for metrics_from_results)
    _true_state: Optional[StateLike] = field(default=None, repr=False)

    @property
    def top(self) -> List[MoveEntry]:
        """The %top entries (built on first use from ``top_moves`` and ``top_table``)."""
        if self._top is None:
            # built in C as MoveEntry instances without their Python-level __new__ (about 5x cheaper)
            self._top = _core.mav_top_entries(MoveEntry, _STATUS, self.top_moves, self.top_table)
        return self._top

    @property
    def top_actions(self) -> np.ndarray:
        """Action ids of the %top entries (-1 where not legal / unchecked)."""
        return self.top_table[:, 0]

    @property
    def top_buckets(self) -> np.ndarray:
        """Buckets of the %top entries (-1 where the value token is malformed)."""
        return self.top_table[:, 1]

    @classmethod
    def _from_core(cls, t: Any, board_size: int = 0, flags: int = 0, text: Union[str, bytes] = "",
                   true_state: Optional[StateLike] = None) -> "ParseResult":
        """From _core.mav_parse()'s typed result (csrc/bind/py_mav_parse.c MavParseResult)."""
        # Filled without the dataclass __init__ (41 fields with defaults and factories): the same attributes,
        # about a third of the cost; the field names are checked against dataclasses.fields by the tests.
        ref = t.reference
        d = {"game": t.game, "ok": t.ok, "complete": t.complete, "header": t.header, "transition": t.transition,
             "issues": [_new_tuple(Issue, i) for i in t.issues], "n_issues": t.n_issues,
             "prev": _new_tuple(StateSlot, t.prev), "cur": _new_tuple(StateSlot, t.cur),
             "after": _new_tuple(StateSlot, t.after), "prev_action": t.prev_action, "top_present": t.top_present,
             "top_k": t.top_k, "top_moves": t.top_moves, "top_table": t.top_table, "outcome": t.outcome,
             "best_present": t.best_present, "best_invalid": t.best_invalid, "best": t.best,
             "best_action": t.best_id, "best_status": t.best_status, "has_ref": ref is not None,
             "_board_size": board_size, "_flags": flags, "_outcome_line": t.top_outcome, "_top": None,
             "_text": text, "_true_state": true_state}
        if ref is None:
            d.update(_NO_REF)
            d["missing"], d["missing_actions"] = [], _np_empty(0, np.int32)
        else:
            (d["ref_n_legal"], d["ref_result"], d["n_illegal"], d["n_malformed"], d["n_duplicate"], d["n_missing"],
             d["n_correct"], d["count_expected"], d["outcome_correct"], d["missing_actions"], d["missing"]) = ref
        r = _new_object(cls)
        r.__dict__ = d
        return r

    # convenience
    @property
    def errors(self) -> List[str]:
        """The format errors as 'line L, col C: message' strings."""
        return [str(i) for i in self.issues]

    def raise_for_errors(self) -> "ParseResult":
        if not self.ok:
            more = f" (and {self.n_issues - len(self.issues)} more)" if self.n_issues > len(self.issues) else ""
            raise ValueError("malformed MAV text: " + "; ".join(self.errors) + more)
        return self

    def values(self, legal_only: bool = True) -> Dict[str, float]:
        """{move: bucket midpoint} of the %top entries (first occurrence; legal ones only by default)."""
        out: Dict[str, float] = {}
        for m in self.top:
            if m.bucket < 0 or m.move in out or (legal_only and m.status not in ("legal", "unchecked")):
                continue
            out[m.move] = m.value
        return out

    def state(self, slot: str = "cur") -> Optional[StateLike]:
        """The parsed state of a slot as a mavgame State (None if absent or invalid)."""
        s = getattr(self, slot)
        if not s.valid:
            return None
        return _core.State(self.game, s.text, self._board_size, self._flags)

    @property
    def hallucinations(self) -> Dict[str, Any]:
        """Illegal / malformed / duplicate / missing moves, wrong states and outcome claims."""
        return {
            "illegal_moves": [m.move for m in self.top if m.status == "illegal"],
            "malformed_moves": [m.move for m in self.top if m.status == "malformed"],
            "duplicate_moves": [m.move for m in self.top if m.duplicate],
            "missing_moves": list(self.missing),
            "n_missing": self.n_missing,
            "best_action_illegal": self.best_present and not self.best_invalid and self.best_action < 0
            and self.has_ref,
            "wrong_state": self.cur.correct is False and not self.cur.is_input,
            "wrong_state_after_best": self.after.correct is False,
            "wrong_outcome": self.outcome_correct is False,
        }


_STATUS = ("legal", "illegal", "malformed", "unchecked")
_new_tuple, _new_object, _np_empty = tuple.__new__, object.__new__, np.empty
# ParseResult's reference fields when there is no reference (their dataclass defaults)
_NO_REF = {"ref_n_legal": 0, "ref_result": "*", "n_illegal": 0, "n_malformed": 0, "n_duplicate": 0, "n_missing": 0,
           "n_correct": 0, "count_expected": 0, "outcome_correct": None}


def parse(game: Union[str, StateLike], text: Union[str, bytes], true_state: Optional[StateLike] = None,
          prompt: Optional[str] = None, board_size: int = 0, flags: int = 0) -> ParseResult:
    """Parse a MAV text (header, inputs and model output; or the output alone with ``prompt``).

    Never raises on bad text: problems are in ``.issues`` (line, column, what was expected). With
    ``true_state`` (the true current state) or valid input lines, moves are checked for legality and the
    hallucination report is filled."""
    if prompt is not None:
        if isinstance(text, bytes):
            text = prompt.encode() + text
        else:
            text = prompt + text
    if true_state is not None:
        _check_state(true_state, "true_state")
        board_size, flags = true_state.board_size, true_state.flags
    try:
        d = _core.mav_parse(game, text, true_state, board_size, flags)
    except UnicodeEncodeError:
        if not isinstance(text, str):
            raise
        # a str that is not valid Unicode (lone surrogates): bad text like any other, each such character
        # read as '?' (the issues then point at it)
        text = text.encode("utf-8", "replace")
        d = _core.mav_parse(game, text, true_state, board_size, flags)
    return ParseResult._from_core(d, board_size, flags, text, true_state)
