"""Internal search (MAV-IS): linearized minimax traces of the MAV paper (section 4, Figure 4).

The format (docs/format.md, section 10) is written and read in C (``csrc/format/mav_search.c``);
this module holds the typed Python side:

    >>> tree = build_search_tree(state, make_annotator("connect_four"), depth=3, breadth=5)
    >>> trace = write_trace(tree, breadth=3, depth=2)       # prompt, target, minimax choice
    >>> full = write_trace(tree, 3, 2, form="full")          # children repeat %prev_state/%prev_action
    >>> res = parse_trace(trace.prompt + model_output, true_state=state, choice=trace.choice)
    >>> res.shape_ok, res.final_move, res.final_minimax

A tree is annotated by the game's engine (every node gets the values of all its legal moves) and
expands the top ``breadth`` moves of every node to ``depth``; a trace of any smaller breadth and
depth is cut out of it by the writer (the paper's subsampling).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .write import _numeric_array

__all__ = ["SearchTree", "Trace", "TraceNode", "TraceResult", "build_search_tree", "write_trace", "trace_prompt",
           "parse_trace", "reference_order", "MAX_BREADTH", "MAX_DEPTH", "TRACE_METRICS", "TRACE_FORMS",
           "TRACE_EVAL", "TRACE_EXPAND", "TRACE_DECISION", "TRACE_PLAY", "TRACE_ROOT"]

MAX_BREADTH = 8
# the keywords that open a trace's lines, the C writer's own text (csrc/format/mav_search.h): an evaluation
# "Evaluation for node: <root 4>", an expansion "Expand from node <root>: ...", a decision "Decision for node: ",
# the final "Playing 4!"; TRACE_ROOT is the root's node name
TRACE_EVAL: str = _core.TRACE_EVAL
TRACE_EXPAND: str = _core.TRACE_EXPAND
TRACE_DECISION: str = _core.TRACE_DECISION
TRACE_PLAY: str = _core.TRACE_PLAY
TRACE_ROOT: str = _core.TRACE_ROOT
# how a child's evaluation is written: "short" (the transition form's outputs only) or "full" (its
# %prev_state and %prev_action input lines too); docs/format.md, section 10
TRACE_FORMS = ("short", "full")
MAX_DEPTH = 4
# the per-trace checks aggregated by trace_metrics (the issue's list)
TRACE_METRICS = ("parsed_ok", "shape_ok", "moves_legal", "states_correct", "values_consistent",
                 "expand_consistent", "final_legal", "final_minimax")

# annotate(state) -> ({move: win probability of the mover}, best move) or None (as mavgame.datasets's)
Annotate = Callable[[Any], Optional[Tuple[Dict[str, float], Optional[str]]]]


def reference_order(state, actions: Sequence[int], values: Sequence[float], best: int = -1) -> List[int]:
    """Indices of an annotation in the MAV reference order (value descending; ties: best, then given order)."""
    return _core.mav_reference_order(state, _numeric_array(actions, np.int32, "actions"),
                                     _numeric_array(values, np.float64, "values"), best)


@dataclass
class SearchTree:
    """An annotated search tree: node 0 is the root; each node is (parent, action, actions, values, best)
    with the engine's values of every legal move of the node's state (None for a finished game)."""
    root: Any
    nodes: List[Tuple[int, int, Optional[np.ndarray], Optional[np.ndarray], int]] = field(default_factory=list)
    depth: int = 0
    breadth: int = 0

    def __len__(self) -> int:
        return len(self.nodes)

    def packed(self) -> Tuple[np.ndarray, ...]:
        """The tree as flat arrays for the C writer: parent, action, offset (node i's annotation is
        actions/values[offset[i]:offset[i + 1]]), actions, values, best (cached until the tree grows)."""
        if getattr(self, "_packed_n", -1) != len(self.nodes):
            nodes = self.nodes
            sizes = [0 if a is None else len(a) for _p, _a, a, _v, _b in nodes]
            off = np.zeros(len(nodes) + 1, np.int32)
            np.cumsum(sizes, out=off[1:])
            acts = [a for _p, _a, a, _v, _b in nodes if a is not None and len(a)]
            vals = [v for _p, _a, a, v, _b in nodes if a is not None and len(a)]
            self._packed = (np.array([n[0] for n in nodes], np.int32), np.array([n[1] for n in nodes], np.int32),
                            off, np.concatenate(acts).astype(np.int32) if acts else np.zeros(0, np.int32),
                            np.concatenate(vals).astype(np.float64) if vals else np.zeros(0),
                            np.array([n[4] for n in nodes], np.int32))
            self._packed_n = len(nodes)
        return self._packed


def build_search_tree(state, annotate: Annotate, depth: int = 3, breadth: int = 5,
                      root: Optional[Tuple[Dict[str, float], Optional[str]]] = None) -> Optional[SearchTree]:
    """The tree of ``depth`` expanding the top ``breadth`` moves (by the engine's values) of every node.

    ``root``: the root's annotation (values of every legal move, best move) to use instead of the engine's,
    such as a model's own values (``generate_search_trees(root_values=...)``): the root then expands the top
    ``breadth`` moves by those values, and every other node is the engine's. A ValueError names a root
    annotation that misses a legal move or lists an illegal one.
    Returns None when the annotator gives up on a node (a budgeted solver) or the root is finished."""
    if not (1 <= depth <= MAX_DEPTH and 1 <= breadth <= MAX_BREADTH):
        raise ValueError(f"depth must be 1..{MAX_DEPTH} and breadth 1..{MAX_BREADTH}, got {depth} and {breadth}")
    if state.is_terminal():
        return None
    tree = SearchTree(state.copy(), [], depth, breadth)
    if root is not None:
        legal = set(state.legal_moves)
        named = set(root[0])
        if named != legal or (root[1] is not None and root[1] not in legal):
            raise ValueError(f"root annotation of {state.text()!r}: moves {sorted(named)} with best {root[1]!r}, "
                             f"the legal moves are {sorted(legal)}")

    def visit(st, parent: int, action: int, d: int) -> bool:
        idx = len(tree.nodes)
        if st.is_terminal():
            tree.nodes.append((parent, action, None, None, -1))
            return True
        ann = root if (root is not None and parent < 0) else annotate(st)
        if ann is None:
            return False
        values, best = ann
        acts = np.array([st.parse_move(m) for m in values], np.int32)
        vals = np.array(list(values.values()), np.float64)
        b = st.parse_move(best) if best is not None else -1
        tree.nodes.append((parent, action, acts, vals, b))
        if d == depth:
            return True
        for i in reference_order(st, acts, vals, b)[:breadth]:
            a = int(acts[i])
            st.push(a)
            ok = visit(st, idx, a, d + 1)
            st.pop()
            if not ok:
                return False
        return True

    return tree if visit(state.copy(), -1, -1, 0) else None


class Trace(NamedTuple):
    """A written trace: the prompt, the target and the minimax choice (root value bucket, root actions)."""
    prompt: str
    target: str
    value: int
    choice: List[int]

    @property
    def text(self) -> str:
        return self.prompt + self.target


def write_trace(tree: SearchTree, breadth: int, depth: int, form: str = "short") -> Trace:
    """The trace of ``breadth`` and ``depth`` (at most the tree's) cut out of an annotated tree, each child
    written in ``form`` ("short" or "full", TRACE_FORMS)."""
    text, n, (value, choice) = _core.mav_trace_write(tree.root, tree.packed(), breadth, depth, "all", form)
    return Trace(text[:n], text[n:], value, choice)


def trace_prompt(state, breadth: int, depth: int) -> str:
    """The prompt asking the model for a trace of ``breadth`` and ``depth`` from ``state``."""
    return _core.mav_trace_write(state, SearchTree(state, [(-1, -1, None, None, -1)]).packed(), breadth, depth,
                                 "prompt")[0]


class TraceNode(NamedTuple):
    """One node of a parsed trace (see docs/format.md, section 10)."""
    parent: int                 # -1 for the root
    depth: int
    move: str                   # the move from the parent ("" at the root)
    action: int                 # legal action in the parent's true state, or -1
    line: int                   # line of its "Evaluation for node"
    has_true: bool              # its true state is known
    state_valid: bool
    state_correct: Optional[bool]
    state_text: str             # game text of the %state it wrote
    n_legal: int
    true_terminal: bool
    terminal: bool              # evaluated as a finished game
    outcome: str                # "1-0", "0-1", "1/2-1/2" when terminal
    top: List[Tuple[str, int, int, str]]  # %top_all entries: (move, action, bucket, status)
    mav_ok: bool
    children: List[int]
    best: str
    selected_bucket: int
    value: int                  # bucket for the node's mover, -1 unknown
    decision: List[Tuple[str, int]]  # the decision's (child move, bucket) list
    consistent: bool
    prev_agrees: Optional[bool] = None  # full form: its %prev_state/%prev_action repeat the parent and name


@dataclass
class TraceResult:
    """A parsed trace with the issue's checks (every flag False when the text did not reach its end)."""
    game: str
    ok: bool                    # no format issue anywhere
    breadth: int                # from the preamble
    depth: int
    complete: bool              # reached 'Playing <move>!'
    n_issues: int
    final_move: str
    final_action: int           # legal in the true root, -1 otherwise
    shape_ok: bool
    moves_legal: bool
    states_correct: bool
    values_consistent: bool
    expand_consistent: bool
    final_legal: bool
    final_minimax: Optional[bool]  # None without the true tree's choice
    issues: List[Tuple[int, int, str]]
    nodes: List[TraceNode]

    @property
    def parsed_ok(self) -> bool:
        return self.ok

    @property
    def errors(self) -> List[str]:
        return [f"line {ln}, col {col}: {msg}" for ln, col, msg in self.issues]

    def paths(self) -> List[Tuple[str, ...]]:
        """Every node as its move path from the root."""
        out: List[Tuple[str, ...]] = []
        for n in self.nodes:
            out.append(() if n.parent < 0 else out[n.parent] + (n.move,))
        return out


def parse_trace(text, true_state=None, game: Optional[str] = None, choice: Optional[Sequence[int]] = None,
                form: str = "short") -> TraceResult:
    """Parse a whole trace (prompt + model output); never raises on bad text.

    ``true_state`` is the root (else the prompt's %state is trusted); ``choice`` the root actions a minimax
    over the true tree may play (``Trace.choice``), for ``final_minimax``; ``form`` the child form the
    trace was written in (in "full", a repeated %prev_state/%prev_action that disagrees with the parent's
    %state or the node's name is an issue; ValueError for an unknown form)."""
    if game is None:
        if true_state is None:
            raise ValueError("parse_trace needs the game or the true state")
        game = true_state.game
    choice = None if choice is None else list(choice)
    try:
        t = _core.mav_trace_parse(game, text, true_state, choice, form)
    except UnicodeEncodeError:
        if not isinstance(text, str):
            raise
        # a str that is not valid Unicode (lone surrogates): bad text, each such character read as '?'
        t = _core.mav_trace_parse(game, text.encode("utf-8", "replace"), true_state, choice, form)
    *head, issues, nodes = t
    return TraceResult(*head, issues=list(issues), nodes=[TraceNode(*n) for n in nodes])


def trace_metrics(results: Sequence[TraceResult]) -> Dict[str, float]:
    """Fractions of traces passing each check of TRACE_METRICS (final_minimax over those with a choice)."""
    out: Dict[str, float] = {"traces": float(len(results))}
    for k in TRACE_METRICS:
        vals = [getattr(r, k) for r in results if getattr(r, k) is not None]
        out[k] = float(np.mean(vals)) if vals else float("nan")
    return out
