"""A MAV position set with the children of search trees added: the positions a MAV-IS trace evaluates.

    python experiments/2026-11-27-c4-mav-is-full-form/tree_children_positions.py --positions runs/c4data --trees runs/c4trees --out runs/c4data-tn

Writes OUT/train: every record of POSITIONS/train, then one record per non-root node of the trees of
TREES/train (its state, its parent's state and move as the transition, its annotated values and best move,
or for a finished game no values and its result), and OUT/val: a copy of POSITIONS/val. A node whose state
occurs in POSITIONS/val or anywhere in TREES/val (roots and their nodes) is left out, so that nothing held
out reaches training. Why (experiments/2026-11-27-c4-mav-is-full-form, "A longer fine-tune in the full
form"): a MAV-IS model writes each child's
board right and then often declares the game over when it is not; in the traces, children are often finished
games, while the MAV share of training has one finished position per game.
"""
import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mavgame.datasets.records import _new_state  # noqa: E402
from mavgame.datasets.store import PositionStore, PositionWriter  # noqa: E402


def node_records(rec, game):
    """(record, is_terminal) of every non-root node of a tree record."""
    states = []
    for i, (parent, move, values, best) in enumerate(rec["tree"]):
        if i == 0:
            states.append(_new_state(game, 0, rec["state"]))
            continue
        prev = states[parent]
        st = prev.copy()
        st.push(move)
        states.append(st)
        r = {"state": st.text(), "prev_state": prev.text(), "prev_action": move, "ply": st.ply}
        if values is None:
            r.update(values={}, best=None, result=st.result())
        else:
            r.update(values=values, best=best, result="*")
        yield r, values is None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", required=True, help="a MAV position set (train and val)")
    ap.add_argument("--trees", required=True, help="a search-tree set (train and val) made from it")
    ap.add_argument("--out", required=True, help="the new position set")
    args = ap.parse_args()
    pos, trees = Path(args.positions), Path(args.trees)
    out = Path(args.out)
    tstore = PositionStore(trees / "train")
    game = tstore.game
    held_out = {r["state"] for r in PositionStore(pos / "val")}
    for r in PositionStore(trees / "val"):
        held_out.add(r["state"])
        held_out.update(n["state"] for n, _ in node_records(r, game))
    seen, added, terminal, dropped = set(), 0, 0, 0
    with PositionWriter(out, game, val_fraction=0.0, info={"source": [str(pos), str(trees)]}) as w:
        for r in PositionStore(pos / "train"):
            seen.add(r["state"])
            w.add(r)
        for rec in tstore:
            for r, term in node_records(rec, game):
                if r["state"] in held_out:
                    dropped += 1
                elif r["state"] not in seen:
                    seen.add(r["state"])
                    w.add(r)
                    added += 1
                    terminal += term
    shutil.rmtree(out / "val")
    shutil.copytree(pos / "val", out / "val")
    print(f"{out}: the {len(seen) - added} positions of {pos}/train and {added} tree nodes ({terminal} finished "
          f"games); {dropped} nodes left out (held out); val copied from {pos}/val")
    return 0


if __name__ == "__main__":
    sys.exit(main())
