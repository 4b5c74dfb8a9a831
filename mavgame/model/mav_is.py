"""Internal search with a MAV model (MAV-IS): generating and reading the model's traces, and the held-out
trace evaluation. The agent, :class:`mavgame.agents.mav.MAVISAgent` (kind ``mav_is``), plays with them.

- :func:`generate_traces` prompts the model for a minimax trace of breadth B and depth D
  (:mod:`mavgame.mav.search_trace`), greedily, optionally with the format's copies written for it
  (:func:`generate_traces_copy_prev`); :func:`trace_value_choice` is the minimax choice over a trace's leaves,
  each leaf valued by its ``%top_all`` distributions read as mean or max scoring (:func:`trace_node_values`):
  the written trace carries one greedy bucket token per value, the model's distribution behind it says more
  (the agent's ``decide="mean"`` / ``"max"``, :data:`DECISION_RULES`).
- :func:`evaluate_trace_records` generates traces for held-out search trees and reports the issue's checks
  per shape (tree-shape accuracy as in the paper, legality, states, the model's own minimax arithmetic, the
  final move against the minimax choice of the true tree) and the average prompt + response tokens.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..mav.search_trace import (TRACE_DECISION, TRACE_EVAL, TRACE_EXPAND, TRACE_FORMS, TRACE_ROOT, parse_trace,
                                trace_metrics, trace_prompt, write_trace)
from .inference import MAVModel, value_scorer

__all__ = ["generate_traces", "generate_traces_copy_prev", "parent_state_text", "next_node_name",
           "evaluate_trace_records", "child_state_errors", "CHILD_STATE_KINDS", "trace_node_values",
           "trace_value_choice", "DECISION_RULES", "root_best_actions", "model_root_values"]

#: how the agent picks its move from a trace: the trace's own ``Playing m!`` (the paper), or minimax over the
#: leaves' value distributions by mean or max scoring (trace_value_choice)
DECISION_RULES = ("trace", "mean", "max")

#: what a child node's written %state is, checked in this order (child_state_errors)
CHILD_STATE_KINDS = ("right", "invalid", "parent_copy", "previous_copy", "parent_other_move", "previous_plus_move",
                     "other")


def generate_traces(model: MAVModel, states: Sequence[Any], breadth: int, depth: int, batch_size: int = 32,
                    copy_prev: bool = False, copy_names: bool = False) -> List[Tuple[str, Any]]:
    """(prompt, MAVOutput) of the model's trace for each state (greedy, up to the model's context).

    ``copy_prev``: in the full child form, every ``[%prev_state`` line the model starts is completed with the
    ``%state`` the same trace wrote for the node's parent (the prompt's for a root child) instead of being
    decoded (:func:`generate_traces_copy_prev`); the format defines that line as that copy."""
    prompts = [trace_prompt(s, breadth, depth) for s in states]
    if copy_prev or copy_names:
        return list(zip(prompts, generate_traces_copy_prev(model, prompts, batch_size, copy_names=copy_names,
                                                           copy_prev=copy_prev,
                                                           max_rounds=64 if not copy_names else 256)))
    outs = model.generate(prompts, batch_size=batch_size)
    return list(zip(prompts, outs))


_EVAL = TRACE_EVAL + TRACE_ROOT[:-1]   # "Evaluation for node: <root"


_ROOT_TOP = re.compile(r"^\[%top_all((?: [^ \]:]+:<ctrl\d+>)*)\]$", re.M)
_ROOT_BEST = re.compile(r"^\[%best_action ([^ \]]+)\]$", re.M)


def model_root_values(model: MAVModel, states: Sequence[Any], breadth: int = 4, depth: int = 1,
                      batch_size: int = 32, max_new_tokens: Optional[int] = None
                      ) -> List[Optional[Tuple[Dict[str, float], Optional[str]]]]:
    """The root values the model writes at the head of its own trace (the prompt of ``breadth`` x ``depth``,
    greedy as the agent decodes), as an annotation ``({move: bucket midpoint}, best move)`` per state, for
    :func:`mavgame.datasets.search_data.generate_search_trees` (``root_values``): trees whose root expands the
    moves the model itself would expand. None for a state whose root ``%top_all`` line does not list every
    legal move exactly once with a value (the model's best move is kept only when legal). ``max_new_tokens``
    (default: enough for the widest root line of the batch, 8 tokens a legal move) bounds the decoding."""
    from ..mav.values import bucket_value
    prompts = [trace_prompt(s, breadth, depth) for s in states]
    if max_new_tokens is None:
        max_new_tokens = 48 + 8 * max((len(s.legal_moves) for s in states), default=0)
    outs = model.generate(prompts, max_new_tokens=max_new_tokens, batch_size=batch_size)
    res: List[Optional[Tuple[Dict[str, float], Optional[str]]]] = []
    for st, out in zip(states, outs):
        head = out.text.split(TRACE_EXPAND, 1)[0]
        m = _ROOT_TOP.search(head)
        legal = set(st.legal_moves)
        if m is None:
            res.append(None)
            continue
        pairs = [e.rsplit(":<ctrl", 1) for e in m.group(1).split()]
        values = {mv: float(bucket_value(int(b.rstrip(">")))) for mv, b in pairs if int(b.rstrip(">")) < 64}
        if len(values) != len(pairs) or set(values) != legal:
            res.append(None)
            continue
        b = _ROOT_BEST.search(head)
        res.append((values, b.group(1) if b and b.group(1) in legal else None))
    return res


def parent_state_text(text: str) -> Optional[str]:
    """The ``%state`` value (``"x ..xo.."``) that a trace ``text`` (prompt + output so far, ending inside the
    ``[%prev_state`` line of a child block) wrote for the parent of the node being evaluated: the root's is
    the prompt's ``[%state ...]`` line, a deeper parent's the ``[%state ...]`` line of the last block of
    ``Evaluation for node: <root ...>`` naming it. None when the text names no such node or line."""
    at = text.rfind("\n" + _EVAL)
    if at < 0:
        return None
    head = text[at + 1:text.find("\n", at + 1)]
    path = head[len(_EVAL):].rstrip(">").split()
    if not path:
        return None
    parent = _EVAL + "".join(" " + m for m in path[:-1]) + ">\n"
    start = 0 if len(path) == 1 else text.rfind("\n" + parent, 0, at)
    if start < 0:
        return None
    if len(path) == 1:                      # the root: the prompt's own %state line
        k = text.find("[%state ")
        if k < 0 or k > at:
            return None
    else:
        k = text.find("[%state ", start, at + 1)
        nxt = text.find("\n" + _EVAL, start + 1, at + 1)
        if k < 0 or (0 <= nxt < k):
            return None
    end = text.find("]", k)
    line_end = text.find("\n", k)
    if end < 0 or (0 <= line_end < end):
        return None
    return text[k + len("[%state "):end]


def next_node_name(text: str, keyword: str) -> Optional[str]:
    """The node name (``"<root>"``, ``"<root 6 1>"``) that the format puts after ``keyword`` (the
    ``Evaluation for node: `` or ``Decision for node: `` that ``text``, a trace so far, ends with). An
    evaluation: the first node in depth-first order over the ``Expand`` lines written so far that has none
    yet. A decision: the first node in post-order that is evaluated, not a finished game (its block says
    ``[%top_all invalid``), not decided, and whose children are all evaluated and finished or decided (a leaf
    has none). None when the lines written so far leave no such node; the model then writes the name."""
    children: Dict[Tuple[str, ...], List[Tuple[str, ...]]] = {}
    evaluated: set = set()
    decided: set = set()

    def path(name: str) -> Optional[Tuple[str, ...]]:
        name = name.strip()
        if name == "<root>":
            return ()
        if name.startswith("<root ") and name.endswith(">"):
            return tuple(name[6:-1].split())
        return None

    finished: set = set()
    last: Optional[Tuple[str, ...]] = None
    for line in text.splitlines()[:-1] if not text.endswith("\n") else text.splitlines():
        if line.startswith(TRACE_EVAL):
            p = path(line[len(TRACE_EVAL):])
            last = p
            if p is not None:
                evaluated.add(p)
        elif line.startswith("[%top_all invalid") and last is not None:
            finished.add(last)                      # a finished game: no expansion, no decision
        elif line.startswith(TRACE_DECISION):
            p = path(line[len(TRACE_DECISION):])
            if p is not None:
                decided.add(p)
        elif line.startswith(TRACE_EXPAND) and ": " in line:
            p = path(line[len(TRACE_EXPAND):line.index(": ")])
            if p is not None:
                kids = [path(k + ">") for k in line[line.index(": ") + 2:].split(">") if k.strip()]
                children[p] = [k for k in kids if k is not None]
    if keyword == TRACE_EVAL:
        order: List[Tuple[str, ...]] = []
        seen: set = set()

        def pre(p):                                 # garbled text may list a node under itself: visit once
            if p in seen or len(p) > 64:
                return
            seen.add(p)
            order.append(p)
            for c in children.get(p, []):
                pre(c)
        pre(())
        nxt = next((p for p in order if p not in evaluated), None)
    else:
        seen = set()

        def post(p):
            if p in seen or len(p) > 64:
                return None
            seen.add(p)
            for c in children.get(p, []):
                r = post(c)
                if r is not None:
                    return r
            if p in evaluated and p not in finished and p not in decided and all(
                    c in evaluated and (c in finished or c in decided) for c in children.get(p, [])):
                return p
            return None
        nxt = post(())
    if nxt is None:
        return None
    return "<root>" if not nxt else "<root " + " ".join(nxt) + ">"


def generate_traces_copy_prev(model: MAVModel, prompts: Sequence[str], batch_size: int = 32,
                              max_rounds: int = 64, copy_names: bool = False, copy_prev: bool = True) -> List[Any]:
    """Greedy traces (MAVOutput, as :meth:`MAVModel.generate` gives them) in which every ``%prev_state`` token
    the model emits is followed by the parent's state as this trace wrote it (:func:`parent_state_text`) and
    ``]`` and a newline, fed to the model as if it had written them; decoding resumes after them. A row whose
    parent state cannot be found is left to decode the line itself. On the native engine the cross-batch prefix
    cache is grown to hold a batch's sequences, so that each round recomputes only what the last one added.
    Rounds: one decode call per batch until
    every row has ended (end of sequence, the context full, or ``max_rounds`` copies, after which decoding
    runs on without copying)."""
    from .inference import generate_ids
    tok = model.tokenizer
    stop_prev = tok.token_to_id("%prev_state")
    name_stops = {}
    if copy_names:
        for kw in (TRACE_EVAL, TRACE_DECISION):
            ids = tok.encode(kw).tolist()
            if len(ids) != 1:
                raise ValueError(f"copy_names needs {kw!r} as one token: vocabulary v2 (the model's is "
                                 f"v{tok.version})")
            name_stops[ids[0]] = kw
    bucket_ids = tok.bucket_ids.tolist()
    cap = model.cfg.max_seq_len
    if hasattr(model.backend, "ensure_prefix_cache"):  # each round's prompt is the last one's plus its output
        model.backend.ensure_prefix_cache(min(len(prompts), batch_size) * cap)
    outs: List[Any] = []
    for s in range(0, len(prompts), batch_size):
        chunk = prompts[s:s + batch_size]
        group = model.group_ids(chunk) if model.decoding == "grouped" else None
        heads = [model.encode_prompt(p) for p in chunk]
        gen: List[List[int]] = [[] for _ in chunk]
        steps: List[List[int]] = [[] for _ in chunk]
        probs: List[List[np.ndarray]] = [[] for _ in chunk]
        done = [False] * len(chunk)
        ended = [False] * len(chunk)
        rounds = [0] * len(chunk)
        if max(len(h) for h in heads) >= cap:
            raise ValueError(f"a prompt of {max(len(h) for h in heads)} tokens leaves no room in max_seq_len {cap}")
        while not all(done):
            live = [i for i in range(len(chunk)) if not done[i]]
            longest = max(len(heads[i]) + len(gen[i]) for i in live)
            stops = [tok.eos_id] + ([*([stop_prev] if copy_prev else []), *name_stops]
                                    if any(rounds[i] < max_rounds for i in live) else [])
            res = generate_ids(model.backend, [heads[i] + gen[i] for i in live], cap - longest, stops,
                               pad_id=tok.pad_id, bucket_ids=bucket_ids, group_ids=group)
            for i, g in zip(live, res):
                base = len(gen[i])
                steps[i] += [base + k for k in g.value_steps]
                probs[i] += list(g.value_probs)
                gen[i] += g.ids
                total = len(heads[i]) + len(gen[i])
                if g.ids and g.ids[-1] == tok.eos_id:
                    done[i] = ended[i] = True
                elif (g.ids and total < cap and rounds[i] < max_rounds
                      and ((copy_prev and g.ids[-1] == stop_prev) or g.ids[-1] in name_stops)):
                    rounds[i] += 1            # the rest of the line is the format's: write it for the model
                    so_far = chunk[i] + tok.decode(gen[i])
                    if g.ids[-1] == stop_prev:
                        parent = parent_state_text(so_far)
                        fill = None if parent is None else " " + parent + "]\n"
                    else:
                        name = next_node_name(so_far, name_stops[g.ids[-1]])
                        fill = None if name is None else name + "\n"
                    if fill is not None:
                        gen[i] += tok.encode(fill).tolist()[:cap - total]
                    if len(heads[i]) + len(gen[i]) >= cap:
                        done[i] = True
                else:
                    done[i] = total >= cap or not g.ids
        for i in range(len(chunk)):
            p = np.stack(probs[i]) if probs[i] else np.zeros((0, len(bucket_ids)), np.float32)
            outs.append(model.output(gen[i][:-1] if ended[i] else gen[i], ended[i], steps[i], p))
    return outs


def trace_node_values(res: Any, out: Any, prompt: str, newline_id: int, scoring: str = "mean"
                      ) -> List[Optional[float]]:
    """The value of every node of a parsed trace (``res.nodes``) for that node's mover, from the model's
    own distributions: a finished node (as the trace declares it) 0.5 for a draw, else 0 (its mover has
    lost); a node with evaluated children the best of 1 - the child's value; a leaf the best of its
    ``%top_all`` values scored by ``scoring`` ("mean": the expectation over the bucket midpoints; "max": the
    mode's midpoint); None where nothing was written. ``out`` is the generation (its ``value_entries`` and
    ``ids``), ``prompt`` the text it continued; an entry belongs to the node whose evaluation line is the
    last one at or before the entry's line."""
    score = value_scorer(scoring)
    nodes = res.nodes
    own: List[List[float]] = [[] for _ in nodes]
    if nodes and out.value_entries:
        starts = np.array([n.line for n in nodes])
        order = np.argsort(starts, kind="stable")
        sorted_starts = starts[order]
        newlines = np.cumsum(np.asarray(out.ids) == newline_id)
        base = prompt.count("\n") + 1
        for at, _move, p in out.value_entries:
            line = base + (int(newlines[at - 1]) if at > 0 else 0)
            k = int(np.searchsorted(sorted_starts, line, side="right")) - 1
            if k >= 0:
                own[int(order[k])].append(float(score(p)))
    vals: List[Optional[float]] = [None] * len(nodes)
    for i in sorted(range(len(nodes)), key=lambda j: -nodes[j].depth):   # children before parents
        n = nodes[i]
        if n.terminal:
            vals[i] = 0.5 if n.outcome == "1/2-1/2" else 0.0
            continue
        kids = [1.0 - vals[c] for c in n.children if vals[c] is not None]
        if kids:
            vals[i] = max(kids)
        elif own[i]:
            vals[i] = max(own[i])
    return vals


def trace_value_choice(res: Any, out: Any, prompt: str, newline_id: int, scoring: str = "mean"
                       ) -> Optional[int]:
    """The root action of the minimax choice over :func:`trace_node_values` (the first in expansion order
    on ties), among the root's children whose move is legal; None when no such child has a value."""
    vals = trace_node_values(res, out, prompt, newline_id, scoring)
    if not res.nodes:
        return None
    best, best_v = None, -1.0
    for c in res.nodes[0].children:
        n = res.nodes[c]
        if n.action >= 0 and vals[c] is not None and 1.0 - vals[c] > best_v:
            best, best_v = n.action, 1.0 - vals[c]
    return best


def _plus_moves(state) -> Dict[str, int]:
    """{text of state after a: a} for every legal action a of ``state``."""
    out = {}
    if state.is_terminal():
        return out
    for a in state.legal_actions():
        st = state.copy()
        st.push(a)
        out[st.text()] = int(a)
    return out


def child_state_errors(results: Sequence[Any], roots: Sequence[Any]) -> Dict[str, Any]:
    """What the child ``%state`` lines of parsed traces are (the world model inside a trace).

    For every non-root node whose move is legal in its parent's true state, the written state is one of
    CHILD_STATE_KINDS, checked in order: right; invalid (not a state of the game); parent_copy (the parent's
    true state unchanged); previous_copy (the %state written just before it in the trace: the root's in the
    prompt for the first child, else the previous node's: a copy from a fixed distance back);
    parent_other_move (the parent's true state after another legal move); previous_plus_move (the previous
    written state after a legal move); other.
    Returns the count of each kind (``nodes``: their total) and, over ``other`` nodes whose text has the true
    text's length, the mean number of differing characters of the game texts (``other_mean_diff_chars``), and
    over all ``other`` nodes the share with the right player to move (``other_mover_right``)."""
    from ..datasets.records import _new_state
    counts = {k: 0 for k in CHILD_STATE_KINDS}
    diffs: List[int] = []
    mover_ok: List[bool] = []
    for res, root in zip(results, roots):
        true = [None] * len(res.nodes)
        prev_written = root.text()  # the prompt's state
        for i, nd in enumerate(res.nodes):
            if nd.parent < 0:
                true[i] = root.copy()
                continue
            parent = true[nd.parent]
            written = nd.state_text if nd.state_valid else None
            if parent is not None and nd.action >= 0:
                child = parent.copy()
                child.push(nd.action)
                true[i] = child
                if nd.state_correct:
                    kind = "right"
                elif written is None:
                    kind = "invalid"
                elif written == parent.text():
                    kind = "parent_copy"
                elif written == prev_written:
                    kind = "previous_copy"
                elif written in _plus_moves(parent):
                    kind = "parent_other_move"
                else:
                    try:
                        prev = _new_state(root.game, root.board_size, prev_written)
                        kind = "previous_plus_move" if written in _plus_moves(prev) else "other"
                    except Exception:  # a written previous state that is no state: not a source to copy
                        kind = "other"
                if kind == "other":
                    t = child.text()
                    if len(written) == len(t):
                        diffs.append(sum(x != y for x, y in zip(written, t)))
                    try:
                        w = _new_state(root.game, root.board_size, written)
                        mover_ok.append((-4 if w.is_terminal() else w.to_move)
                                        == (-4 if child.is_terminal() else child.to_move))
                    except Exception:  # valid for the parser but not for the game's reader: count as wrong
                        mover_ok.append(False)
                counts[kind] += 1
            if nd.state_valid:
                prev_written = nd.state_text
    out: Dict[str, Any] = dict(counts)
    out["nodes"] = sum(counts.values())
    out["other_mean_diff_chars"] = float(np.mean(diffs)) if diffs else float("nan")
    out["other_mover_right"] = float(np.mean(mover_ok)) if mover_ok else float("nan")
    return out


def evaluate_trace_records(model: MAVModel, game: str, records: Sequence[Dict[str, Any]],
                           shapes: Sequence[Tuple[int, int]], batch_size: int = 32, board_size: int = 0,
                           texts: Optional[Dict[str, List[str]]] = None, form: Optional[str] = None,
                           copy_prev: bool = False, copy_names: bool = False) -> Dict[str, Any]:
    """Per shape "BxD" and over all: the fractions of TRACE_METRICS, the number of traces, the mean
    prompt + response tokens and ``child_states`` (:func:`child_state_errors`), on tree records
    (mavgame.datasets.search_data) cut to each shape. ``texts``, when given, receives each shape's generated
    traces (prompt + output). ``form``: the child form the true traces are written and the model's parsed
    in (None: the model's ``trace_form``, short for a model without one); ``report["form"]`` names it, and in
    the full form each shape's ``prev_agrees`` is the share of child nodes whose repeated inputs are right.
    ``copy_prev``: generate with the parent's state copied into every ``%prev_state`` line
    (:func:`generate_traces`)."""
    from ..datasets.search_data import record_tree
    form = form or getattr(model, "trace_form", "short")
    if form not in TRACE_FORMS:
        raise ValueError(f"trace form must be one of {TRACE_FORMS}, not {form!r}")
    tok = model.tokenizer
    trees = [record_tree(game, r, board_size) for r in records]
    # a mixture's shape list repeats shapes to weight them (--search-shapes 4x1,4x1,...): each is evaluated once
    shapes = list(dict.fromkeys((int(b), int(d)) for b, d in shapes))
    report: Dict[str, Any] = {}
    everything = []
    for b, d in shapes:
        fits = [t for t in trees if t.breadth >= b and t.depth >= d]
        if not fits:
            continue
        traces = [write_trace(t, b, d, form) for t in fits]
        gens = generate_traces(model, [t.root for t in fits], b, d, batch_size, copy_prev=copy_prev,
                               copy_names=copy_names)
        res = [parse_trace(p + o.text, t.root, choice=tr.choice, form=form)
               for t, tr, (p, o) in zip(fits, traces, gens)]
        m = trace_metrics(res)
        m.update(_optimal_rates(fits, res, gens, tok.token_to_id("\n")))
        m["child_states"] = child_state_errors(res, [t.root for t in fits])
        if form == "full":  # the share of child nodes whose repeated %prev_state/%prev_action are right
            agree = [n.prev_agrees for r in res for n in r.nodes[1:]]
            m["prev_agrees"] = float(np.mean(agree)) if agree else float("nan")
        if texts is not None:
            texts[f"{b}x{d}"] = [p + o.text for p, o in gens]
        m["mean_tokens"] = float(np.mean([len(tok.encode(p)) + len(o.ids) for p, o in gens]))
        m["true_mean_tokens"] = float(np.mean([len(tok.encode(tr.text)) for tr in traces]))
        report[f"{b}x{d}"] = m
        everything += res
    if everything:
        report["all"] = trace_metrics(everything)
        report["form"] = form
    return report


def root_best_actions(tree: Any) -> set:
    """The root actions of an annotated search tree with the engine's best value (empty without values)."""
    _p, _a, acts, vals, _b = tree.nodes[0]
    if acts is None or not len(acts):
        return set()
    return {int(a) for a, v in zip(acts, vals) if v >= float(np.max(vals)) - 1e-9}


def _optimal_rates(trees: Sequence[Any], results: Sequence[Any], gens: Sequence[Tuple[str, Any]],
                   newline_id: int) -> Dict[str, float]:
    """How often the move an agent would play from each trace has the engine's best root value (the tree's
    root annotation: every legal move valued): ``final_optimal`` for the trace's own ``Playing m!``
    (``decide=trace``), ``mean_choice_optimal`` for the minimax choice over the leaves' mean-scored values
    (``decide=mean``, the trace's own move where that rule has none). A trace without a legal final move
    counts as not optimal (the agent would fall back to searchless MAV)."""
    ok_final, ok_mean = [], []
    for t, r, (prompt, out) in zip(trees, results, gens):
        good = root_best_actions(t)
        if not good:
            continue
        if not r.final_legal:
            ok_final.append(False)
            ok_mean.append(False)
            continue
        ok_final.append(int(r.final_action) in good)
        a = trace_value_choice(r, out, prompt, newline_id, "mean") if getattr(out, "value_entries", None) else None
        ok_mean.append(int(r.final_action if a is None else a) in good)
    nan = float("nan")
    return {"final_optimal": float(np.mean(ok_final)) if ok_final else nan,
            "mean_choice_optimal": float(np.mean(ok_mean)) if ok_mean else nan}
