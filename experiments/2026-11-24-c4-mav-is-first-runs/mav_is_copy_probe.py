#!/usr/bin/env python
"""Where a MAV(-IS) model copies a board from: teacher-forced child %state lines of true traces, and attention.

    python experiments/2026-11-24-c4-mav-is-first-runs/mav_is_copy_probe.py runs/c4-is-v2/model.safetensors --trees runs/c4trees/val \\
        --mav runs/c4data/val --n 40

Writing a state means copying the source board (a transition's %prev_state line; in a trace the parent's
%state line, several variable-length lines up) with one field changed. Under teacher forcing (the true text
as input) the probe reports, for the child %state lines of true 2x1 traces and for the %state lines of MAV
transition examples:

(and the state after the best action of ``%state %top_all %best_action %state``, which ``--p-after``
trains: its source is the prompt's %state line, three lines up past a variable-length %top_all)

The ``*_prev_action`` rows probe the same traces with ``[%prev_action m]`` inserted above each child's
%state (the move where the transition form has it), a format no model here was trained on. The ``*_full``
rows probe the full child form (``write_trace(..., form="full")``: each child repeats ``[%prev_state ...]``
and ``[%prev_action m]`` above its %state, as MAV's transition form writes them); their source line is the
child's own %prev_state, two lines up, as in a MAV transition example.

- ``field_acc``: argmax accuracy on the board fields; ``landing_acc``: on the field that changes (the new
  stone); ``line_exact``: every field of the line right;
- attention: the "copy head" is the (layer, head) whose queries (the inputs predicting the board fields)
  put the most attention mass on the source line in the MAV transition examples; for it, ``copy_mass`` is
  the mean mass on the source line, ``src_offset`` the mean distance in tokens from query to source line
  start, and ``argmax_offset`` the mean distance to its most-attended key (a fixed-offset copy keeps
  argmax_offset at the MAV value whatever the source's distance; a content-addressed one follows
  src_offset); and the wrong board fields by kind (colour swapped, a stone on an empty field, a stone
  emptied).
"""
import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from mavgame import _core, mav  # noqa: E402
from mavgame.mav.search_trace import write_trace  # noqa: E402
from mavgame.model.export import load_exported  # noqa: E402
from mavgame.datasets.search_data import record_tree  # noqa: E402
from mavgame.datasets.store import PositionStore  # noqa: E402
from mavgame.model.transformer import MAVTransformer  # noqa: E402


class _Recorder:
    """Replaces F.scaled_dot_product_attention while active and keeps each call's attention [H, T, T]."""

    def __init__(self):
        self.maps = []

    def __enter__(self):
        self._orig = F.scaled_dot_product_attention

        def sdpa(q, k, v, attn_mask=None, is_causal=False, **kw):
            T, S = q.shape[-2], k.shape[-2]
            s = (q @ k.transpose(-1, -2)) / np.sqrt(q.shape[-1])
            if is_causal:
                s = s.masked_fill(~torch.ones(T, S, dtype=torch.bool).tril(S - T), float("-inf"))
            if attn_mask is not None:
                s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
            p = s.softmax(-1)
            self.maps.append(p[0].detach().numpy())
            return p @ v

        F.scaled_dot_product_attention = sdpa
        return self

    def __exit__(self, *exc):
        F.scaled_dot_product_attention = self._orig


def lines_of(tok, ids):
    """(line index of each token, text of each line) for token ids (no <bos>)."""
    line, texts, cur = [], [], ""
    for i in ids:
        line.append(len(texts))
        s = tok.decode([i])
        cur += s
        if s == "\n":
            texts.append(cur)
            cur = ""
    texts.append(cur)
    return line, texts


def probe(model, tok, text, src_line_of, nfields):
    """Per target %state line: (fields right, landing right, n fields, per (layer, head) mass on source,
    source offsets, argmax offsets per (layer, head)); ``src_line_of(lines, j)``: the source line of line j."""
    ids = [tok.bos_id] + [int(i) for i in tok.encode(text)]
    line, texts = lines_of(tok, ids[1:])
    line = [-1] + line  # <bos>
    with _Recorder() as rec, torch.no_grad():
        logits = model(torch.tensor([ids]))[0]
    pred = logits.argmax(-1).numpy()
    A = np.stack(rec.maps)  # [layers, heads, T, T]
    out = []
    for j, t in enumerate(texts):
        src = src_line_of(texts, j)
        if src is None:
            continue
        pos = [p for p in range(len(ids)) if line[p] == j]
        spos = [p for p in range(len(ids)) if line[p] == src]
        fields, sfields = pos[-1 - nfields - 1:-2], spos[-1 - nfields - 1:-2]  # before ']' and '\n'
        if len(fields) != nfields or len(sfields) != nfields:
            continue
        right = [pred[p - 1] == ids[p] for p in fields]
        changed = [k for k in range(nfields) if ids[fields[k]] != ids[sfields[k]] and k > 0]
        land = [right[k] for k in changed[:1]]
        q = [p - 1 for p in fields[2:]]  # the inputs predicting the board fields (after the mover and space)
        mass = A[:, :, q][:, :, :, spos].sum(-1).mean(-1)  # [layers, heads]
        am = A[:, :, q].argmax(-1)  # [layers, heads, nq]
        kinds = [0, 0, 0]  # wrong board fields: colour swapped, stone on an empty field, stone emptied
        for p in fields[2:]:
            want, got = tok.decode([ids[p]]), tok.decode([int(pred[p - 1])])
            if want != got:
                kinds[0 if "." not in (want, got) else 1 if want == "." else 2] += 1
        out.append((sum(right), land, len(right), mass, float(np.mean(np.array(q) - spos[0])),
                    (np.array(q)[None, None, :] - am).mean(-1), kinds))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--trees", required=True, help="search-tree set (val split)")
    ap.add_argument("--mav", required=True, help="MAV position set (val split): transition examples")
    ap.add_argument("--n", type=int, default=40)
    args = ap.parse_args()
    torch.set_num_threads(1)
    weights, cfg, vv, _info = load_exported(args.model)
    if not cfg.abs_pos:  # rotary (and line) positions: a longer context for v1 traces of a v1 model
        cfg = dataclasses.replace(cfg, max_seq_len=max(cfg.max_seq_len, 1024))
    model = MAVTransformer(cfg)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    model.eval()
    tok = mav.Tokenizer(int(vv or 1))
    store = PositionStore(args.trees)
    nfields = None
    res = {"mav_transition": [], "mav_after_best": [], "trace_child1": [], "trace_child2": [],
           "trace_child1_prev_action": [], "trace_child2_prev_action": [], "trace_child1_full": [],
           "trace_child2_full": []}
    for r in list(PositionStore(args.mav))[:args.n]:
        st = _core.State(store.game, r["state"], 0, 0)
        if r.get("prev_state") is None or st.is_terminal():
            continue
        prev = _core.State(store.game, r["prev_state"], 0, 0)
        nfields = nfields or len(tok.encode(mav.state_text(st)))
        cmds = "%prev_state %prev_action %state %top_all %best_action"
        text = mav.prompt(st, cmds, prev_state=prev, prev_action=r["prev_action"]) + mav.target(
            st, r["values"], cmds, prev_state=prev, prev_action=r["prev_action"])
        res["mav_transition"] += probe(model, tok, text, lambda ls, j: j - 2 if j >= 2 and ls[j].startswith(
            "[%state") and ls[j - 2].startswith("[%prev_state") else None, nfields)
        cmds = "%state %top_all %best_action %state"  # the after state of --p-after: source 3 lines up
        text = mav.prompt(st, cmds) + mav.target(st, r["values"], cmds)
        res["mav_after_best"] += probe(model, tok, text, lambda ls, j: j - 3 if j >= 3 and ls[j].startswith(
            "[%state") and ls[j - 3].startswith("[%state") else None, nfields)
    for r in list(store)[:args.n]:
        tr = write_trace(record_tree(store.game, r), 2, 1)

        def src(ls, j):
            if not ls[j].startswith("[%state") or j < 3:
                return None
            root = next(i for i, t in enumerate(ls) if t.startswith("[%state"))
            return root if j > root else None
        got = probe(model, tok, tr.text, src, nfields)
        res["trace_child1"] += got[:1]
        res["trace_child2"] += got[1:2]
        # the same trace with the move repeated as the transition form has it, "[%prev_action m]" just above
        # each child's %state (a format the models were never trained on in a trace: what it would give)
        lines = tr.text.split("\n")
        for j in range(len(lines) - 1, 0, -1):
            if lines[j].startswith("[%state") and lines[j - 1].startswith("Evaluation for node: <root "):
                lines.insert(j, f"[%prev_action {lines[j - 1].rstrip('>').split()[-1]}]")
        got = probe(model, tok, "\n".join(lines), src, nfields)
        res["trace_child1_prev_action"] += got[:1]
        res["trace_child2_prev_action"] += got[1:2]
        # the full child form: the source is the child's own %prev_state line, two lines up
        full = write_trace(record_tree(store.game, r), 2, 1, form="full")
        got = probe(model, tok, full.text, lambda ls, j: j - 2 if j >= 2 and ls[j].startswith("[%state") and
                    ls[j - 2].startswith("[%prev_state") else None, nfields)
        res["trace_child1_full"] += got[:1]
        res["trace_child2_full"] += got[1:2]
    copy = None
    kinds = {}
    print("| | field_acc | landing_acc | line_exact | copy_mass | src_offset | argmax_offset | n |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in res.items():
        if not rows:
            continue
        mass = np.mean([m for _r, _l, _n, m, _o, _a, _k in rows], axis=0)
        if copy is None:
            copy = np.unravel_index(mass.argmax(), mass.shape)
        fa = sum(r for r, *_ in rows) / sum(n for _r, _l, n, *_ in rows)
        lands = [x for _r, ls, *_ in rows for x in ls]
        ex = np.mean([r == n for r, _l, n, *_ in rows])
        am = np.mean([a[copy] for *_x, a, _k in rows])
        kinds[name] = np.sum([k for *_x, k in rows], axis=0)
        print(f"| {name} | {fa:.3f} | {np.mean(lands):.3f} | {ex:.3f} | {mass[copy]:.3f} | "
              f"{np.mean([o for *_x, o, _a, _k in rows]):.1f} | {am:.1f} | {len(rows)} |")
    print(f"copy head: layer {copy[0]}, head {copy[1]}")
    for name, k in kinds.items():
        print(f"{name}: wrong board fields {int(k.sum())}: colour swapped {k[0]}, stone on an empty field {k[1]}, "
              f"stone emptied {k[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
