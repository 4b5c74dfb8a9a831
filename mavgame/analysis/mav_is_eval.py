#!/usr/bin/env python
"""Held-out MAV-IS traces of an exported model: the checks of docs/format.md section 10 and what the child
%state lines are (mavgame.model.mav_is.child_state_errors), per shape, plus a few traces beside the truth.

    python -m mavgame.analysis.mav_is_eval runs/c4-is-v2/model.safetensors --trees runs/c4trees/val --shapes 2x1,3x1 \\
        --n 150 --show 2 --json runs/c4-is-v2/heldout.json

A model trained with ``--trace-form full`` is prompted and parsed in the full child form (``--form``
overrides), with two more groups of rows: ``child %prev lines right`` and ``child blocks`` (what the
repeated ``%prev_state`` lines are, and whether each ``%state`` follows from its own block's inputs).
The ``children finished`` rows count the child nodes that declare the game over (``[%top_all invalid : ...]``)
against the ones that are finished, by whether the child's board is right.

The same numbers as ``search_heldout`` of ``mavgame train`` (the first ``--n`` validation trees, greedy
decoding), for a model file rather than the end of a run.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..mav.search_trace import TRACE_METRICS, parse_trace, write_trace
from ..model.inference import MAVModel
from ..model.mav_is import CHILD_STATE_KINDS, evaluate_trace_records, root_best_actions
from ..datasets.search_data import parse_shapes, record_tree
from ..datasets.store import PositionStore


def raw_child_states(texts, roots) -> dict:
    """Every child's written ``[%state ...]`` line, valid or not, against the MAV text of its true state and of
    the root: the share of the true length, the mean differing characters (same length only), and the mean
    count of non-'.' characters (stones, in Connect Four) written minus true. In the full child form the
    ``[%state`` line follows the node's ``[%prev_state``/``[%prev_action`` lines."""
    from .. import mav
    same, d_true, d_root, stones = [], [], [], []
    for text, root in zip(texts, roots):
        lines = text.splitlines()
        for j, ln in enumerate(lines[:-1]):
            k = j + 1
            while k < len(lines) - 1 and lines[k].startswith("[%prev_"):
                k += 1
            if not ln.startswith("Evaluation for node: <root ") or not lines[k].startswith("[%state "):
                continue
            st = root.copy()
            try:
                for m in ln[len("Evaluation for node: <root "):].rstrip(">").split():
                    st.push(m)
            except Exception:  # an illegal move in the node's name: no true state
                continue
            got, want, r = lines[k][8:-1], mav.state_text(st), mav.state_text(root)
            same.append(len(got) == len(want))
            if len(got) == len(want):
                d_true.append(sum(a != b for a, b in zip(got, want)))
                d_root.append(sum(a != b for a, b in zip(got, r)))
            stones.append(sum(c != "." for c in got[2:]) - sum(c != "." for c in want[2:]))
    f = (lambda x: round(float(sum(x) / len(x)), 3) if x else float("nan"))
    return {"children": len(same), "true_length": f(same), "diff_chars_true": f(d_true),
            "diff_chars_root": f(d_root), "extra_stones": f(stones)}


def finished_claims(texts, trees, b: int, d: int, form: str) -> dict:
    """Child nodes (below the root) that declare their game finished, against the truth: claimed and
    finished, claimed and not finished (board right / wrong), not claimed and finished."""
    out = {"children": 0, "finished": 0, "claimed_finished": 0, "claimed_not_finished_board_right": 0,
           "claimed_not_finished_board_wrong": 0, "finished_not_claimed": 0}
    for text, tree in zip(texts, trees):
        truth = write_trace(tree, b, d, form)
        for n in parse_trace(text, tree.root, choice=truth.choice, form=form).nodes[1:]:
            out["children"] += 1
            out["finished"] += bool(n.true_terminal)
            if n.terminal and n.true_terminal:
                out["claimed_finished"] += 1
            elif n.terminal:
                out["claimed_not_finished_board_" + ("right" if n.state_correct == 1 else "wrong")] += 1
            elif n.true_terminal:
                out["finished_not_claimed"] += 1
    return out


def full_child_blocks(texts, game: str) -> dict:
    """Full child form: of every child block the model wrote (``[%prev_state]``, ``[%prev_action]``,
    ``[%state]``), how many %prev_state lines are a valid state, how many are the root's (the prompt's)
    board, and how many %state lines are the block's own %prev_state after its own %prev_action (the
    transition step, checked by mavgame.mav.parse against the block's input lines)."""
    from .. import mav
    hdr = f"<mav game={game}> %prev_state %prev_action %state %top_all %best_action </mav>\n"
    n = valid = root_copy = step = 0
    for text in texts:
        lines = text.splitlines()
        root = lines[2][len("[%state "):] if len(lines) > 2 else ""
        for j, ln in enumerate(lines[:-3]):
            if not ln.startswith("Evaluation for node: <root ") or not lines[j + 1].startswith("[%prev_state "):
                continue
            n += 1
            root_copy += lines[j + 1][len("[%prev_state "):] == root
            r = mav.parse(game, hdr + "\n".join(lines[j + 1:j + 4]) + "\n")
            valid += bool(r.prev.valid)
            step += bool(r.cur.correct)
    return {"blocks": n, "prev_state_valid": valid, "prev_state_is_root": root_copy, "state_is_own_step": step}


def after_state_probe(model, store, n: int, batch_size: int) -> dict:
    """Next-state accuracy of the first ``n`` positions asked for the state after their best action, and of
    those with a previous position asked in the transition form (mavgame.mav.metrics)."""
    from .. import _core, mav
    out = {}
    recs = list(store)[:n]
    for name, cmds in (("after_best", "%state %top_all %best_action %state"),
                       ("transition", "%prev_state %prev_action %state %top_all %best_action")):
        prompts, states = [], []
        for r in recs:
            st = _core.State(store.game, r["state"], 0, 0)
            if name == "transition":
                if r.get("prev_state") is None:
                    continue
                prev = _core.State(store.game, r["prev_state"], 0, 0)
                prompts.append(mav.prompt(st, cmds, prev_state=prev, prev_action=r["prev_action"]))
            else:
                prompts.append(mav.prompt(st, cmds))
            states.append(st)
        outs = model.generate(prompts, batch_size=batch_size)
        m = mav.metrics(store.game, [p + o.text for p, o in zip(prompts, outs)], states)
        out[name] = {"prompts": len(prompts), "next_state_accuracy": float(m["next_state_accuracy"]),
                     "best_action_legal": float(m["best_action_legal"])}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.mav_is_eval",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("model", help="an exported MAV(-IS) model")
    ap.add_argument("--trees", required=True, help="a search-tree set (the val split of --search-data)")
    ap.add_argument("--shapes", default="2x1,3x1", help="trace shapes BxD ('': none, only --after)")
    ap.add_argument("--n", type=int, default=150, help="the first N trees")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--show", type=int, default=0, help="print this many traces of each shape beside the truth")
    ap.add_argument("--show-failed", type=int, default=0,
                    help="also print this many traces of each shape that the parser reports issues in")
    ap.add_argument("--json", default="", help="write the report here")
    ap.add_argument("--copy-prev", action="store_true",
                    help="generate with every %%prev_state line copied from the parent's written %%state")
    ap.add_argument("--copy-names", action="store_true",
                    help="generate with the node names the Expand lines determine (vocabulary v2)")
    ap.add_argument("--form", choices=["short", "full"], default=None,
                    help="child form of the traces (default: the model's trace_form, short for an old model)")
    ap.add_argument("--after", default="", help="also: a MAV position set (val split) whose first --n positions "
                    "are asked '%%state %%top_all %%best_action %%state' (the state after the best action, which "
                    "--p-after trains): its accuracy and the transition form's next-state accuracy")
    ap.add_argument("--greedy", action="append", default=[], metavar="MODEL",
                    help="also: how often the searchless MAV agent's move (mav, and mav:mirror=1 where the game "
                         "has a mirror) is a best move at the same roots, for this model ('self': the model "
                         "above; repeatable)")
    args = ap.parse_args()
    model = MAVModel.load(args.model, threads=args.threads)
    store = PositionStore(args.trees)
    recs = list(store)[:args.n]
    shapes = parse_shapes(args.shapes) if args.shapes else []  # "": only the --after probe
    texts: dict = {}
    rep = evaluate_trace_records(model, store.game, recs, shapes, batch_size=args.batch_size, texts=texts,
                                 copy_prev=args.copy_prev, copy_names=args.copy_names,
                                 form=args.form)
    form = rep.get("form", args.form or model.trace_form)
    print(f"child form: {form}")
    keys = [f"{b}x{d}" for b, d in shapes if f"{b}x{d}" in rep]
    for k in keys:
        b, d = (int(x) for x in k.split("x"))
        roots = [record_tree(store.game, r).root for r in recs]
        rep[k]["raw_child_states"] = raw_child_states(texts[k], [t for t, r in zip(roots, recs)
                                                                 if r.get("tree_breadth", 0) >= b
                                                                 and r.get("tree_depth", 0) >= d])
    print("| check | " + " | ".join(keys) + " |")
    print("| --- |" + " --- |" * len(keys))
    for k in TRACE_METRICS:
        print(f"| {k} | " + " | ".join(f"{rep[s][k]:.3f}" for s in keys) + " |")
    for k in ("final_optimal", "mean_choice_optimal"):      # the move played, against the engine's root values
        print(f"| {k} | " + " | ".join(f"{rep[s][k]:.3f}" for s in keys) + " |")
    if form == "full":
        print("| child %prev lines right | " + " | ".join(f"{rep[s]['prev_agrees']:.3f}" for s in keys) + " |")
    print("| mean tokens (true) | " + " | ".join(f"{rep[s]['mean_tokens']:.0f} ({rep[s]['true_mean_tokens']:.0f})"
                                                for s in keys) + " |")
    for k in CHILD_STATE_KINDS + ("nodes", "other_mean_diff_chars", "other_mover_right"):
        print(f"| child states: {k} | " + " | ".join(f"{rep[s]['child_states'][k]:.3g}" for s in keys) + " |")
    if form == "full":
        for k in keys:
            rep[k]["full_child_blocks"] = full_child_blocks(texts[k], store.game)
        for k in ("blocks", "prev_state_valid", "prev_state_is_root", "state_is_own_step"):
            print(f"| child blocks: {k} | " + " | ".join(str(rep[s]["full_child_blocks"][k]) for s in keys) + " |")
    shape_trees = {}  # the trees each shape's traces were asked for (those deep and broad enough), in order
    for k in keys:
        b, d = (int(x) for x in k.split("x"))
        shape_trees[k] = [record_tree(store.game, r) for r in recs
                          if r.get("tree_breadth", 0) >= b and r.get("tree_depth", 0) >= d]
        rep[k]["finished_claims"] = finished_claims(texts[k], shape_trees[k], b, d, form)
    for k in ("children", "finished", "claimed_finished", "claimed_not_finished_board_right",
              "claimed_not_finished_board_wrong", "finished_not_claimed"):
        print(f"| children finished: {k} | " + " | ".join(str(rep[s]["finished_claims"][k]) for s in keys) + " |")
    for k in ("children", "true_length", "diff_chars_true", "diff_chars_root", "extra_stones"):
        print(f"| child %state lines: {k} | " + " | ".join(f"{rep[s]['raw_child_states'][k]:.3g}" for s in keys)
              + " |")
    for s in keys:
        b, d = (int(x) for x in s.split("x"))
        shown = failed = 0
        for i in range(len(texts[s])):
            if shown >= args.show and failed >= args.show_failed:
                break
            tree = shape_trees[s][i]
            truth = write_trace(tree, b, d, form)
            res = parse_trace(texts[s][i], tree.root, choice=truth.choice, form=form)
            if shown < args.show:
                shown += 1
            elif res.errors and failed < args.show_failed:
                failed += 1
            else:
                continue
            print(f"\n=== {s} tree {i}: model (left) | truth (right); issues: {res.errors[:3]}")
            got, want = texts[s][i].splitlines(), truth.text.splitlines()
            for j in range(max(len(got), len(want))):
                g = got[j] if j < len(got) else ""
                w = want[j] if j < len(want) else ""
                print(f"{'  ' if g == w else '!='} {g:<62} | {w}")
    if args.after:
        rep["after_state"] = after_state_probe(model, PositionStore(args.after), args.n, args.batch_size)
        print("\n" + json.dumps(rep["after_state"]))
    if args.greedy:
        rep["greedy"] = greedy_optimal(args.greedy, model, store.game, recs, args.threads)
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1, sort_keys=True))
    return 0


def greedy_optimal(paths, model, game, recs, threads):
    """{model path: {agent name: rate}}: the searchless agent's move at each tree's root, against the root's
    engine values (the same roots as the traces' ``final_optimal``), printed."""
    from ..agents.mav import MAVGreedyAgent
    from ..datasets.symmetry import mirror_games
    roots = [record_tree(game, r) for r in recs]
    out = {}
    for path in paths:
        m = model if path == "self" else MAVModel.load(path, threads=threads)
        out[path] = {}
        for mirror in ((False, True) if game in mirror_games() else (False,)):
            agent = MAVGreedyAgent(m, mirror=mirror)
            ok = []
            for t in roots:
                good = root_best_actions(t)
                if not good:
                    continue
                mv, _, _ = agent.decide(t.root)
                ok.append(mv is not None and int(t.root.parse_move(mv)) in good)
            out[path][agent.name] = float(np.mean(ok)) if ok else float("nan")
            print(f"searchless {agent.name} ({path}): best move at {len(ok)} roots {out[path][agent.name]:.3f}")
    return out


if __name__ == "__main__":
    sys.exit(main())
