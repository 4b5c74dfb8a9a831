"""``mavgame az``: train AlphaZero by self-play (needs torch for running; the arguments are defined
without it).  Writes OUT/checkpoint.pt after every iteration and appends one JSON line per iteration
to OUT/log.jsonl; resumes from OUT/checkpoint.pt when it exists."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys

DESCRIPTION = ('AlphaZero self-play with the C MCTS and batched network calls, a replay buffer and a residual '
               'network; writes OUT/checkpoint.pt and OUT/log.jsonl after every iteration and resumes from '
               'OUT/checkpoint.pt. See docs/alphazero.md.')


__all__ = ["add_arguments", "run"]

# (option, AZConfig field, type, help)
_OPTIONS = [
    ("--game", "game", str, "game to learn (default connect_four)"),
    ("--board-size", "board_size", int, "board size (Hex; 0: the game's default)"),
    ("--iterations", "iterations", int, "total iterations of self-play + training (default 10)"),
    ("--games", "games_per_iteration", int, "self-play games per iteration (default 64)"),
    ("--parallel", "parallel_games", int, "games played at once, their leaves batched into one network call "
                                          "(default 32)"),
    ("--sims", "num_simulations", int, "MCTS simulations per move (default 100)"),
    ("--temperature-plies", "temperature_plies", int, "plies whose move is sampled from the visit counts "
                                                      "(default 30; then the most visited)"),
    ("--temperature", "temperature", float, "sampling temperature of those plies (default 1)"),
    ("--c-base", "c_base", float, "c(s) = log((1 + N + c_base) / c_base) + c_init (default 19652)"),
    ("--c-init", "c_init", float, "see --c-base (default 1.25)"),
    ("--dirichlet-alpha", "dirichlet_alpha", float, "root noise Dir(alpha) (default 0.3; 0: none)"),
    ("--dirichlet-frac", "dirichlet_frac", float, "root noise fraction (default 0.25)"),
    ("--leaves", "leaves_per_game", int, "leaves per game and network call (default 1; more use virtual "
                                         "counts)"),
    ("--cache", "cache_log2", int, "self-play evaluation cache of 2^N positions (default 0: none)"),
    ("--selfplay-shards", "selfplay_shards", int, "play each iteration's games in K fixed shards, each seeded by "
                                                  "(seed, iteration, shard): the same games here or on Ray "
                                                  "(--ray; default 0: one batched call)"),
    ("--max-plies", "max_plies", int, "a game reaching this many plies is a draw (default 0: no limit)"),
    ("--blocks", "blocks", int, "residual blocks (default 4)"),
    ("--channels", "channels", int, "convolution channels (default 64)"),
    ("--replay", "replay_capacity", int, "replay buffer capacity in positions (default 100000)"),
    ("--batch-size", "batch_size", int, "training batch (default 256)"),
    ("--steps", "steps_per_iteration", int, "training steps per iteration (default 100)"),
    ("--optimizer", "optimizer", str, "sgd (momentum) or adam (default sgd)"),
    ("--lr", "lr", float, "learning rate (default 0.02)"),
    ("--l2", "l2", float, "L2 regularisation c (default 1e-4)"),
    ("--seed", "seed", int, "seed of the run (default 0)"),
    ("--players", "players", int, "AZdb: players of the team, one network with a latent per player "
                                  "(default 1: plain AlphaZero)"),
    ("--matchmaking", "matchmaking", str, "AZdb: psro (PSRO-Nash, default), psro-uniform, psro-rectified, "
                                          "psro-cycle, uniform or selfplay (the paper's appendix B)"),
    ("--l0", "l0", float, "AZdb: diversity length scale l0 (default 1.0)"),
    ("--lam", "lam", float, "AZdb: lambda of players i > 0, the weight of the game result (default 0.5)"),
    ("--n-td", "n_td", int, "AZdb: TD steps of the intrinsic value target (even, default 8)"),
    ("--device", "device", str, "torch device: cpu (default) or cuda"),
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="run folder: checkpoint.pt, log.jsonl")
    for opt, _field, typ, hlp in _OPTIONS:
        p.add_argument(opt, type=typ, default=None, dest=_field, help=hlp)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="play the self-play shards (--selfplay-shards K >= 1) on Ray actors (pip install ray; "
                        "docs/cluster.md): ADDRESS for ray.init ('auto' joins the cluster this node belongs to; no "
                        "ADDRESS or 'local': a local instance, or the one 'ray start' runs here); the same "
                        "examples as the shards played here on a CPU run")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError:
        raise RuntimeError("mavgame az needs PyTorch (pip install torch)") from None
    from .._progress import tqdm
    from ..az.train import AZConfig, AZTrainer, sync_log, write_log

    if args.threads:
        torch.set_num_threads(int(args.threads))
    ray_address = None
    if args.ray is not None:
        from ..distributed_ray import ray_available
        if not ray_available():
            raise RuntimeError("--ray needs Ray: pip install ray")
        if not args.ray.strip():
            raise ValueError("--ray ADDRESS must not be empty (no ADDRESS or 'local': a local Ray)")
        ray_address = None if args.ray == "local" else args.ray
        if (args.selfplay_shards or 0) < 1 and not os.path.exists(os.path.join(args.out, "checkpoint.pt")):
            raise ValueError("--ray needs --selfplay-shards K >= 1 (the games' fixed shards)")
    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "checkpoint.pt")
    log = os.path.join(args.out, "log.jsonl")
    given = {f: getattr(args, f) for _o, f, _t, _h in _OPTIONS if getattr(args, f) is not None}
    if args.device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no CUDA device")
    if os.path.exists(ckpt):
        # what was learnt stays; the run's length, device and self-play size may change
        fixed = {k: v for k, v in given.items() if k not in ("iterations", "device")}
        trainer = AZTrainer.load(ckpt, device=given.get("device"), **({"iterations": given["iterations"]}
                                                                      if "iterations" in given else {}))
        diff = {k: v for k, v in fixed.items() if getattr(trainer.config, k) != v}
        if diff:
            raise ValueError(f"{ckpt} was trained with other settings; remove it or drop "
                             + ", ".join(f"{k}={v!r} (checkpoint: {getattr(trainer.config, k)!r})"
                                         for k, v in diff.items()))
        print(f"resuming {ckpt} at iteration {trainer.iteration}, step {trainer.step}", file=sys.stderr)
        sync_log(log, trainer.history)   # a kill between checkpoint and log line lost no record
    else:
        trainer = AZTrainer(AZConfig(**given))
    if args.ray is not None:
        if trainer.config.selfplay_shards < 1:
            raise ValueError(f"--ray needs --selfplay-shards K >= 1 ({ckpt} was trained with selfplay_shards "
                             f"{trainer.config.selfplay_shards}; a run keeps its shards)")
        trainer.use_executor("ray", ray_address)
    cfg = trainer.config
    left = cfg.iterations - trainer.iteration
    bar = None if args.no_progress else tqdm(total=max(left, 0) * cfg.games_per_iteration, desc="az self-play",
                                             unit="game")
    try:
        while trainer.iteration < cfg.iterations:
            rec = trainer.run_iteration(progress=bar)
            trainer.save(ckpt)
            write_log(log, rec)
            if bar is not None:
                bar.set_postfix(it=rec["iteration"], loss=f"{rec['loss']:.3f}", pos_s=rec["positions_per_second"])
            else:
                print(f"iteration {rec['iteration']}: loss {rec['loss']:.4f} (value {rec['value']:.4f}, policy "
                      f"{rec['policy']:.4f}), {rec['positions']} positions, {rec['positions_per_second']:.0f}/s",
                      file=sys.stderr)
    finally:
        if bar is not None:
            bar.close()
    print(f"{cfg.iterations} iterations, step {trainer.step}: {ckpt}, {log}")
    print("config: " + ", ".join(f"{k}={v}" for k, v in dataclasses.asdict(cfg).items()))
    return 0
