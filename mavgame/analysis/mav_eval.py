"""The paper's metrics of a MAV model on annotated positions, overall and per game phase (issue 13's bars).

    python -m mavgame.analysis.mav_eval MODEL --data c4data-full/val [--n 2000] [--exclude DIR ...] [--json out.json]

Every position is asked in the plain form and, with its predecessor, in the transition form
(`mavgame.model.inference.evaluate_records`, grouped greedy decoding). Printed per phase (the game's
`GameInfo.phases`): prompts, best move optimal (by the annotation), value error, legal best action,
`%top_all` precision / recall, next state, and the finished-game rows: finished prompts recognised and live
prompts claimed finished.

``--greedy`` adds the move the searchless agent plays (`mavgame.agents.mav.MAVGreedyAgent`, mean and max
scoring, and with ``mirror=1`` where the game has a mirror symmetry): how often it is a best move by the
annotation, per phase, on the live positions.

``--lookahead`` adds a one-ply search over the model's own values: each legal move scored by the model's
answer for the position after it (the best of that position's listed mean values, for its mover, flipped; a
finished game by its result), as a two-ply minimax over the top 1, 2, 4 moves by the root's values and over
all of them (top 1 is the highest root value, the greedy move without the agent's tie rule). How often that
move is a best move: what a depth-1 search could add with values of this quality.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.mav_eval",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="an exported .safetensors MAV model")
    ap.add_argument("--data", required=True, help="a position set folder (a split such as DIR/val)")
    ap.add_argument("--exclude", action="append", default=[], metavar="DIR",
                    help="leave out positions that also occur in this position set (repeatable; as the trainer's "
                         "out-of-distribution report leaves out the training and validation positions)")
    ap.add_argument("--n", type=int, default=0, help="first N positions, after --exclude (0: all)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--json", default=None, help="also write the metrics here")
    ap.add_argument("--greedy", action="store_true",
                    help="also: how often the searchless agent's move is a best move (mean / max scoring, "
                         "with and without mirror averaging)")
    ap.add_argument("--lookahead", action="store_true",
                    help="also: how often a two-ply minimax over the model's own values picks a best move")
    args = ap.parse_args(argv)
    from ..model.inference import MAVModel, evaluate_records
    from ..datasets.store import PositionStore
    model = MAVModel.load(args.model)
    store = PositionStore(args.data)
    seen = {r["state"] for d in args.exclude for r in PositionStore(d)}
    recs = [r for r in store if r["state"] not in seen]
    recs = recs[:args.n] if args.n > 0 else recs
    m = evaluate_records(model, model.game, recs, batch_size=args.batch_size)

    def finished_prompts(rs):
        return sum((1 + (r.get("prev_state") is not None)) for r in rs if r.get("result", "*") != "*")

    rows = [("all", m, recs)]
    for name, pm in (m.get("by_phase") or {}).items():
        lo, hi = next((a, b) for n, a, b in _phases(model.game) if n == name)
        rows.append((name, pm, [r for r in recs if lo <= int(r["ply"]) <= hi]))
    cols = ("phase", "prompts", "optimal", "mae mean", "legal best", "top prec", "top rec", "next state",
            "finished recognised", "live claimed finished")
    print(" | ".join(cols))
    for name, pm, rs in rows:
        fin = finished_prompts(rs)
        claimed = pm["outcome_total"] - fin
        print(" | ".join([name, str(pm["examples"]), f"{pm['best_action_optimal']:.3f}", f"{pm['value_mae_mean']:.3f}",
                          f"{pm['best_action_legal']:.3f}", f"{pm['top_all_precision']:.3f}",
                          f"{pm['top_all_recall']:.3f}", f"{pm['next_state_accuracy']:.3f}",
                          f"{pm['outcome_correct']}/{fin}", f"{claimed}/{pm['examples'] - fin}"]))
    if args.greedy:
        m["greedy"] = greedy_table(model, recs)
    if args.lookahead:
        m["lookahead"] = lookahead_table(model, recs)
    if args.json:
        Path(args.json).write_text(json.dumps(m, sort_keys=True, indent=1))
    return 0


def greedy_table(model, recs):
    """{agent name: {phase: rate}}: how often MAVGreedyAgent's move has the annotation's best value, printed
    as a table (live annotated positions only)."""
    from .. import State
    from ..agents.mav import MAVGreedyAgent
    from ..datasets.symmetry import mirror_games
    game = model.game
    live = _live(recs)
    agents = [MAVGreedyAgent(model, scoring=sc, mirror=mi) for sc in ("mean", "max")
              for mi in ((False, True) if game in mirror_games() else (False,))]
    moves = {agent.name: [agent.decide(State(game, r["state"]))[0] for r in live] for agent in agents}
    return _best_move_table(game, live, "greedy move optimal", moves)


def _live(recs):
    """The live annotated positions."""
    return [r for r in recs if r.get("values") and r.get("result", "*") == "*"]


def _best_move_table(game, live, title, moves):
    """{row name: {phase: rate}} for ``moves`` ({row name: the move played in each of ``live``, None for
    none}): how often the move has the annotation's best value, overall and per phase; printed as a table."""
    from ..datasets.records import is_best_move
    phases = [("all", -1, 10 ** 9)]
    if all("ply" in r for r in live):
        phases += list(_phases(game))
    inside = [[lo <= int(r.get("ply", 0)) <= hi for r in live] for _, lo, hi in phases]
    totals = [sum(col) for col in inside]
    print(title + " | " + " | ".join(f"{n} ({t})" for (n, _, _), t in zip(phases, totals)))
    out = {}
    for name, played in moves.items():
        ok = [0] * len(phases)
        for j, (r, mv) in enumerate(zip(live, played)):
            good = is_best_move(r["values"], mv)
            for i in range(len(phases)):
                ok[i] += good and inside[i][j]
        out[name] = {n: ok[i] / totals[i] if totals[i] else float("nan") for i, (n, _, _) in enumerate(phases)}
        print(name + " | " + " | ".join(f"{out[name][n]:.3f}" for n, _, _ in phases))
    return out


LOOKAHEAD_BREADTHS = (1, 2, 4, 0)      # 0: every legal move


def lookahead_table(model, recs, breadths=LOOKAHEAD_BREADTHS, batch_size: int = 64):
    """{"top1" | "top2" | ... | "all": {phase: rate}}: how often a two-ply minimax over the model's own values
    picks a best move by the annotation (live annotated positions; printed as a table). The root's values
    and every child position's are the model's answers to the plain prompt, mean scored; a child's value
    for the root's mover is 1 - the best value listed for the child's mover (0.5 when it lists none); a
    finished child counts 1 (the mover has won) or 0.5 (a draw). The candidates are the top B moves by the
    root's values (ties kept in move order), or every legal move for B = 0."""
    from .. import State
    game = model.game
    live = _live(recs)
    roots = [State(game, r["state"]) for r in live]
    root_vals = [out.values("mean") for _, out in model.analyse(roots, batch_size=batch_size)]
    kids, where = [], []
    for i, s in enumerate(roots):
        for mv in s.legal_moves:
            c = s.copy()
            c.push(mv)
            if not c.is_terminal():
                kids.append(c)
                where.append((i, mv))
    child = {}
    for key, (_, out) in zip(where, model.analyse(kids, batch_size=batch_size)):
        v = out.values("mean")
        child[key] = 1.0 - max(v.values()) if v else 0.5

    def look(i, mv):
        if (i, mv) in child:
            return child[(i, mv)]
        c = roots[i].copy()
        c.push(mv)
        return 0.5 if State.result(c) == "1/2-1/2" else 1.0

    def choose(j, b):
        legal = roots[j].legal_moves
        cands = sorted(legal, key=lambda m: -root_vals[j].get(m, -1.0))[:b] if b else legal
        return cands[0] if b == 1 else max(cands, key=lambda m: look(j, m))
    moves = {(f"top{b}" if b else "all"): [choose(j, b) for j in range(len(live))] for b in breadths}
    return _best_move_table(game, live, "two-ply over", moves)


def _phases(game):
    from ..games import registry
    return registry.get(game).phases


if __name__ == "__main__":
    sys.exit(main())
