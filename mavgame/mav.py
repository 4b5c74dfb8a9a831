"""The MAV text format: prompts, targets, tokenizer, value buckets and a robust parser.

The multi-action-value (MAV) model of the MAV paper reads and writes game states as text. One call can
act as world model (the next state after a move), legal move generator, action-value function and
policy. Everything here is a thin layer over the C implementation in ``csrc/format``; the full
specification, with examples for every game, is ``docs/format.md``.

    >>> import mavgame
    >>> from mavgame import mav
    >>> s = mavgame.State("tictactoe")
    >>> print(mav.prompt(s, "%state %top_all %best_action"), end="")
    <mav game=tictactoe> %state %top_all %best_action </mav>
    [%state x .........]
    >>> values = {m: 0.5 for m in s.legal_moves()}
    >>> values["b2"] = 0.6
    >>> print(mav.target(s, values, "%state %top_3 %best_action"), end="")
    [%top_3 b2:<ctrl38> a1:<ctrl32> b1:<ctrl32>]
    [%best_action b2]
    >>> r = mav.parse("tictactoe", mav.prompt(s, "%state %top_1") + "[%top_1 b2:<ctrl38>]\\n")
    >>> r.ok, r.top[0].move, r.top[0].bucket
    (True, 'b2', 38)

Values are win probabilities of the side to move after the move (draws count one half), written as
one of 64 bucket tokens ``<ctrl0>`` .. ``<ctrl63>``; see :func:`bucket`, :func:`score`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = [
    "VOCAB_VERSION", "BUCKETS", "DEFAULT_COMMANDS", "Tokenizer", "vocab_json", "vocab_path",
    "win_prob_from_cp", "win_prob_from_mate", "win_prob_from_result", "bucket", "bucket_value", "bucket_token",
    "score", "Annotation", "header", "prompt", "target", "example", "prompts", "state_text", "state_from_text",
    "move_tokens", "Issue", "MoveEntry", "StateSlot", "ParseResult", "parse", "metrics", "metrics_from_results",
    "ExampleBuilder", "ExampleBatch",
]

VOCAB_VERSION: int = _core.MAV_VOCAB_VERSION
BUCKETS = 64
DEFAULT_COMMANDS = "%state %top_all %best_action"

State = _core.State
StateLike = Any  # a mavgame._core.State (or a subclass such as mavgame.games.chess.Chess)


# ---- tokenizer -------------------------------------------------------------------------------------------

def vocab_path(version: int = VOCAB_VERSION) -> Path:
    """Path of the checked-in vocabulary file ``mavgame/data/vocab_v<version>.json``."""
    return Path(__file__).resolve().parent / "data" / f"vocab_v{version}.json"


class Tokenizer:
    """The fixed, versioned MAV vocabulary (encode/decode in C).

    Token ids are int32. ``encode`` splits text deterministically (one token per move, per board field,
    per value bucket, per command) and ``decode(encode(s)) == s`` for every string. The control tokens
    ``<pad>`` (0), ``<bos>`` (1), ``<eos>`` (2) are never produced by ``encode`` and decode to ``""``.
    """

    def __init__(self, version: int = VOCAB_VERSION):
        self._tok = _core.MavTokenizer(version)
        self.version = self._tok.version
        self._vocab: Optional[List[str]] = None
        self._kinds: Optional[List[str]] = None

    pad_id = 0
    bos_id = 1
    eos_id = 2
    ctrl_base = 3  # <ctrl0>; bucket b is ctrl_base + b

    def __len__(self) -> int:
        return self._tok.size

    @property
    def size(self) -> int:
        return self._tok.size

    @property
    def vocab(self) -> List[str]:
        """Token texts by id (byte tokens as ``<0xNN>``)."""
        if self._vocab is None:
            self._vocab = self._tok.vocab()
        return self._vocab

    @property
    def kinds(self) -> List[str]:
        """Token kinds by id: control, value, char, markup, word, move, byte."""
        if self._kinds is None:
            self._kinds = self._tok.kinds()
        return self._kinds

    @property
    def bucket_ids(self) -> np.ndarray:
        """The 64 value token ids in bucket order."""
        return np.arange(self.ctrl_base, self.ctrl_base + BUCKETS, dtype=np.int32)

    def token_to_id(self, token: str) -> int:
        """Id of the token with exactly this text; KeyError if there is none."""
        i = self._tok.lookup(token)
        if i < 0:
            raise KeyError(f"{token!r} is not a token of the MAV vocabulary v{self.version}")
        return i

    def id_to_token(self, i: int) -> str:
        if not 0 <= int(i) < self.size:
            raise ValueError(f"token id {i} is not in 0..{self.size - 1}")
        return self.vocab[int(i)]

    def encode(self, text: Union[str, bytes]) -> np.ndarray:
        return self._tok.encode(text)

    def decode(self, ids) -> str:
        return self._tok.decode(ids)

    def decode_bytes(self, ids) -> bytes:
        return self._tok.decode_bytes(ids)

    def encode_batch(self, texts: Sequence[Union[str, bytes]], max_len: Optional[int] = None
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """(ids[B, L] int32 padded with <pad>, lengths[B] int32); ValueError if a text exceeds max_len."""
        return self._tok.encode_batch(texts, max_len)

    def decode_batch(self, ids, lengths=None) -> List[str]:
        return self._tok.decode_batch(ids, lengths)

    def bucket_of(self, token_id: int) -> int:
        """Bucket index of a value token id, -1 for other tokens."""
        b = int(token_id) - self.ctrl_base
        return b if 0 <= b < BUCKETS else -1

    def to_json(self) -> dict:
        """The vocabulary as written to ``mavgame/data/vocab_v1.json``."""
        return vocab_json(self)

    def __repr__(self) -> str:
        return f"Tokenizer(version={self.version}, size={self.size})"


_DEFAULT_TOKENIZER: Optional[Tokenizer] = None


def _default_tokenizer() -> Tokenizer:
    global _DEFAULT_TOKENIZER
    if _DEFAULT_TOKENIZER is None:
        _DEFAULT_TOKENIZER = Tokenizer()
    return _DEFAULT_TOKENIZER


def vocab_json(tokenizer: Optional[Tokenizer] = None) -> dict:
    """The vocabulary as a JSON-able dict: version, special ids, token texts and kinds by id."""
    t = tokenizer or _default_tokenizer()
    return {
        "format": "mavgame-mav-vocab",
        "version": t.version,
        "size": t.size,
        "special": {"pad": t.pad_id, "bos": t.bos_id, "eos": t.eos_id, "ctrl0": t.ctrl_base},
        "tokens": list(t.vocab),
        "kinds": list(t.kinds),
    }


# ---- values -------------------------------------------------------------------------------------------------

def _scalar_or_array(x, out):
    return out.item() if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else out


def win_prob_from_cp(cp):
    """Win probability for centipawns from the mover's point of view (the lichess formula)."""
    return _scalar_or_array(cp, _core.mav_win_prob_cp(cp))


def win_prob_from_mate(n: int) -> float:
    """"Mate in n" for the mover: n > 0 is a certain win (1.0); n <= 0 a certain loss (0.0)."""
    return 1.0 if int(n) > 0 else 0.0


def win_prob_from_result(r) -> float:
    """A game-theoretic result for the mover (solvers, Connect Four): win 1.0, draw 0.5, loss 0.0.
    ``r`` is 'win'/'draw'/'loss' or a number whose sign gives the result."""
    if isinstance(r, str):
        table = {"win": 1.0, "draw": 0.5, "loss": 0.0}
        if r not in table:
            raise ValueError(f"result must be 'win', 'draw' or 'loss', not {r!r}")
        return table[r]
    v = float(r)
    if v != v:
        raise ValueError("result is NaN")
    return 1.0 if v > 0 else 0.0 if v < 0 else 0.5


def bucket(p):
    """Bucket index min(63, floor(p * 64)) of a win probability (ValueError outside [0, 1])."""
    return _scalar_or_array(p, _core.mav_bucket(p))


def bucket_value(b):
    """Midpoint (b + 0.5) / 64 of bucket b."""
    return _scalar_or_array(b, _core.mav_bucket_value(b))


def bucket_token(b: int) -> str:
    b = int(b)
    if not 0 <= b < BUCKETS:
        raise ValueError(f"bucket {b} is not in 0..63")
    return f"<ctrl{b}>"


def score(dist, method: str = "mean", logits: bool = False):
    """Scores of 64-way bucket distributions ``dist[..., 64]``: 'max' (midpoint of the most probable
    bucket) or 'mean' (expected midpoint). ``logits=True`` applies a softmax first."""
    return _core.mav_score(dist, method, bool(logits))


# ---- annotations and writing ----------------------------------------------------------------------------------

@dataclass
class Annotation:
    """Values of legal moves (win probabilities of the mover) and the annotator's best move.

    Build with ``Annotation.from_moves(state, {"e2e4": 0.55, ...}, best="e2e4")`` or directly with
    int action ids. ``mavgame.annotate.EngineAnnotation`` objects and plain dicts are accepted wherever an
    annotation is expected."""

    actions: np.ndarray
    values: np.ndarray
    best: Optional[int] = None

    def __post_init__(self):
        self.actions = np.ascontiguousarray(self.actions, dtype=np.int32).reshape(-1)
        self.values = np.ascontiguousarray(self.values, dtype=np.float64).reshape(-1)
        if self.actions.shape != self.values.shape:
            raise ValueError(f"annotation: {self.actions.size} actions but {self.values.size} values")

    @classmethod
    def from_moves(cls, state: StateLike, values: Mapping[str, float], best: Optional[str] = None) -> "Annotation":
        acts = [_parse_move(state, m) for m in values]
        b = None if best is None else _parse_move(state, best)
        return cls(np.array(acts, np.int32), np.array([float(v) for v in values.values()]), b)


def _parse_move(state: StateLike, m) -> int:
    if isinstance(m, str):
        return state.parse_move(m)
    return int(m)


def _as_annotation(state: StateLike, ann) -> Optional[Annotation]:
    if ann is None or isinstance(ann, Annotation):
        return ann
    if isinstance(ann, Mapping):
        if "values" in ann and isinstance(ann["values"], Mapping):
            return Annotation.from_moves(state, ann["values"], ann.get("best"))
        return Annotation.from_moves(state, ann)
    if hasattr(ann, "values") and isinstance(getattr(ann, "values"), Mapping):  # mavgame.annotate.EngineAnnotation
        return Annotation.from_moves(state, ann.values, getattr(ann, "best", None))
    if isinstance(ann, tuple) and len(ann) in (2, 3):
        moves, vals = ann[0], ann[1]
        best = ann[2] if len(ann) == 3 else None
        acts = np.array([_parse_move(state, m) for m in moves], np.int32)
        return Annotation(acts, np.asarray(vals, np.float64), None if best is None else _parse_move(state, best))
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


# ---- parsing ----------------------------------------------------------------------------------------------------

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
            # tuple.__new__ fills the named tuple without its Python-level __new__ (3-4x cheaper per entry)
            new, status = tuple.__new__, _STATUS
            self._top = [new(MoveEntry, (m, a, b, status[s], d != 0, ln, col))
                         for m, (a, b, s, d, ln, col) in zip(self.top_moves, self.top_table.tolist())]
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
    d = _core.mav_parse(game, text, true_state, board_size, flags)
    return ParseResult._from_core(d, board_size, flags, text, true_state)


def _rates(c: Dict[str, int]) -> Dict[str, Any]:
    def div(a, b):
        return a / b if b else float("nan")
    p = div(c["top_correct"], c["top_listed"])
    r = div(c["top_correct"], c["top_legal"])
    f1 = 2 * p * r / (p + r) if (p == p and r == r and p + r > 0) else float("nan")
    out: Dict[str, Any] = dict(c)
    out.update({
        "parsed_ok_rate": div(c["parsed_ok"], c["examples"]),
        "best_action_legal": div(c["best_legal"], c["best_total"]),
        "top_all_precision": p,
        "top_all_recall": r,
        "top_all_f1": f1,
        "next_state_accuracy": div(c["state_correct"], c["state_total"]),
        "outcome_accuracy": div(c["outcome_correct"], c["outcome_total"]),
    })
    return out


def metrics(game: Union[str, StateLike], texts: Sequence[Union[str, bytes]],
            true_states: Optional[Sequence[StateLike]] = None) -> Dict[str, Any]:
    """The paper's accuracy metrics over a batch of MAV texts (parsed in C).

    - best_action_legal: fraction of %best_action lines (non-terminal references) that are legal;
    - top_all_precision / recall / f1: over all %top_all lines, distinct legal moves listed / moves listed
      (repeats count as wrong) and / legal moves;
    - next_state_accuracy: output states (transition form, state after the best action) equal to the truth;
    - outcome_accuracy: terminal positions recognised with the right result (and no false claims);
    plus the raw counts. Rates with no cases are NaN."""
    return _rates(_core.mav_metrics(game, list(texts), None if true_states is None else list(true_states)))


def metrics_from_results(results: Iterable[ParseResult]) -> Dict[str, Any]:
    """The same metrics from ParseResult objects (same definitions as :func:`metrics`).

    Counted by the core's ``mg_mav_metrics_add``, the one definition of the metrics: each result's text
    is read again in C with its ``true_state`` (a result parsed without one and with a non-default
    ``board_size``/``flags`` is read in its game's default configuration)."""
    c: Dict[str, int] = {}
    for r in results:
        ref = None if r._true_state is None else [r._true_state]
        for k, v in _core.mav_metrics(r.game, [r._text], ref).items():
            c[k] = c.get(k, 0) + v
    if not c:
        c = _core.mav_metrics("chess", [], None)
    return _rates(c)


# ---- training examples -------------------------------------------------------------------------------------------

@dataclass
class ExampleBatch:
    """Token ids [B, L] (padded with <pad> = 0), loss mask [B, L] (False on the prompt and padding),
    lengths [B]; ``texts``: (prompt, target) pairs when requested."""
    tokens: np.ndarray
    loss_mask: np.ndarray
    lengths: np.ndarray
    texts: Optional[List[Tuple[str, str]]] = None


class ExampleBuilder:
    """Randomised MAV training examples, seeded and reproducible (the MAV paper's data randomisation).

    Each item gives a position and its annotation; per example the builder draws the transition form
    (previous state + action as input, the model writes the state) with ``p_transition`` when a
    previous state is known, %top_all with ``p_top_all`` else %top_k with k uniform in
    1..n_legal + k_slack (so k can exceed the number of legal moves), for the chess family %state only /
    %fen only / both in random order, %best_action with ``p_best`` (then the state after it with
    ``p_after``), and a shuffled %top order with ``p_shuffle``. Items:

    - ``(state, annotation)``: the previous state, if needed, is the state's last pushed move;
    - ``(state, annotation, prev_state, prev_action)``;
    - a dict with keys state, annotation, prev_state, prev_action.

    An annotation is an :class:`Annotation`, a ``{move: value}`` dict, a ``mavgame.annotate.EngineAnnotation``
    or a ``(moves, values[, best])`` tuple; it may be None for terminal states.
    """

    def __init__(self, seed: int = 0, tokenizer: Optional[Tokenizer] = None, *, p_transition: float = 0.5,
                 p_top: float = 1.0, p_top_all: float = 0.25, k_slack: int = 4, p_best: float = 1.0,
                 p_after: float = 0.0, p_shuffle: float = 1.0, p_state_only: float = 1 / 3,
                 p_fen_only: float = 1 / 3, add_bos: bool = True, add_eos: bool = True, use_history: bool = True):
        self.tokenizer = tokenizer or _default_tokenizer()
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self.use_history = bool(use_history)
        self._b = _core.MavExampleBuilder(self.tokenizer._tok, int(seed) & (2**64 - 1), p_transition, p_top,
                                          p_top_all, int(k_slack), p_best, p_after, p_shuffle, p_state_only,
                                          p_fen_only, bool(add_bos), bool(add_eos))

    def _item(self, i: int, it) -> tuple:
        prev_state = prev_action = None
        if isinstance(it, Mapping):
            state, ann = it["state"], it.get("annotation")
            prev_state, prev_action = it.get("prev_state"), it.get("prev_action")
        elif isinstance(it, (tuple, list)) and len(it) in (2, 4):
            state, ann = it[0], it[1]
            if len(it) == 4:
                prev_state, prev_action = it[2], it[3]
        else:
            raise TypeError(f"items[{i}] must be (state, annotation), (state, annotation, prev_state, "
                            f"prev_action) or a dict, not {type(it).__name__}")
        _check_state(state, f"items[{i}] state")
        a = _as_annotation(state, ann)
        acts = a.actions if a is not None else None
        vals = a.values if a is not None else None
        best = int(a.best) if a is not None and a.best is not None else -1
        pa = -1
        if prev_state is not None:
            _check_state(prev_state, f"items[{i}] prev_state")
            if prev_action is None:
                raise ValueError(f"items[{i}]: prev_state needs prev_action")
            pa = _parse_move(prev_state, prev_action)
        return (state, acts, vals, best, prev_state, pa, self.use_history)

    def build(self, items: Sequence, max_len: Optional[int] = None, return_text: bool = False) -> ExampleBatch:
        """One batch: ValueError (naming the item) if an example is bad or longer than ``max_len``."""
        conv = [self._item(i, it) for i, it in enumerate(items)]
        out = self._b.build(conv, max_len, return_text)
        return ExampleBatch(out[0], out[1], out[2], out[3] if return_text else None)

    def get_state(self) -> Tuple[int, int, int, int]:
        """The generator state (to resume a data stream exactly)."""
        return self._b.get_rng_state()

    def set_state(self, state: Tuple[int, int, int, int]) -> None:
        self._b.set_rng_state(tuple(int(x) for x in state))
