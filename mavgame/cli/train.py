"""``mavgame train``: generate annotated positions, train a MAV model, export it, report metrics.

The argument definitions live here (imported by mavgame.cli without PyTorch); the work imports torch
only when the command runs.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Optional

from .options import DefaultsHelpFormatter
from .torchrun import env_world_size, launch

DESCRIPTION = ('Generate engine-annotated positions (epsilon-greedy games), train a MAV transformer on them, '
               'export it (safetensors) and report the held-out metrics. Resumes from OUT/checkpoint.pt when it '
               'exists.')


#: ``--p-after`` of a new run: the paper's Figure 1 has the state after the best action and says such
#: commands are randomly present (it gives no rate; present in half of the examples here).
PAPER_P_AFTER = 0.5
# A finished position's %top_k range drawn as its predecessor's (ExampleBuilder's k_terminal_prev): on for new
# runs since 2026-11-27, when a model trained with it shipped; without it a model can read "game over" from the
# header's k instead of the board (docs/model.md, "Finished games").
NEW_RUN_K_TERMINAL_PREV = 1


def _kv(text: str):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    k, v = text.split("=", 1)
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = DefaultsHelpFormatter
    g = p.add_argument_group("data (generated into --data unless it already holds a position set)")
    g.add_argument("--game", default="connect_four", help="game to generate positions for")
    g.add_argument("--data", required=True, help="directory of the position set (train/ and val/)")
    g.add_argument("--pgn", action="append", default=[], metavar="FILE",
                   help="chess: take the positions of the games in these PGN files (repeatable) instead of "
                        "playing games; with --pgn-every, --pgn-skip and --games as the maximum number of games")
    g.add_argument("--pgn-every", type=int, default=1, help="keep every n-th position of each PGN game")
    g.add_argument("--pgn-skip", type=int, default=0, help="skip the first plies of each PGN game")
    g.add_argument("--games", type=int, default=0,
                   help="epsilon-greedy games to play and annotate when --data has no position set")
    g.add_argument("--epsilon", type=float, default=0.2, help="probability of a random move in those games")
    g.add_argument("--random-opening", type=int, default=0, help="plies played at random at the start of each game")
    g.add_argument("--board-size", type=int, default=0,
                   help="board size of the generated games, for games that have one (hex: 1..19; 0: the default)")
    g.add_argument("--data-seed", type=int, default=0, help="seed of the generated games")
    g.add_argument("--gen-workers", type=int, default=1,
                   help="processes for game generation and annotation (with --ray: Ray actors; 1: one per CPU "
                        "of the cluster)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="play and annotate the games on Ray actors (pip install ray; docs/cluster.md): ADDRESS "
                        "for ray.init ('auto' joins the cluster this node belongs to; no ADDRESS or 'local': a "
                        "local instance, or the one 'ray start' runs here); the same set as on one machine")
    g.add_argument("--val-fraction", type=float, default=0.02,
                   help="share of distinct positions held out for validation (split by position)")
    g.add_argument("--annotator-option", type=_kv, action="append", default=[], metavar="KEY=VALUE",
                   help="annotator option, e.g. nodes=20000 for Stockfish or max_nodes=1000000 for the "
                        "Connect Four solver (repeatable; default: those two)")
    g.add_argument("--generate-only", action="store_true", help="stop after writing the position set")

    x = p.add_argument_group("training examples (mavgame.mav.ExampleBuilder's randomisation)")
    x.add_argument("--finished-repeat", type=int, default=1, metavar="K",
                   help="every finished position (a four in a row, a mate, a full board: its record's result is "
                        "not '*') occurs K times per epoch instead of once; they are a few %% of the positions "
                        "and the only examples of recognising a finished game")
    x.add_argument("--outcome-weight", type=int, default=1, metavar="W",
                   help="loss weight of the answer token that says whether the game is finished ('invalid' in a "
                        "finished position, a move otherwise; 1..255; 1: every token alike)")
    x.add_argument("--mirror", type=float, default=0.0, metavar="P",
                   help="probability that a training position is replaced by its mirror image (Connect Four: "
                        "columns reversed, the annotation carries over exactly; 0: never, as the paper)")
    x.add_argument("--p-after", type=float, default=None,
                   help=f"probability that an example also has the state after the best action (the paper's "
                        f"Figure 1 shows it; its commands are randomly present). Default: {PAPER_P_AFTER} for a "
                        f"new run; a resumed run keeps the value it started with (0 for runs made before this "
                        f"default); 0: never, as the shipped Connect Four model was trained")
    x.add_argument("--example-option", type=_kv, action="append", default=[], metavar="KEY=VALUE",
                   help="any other ExampleBuilder option, e.g. p_top_all=0.5 (repeatable); a new run has "
                        "k_terminal_prev=1 unless given k_terminal_prev=0 (a resumed run keeps its own)")
    s = p.add_argument_group("internal search (MAV-IS): search trees mixed into the MAV data (docs/model.md)")
    s.add_argument("--search-data", default=None, metavar="DIR",
                   help="directory of annotated search trees (generated from the positions of --data with "
                        "--search-trees N when it holds none); train on the mixture of MAV and trace examples")
    s.add_argument("--search-trees", type=int, default=0, help="trees to generate into --search-data")
    s.add_argument("--search-tree-depth", type=int, default=3, help="depth of the generated trees (the paper: 3)")
    s.add_argument("--search-tree-breadth", type=int, default=5,
                   help="moves expanded per node of the generated trees (the paper: 5)")
    s.add_argument("--search-min-ply", type=int, default=0, help="roots from this ply on")
    s.add_argument("--search-val-only", action="store_true",
                   help="roots only from positions in the val split at --val-fraction: every tree held out "
                        "(an evaluation set for mavgame.analysis.mav_is_eval)")
    s.add_argument("--search-root-model", default=None, metavar="MODEL",
                   help="generate trees whose root carries this model's own values (the head of its trace at "
                        "--search-root-shape) and expands by them, every other node the engine's; their trace "
                        "examples leave the root's values out of the loss and teach the decision over the true "
                        "children, which may overrule them (docs/model.md)")
    s.add_argument("--search-root-shape", default="4x1", metavar="BxD",
                   help="the trace prompt whose root values --search-root-model writes (default 4x1)")
    s.add_argument("--search-fraction", type=float, default=0.4,
                   help="share of trace examples in the training stream (the paper: 0.4)")
    s.add_argument("--search-shapes", default="2x1,3x1,4x1", metavar="BxD,...",
                   help="trace shapes (breadth x depth) drawn per example; one that does not fit --max-seq-len "
                        "falls back to a smaller one")
    s.add_argument("--trace-form", choices=["short", "full"], default="short",
                   help="how a trace example writes a child's evaluation: short (its %%state, %%top_all, "
                        "%%best_action) or full (also %%prev_state and %%prev_action, MAV's transition form); "
                        "recorded in the exported model, which the mav_is agent and the trace evaluation read")
    s.add_argument("--search-mirror", type=float, default=0.0, metavar="P",
                   help="probability that a trace example's tree is replaced by its mirror image (Connect Four; "
                        "as --mirror for MAV positions; 0: never, as the paper)")
    s.add_argument("--init-from", default=None, metavar="MODEL",
                   help="start from this exported model (fine-tuning; --max-seq-len may extend its context)")
    s.add_argument("--vocab-version", type=int, choices=[0, 1, 2], default=0,
                   help="MAV vocabulary: 2 has the trace keywords as single tokens (traces some 40%% shorter), 1 is "
                        "the shipped models'; 0 (default): 2 with --search-data, else 1; a v1 --init-from model is "
                        "extended to v2 (docs/format.md section 4)")

    m = p.add_argument_group("model")
    m.add_argument("--preset", default="small", help="model size preset: tiny, small or base")
    m.add_argument("--d-model", type=int, help="override the preset's width")
    m.add_argument("--layers", type=int, help="override the preset's number of layers")
    m.add_argument("--heads", type=int, help="override the preset's attention heads")
    m.add_argument("--kv-heads", type=int, help="override the preset's key/value heads (1: multi-query)")
    m.add_argument("--d-ff", type=int, help="override the preset's gated MLP width")
    m.add_argument("--mlp", choices=["swiglu", "geglu"], help="gated MLP kind")
    m.add_argument("--untied", action="store_true", help="separate output layer (default: tied to the embedding)")
    m.add_argument("--abs-pos", action="store_true",
                   help="add learned absolute position embeddings to the rotary positions (see MAVConfig.abs_pos)")
    m.add_argument("--line-pos", type=int, default=0, metavar="N",
                   help="add learned embeddings of the index within the text line, N of them (see "
                        "MAVConfig.line_pos; 0: off)")
    m.add_argument("--max-seq-len", type=int, default=512, help="longest sequence in tokens")

    t = p.add_argument_group("training")
    t.add_argument("--out", default=None,
                   help="run directory (checkpoint.pt, log.jsonl, model.safetensors); required unless --generate-only")
    t.add_argument("--steps", type=int, default=10000, help="optimiser steps")
    t.add_argument("--batch-size", type=int, default=64, help="examples per micro-batch (over all processes)")
    t.add_argument("--grad-accum", type=int, default=1, help="micro-batches per optimiser step")
    t.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    t.add_argument("--min-lr-ratio", type=float, default=0.1, help="final learning rate as a share of --lr")
    t.add_argument("--warmup", type=int, default=200, help="linear warmup steps")
    t.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay (weight matrices only)")
    t.add_argument("--grad-clip", type=float, default=1.0, help="gradient norm clip")
    t.add_argument("--seed", type=int, default=0, help="seed of initialisation, example order and randomisation")
    t.add_argument("--workers", type=int, default=1, help="DataLoader worker processes")
    t.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads; 0: every core (torch's choice), often slower on a shared machine "
                        "(docs/model.md)")
    t.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    t.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                   help="auto: bf16 (or fp16) autocast on GPUs, fp32 on CPU")
    t.add_argument("--eval-every", type=int, default=1000, help="steps between validations")
    t.add_argument("--eval-batches", type=int, default=8, help="held-out batches for the validation loss")
    t.add_argument("--gen-eval-positions", type=int, default=256,
                   help="held-out positions decoded at each validation for the paper's metrics (0: off)")
    t.add_argument("--checkpoint-every", type=int, default=500, help="steps between checkpoints")
    t.add_argument("--log-every", type=int, default=20, help="steps between the training lines of OUT/log.jsonl")
    t.add_argument("--stop-after", type=int, default=0,
                   help="stop after this many steps of this invocation (resume later with the same command)")
    t.add_argument("--export", default=None, help="path of the exported model (default: OUT/model.safetensors)")
    t.add_argument("--export-dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    t.add_argument("--final-eval-positions", type=int, default=2000,
                   help="held-out positions for the final metrics report (0: skip)")
    t.add_argument("--ood-games", type=int, default=0,
                   help="also report the metrics on positions of this many uniformly random games "
                        "(out of distribution; written to OUT/ood); chess: on this many random piece "
                        "placements, the paper's out-of-distribution set")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")

    d = p.add_argument_group("several processes (torch.distributed; docs/distributed.md)")
    d.add_argument("--nproc", type=int, default=1, metavar="N",
                   help="train on N processes of this node (one per GPU, or N CPU processes): runs this command "
                        "under torchrun (python -m torch.distributed.run --standalone); the global batch stays "
                        "--batch-size x --grad-accum, so the losses are one process's; one of --batch-size and "
                        "--grad-accum must be a multiple of N. Under torchrun itself, leave it at 1")
    d.add_argument("--fsdp", action="store_true",
                   help="with several processes, shard parameters, gradients and optimiser state over them "
                        "(FSDP2) instead of a full copy per process (DDP), for models that do not fit one device")


def example_options(args: argparse.Namespace, saved: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The ExampleBuilder options of ``--p-after`` and ``--example-option`` (only those that differ from
    the builder's defaults, so that runs without them keep their recipe); SystemExit naming a bad one.

    Without ``--p-after`` (None): ``saved`` (the encoder options of the run being resumed, or None for a
    new run) decides: a resumed run keeps its ``p_after`` (absent: 0), a new one gets
    :data:`PAPER_P_AFTER`. ``k_terminal_prev`` likewise: a new run gets :data:`NEW_RUN_K_TERMINAL_PREV` unless
    ``--example-option k_terminal_prev=0``, a resumed run keeps its own (absent: 0)."""
    from ..mav import ExampleBuilder
    opts: Dict[str, Any] = dict(args.example_option)
    if "p_after" in opts and args.p_after is not None:
        raise SystemExit("mavgame train: p_after given twice (--p-after and --example-option)")
    p_after = args.p_after
    if p_after is None and "p_after" not in opts:
        p_after = PAPER_P_AFTER if saved is None else saved.get("p_after", 0.0)
    if p_after:
        opts["p_after"] = p_after
    if "k_terminal_prev" not in opts:
        opts["k_terminal_prev"] = NEW_RUN_K_TERMINAL_PREV if saved is None else saved.get("k_terminal_prev", 0)
    if opts["k_terminal_prev"] in (0, False):   # the builder's default: not recorded, as before the option
        del opts["k_terminal_prev"]
    for k, use in (("seed", ""), ("tokenizer", ""), ("outcome_weight", " (use --outcome-weight)"),
                   ("p_mirror", " (use --mirror)")):
        if k in opts:
            raise SystemExit(f"mavgame train: --example-option {k} is not an example option{use}")
    try:
        ExampleBuilder(**opts)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"mavgame train: bad example option in {opts}: {e}") from None
    ow = args.outcome_weight
    if not 1 <= ow <= 255:
        raise SystemExit(f"mavgame: --outcome-weight {ow}: must be in [1, 255]")
    if ow > 1:  # only when used, so that runs without it keep their recipe
        opts["outcome_weight"] = ow
    pm = args.mirror
    if not 0.0 <= pm <= 1.0:
        raise SystemExit(f"mavgame: --mirror {pm}: must be in [0, 1]")
    if pm > 0.0:  # only when used, as outcome_weight
        opts["p_mirror"] = pm
    return opts


def _fail(msg: str) -> SystemExit:
    return SystemExit(f"mavgame: {msg}")


def _writable_dir_or_creatable(opt: str, path: str, *, is_file: bool = False) -> None:
    """``path`` (a folder the command writes into, or with ``is_file`` a file) exists as such and is
    writable, or can be created: its nearest existing ancestor is a writable folder."""
    p = os.path.abspath(path)
    if os.path.exists(p):
        if is_file and os.path.isdir(p):
            raise _fail(f"{opt} {path}: is a folder, not a file")
        if not is_file and not os.path.isdir(p):
            raise _fail(f"{opt} {path}: is a file, not a folder")
        if not os.access(p, os.W_OK):
            raise _fail(f"{opt} {path}: not writable")
        return
    parent = os.path.dirname(p)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise _fail(f"{opt} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK):
        raise _fail(f"{opt} {path}: cannot be created ({parent} is not writable)")


_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


def check_arguments(args: argparse.Namespace) -> None:
    """Per-argument checks of ``mavgame train``, before any generation or training starts: one
    ``mavgame: --ARG VALUE: ...`` line (SystemExit) naming the first bad argument."""
    from .. import _core
    from ..model.config import PRESETS, MAVConfig
    from ..datasets.records import MANIFEST

    def at_least(opt: str, lo: int, *, what: str = "") -> None:
        v = getattr(args, opt.lstrip("-").replace("-", "_"))
        if v is not None and v < lo:
            raise _fail(f"{opt} {v}: must be >= {lo}{what}")

    def number(opt: str, lo: float, hi: Optional[float] = None, *, lo_open: bool = False,
               hi_open: bool = False) -> None:
        v = getattr(args, opt.lstrip("-").replace("-", "_"))
        bad = not math.isfinite(v) or (v <= lo if lo_open else v < lo)
        if hi is not None:
            bad = bad or (v >= hi if hi_open else v > hi)
        if bad:
            rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}" if hi is not None else \
                f"{'>' if lo_open else '>='} {lo:g}"
            raise _fail(f"{opt} {v:g}: must be {'in ' if hi is not None else ''}{rng}")

    # data
    from ..games import registry
    try:
        registry.get(args.game)
    except registry.UnknownGameError as e:
        raise _fail(f"--game {args.game}: {e}")
    if args.board_size:
        try:
            _core.State(args.game, None, args.board_size)
        except ValueError as e:
            raise _fail(f"--board-size {args.board_size}: {e}") from None
    for f in args.pgn:
        if not os.path.isfile(f):
            raise _fail(f"--pgn {f}: {'is a folder' if os.path.isdir(f) else 'file not found'}")
        if not os.access(f, os.R_OK):
            raise _fail(f"--pgn {f}: not readable")
    at_least("--pgn-every", 1)
    at_least("--finished-repeat", 1)
    at_least("--pgn-skip", 0)
    at_least("--games", 0, what=" (0: use the position set already in --data)")
    number("--epsilon", 0.0, 1.0)
    at_least("--random-opening", 0)
    at_least("--data-seed", 0)
    at_least("--gen-workers", 1)
    if args.ray is not None and args.pgn:
        raise _fail("--ray generates played games (--games), not the positions of --pgn files")
    if args.ray is not None:
        from ..distributed_ray import ray_available
        if not ray_available():
            raise _fail("--ray needs Ray: pip install ray")
    number("--val-fraction", 0.0, 1.0, hi_open=True)
    has_set = (Path(args.data) / "train" / MANIFEST).exists()
    if not has_set:   # the set will be generated there
        _writable_dir_or_creatable("--data", args.data)
    # model
    if args.preset not in PRESETS:
        raise _fail(f"--preset {args.preset}: unknown preset (presets: {', '.join(PRESETS)})")
    for opt in ("--d-model", "--layers", "--heads", "--kv-heads", "--d-ff", "--max-seq-len"):
        at_least(opt, 1)
    at_least("--line-pos", 0)
    shape = dict(PRESETS[args.preset], max_seq_len=args.max_seq_len, vocab_size=1, line_pos=args.line_pos,
                 newline_id=0)
    given = []
    for opt, key in (("--d-model", "d_model"), ("--layers", "n_layers"), ("--heads", "n_heads"),
                     ("--kv-heads", "n_kv_heads"), ("--d-ff", "d_ff")):
        v = getattr(args, opt[2:].replace("-", "_"))
        if v is not None:
            shape[key] = v
            given.append(f"{opt} {v}")
    try:
        MAVConfig(**shape)
    except ValueError as e:
        raise _fail(f"--preset {args.preset}{''.join(', ' + g for g in given)}: {e}") from None
    # training
    if args.out is not None:
        _writable_dir_or_creatable("--out", args.out)
    for opt in ("--steps", "--batch-size", "--grad-accum", "--eval-every", "--eval-batches", "--checkpoint-every",
                "--log-every"):
        at_least(opt, 1)
    number("--lr", 0.0, lo_open=True)
    number("--min-lr-ratio", 0.0, 1.0)
    at_least("--warmup", 0)
    number("--weight-decay", 0.0)
    number("--grad-clip", 0.0, lo_open=True)
    for opt in ("--seed", "--workers", "--threads", "--gen-eval-positions", "--stop-after",
                "--final-eval-positions", "--ood-games"):
        at_least(opt, 0)
    if not _DEVICE.fullmatch(args.device):
        raise _fail(f"--device {args.device}: must be auto, cpu, mps, cuda or cuda:N")
    if args.export is not None:
        _writable_dir_or_creatable("--export", args.export, is_file=True)
    at_least("--nproc", 1)
    if args.nproc > 1:
        if env_world_size() > 1:
            raise _fail(f"--nproc {args.nproc}: this process is already one of {env_world_size()} (torchrun): "
                        "leave --nproc out under torchrun")
        if args.batch_size % args.nproc and args.grad_accum % args.nproc:
            raise _fail(f"--nproc {args.nproc}: neither --batch-size {args.batch_size} nor --grad-accum "
                        f"{args.grad_accum} is a multiple of it (each process takes a share of every step)")
        try:
            import torch
        except ImportError:
            raise _fail(f"--nproc {args.nproc}: needs PyTorch: pip install torch") from None
        if args.device in ("auto", "cuda") and torch.cuda.is_available() and torch.cuda.device_count() < args.nproc:
            raise _fail(f"--nproc {args.nproc}: torch sees {torch.cuda.device_count()} GPU(s); one process per GPU "
                        "(or --device cpu)")


def run(args: argparse.Namespace) -> int:
    """``mavgame train``."""
    check_arguments(args)
    if args.nproc > 1:
        return launch(args, add_arguments, "train", threads=args.threads)
    if env_world_size() <= 1:
        _prepare_data(args)
        return 0 if args.generate_only else _train(args)
    # one of several processes (torchrun): rank 0 prepares the data while the others wait, then all train
    try:
        from ..model import distributed
    except ImportError:
        raise SystemExit("mavgame train needs PyTorch: pip install torch") from None
    info = distributed.init(args.device)
    try:
        try:
            if info.is_main:
                _prepare_data(args)
        finally:
            distributed.wait_for_rank0(info)
        status = 0 if args.generate_only else _train(args)
    except BaseException:
        distributed.shutdown(together=False)
        raise
    distributed.shutdown()
    return status


def _prepare_data(args: argparse.Namespace) -> None:
    """Generate the position set (and search trees) the command asks for, unless they exist."""
    from ..datasets.positions import PROGRESS, generate_positions
    from ..datasets.records import MANIFEST
    data = Path(args.data)
    if not (data / "train" / MANIFEST).exists() and args.pgn:
        from ..datasets.pgn import positions_from_pgn
        stats = positions_from_pgn(args.pgn, data, every=args.pgn_every, skip_plies=args.pgn_skip,
                                   max_games=args.games, workers=args.gen_workers, val_fraction=args.val_fraction,
                                   annotator_options=dict(args.annotator_option) or None,
                                   progress=not args.no_progress)
        print(json.dumps({"data": stats}, sort_keys=True))
    elif not (data / "train" / MANIFEST).exists():
        if args.games <= 0:
            raise SystemExit(f"mavgame train: {data} holds no position set; pass --games N to generate one")
        if (data / PROGRESS).exists():
            print(f"mavgame train: resuming the interrupted generation in {data}", file=sys.stderr)
        ray = None
        if args.ray is not None:
            import ray
        ray_was_up = ray is not None and ray.is_initialized()
        try:
            stats = generate_positions(args.game, data, args.games, seed=args.data_seed, epsilon=args.epsilon,
                                       workers=args.gen_workers, val_fraction=args.val_fraction,
                                       random_opening=args.random_opening, board_size=args.board_size,
                                       annotator_options=dict(args.annotator_option) or None,
                                       progress=not args.no_progress,
                                       executor=None if args.ray is None else "ray",
                                       ray_address=None if args.ray in (None, "local") else args.ray)
        except (ValueError, FileExistsError) as e:
            raise SystemExit(f"mavgame train: {e}") from None
        finally:
            if ray is not None and not ray_was_up:   # the Ray connection this command opened
                ray.shutdown()
        print(json.dumps({"data": stats}, sort_keys=True))
    elif args.games or args.pgn:
        print(f"mavgame train: using the existing position set in {data} (--games/--pgn ignored)",
              file=sys.stderr)
    if args.search_data:
        from ..datasets.search_data import generate_search_trees, parse_shapes
        try:
            parse_shapes(args.search_shapes)
            if not (Path(args.search_data) / "train" / MANIFEST).exists() and args.search_trees <= 0:
                raise ValueError(f"{args.search_data} holds no search trees; pass --search-trees N to generate them")
            root_values = None
            if args.search_root_model:
                from ..model.inference import MAVModel
                from ..model.mav_is import model_root_values
                (rb, rd), = parse_shapes(args.search_root_shape)
                if not Path(args.search_root_model).is_file():
                    raise ValueError(f"--search-root-model {args.search_root_model}: no such model file")
                loaded: Dict[str, Any] = {}   # the model, loaded at the first roots (not when trees are reused)

                def root_values(states, _path=args.search_root_model, _b=rb, _d=rd):
                    if "model" not in loaded:
                        loaded["model"] = MAVModel.load(_path)
                    return model_root_values(loaded["model"], states, _b, _d)
            tstats = generate_search_trees(data, args.search_data, args.search_trees, depth=args.search_tree_depth,
                                           breadth=args.search_tree_breadth, seed=args.data_seed,
                                           min_ply=args.search_min_ply, root_values=root_values,
                                           val_only=args.search_val_only,
                                           annotator_options=dict(args.annotator_option) or None,
                                           val_fraction=args.val_fraction, progress=not args.no_progress)
        except (ValueError, FileExistsError) as e:
            raise SystemExit(f"mavgame train: {e}") from None
        print(json.dumps({"search_data": tstats}, sort_keys=True))


def _train(args: argparse.Namespace) -> int:
    """Train (or resume) the run in ``--out`` and report; under torchrun every rank runs this, rank 0
    reports and exports."""
    from ..datasets.records import MANIFEST
    data = Path(args.data)
    if args.out is None:
        raise SystemExit("mavgame train: --out DIR is required to train (only --generate-only works without it)")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit("mavgame train needs PyTorch: pip install torch") from None
    from ..model.train import Trainer
    from ..model.train_config import TrainConfig, json_safe, saved_train_config
    try:
        saved = saved_train_config(args.out)
    except ValueError as e:
        raise SystemExit(f"mavgame train: {e}") from None
    encoder_options = example_options(args, None if saved is None else dict(saved.get("encoder_options") or {}))
    overrides: Dict[str, Any] = {}
    for name, key in (("d_model", "d_model"), ("layers", "n_layers"), ("heads", "n_heads"),
                      ("kv_heads", "n_kv_heads"), ("d_ff", "d_ff"), ("mlp", "mlp")):
        v = getattr(args, name)
        if v is not None:
            overrides[key] = v
    if args.untied:
        overrides["tie_embeddings"] = False
    if args.abs_pos:
        overrides["abs_pos"] = True
    if args.line_pos:
        overrides["line_pos"] = args.line_pos
    cfg = TrainConfig(data=str(data), out=args.out, steps=args.steps, batch_size=args.batch_size,
                      grad_accum=args.grad_accum, lr=args.lr, min_lr_ratio=args.min_lr_ratio, warmup=args.warmup,
                      weight_decay=args.weight_decay, grad_clip=args.grad_clip, seed=args.seed,
                      workers=args.workers, threads=args.threads, device=args.device, precision=args.precision,
                      preset=args.preset, model=overrides, max_seq_len=args.max_seq_len,
                      eval_every=args.eval_every, eval_batches=args.eval_batches,
                      gen_eval_positions=args.gen_eval_positions, checkpoint_every=args.checkpoint_every,
                      log_every=args.log_every,
                      progress=not args.no_progress, export_dtype=args.export_dtype,
                      encoder_options=encoder_options,
                      search_data=args.search_data or "", search_fraction=args.search_fraction,
                      search_shapes=args.search_shapes, trace_form=args.trace_form, search_mirror=args.search_mirror,
                      init_from=args.init_from or "", finished_repeat=args.finished_repeat,
                      vocab_version=args.vocab_version, fsdp=args.fsdp)
    from ..model.inference import trainer_metrics
    try:
        tr = Trainer(cfg, evaluate_fn=trainer_metrics)
    except ValueError as e:
        raise SystemExit(f"mavgame train: {e}") from None
    main = tr.dist.is_main
    if main:
        procs = "" if not tr.dist.active else \
            f", {tr.dist.world_size} processes ({'FSDP' if tr.fsdp else 'DDP'}, {tr.dist.backend})"
        print(f"mavgame train: {tr.model_cfg.num_parameters():,} parameters, {len(tr.train_store):,} training "
              f"positions, device {tr.device}, precision {tr.precision}, from step {tr.step}{procs}", file=sys.stderr)
    last = tr.run(args.stop_after or None)
    if tr.step < cfg.steps:
        if main:
            print(json.dumps(json_safe({"stopped_at_step": tr.step, **last}), sort_keys=True))
        return 0
    tr.unshard()   # FSDP: the whole model on every rank; rank 0 evaluates and exports it
    if not main:
        return 0
    report: Dict[str, Any] = {"world_size": tr.dist.world_size, "train": last}
    if args.final_eval_positions and tr.val_store is not None:
        report["heldout"] = trainer_metrics(tr, n_positions=args.final_eval_positions, full=True)
    if args.ood_games:
        from ..model.inference import MAVModel, evaluate_records
        from ..datasets.ood import ood_positions
        gen = (tr.train_store.manifest.get("info") or {}).get("stats") or {}
        recs, ood_info = ood_positions(tr.game, Path(args.out) / "ood", args.ood_games, seed=10_000 + args.seed,
                                       exclude=[s for s in (tr.train_store, tr.val_store) if s is not None],
                                       random_opening=int(gen.get("random_opening", 0)),
                                       board_size=args.board_size or int(gen.get("board_size", 0)),
                                       annotator_options=dict(args.annotator_option),
                                       progress=not args.no_progress)
        recs = recs[:args.final_eval_positions or None]
        tr.model.eval()
        report["ood"] = evaluate_records(MAVModel.from_module(tr.model, tr.game, backend="auto"), tr.game, recs)
        report["ood"]["set"] = ood_info
    if args.search_data and args.final_eval_positions:
        from ..model.mav_is import evaluate_trace_records
        from ..datasets.search_data import parse_shapes
        val = Path(args.search_data) / "val"
        if (val / MANIFEST).exists():
            from ..model.inference import MAVModel
            from ..datasets.store import PositionStore
            tr.model.eval()
            recs = list(PositionStore(val))[:args.final_eval_positions]
            report["search_heldout"] = evaluate_trace_records(MAVModel.from_module(tr.model, tr.game), tr.game,
                                                              recs, parse_shapes(args.search_shapes),
                                                              form=cfg.trace_form)
    path = tr.export(args.export, info={"metrics": json_safe(report), "command": " ".join(sys.argv)})
    report["exported"] = str(path)
    print(summary(report), file=sys.stderr)
    print(json.dumps(json_safe(report), sort_keys=True))
    return 0


def summary(report: Dict[str, Any]) -> str:
    """The final report for people: per section (train, heldout, ood, search_heldout) its numbers, one line."""
    lines = ["mavgame train: done"]
    for section, body in report.items():
        if not isinstance(body, dict):
            lines.append(f"  {section}: {body}")
            continue
        nums = [(k, v) for k, v in sorted(body.items()) if isinstance(v, (int, float)) and not isinstance(v, bool)]
        text = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in nums[:10])
        lines.append(f"  {section}: {text}{', ...' if len(nums) > 10 else ''}")
    return "\n".join(lines)
