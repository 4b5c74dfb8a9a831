"""The IDP report's evaluation (shared/papers/002, tables 2 and 3; docs/policy.md): its pairings, played with
mavgame's league machinery, printed as the report's score tables beside its figures, with a maximum-likelihood
Elo table (confidence intervals) over all the games.

    python bench/idp_league.py --model shipped --out runs/idp_league          # the network shipped in the package
    python bench/idp_league.py --model runs/policy/policy.pt --out runs/idp_league
    python bench/idp_league.py --model P --openings 10 --rollouts 1,3 --rollout-openings 3 --rollout-plies 80

Agents (the report's names):
  Ours          policy:policy=MODEL              the network alone, one of its two best moves
  AB            alphabeta:depth=4                the baseline alpha-beta (piece values + piece-square tables)
  AB_prob       guided_ab:policy=MODEL,...       "AB with prob": threshold 0.001, max depth 8
                                                 (--guided-movetime / --guided-nodes cap a move)
  MCTS_k        policy_rollouts:policy=MODEL,games=k   k games a legal move (--rollout-plies: a rollout
                                                 still running counts as a draw)
  Uniform       policy:policy=uniform,top=218    a uniformly random legal move: what "better than uniform" means
Pairings: AB-Ours, AB_prob-AB, AB_prob-Ours and Ours-Uniform (Stockfish adjudication at --adjudicate cp, as two
policies rarely mate) on --openings shipped openings (both colours); each MCTS_k against Ours on
--rollout-openings openings (the report: 100 games a pairing).
Games are stored in OUT/*.sqlite: an interrupted run resumes. OUT/results.json holds the tables.
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame.play.league import League  # noqa: E402
from mavgame.play.openings import load_openings  # noqa: E402
from mavgame.play.results import LeagueResults  # noqa: E402

# The report's figures: score (%) of the row agent against the column agent (tables 2 and 3).
PAPER = {("Ours", "AB"): 68.0, ("AB_prob", "AB"): 73.5, ("AB_prob", "Ours"): 57.0,
         ("MCTS_3", "Ours"): 71.0, ("MCTS_5", "Ours"): 76.0, ("MCTS_10", "Ours"): 77.0, ("MCTS_40", "Ours"): 78.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True,
                    help="policy.pt (mavgame policy train / rl), an exported file, 'shipped', or 'uniform'")
    ap.add_argument("--out", default="idp_league", help="folder for the stores and results.json")
    ap.add_argument("--openings", type=int, default=50, help="shipped openings for the search pairings")
    ap.add_argument("--rollouts", default="3,5,10,40", help="games a legal move of the MCTS agents")
    ap.add_argument("--rollout-openings", default="50",
                    help="shipped openings for each MCTS k pairing: one number, or one per --rollouts entry")
    ap.add_argument("--rollout-plies", type=int, default=200, help="a rollout still running counts as a draw")
    ap.add_argument("--guided-movetime", type=float, default=0, help="ms a move for AB with prob (0: no cap)")
    ap.add_argument("--guided-nodes", type=int, default=0,
                    help="nodes a move for AB with prob (0: no cap); unlike --guided-movetime the same on any machine")
    ap.add_argument("--guided-batch", type=int, default=32)
    ap.add_argument("--depth", type=int, default=4, help="the baseline's depth")
    ap.add_argument("--max-plies", type=int, default=300, help="a game still running is a draw")
    ap.add_argument("--adjudicate", type=int, default=1000,
                    help="Ours-Uniform only: Stockfish ends a game at this margin (cp; 0: off), as two policies "
                    "rarely mate")
    ap.add_argument("--backend", default="native", choices=("native", "torch"),
                    help="where the network runs (native: mavgame._core.PolicyNet, C)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    m = args.model if args.model == "uniform" else f"{args.model},backend={args.backend}"
    guided = f"guided_ab:policy={m},threshold=0.001,depth=8,batch={args.guided_batch}"
    if args.guided_movetime:
        guided += f",movetime={args.guided_movetime:g}"
    if args.guided_nodes:
        guided += f",nodes={args.guided_nodes}"
    agents = {"Ours": f"policy:policy={m}", "AB": f"alphabeta:depth={args.depth}", "AB_prob": guided,
              "Uniform": "policy:policy=uniform,top=218"}
    ks = [int(k) for k in args.rollouts.split(",") if k.strip()]
    for k in ks:
        agents[f"MCTS_{k}"] = f"policy_rollouts:policy={m},games={k},max_plies={args.rollout_plies}"
    groups = [("search", [("Ours", "AB"), ("AB_prob", "AB"), ("AB_prob", "Ours")], args.openings, None),
              ("uniform", [("Ours", "Uniform")], args.openings, args.adjudicate or None)]
    ro = [int(x) for x in str(args.rollout_openings).split(",") if x.strip()]
    if len(ro) not in (1, len(ks)):
        ap.error(f"--rollout-openings needs one number or one per --rollouts entry ({len(ks)}), got {args.rollout_openings}")
    groups += [(f"mcts{k}", [(f"MCTS_{k}", "Ours")], ro[i] if len(ro) > 1 else ro[0], None) for i, k in enumerate(ks)]
    games, seconds = [], {}
    for tag, pairs, n_open, adjudicate in groups:
        if n_open < 1:
            continue
        names = sorted({a for p in pairs for a in p}, key=list(agents).index)
        t = time.perf_counter()
        lg = League({n: agents[n] for n in names}, "chess", load_openings("chess")[:n_open], pairs=pairs,
                    path=str(out / f"{tag}.sqlite"), workers=args.workers, max_plies=args.max_plies,
                    adjudicate=adjudicate, event=f"IDP league ({tag})")
        res = lg.run(progress=not args.no_progress)
        seconds[tag] = round(time.perf_counter() - t, 1)
        games.extend(res.games)
    names = [n for n in agents if any(n in (g.first, g.second) for g in games)]
    allres = LeagueResults(names, games, "chess", event="IDP league")
    allres.write_games(str(out / "games.pgn"))
    table = []
    print(f"{'row vs column':<28}{'W/D/L':>12}{'score %':>9}{'report %':>10}")
    for (a, b) in [p for _, ps, n, _ in groups if n > 0 for p in ps]:
        w, d, l = allres.wdl(a, b)
        sc = 100.0 * (w + 0.5 * d) / max(1, w + d + l)
        table.append({"row": a, "column": b, "wins": w, "draws": d, "losses": l, "score": sc,
                      "report": PAPER.get((a, b))})
        rep = f"{PAPER[(a, b)]:.1f}" if (a, b) in PAPER else "-"
        print(f"{a + ' vs ' + b:<28}{f'{w}/{d}/{l}':>12}{sc:>9.1f}{rep:>10}")
    print()
    elo = allres.elo(anchor=("Uniform", 0.0)) if "Uniform" in names else allres.elo()
    print(elo.table())
    (out / "results.json").write_text(json.dumps({
        "args": vars(args), "agents": agents, "pairings": table, "seconds": seconds,
        "elo": {n: {"elo": float(elo.elo[i]), "low": float(elo.low[i]), "high": float(elo.high[i]),
                    "games": int(elo.games[i])} for i, n in enumerate(elo.names)}}, indent=1))
    print(f"\nwrote {out}/results.json and {out}/games.pgn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
