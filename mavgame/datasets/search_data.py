"""Search data for internal search (MAV-IS): annotated trees, trace examples and the MAV/trace mixture.

- ``generate_search_trees`` builds the paper's target trees (``mavgame.mav.search_trace.build_search_tree``, the
  game's engine annotating every node) from the positions of a MAV position set and writes them as a
  position set of its own: each record is a valid position record (the root's state, values and best move)
  plus ``tree``, so the same splits, stores and tools apply.
- ``TraceEncoder`` turns tree records into trace examples of a randomly drawn (breadth, depth) that fits the
  context (the paper's subsampling), ``MixedStore`` interleaves MAV and search records at a fixed share
  (the paper: 40% traces) and ``MixtureEncoder`` encodes a mixed batch. All deterministic per (seed, batch),
  so a resumed run continues the same stream.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..annotators import make_annotator
from ..mav.search_trace import (MAX_BREADTH, MAX_DEPTH, TRACE_EXPAND, TRACE_FORMS, SearchTree, build_search_tree,
                                write_trace)
from .dataset import LazyTokenizer
from .records import MANIFEST, _new_state, position_split
from .store import PositionStore, PositionWriter


#: roots -> their annotations ({move: value}, best) or None (generate_search_trees' ``root_values``)
RootValues = Callable[[Sequence[Any]], Sequence[Optional[Tuple[Dict[str, float], Optional[str]]]]]

__all__ = ["generate_search_trees", "tree_record", "record_tree", "parse_shapes", "root_value_spans", "TraceEncoder",
           "MixedStore", "MixtureEncoder"]


def parse_shapes(text: str) -> List[Tuple[int, int]]:
    """"2x1,3x1,4x1" -> [(breadth, depth), ...]; ValueError naming a bad entry."""
    out = []
    for part in text.split(","):
        try:
            b, d = (int(x) for x in part.strip().lower().split("x"))
        except ValueError:
            raise ValueError(f"search shape {part!r}: expected BREADTHxDEPTH such as 3x1") from None
        if not (1 <= b <= MAX_BREADTH and 1 <= d <= MAX_DEPTH):
            raise ValueError(f"search shape {part!r}: breadth must be 1..{MAX_BREADTH}, depth 1..{MAX_DEPTH}")
        out.append((b, d))
    if not out:
        raise ValueError("no search shapes given")
    return out


def tree_record(tree: SearchTree) -> Dict[str, Any]:
    """A tree as a JSON record: the root as a position record plus ``tree`` (parent, move, values, best)."""
    nodes = []
    states = [tree.root.copy()]
    for i, (parent, action, acts, vals, best) in enumerate(tree.nodes):
        if i:
            st = states[parent].copy()
            move = st.action_to_str(action)
            st.push(action)
            states.append(st)
        else:
            st, move = states[0], None
        values = None if acts is None else {st.action_to_str(int(a)): float(v) for a, v in zip(acts, vals)}
        nodes.append([parent, move, values, None if best < 0 else st.action_to_str(best)])
    root = nodes[0]
    return {"state": tree.root.text(), "values": root[2], "best": root[3], "tree": nodes,
            "tree_depth": tree.depth, "tree_breadth": tree.breadth}


def record_tree(game: str, rec: Dict[str, Any], board_size: int = 0) -> SearchTree:
    """The SearchTree of a tree record (ValueError naming a bad node)."""
    root = _new_state(game, board_size, rec["state"])
    tree = SearchTree(root, [], int(rec.get("tree_depth", 0)), int(rec.get("tree_breadth", 0)))
    states = []
    for i, (parent, move, values, best) in enumerate(rec["tree"]):
        if i == 0:
            st = root.copy()
            action = -1
        else:
            if not 0 <= parent < i:
                raise ValueError(f"tree node {i}: parent {parent} is not an earlier node")
            st = states[parent].copy()
            action = st.parse_move(move)
            st.push(action)
        states.append(st)
        if values is None:
            tree.nodes.append((parent, action, None, None, -1))
        else:
            acts = np.array([st.parse_move(m) for m in values], np.int32)
            tree.nodes.append((parent, action, acts, np.array(list(values.values()), np.float64),
                               -1 if best is None else st.parse_move(best)))
    return tree


def _in_store_order(ann):
    """An annotation with its moves in the order its stored record reads back in (the store writes JSON with
    sorted keys), so that the tree expanded from it is the tree its record describes: ties in the reference
    order fall by that order (a model's root values often tie at the breadth's edge)."""
    return None if ann is None else ({m: ann[0][m] for m in sorted(ann[0])}, ann[1])


def generate_search_trees(positions, out, n_trees: int, depth: int = 3, breadth: int = 5, seed: int = 0,
                          min_ply: int = 0, annotator_options: Optional[Dict[str, Any]] = None,
                          val_fraction: float = 0.05, progress: bool = True,
                          root_values: Optional[RootValues] = None, root_batch: int = 32,
                          val_only: bool = False) -> Dict[str, Any]:
    """Trees of ``depth`` x ``breadth`` rooted at up to ``n_trees`` positions of the position set
    ``positions`` (train and val, in a seeded random order; finished positions, positions before ``min_ply``
    (the records' ``ply``) and roots whose tree the annotator's budget cannot finish are skipped), written to
    ``out``.

    ``root_values``: a function from a list of root states to their annotations (``({move: value}, best)``, or
    None to skip the root), such as :func:`mavgame.model.mav_is.model_root_values`, called on ``root_batch``
    roots at a time. Each tree's root then carries those values (and expands by them) instead of the engine's,
    and its record says ``"root_source": "model"``: the trace examples of such a tree leave the root's own
    values out of the loss (:class:`TraceEncoder`) and teach the rest, the children's true values and the
    decision over them, which may overrule the root's values (the searchless answer).

    Splits follow the root's state text as in the MAV data (same ``val_fraction`` -> same split). ``val_only``:
    roots only from positions in the val split at ``val_fraction`` (the others are counted in
    ``skipped_split``), so that every tree is held out from any tree set drawn with a fraction at least as large:
    an evaluation set as large as wanted. Returns statistics (also in the manifests). An ``out`` that already
    holds trees is reused as it is."""
    out = Path(out)
    if (out / "train" / MANIFEST).exists():
        return json.loads((out / "train" / MANIFEST).read_text()).get("info", {}).get("stats", {})
    stores = [PositionStore(Path(positions) / s) for s in ("train", "val") if (Path(positions) / s / MANIFEST).exists()]
    if not stores:
        raise ValueError(f"{positions}: no position set to take tree roots from")
    game = stores[0].game
    refs = [(k, i) for k, s in enumerate(stores) for i in range(len(s))]
    order = np.random.default_rng(seed).permutation(len(refs))
    engine = make_annotator(game, annotator_options)

    def annotate(st):
        return _in_store_order(engine(st))

    board_size = int(((stores[0].manifest.get("info") or {}).get("stats") or {}).get("board_size", 0))
    stats: Dict[str, Any] = {"trees": 0, "nodes": 0, "skipped_budget": 0, "skipped_ply": 0, "depth": depth,
                             "breadth": breadth, "min_ply": min_ply, "seed": seed, "source": str(positions),
                             "annotator": dict(annotator_options or {})}
    if root_values is not None:
        stats.update(root_source="model", skipped_root=0, root_overruled=0)
    if val_only:
        if val_fraction <= 0:
            raise ValueError("val_only needs a positive val_fraction (the held-out share its roots come from)")
        stats.update(val_only=True, skipped_split=0)
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=n_trees, desc="search trees", unit="tree", file=sys.stderr)
    seen = set()
    chunk = max(1, int(root_batch)) if root_values is not None else 1
    with PositionWriter(out, game, val_fraction=val_fraction, info={"kind": "search_trees", "stats": stats}) as w:
        at = 0
        while at < len(order) and stats["trees"] < n_trees:
            roots = []
            while at < len(order) and len(roots) < chunk:
                k, i = refs[int(order[at])]
                at += 1
                rec = stores[k].record(i)
                if rec["state"] in seen or rec.get("result", "*") != "*":
                    continue
                seen.add(rec["state"])
                if val_only and position_split(rec["state"], val_fraction) != "val":
                    stats["skipped_split"] += 1
                    continue
                if int(rec.get("ply", min_ply)) < min_ply:  # the record's ply (a state read from text has none)
                    stats["skipped_ply"] += 1
                    continue
                roots.append(_new_state(game, board_size, rec["state"]))
            anns = root_values(roots) if root_values is not None else [None] * len(roots)
            for st, ann in zip(roots, anns):
                if stats["trees"] >= n_trees:
                    break
                if root_values is not None and ann is None:
                    stats["skipped_root"] += 1
                    continue
                tree = build_search_tree(st, annotate, depth, breadth, root=_in_store_order(ann))
                if tree is None:
                    stats["skipped_budget"] += 1
                    continue
                rec = tree_record(tree)
                if ann is not None:
                    rec["root_source"] = "model"
                    own = set(write_trace(tree, 1, 1).choice)           # the root's own first move
                    stats["root_overruled"] += int(not own & set(write_trace(tree, breadth, 1).choice))
                w.add(rec)
                stats["trees"] += 1
                stats["nodes"] += len(tree)
                if bar is not None:
                    bar.update(1)
        w.info["stats"] = stats
    if bar is not None:
        bar.close()
    return stats


_ROOT_VALUES = "[%top_all"


def root_value_spans(target: str) -> List[Tuple[str, bool]]:
    """A trace target cut into (text, in the loss) pieces around the root's own values: the root's
    ``[%top_all ...]`` and ``[%best_action ...]`` lines (up to its ``Expand`` line) are out of the loss, the
    rest in. The cuts fall at line starts, where the tokenizer's pieces are those of the whole text. A target
    without those lines is one piece in the loss."""
    a = target.find(_ROOT_VALUES)
    b = target.find(TRACE_EXPAND, a + 1) if a >= 0 else -1
    if a < 0 or b < 0 or (a and target[a - 1] != "\n") or target[b - 1] != "\n":
        return [(target, True)]
    return [(target[:a], True), (target[a:b], False), (target[b:], True)]


class TraceEncoder(LazyTokenizer):
    """Tree records -> trace examples ``<bos> prompt target <eos>`` (loss on target and eos), in MAV vocabulary
    ``vocab_version`` (v2: the trace keywords are single tokens; v1: spelled with character tokens).

    Each example draws a (breadth, depth) from ``shapes`` with a generator seeded by (seed, position in the
    batch); when the trace does not fit ``max_tokens`` the next smaller shapes are tried (smallest last), and
    an example that fits in no shape is a ValueError naming the root. A tree whose root values are a model's
    (``"root_source": "model"``, :func:`generate_search_trees`) has the root's value lines out of the loss
    (:func:`root_value_spans`). ``form`` is the child form of the traces
    ("short" or "full", mavgame.mav.search_trace.TRACE_FORMS). ``p_mirror``: the probability that a tree is
    replaced by its mirror image first (:func:`mavgame.datasets.symmetry.mirror_tree_record`; drawn from the batch
    seed and the position in the batch, apart from the shape's draw)."""

    def __init__(self, game: str, shapes: Sequence[Tuple[int, int]], max_tokens: int, board_size: int = 0,
                 vocab_version: int = 2, form: str = "short", p_mirror: float = 0.0):
        if form not in TRACE_FORMS:
            raise ValueError(f"trace form must be one of {TRACE_FORMS}, not {form!r}")
        if not 0.0 <= float(p_mirror) <= 1.0:
            raise ValueError(f"trace p_mirror must be in [0, 1], got {p_mirror}")
        if p_mirror > 0.0:
            from .symmetry import require_mirror
            require_mirror(game, "trace p_mirror")
        self.p_mirror = float(p_mirror)
        self.game, self.shapes, self.max_tokens, self.board_size = game, list(shapes), int(max_tokens), board_size
        self.form = form
        self.vocab_version = int(vocab_version)
        self._tok = None

    def example(self, rec: Dict[str, Any], rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        tok = self.tokenizer()
        tree = record_tree(self.game, rec, self.board_size)
        first = int(rng.integers(len(self.shapes)))
        by_size = sorted(self.shapes, key=lambda s: s[0] ** s[1])
        tries = [self.shapes[first]] + [s for s in reversed(by_size) if s[0] ** s[1] < self.shapes[first][0] **
                                         self.shapes[first][1]]
        model_root = rec.get("root_source") == "model"
        for b, d in tries:
            tr = write_trace(tree, b, d, self.form)
            p = tok.encode(tr.prompt)
            pieces = root_value_spans(tr.target) if model_root else [(tr.target, True)]
            enc = [(tok.encode(text), keep) for text, keep in pieces]
            n = len(p) + sum(len(e) for e, _k in enc) + 2
            if n <= self.max_tokens:
                ids = np.concatenate([[tok.bos_id], p] + [e for e, _k in enc] + [[tok.eos_id]]).astype(np.int32)
                mask = np.zeros(n, np.uint8)
                at = 1 + len(p)
                for e, keep in enc:
                    mask[at:at + len(e)] = keep
                    at += len(e)
                mask[at] = 1                              # <eos>
                return ids, mask
        raise ValueError(f"the trace of {rec['state']!r} does not fit {self.max_tokens} tokens in any of the "
                         f"shapes {self.shapes}")

    def __call__(self, records: Sequence[Dict[str, Any]], seed: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        if self.p_mirror > 0.0:
            from .symmetry import mirror_tree_record
            flips = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x6D6972, 1]).random(len(records)) < self.p_mirror
            records = [mirror_tree_record(self.game, r) if f else r for r, f in zip(records, flips)]
        return [self.example(r, np.random.default_rng([int(seed) & 0xFFFFFFFF, i])) for i, r in enumerate(records)]


class MixtureEncoder:
    """Encodes a batch mixing MAV records and tree records (``"tree"`` in the record) with their encoders."""

    def __init__(self, mav_encoder, trace_encoder: TraceEncoder):
        self.mav, self.trace = mav_encoder, trace_encoder

    def __call__(self, records: Sequence[Dict[str, Any]], seed: int) -> List[Tuple[np.ndarray, np.ndarray]]:
        tr = [i for i, r in enumerate(records) if "tree" in r]
        mv = [i for i, r in enumerate(records) if "tree" not in r]
        out: List[Any] = [None] * len(records)
        for idx, ex in zip(mv, self.mav([records[i] for i in mv], seed) if mv else []):
            out[idx] = ex
        for idx, ex in zip(tr, self.trace([records[i] for i in tr], seed + 1) if tr else []):
            out[idx] = ex
        return out


class MixedStore:
    """A record store interleaving a MAV store and a search-tree store: of every virtual record index, a
    share ``search_fraction`` (evenly spread: index i is a tree record when floor((i+1)p) > floor(ip)) reads the
    trees, the rest the MAV records, each cycling through its own store. Its length covers both stores once."""

    def __init__(self, mav_store: PositionStore, search_store: PositionStore, search_fraction: float):
        if not 0.0 < search_fraction < 1.0:
            raise ValueError(f"search_fraction must be in (0, 1), got {search_fraction}")
        if mav_store.game != search_store.game:
            raise ValueError(f"the MAV data are {mav_store.game}, the search data {search_store.game}")
        self.mav, self.search, self.p = mav_store, search_store, float(search_fraction)
        self.game = mav_store.game
        self.manifest = mav_store.manifest
        self.path = mav_store.path
        self._n = int(max(np.ceil(len(mav_store) / (1.0 - self.p)), np.ceil(len(search_store) / self.p)))

    def __len__(self) -> int:
        return self._n

    def record(self, i: int) -> Dict[str, Any]:
        if not 0 <= i < self._n:
            raise IndexError(f"record {i} out of range for a set of {self._n}")
        a, b = int(np.floor(i * self.p)), int(np.floor((i + 1) * self.p))
        if b > a:
            return self.search.record(a % len(self.search))
        return self.mav.record((i - b) % len(self.mav))
