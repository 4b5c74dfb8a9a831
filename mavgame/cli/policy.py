"""``mavgame policy``: train the IDP report's chess policy network from PGN (``train``), run its
reinforcement-learning stage (``rl``), measure its move-matching accuracy (``accuracy``) and export it for
the native engine (``export``) (docs/policy.md). The arguments are defined here without PyTorch; the work imports
:mod:`mavgame.policy.network` (which needs torch) when the command runs."""
from __future__ import annotations

import argparse
import json

from .options import DefaultsHelpFormatter

DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="policy_command", required=True)
    tr = sub.add_parser("train", help="supervised training on the moves of PGN games",
                        formatter_class=DefaultsHelpFormatter,
                        description="Train a policy network on the moves of PGN games (first moves skipped, "
                        "BCE over the legal moves, Adam), save OUT/policy.pt and OUT/metrics.json and print "
                        "the move-matching accuracy on held-out games. Resumable: the same command run again "
                        "continues OUT/train_state.pt.")
    tr.add_argument("--pgn", action="append", required=True, metavar="FILE", help="PGN file (repeatable)")
    tr.add_argument("--out", required=True, help="output directory")
    tr.add_argument("--steps", type=int, default=1000, help="optimiser steps (150,000 in the report)")
    tr.add_argument("--batch", type=int, default=100, help="positions a step (100 in the report)")
    tr.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    tr.add_argument("--skip-moves", type=int, default=10, help="skip positions of the first moves of each game")
    tr.add_argument("--val-fraction", type=float, default=0.1, help="share of the games held out")
    tr.add_argument("--max-games", type=int, default=0, help="read at most this many games (0: all)")
    tr.add_argument("--channels", type=int, default=256, help="convolution channels")
    tr.add_argument("--blocks", type=int, default=3, help="residual blocks")
    tr.add_argument("--head", choices=("pool", "conv"), default="pool", help="output head")
    tr.add_argument("--arch", choices=("residual", "plain", "dense"), default="residual",
                    help="the report's Table 1 variants: residual tower (its network), plain (no skip connections), "
                    "dense (4 dense layers of --hidden units); only residual exports to the native engine")
    tr.add_argument("--pool", type=int, choices=(1, 2, 4, 8), default=2,
                    help="max-pooling window of the pool head (4: the report's 'smaller pooling layer')")
    tr.add_argument("--inputs", choices=("planes", "signed", "values", "occupancy"), default="planes",
                    help="input representation (the report's section 3.1; docs/policy.md): the 41 planes, signed "
                    "(6 +-1 piece planes a position), values (+ a piece-value plane), occupancy (+ a plane of each "
                    "side's pieces)")
    tr.add_argument("--hidden", type=int, default=512, help="width of the dense arch's hidden layers")
    tr.add_argument("--loss", choices=("legal", "all"), default="legal",
                    help="BCE over the legal moves (the report's) or over all 1968 outputs (its Table 1 variant)")
    tr.add_argument("--eval-every", type=int, default=0,
                    help="steps between held-out accuracy / loss lines in OUT/train_log.jsonl (a multiple of "
                    "--log-every; 0: none)")
    tr.add_argument("--split-seed", type=int, default=None,
                    help="seed of the train / held-out split (default: --seed)")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--device", default="cpu", help="torch device")
    tr.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    tr.add_argument("--init", default=None, help="start from this network (policy.pt or exported file, e.g. "
                    "mavgame/data/policy_chess.safetensors; its shape replaces --channels/--blocks/--head)")
    tr.add_argument("--checkpoint-every", type=int, default=500, help="steps between states in OUT/train_state.pt")
    tr.add_argument("--max-seconds", type=float, default=0.0, help="stop cleanly after this long (0: no limit); "
                    "the same command continues")
    tr.add_argument("--fresh", action="store_true", help="start over instead of resuming OUT/train_state.pt")
    tr.add_argument("--log-every", type=int, default=100, help="steps a line of OUT/train_log.jsonl (mean loss)")
    tr.add_argument("--no-progress", action="store_true", help="no progress bars")
    ac = sub.add_parser("accuracy", help="move-matching accuracy of a trained policy on PGN games",
                        formatter_class=DefaultsHelpFormatter)
    ac.add_argument("--model", required=True, help="policy.pt written by `mavgame policy train`, an exported "
                    "file (native engine, no PyTorch) or 'shipped' (mavgame/data/policy_chess.safetensors)")
    ac.add_argument("--pgn", action="append", required=True, metavar="FILE", help="PGN file (repeatable)")
    ac.add_argument("--skip-moves", type=int, default=10,
                    help="skip positions of the first moves of each game (e.g. 4 after random 8-ply openings)")
    ac.add_argument("--max-games", type=int, default=0)
    ac.add_argument("--device", default="cpu")
    ac.add_argument("--by", choices=("none", "move", "phase"), default="none",
                    help="also by fullmove bins (--bins) or by phase (opening / middlegame / endgame), the "
                    "report's Figure 5")
    ac.add_argument("--bins", default="1,11,21,31,41,61",
                    help="fullmove bin edges for --by move (the last bin is open)")
    ac.add_argument("--out", default=None, help="also write the result as JSON to this file")
    ex = sub.add_parser("export", help="write a policy.pt as the native engine's file (safetensors; then no "
                        "PyTorch is needed to play with it)", formatter_class=DefaultsHelpFormatter)
    ex.add_argument("--model", required=True, help="policy.pt written by `mavgame policy train` / `rl`")
    ex.add_argument("--out", required=True, help="the exported file (e.g. policy.safetensors)")
    ex.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"),
                    help="weight type in the file (the engine computes in float32)")
    rl = sub.add_parser("rl", help="the report's reinforcement-learning stage (self-play from decisive games)",
                        formatter_class=DefaultsHelpFormatter,
                        description="Self-play from random positions of the decisive games of PGN files with the "
                        "report's reward table; the fixed opponent is replaced when the network beats it over "
                        "--opponent-games games; games over --max-plies plies are aborted. Resumable: run the "
                        "same command again to continue OUT/rl_state.pt (docs/policy.md).")
    rl.add_argument("--pgn", action="append", required=True, metavar="FILE", help="PGN file (repeatable)")
    rl.add_argument("--out", required=True, help="output directory (resumed if it holds rl_state.pt)")
    rl.add_argument("--init", default=None, help="starting network (policy.pt of `mavgame policy train`)")
    rl.add_argument("--channels", type=int, default=256, help="convolution channels (without --init)")
    rl.add_argument("--blocks", type=int, default=3, help="residual blocks (without --init)")
    rl.add_argument("--head", choices=("pool", "conv"), default=None,
                    help="output head (default: the init's; a different one keeps the tower and makes a new head)")
    rl.add_argument("--steps", type=int, default=100, help="steps in all (a resumed run goes on to this many)")
    rl.add_argument("--games", type=int, default=8, help="games a step, played together")
    rl.add_argument("--vs-opponent", type=float, default=0.5,
                    help="share of a step's games against the fixed opponent (the rest: the network against itself)")
    rl.add_argument("--opponent-games", type=int, default=200,
                    help="the opponent is replaced when beaten over this many games")
    rl.add_argument("--max-plies", type=int, default=350, help="plies after the start position before a game is aborted")
    rl.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate")
    rl.add_argument("--batch", type=int, default=100, help="positions an update")
    rl.add_argument("--table", choices=("human", "plain"), default="human",
                    help="reward table: the report's (uses the real game's result) or the one without it")
    rl.add_argument("--no-human-prefix", action="store_true",
                    help="do not train on the real game's moves before the start position")
    rl.add_argument("--mate-only", action="store_true", help="start only from games that end in checkmate")
    rl.add_argument("--max-seconds", type=float, default=0.0, help="stop (resumably) after this long (0: no limit)")
    rl.add_argument("--fresh", action="store_true", help="start again even if OUT holds a checkpoint")
    rl.add_argument("--seed", type=int, default=0)
    rl.add_argument("--device", default="cpu")
    rl.add_argument("--inference", default="auto", choices=("auto", "native", "torch"),
                    help="what plays the self-play moves (auto: the native engine on the CPU, torch elsewhere)")
    rl.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    rl.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from ..policy import network as P

    if getattr(args, "threads", 0):
        import torch
        torch.set_num_threads(args.threads)
    if args.policy_command == "train":
        cfg = P.PolicyConfig(channels=args.channels, blocks=args.blocks, head=args.head, arch=args.arch,
                             pool=args.pool, inputs=args.inputs, hidden=args.hidden)
        m = P.train_from_pgn(args.pgn, args.out, steps=args.steps, batch=args.batch, lr=args.lr,
                             skip_moves=args.skip_moves, val_fraction=args.val_fraction, max_games=args.max_games,
                             config=cfg, seed=args.seed, device=args.device, progress=not args.no_progress,
                             init=args.init, checkpoint_every=args.checkpoint_every, max_seconds=args.max_seconds,
                             fresh=args.fresh, log_every=args.log_every, loss=args.loss,
                             eval_every=args.eval_every, split_seed=args.split_seed)
        if "stopped_at" in m:
            print(f"stopped at step {m['stopped_at']} of {m['steps']} (--max-seconds); run the same command to "
                  f"continue {args.out}/train_state.pt")
            return 0
        print(f"games {m['games']} ({m['val_games']} held out), positions {m['train_positions']} train / "
              f"{m['val_positions']} held out")
        ci = m.get("val_accuracy_ci") or [float("nan")] * 2
        print(f"loss {m['first_loss']:.5f} -> {m['last_loss']:.5f}; move-matching accuracy: train "
              f"{m['train_accuracy']:.3f}, held out {m['val_accuracy']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
              + (f" (the --init network: {m['init_val_accuracy']:.3f})" if m.get("init") else ""))
        print(f"wrote {args.out}/policy.pt and {args.out}/metrics.json")
        return 0
    if args.policy_command == "rl":
        from ..policy import rl as R
        settings = R.RLSettings(steps=args.steps, games=args.games, vs_opponent=args.vs_opponent,
                                opponent_games=args.opponent_games, max_plies=args.max_plies, lr=args.lr,
                                batch=args.batch, table=args.table, human_prefix=not args.no_human_prefix,
                                mate_only=args.mate_only, seed=args.seed)
        cfg = P.PolicyConfig(channels=args.channels, blocks=args.blocks, head=args.head or "pool")
        r = R.run_rl(args.pgn, args.out, init=args.init, config=cfg, head=args.head, settings=settings,
                     fresh=args.fresh, device=args.device, progress=not args.no_progress,
                     max_seconds=args.max_seconds, inference=args.inference)
        print(json.dumps(r))
        print(f"wrote {args.out}/policy.pt (current network), opponent.pt, rl_state.pt and rl_log.jsonl")
        return 0
    if args.policy_command == "export":
        from ..policy.export import export_policy, load_native_policy
        out = export_policy(args.model, args.out, dtype=args.dtype)
        net = load_native_policy(out)
        print(f"wrote {out}: {net.channels} channels, {net.blocks} blocks, head {net.head}, {net.n_params:,} "
              f"parameters as {net.file_dtype} ({out.stat().st_size:,} bytes)")
        return 0
    return _accuracy(args)


def _accuracy(args: argparse.Namespace) -> int:
    """`mavgame policy accuracy`: move matching with games-bootstrap intervals, overall and by bins. An exported
    file is scored by the native engine, a policy.pt by PyTorch (reading the PGN positions needs PyTorch's
    module either way)."""
    from pathlib import Path

    from .._atomic import write_json_atomic
    from ..analysis import policy_accuracy as A
    from ..policy.export import is_exported
    from ..policy import network as P

    try:
        edges = [int(x) for x in args.bins.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--bins must be comma-separated fullmove numbers, got {args.bins!r}") from None
    model = args.model
    if model == "shipped":
        from ..agents.policy import SHIPPED_POLICY
        model = str(SHIPPED_POLICY)
    if not Path(model).is_file():
        raise SystemExit(f"--model {args.model!r}: no such file")
    data, _, info = P.load_pgn_positions(args.pgn, skip_moves=args.skip_moves, val_fraction=0.0,
                                       max_games=args.max_games)
    if len(data) == 0:
        raise SystemExit(f"no positions after fullmove {args.skip_moves} in {', '.join(args.pgn)}")
    if is_exported(model):
        hits = A.native_hits(model, data.planes, data.masks, data.moves)
    else:
        hits = P.move_hits(P.PolicyModel.load(model, args.device).net, data, device=args.device)
    acc, lo, hi = A.clustered_interval(hits, data.game)
    out = {"model": model, "games": info["games"], "positions": len(data), "skip_moves": args.skip_moves,
           "accuracy": acc, "ci95": [lo, hi]}
    if args.by == "move":
        out["by_move"] = A.accuracy_by_bins(hits, data.game, A.fullmove_of(data.planes), edges)
    elif args.by == "phase":
        rows = A.accuracy_by_bins(hits, data.game, A.game_phase(data.planes), [0, 1, 2])
        out["by_phase"] = [dict(r, phase=A.PHASES[r["lo"]]) for r in rows]
    print(json.dumps(out))
    if args.out:
        write_json_atomic(args.out, out, indent=1)
    return 0
