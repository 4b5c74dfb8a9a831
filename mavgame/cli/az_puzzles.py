"""``mavgame az-puzzles``: generate puzzle suites with known solutions and score agents and AZdb teams
on them with the paper's 0/1 scoring (:mod:`mavgame.az.puzzles`)::

    mavgame az-puzzles generate --game connect_four --count 60 --plain-sims 200 --out c4.csv
    mavgame az-puzzles generate --game chess --count 20 --depth 10 --out chess.csv
    mavgame az-puzzles score --puzzles c4.csv --team runs/team/checkpoint.pt --sims 100 \\
        "az:checkpoint=runs/az/checkpoint.pt,sims=100" --json scores.json
    mavgame az-puzzles score --puzzles c4.csv --team runs/s1/checkpoint.pt,runs/s2/checkpoint.pt --sims 100

``--team`` is one AZdb checkpoint, or several single AlphaZero checkpoints separated by commas: a team of
separate networks (:class:`mavgame.az.checkpoint_team.CheckpointTeam`, the homogeneous-team control),
scored with the same max-over-latents and rules.  ``--rewards`` sets an AZdb team's players' search
value: ``path`` (the paper's: intrinsic rewards summed from the root to the leaf and v_d, as in
self-play; the default), ``vd`` or ``extrinsic`` (v alone).
"""
from __future__ import annotations

import argparse
import json

DESCRIPTION = ('Generate Connect Four (solver-verified, missed by a plain search) or chess (Stockfish-verified '
               'only-move) puzzles; score agents and AZdb teams (per player, max-over-latents, sub-additive '
               "rules) on them or on a user's CSV / EPD suite. See docs/alphazero.md.")


__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="puzzle_command", required=True)
    g = sub.add_parser("generate", help="generate a puzzle suite (CSV)")
    g.add_argument("--game", default="connect_four", choices=("connect_four", "chess"))
    g.add_argument("--count", type=int, default=50, help="puzzles (default 50)")
    g.add_argument("--out", required=True, help="CSV file to write")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--plain-sims", type=int, default=200,
                   help="connect_four: keep only puzzles that mcts:sims=N misses (default 200)")
    g.add_argument("--min-plies", type=int, default=12, help="connect_four: random plies, at least (default 12)")
    g.add_argument("--max-plies", type=int, default=26, help="connect_four: random plies, at most (default 26)")
    g.add_argument("--max-seconds", type=float, default=0.5, help="connect_four: solver time per position")
    g.add_argument("--depth", type=int, default=10, help="chess: Stockfish verification depth (default 10)")
    g.add_argument("--margin", type=int, default=200, help="chess: centipawns between best and second (default 200)")
    g.add_argument("--engine", default="stockfish", help="chess: the UCI engine (default stockfish on PATH)")
    g.add_argument("--no-progress", action="store_true")
    s = sub.add_parser("score", help="solve rates of agents and of an AZdb team on a suite (CSV or EPD)")
    s.add_argument("--puzzles", required=True, help="CSV (position,solutions[,id]) or EPD file")
    s.add_argument("--game", default=None, help="the game of a CSV without a position:<game> header")
    s.add_argument("agents", nargs="*", help="agent specs (as for match)")
    s.add_argument("--team", default=None,
                   help="an AZdb checkpoint, or single AlphaZero checkpoints separated by commas (a team of "
                        "separate networks): per player, max-over-latents and the rules")
    s.add_argument("--sims", type=int, default=100, help="--team: simulations per player (default 100)")
    s.add_argument("--rewards", default=None, choices=("path", "vd", "extrinsic"),
                   help="--team (an AZdb checkpoint): the players' search value: path (the paper's: intrinsic "
                        "rewards summed root to leaf and v_d; default), vd (v_d only), extrinsic (v only)")
    s.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    s.add_argument("--json", default=None, help="write the scores (per puzzle) to this JSON file")
    s.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from ..az import puzzles as pz
    if args.puzzle_command == "generate":
        if args.game == "connect_four":
            ps = pz.generate_connect_four(args.count, min_plies=args.min_plies, max_plies=args.max_plies,
                                          plain_sims=args.plain_sims, seed=args.seed, max_seconds=args.max_seconds,
                                          progress=not args.no_progress)
        else:
            ps = pz.generate_chess(args.count, depth=args.depth, margin=args.margin, seed=args.seed,
                                   engine=args.engine, progress=not args.no_progress)
        pz.save_puzzles(ps, args.out)
        print(f"{len(ps)} {args.game} puzzles: {args.out}")
        return 0
    ps = pz.load_puzzles(args.puzzles, args.game)
    if args.threads:
        import torch
        torch.set_num_threads(int(args.threads))
    out = {"puzzles": len(ps), "file": args.puzzles}
    from ..agents import make_agent
    for spec in args.agents:
        sc = pz.score_agent(make_agent(spec), ps, progress=not args.no_progress)
        out[spec] = sc.tolist()
        print(f"{spec}: {int(sc.sum())}/{len(ps)} ({100.0 * sc.mean():.1f}%)")
    if args.team:
        from ..az.checkpoint_team import make_team
        team = make_team(args.team, args.sims, rewards=args.rewards)
        if ps and team.game != ps[0].game:
            raise ValueError(f"the team plays {team.game}, the puzzles of {args.puzzles!r} are {ps[0].game}")
        res = pz.score_team(team, ps, progress=not args.no_progress)
        for k, v in res.items():
            out[f"team:{k}"] = v.tolist()
            if not k.startswith("chosen_") and k != "moves":
                print(f"team {k}: {int(v.sum())}/{len(ps)} ({100.0 * v.mean():.1f}%)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f)
    return 0
