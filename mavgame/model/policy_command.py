"""``mavgame policy``: train the IDP report's chess policy network from PGN and measure its move-matching
accuracy (docs/policy.md). The arguments are defined here without PyTorch; the work imports
:mod:`mavgame.model.policy` (which needs torch) when the command runs."""
from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="policy_command", required=True)
    tr = sub.add_parser("train", help="supervised training on the moves of PGN games",
                        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                        description="Train a policy network on the moves of PGN games (first moves skipped, "
                        "BCE over the legal moves, Adam), save OUT/policy.pt and OUT/metrics.json and print "
                        "the move-matching accuracy on held-out games.")
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
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--device", default="cpu", help="torch device")
    tr.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    tr.add_argument("--no-progress", action="store_true", help="no progress bars")
    ac = sub.add_parser("accuracy", help="move-matching accuracy of a trained policy on PGN games",
                        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ac.add_argument("--model", required=True, help="policy.pt written by `mavgame policy train`")
    ac.add_argument("--pgn", action="append", required=True, metavar="FILE", help="PGN file (repeatable)")
    ac.add_argument("--skip-moves", type=int, default=10)
    ac.add_argument("--max-games", type=int, default=0)
    ac.add_argument("--device", default="cpu")


def run(args: argparse.Namespace) -> int:
    from . import policy as P

    if getattr(args, "threads", 0):
        import torch
        torch.set_num_threads(args.threads)
    if args.policy_command == "train":
        cfg = P.PolicyConfig(channels=args.channels, blocks=args.blocks, head=args.head)
        m = P.train_from_pgn(args.pgn, args.out, steps=args.steps, batch=args.batch, lr=args.lr,
                             skip_moves=args.skip_moves, val_fraction=args.val_fraction, max_games=args.max_games,
                             config=cfg, seed=args.seed, device=args.device, progress=not args.no_progress)
        print(f"games {m['games']} ({m['val_games']} held out), positions {m['train_positions']} train / "
              f"{m['val_positions']} held out")
        print(f"loss {m['first_loss']:.5f} -> {m['last_loss']:.5f}; move-matching accuracy: train "
              f"{m['train_accuracy']:.3f}, held out {m['val_accuracy']:.3f}")
        print(f"wrote {args.out}/policy.pt and {args.out}/metrics.json")
        return 0
    model = P.PolicyModel.load(args.model, args.device)
    data, _, info = P.load_pgn_positions(args.pgn, skip_moves=args.skip_moves, val_fraction=0.0,
                                         max_games=args.max_games)
    acc = P.move_matching_accuracy(model.net, data, device=args.device)
    print(json.dumps({"games": info["games"], "positions": len(data), "accuracy": acc}))
    return 0
