"""Internal search (MAV-IS) as the MAV paper evaluated it (section 5.4; docs/model.md "Internal search"): Elo of
`mav_is` agents at several (breadth, depth) budgets against the average prompt + response tokens a move costs,
in one league with the searchless MAV, MAV-MCTS at several budgets, the basic MCTS (anchored at 0, as the
paper's Table 1) and the perfect player (Connect Four).

    python bench/mav_is_league.py --out runs/mav_is_league          # the shipped MAV-IS (mavgame/data)
    python bench/mav_is_league.py --model M --shapes 1x1,2x1,3x1,4x1,2x2 --mcts 50,200 --openings 40 --matchups 120

Agents (names in the tables):
  mcts-100        uct:sims=100                        basic MCTS (uniform prior, random rollouts), Elo 0
  mav             mav:model=M                         the model alone, one MAV call a move
  mav-is-BxD      mav_is:breadth=B,depth=D,model=M    the model's own linearized minimax tree of that shape
                  (with --copy-prev: copy_prev=1, the decoder writes the %prev_state copies;
                  with --copy-names: copy_names=1, it writes the node names too)
  mav-mcts-N      mav_mcts:sims=N,batch=16,model=M    external search with the same model
  perfect         perfect                             the solver (for scale; --no-perfect leaves it out)
--mav-model gives the searchless MAV and MAV-MCTS another model (default: the MAV-IS model itself, which
also answers MAV prompts: the paper compares the fine-tuned model's two uses).

Schedule: the paper's (--matchups random match-ups, one random --opening-plies opening each, both colours);
the store OUT/league.sqlite resumes. --gauntlet NAME instead: every other agent plays NAME alone, from each of
the --openings with both colours (the same openings for every agent), and Elo is anchored at NAME = 0, so each
row is that agent's head-to-head rating against NAME (e.g. --gauntlet mav: each search budget against the
same model's searchless answers). Token cost per move: on --token-positions positions drawn from the
league's games (the mover's view), the mean prompt + response tokens of each MAV-IS shape and of a MAV call
(the model's own tokenizer); for MAV-MCTS, simulations x the MAV call's tokens (every simulation is one
model call). Also per shape: the share of traces of the right shape and of traces whose final move is
legal (the others fall back to MAV). OUT/results.json holds the tables, OUT/elo_tokens.png the plot.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.datasets import search_data  # noqa: E402
from mavgame.agents.mav import PLAIN  # noqa: E402
from mavgame.model.inference import shipped_model_path  # noqa: E402
from mavgame.play.league import League  # noqa: E402
from mavgame.play.openings import random_openings  # noqa: E402


def parse_shapes(text: str):
    """--shapes through the training's own parser (mavgame.datasets.search_data.parse_shapes); '' for none."""
    if not text.strip():
        return []
    try:
        return search_data.parse_shapes(text)
    except ValueError as e:
        raise SystemExit(f"--shapes: {e}") from None


def sample_positions(games, n: int, seed: int):
    """n non-terminal positions of the league's games (uniformly over games, then plies)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(20 * n):
        if len(out) >= n or not games:
            break
        g = games[int(rng.integers(len(games)))]
        moves = list(g.opening_moves) + list(g.moves)
        if not moves:
            continue
        k = int(rng.integers(len(moves)))
        st = mavgame.State(g.game, g.start, g.board_size, g.flags)
        for m in moves[:k]:
            st.push(m)
        if not st.is_terminal():
            out.append(st)
    return out


def token_costs(model, states, shapes, form, copy_prev=False, copy_names=False):
    """{agent name: {"tokens": mean prompt + response tokens, ...}} measured on `states`."""
    from mavgame.mav.search_trace import parse_trace
    from mavgame.model.mav_is import generate_traces

    tok = model.tokenizer
    costs = {}
    prompts = [mav.prompt(s, PLAIN) for s in states]
    outs = model.generate(prompts, batch_size=32)
    costs["mav"] = {"tokens": float(np.mean([len(tok.encode(p)) + len(o.ids) for p, o in zip(prompts, outs)]))}
    for b, d in shapes:
        gens = generate_traces(model, states, b, d, copy_prev=copy_prev, copy_names=copy_names)
        res = [parse_trace(p + o.text, s, form=form) for s, (p, o) in zip(states, gens)]
        costs[f"mav-is-{b}x{d}"] = {
            "tokens": float(np.mean([len(tok.encode(p)) + len(o.ids) for p, o in gens])),
            "response_tokens": float(np.mean([len(o.ids) for _, o in gens])),
            "shape_ok": float(np.mean([r.shape_ok for r in res])),
            "final_legal": float(np.mean([r.final_legal for r in res])),
        }
    return costs


def plot(rows, path: Path, title: str, anchor: str = "mcts-100") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, marker, color in (("mav-is", "o", "C0"), ("mav-mcts", "s", "C1"), ("mav", "D", "C2")):
        pts = [r for r in rows if r.get("tokens")
               and (r["agent"] == kind if kind == "mav" else r["agent"].startswith(kind + "-"))]
        if not pts:
            continue
        pts.sort(key=lambda r: r["tokens"])
        x = [r["tokens"] for r in pts]
        y = [r["elo"] for r in pts]
        err = [[r["elo"] - r["low"] for r in pts], [r["high"] - r["elo"] for r in pts]]
        ax.errorbar(x, y, yerr=err, marker=marker, color=color, capsize=3, linestyle="-" if kind == "mav-mcts" else "",
                    label={"mav-is": "MAV-IS (breadth x depth)", "mav-mcts": "MAV-MCTS (simulations)",
                           "mav": "MAV (searchless)"}[kind])
        for r in pts:
            label = r["agent"].replace("mav-is-", "").replace("mav-mcts-", "")
            if "final_legal" in r:   # the share of moves that came from a usable trace (the rest: MAV)
                label += f" ({100 * r['final_legal']:.0f}% traces used)"
            ax.annotate(label, (r["tokens"], r["elo"]), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    for r in rows:
        if r["agent"] in ("mcts-100", "perfect"):
            ax.axhline(r["elo"], color="grey", linestyle=":", linewidth=1)
            ax.text(0.01, r["elo"], r["agent"], transform=ax.get_yaxis_transform(), fontsize=8, color="grey",
                    va="bottom")
    ax.set_xlabel("prompt + response tokens a move (MAV-MCTS: simulations x a MAV call)")
    ax.set_ylabel("Elo (basic MCTS, 100 simulations = 0)" if anchor == "mcts-100" else f"Elo ({anchor} = 0)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None,
                    help="the MAV-IS model (exported .safetensors; default: the shipped Connect Four MAV-IS)")
    ap.add_argument("--mav-model", default=None, help="model of the searchless MAV and MAV-MCTS (default: --model)")
    ap.add_argument("--out", default="mav_is_league", help="folder for the store, results.json and the plot")
    ap.add_argument("--shapes", default="1x1,2x1,3x1,4x1,2x2", help="MAV-IS budgets, BREADTHxDEPTH, comma-separated")
    ap.add_argument("--mcts", default="50,200", help="MAV-MCTS simulations, comma-separated ('' for none)")
    ap.add_argument("--no-perfect", action="store_true", help="leave the perfect player out")
    ap.add_argument("--copy-prev", action="store_true",
                    help="MAV-IS agents with copy_prev=1 (the decoder writes each %%prev_state copy)")
    ap.add_argument("--copy-names", action="store_true",
                    help="MAV-IS agents with copy_names=1 (the decoder writes the node names the format "
                         "determines; vocabulary v2 models)")
    ap.add_argument("--openings", type=int, default=100, help="random openings to draw match-ups' openings from")
    ap.add_argument("--opening-plies", type=int, default=4)
    ap.add_argument("--matchups", type=int, default=150, help="random match-ups, each both colours (the paper's)")
    ap.add_argument("--gauntlet", default=None, metavar="NAME",
                    help="every other agent plays NAME only, on every opening, both colours; Elo: NAME = 0")
    ap.add_argument("--token-positions", type=int, default=100, help="positions for the token costs")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args()
    if args.model is None:
        args.model = str(shipped_model_path("connect_four", "mav_is"))
    shapes = parse_shapes(args.shapes)
    sims = [int(x) for x in args.mcts.split(",") if x.strip()]
    mav_model = args.mav_model or args.model
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    agents = {"mcts-100": "uct:sims=100", "mav": f"mav:model={mav_model}"}
    for b, d in shapes:
        agents[f"mav-is-{b}x{d}"] = f"mav_is:breadth={b},depth={d},model={args.model}" + \
            (",copy_prev=1" if args.copy_prev else "") + (",copy_names=1" if args.copy_names else "")
    for n in sims:
        agents[f"mav-mcts-{n}"] = f"mav_mcts:sims={n},batch=16,model={mav_model}"
    if not args.no_perfect:
        agents["perfect"] = "perfect"
    anchor = "mcts-100"
    pairs, matchups = None, args.matchups
    if args.gauntlet is not None:
        if args.gauntlet not in agents:
            raise SystemExit(f"--gauntlet {args.gauntlet!r}: not an agent of this league ({', '.join(agents)})")
        anchor, matchups = args.gauntlet, None
        pairs = [(a, anchor) for a in agents if a != anchor]
    openings = random_openings("connect_four", args.opening_plies, args.openings, seed=args.seed)
    t0 = time.perf_counter()
    lg = League(agents, "connect_four", openings, path=str(out / "league.sqlite"), workers=args.workers,
                seed=args.seed, matchups=matchups, pairs=pairs,
                event="MAV-IS gauntlet" if args.gauntlet else "MAV-IS league")
    res = lg.run(progress=not args.no_progress)
    seconds = round(time.perf_counter() - t0, 1)
    print(res.matrix_table())
    elo = res.elo(anchor=(anchor, 0.0))
    print()
    print(elo.table())

    from mavgame.agents.mav import get_model
    model = get_model(args.model, "auto")
    states = sample_positions(res.games, args.token_positions, args.seed)
    form = getattr(model, "trace_form", "short")
    t1 = time.perf_counter()
    costs = token_costs(model, states, shapes, form, copy_prev=args.copy_prev, copy_names=args.copy_names)
    if mav_model != args.model:
        costs["mav"] = token_costs(get_model(mav_model, "auto"), states, [], form)["mav"]
    for n in sims:
        costs[f"mav-mcts-{n}"] = {"tokens": n * costs["mav"]["tokens"]}
    rows = []
    for i, name in enumerate(elo.names):
        row = {"agent": name, "spec": agents.get(name), "elo": float(elo.elo[i]), "low": float(elo.low[i]),
               "high": float(elo.high[i]), "games": int(elo.games[i])}
        row.update(costs.get(name, {}))
        rows.append(row)
    order = {n: k for k, n in enumerate(agents)}
    rows.sort(key=lambda r: order.get(r["agent"], 99))
    print(f"\ntoken costs on {len(states)} positions of the league's games ({time.perf_counter() - t1:.0f} s):")
    print(f"{'agent':<16}{'Elo':>7}{'95% interval':>18}{'games':>7}{'tokens/move':>13}{'shape ok':>10}{'legal':>8}")
    for r in rows:
        tk = f"{r['tokens']:.0f}" if "tokens" in r else "-"
        so = f"{r['shape_ok']:.3f}" if "shape_ok" in r else "-"
        fl = f"{r['final_legal']:.3f}" if "final_legal" in r else "-"
        ci = f"[{r['low']:.0f}, {r['high']:.0f}]"
        print(f"{r['agent']:<16}{r['elo']:>7.0f}{ci:>18}{r['games']:>7}{tk:>13}{so:>10}{fl:>8}")
    (out / "results.json").write_text(json.dumps({"args": vars(args), "agents": agents, "anchor": anchor, "rows": rows,
                                                  "games": len(res), "league_seconds": seconds,
                                                  "token_positions": len(states), "form": form}, indent=1))
    title = (f"MAV-IS against {anchor}, Connect Four ({len(res)} games)" if args.gauntlet
             else f"MAV-IS league, Connect Four ({len(res)} games)")
    plot(rows, out / "elo_tokens.png", title, anchor)
    print(f"\nwrote {out}/results.json and {out}/elo_tokens.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
