"""The recipe of a MAV training run and its checkpoint file, without PyTorch at import time: ``TrainConfig``
(every option of ``mavgame train``), the recipe fields a resumed run must keep, the learning-rate schedule,
and reading and writing ``checkpoint.pt`` as data (:mod:`mavgame._checkpoint`). The loop that uses them is
:mod:`mavgame.model.train`."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

from .._checkpoint import load_state, save_state
from .config import PRESETS as _PRESETS

CHECKPOINT = "checkpoint.pt"
LOG = "log.jsonl"
EXPORT = "model.safetensors"

# Named model sizes: in config.py (torch-free, so that `mavgame train` checks --preset before any work).
PRESETS = _PRESETS


@dataclass
class TrainConfig:
    data: str                      # directory with train/ and val/ position sets (see mavgame.datasets)
    out: str                       # run directory: checkpoint.pt, log.jsonl, model.safetensors
    steps: int = 1000
    batch_size: int = 64
    grad_accum: int = 1
    lr: float = 1e-3
    min_lr_ratio: float = 0.1
    warmup: int = 100
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    seed: int = 0
    workers: int = 0
    threads: int = 0               # torch.set_num_threads (0: leave torch's default)
    device: str = "auto"           # auto | cpu | cuda | cuda:N
    precision: str = "auto"        # auto | fp32 | bf16 | fp16
    preset: str = "small"
    model: Dict[str, Any] = field(default_factory=dict)  # MAVConfig overrides (vocab_size comes from the tokenizer)
    max_seq_len: int = 0           # 0: from the preset/overrides, else this
    eval_every: int = 500
    eval_batches: int = 8
    gen_eval_positions: int = 256  # held-out positions for the generation metrics at each evaluation (0: off)
    checkpoint_every: int = 500
    log_every: int = 20
    progress: bool = True
    encoder_options: Dict[str, Any] = field(default_factory=dict)
    export_dtype: str = "float32"
    # internal search (MAV-IS): search trees mixed into the MAV data, fine-tuning an exported model
    search_data: str = ""          # directory of search trees (mavgame.datasets.search_data); "" for MAV only
    search_fraction: float = 0.4   # share of trace examples (the paper: 40%)
    search_shapes: str = "2x1,3x1,4x1"  # (breadth x depth) drawn per trace example
    trace_form: str = "short"      # child form of trace examples (mavgame.mav.search_trace.TRACE_FORMS)
    search_mirror: float = 0.0     # probability that a trace example's tree is mirrored (Connect Four)
    init_from: str = ""            # exported model (.safetensors) to start from; "" for a fresh model
    finished_repeat: int = 1       # every finished position (result != "*") this many times per epoch
    # MAV vocabulary (mavgame.mav.Tokenizer): 1, 2 (v1 + the search-trace keywords as tokens), or 0: 2 with
    # search_data, else 1 (a resumed run keeps the version it started with); a v1 init_from model is extended
    vocab_version: int = 0
    # several processes (torchrun): shard parameters, gradients and optimiser state with FSDP2 instead of
    # replicating the model with DDP (the same recipe: not a recipe field, nor is the world size)
    fsdp: bool = False

    def validate(self) -> None:
        for name in ("steps", "batch_size", "grad_accum", "eval_every", "checkpoint_every", "log_every"):
            if getattr(self, name) <= 0:
                raise ValueError(f"TrainConfig.{name} must be positive, got {getattr(self, name)}")
        if self.warmup < 0 or self.lr <= 0 or not 0 <= self.min_lr_ratio <= 1:
            raise ValueError("TrainConfig: need warmup >= 0, lr > 0 and 0 <= min_lr_ratio <= 1")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ValueError(f"TrainConfig.precision must be auto, fp32, bf16 or fp16, got {self.precision!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"unknown model preset {self.preset!r} (have {', '.join(PRESETS)})")
        if self.trace_form not in ("short", "full"):
            raise ValueError(f"TrainConfig.trace_form must be 'short' or 'full', got {self.trace_form!r}")
        if not 0.0 <= self.search_mirror <= 1.0:
            raise ValueError(f"TrainConfig.search_mirror must be in [0, 1], got {self.search_mirror}")
        if self.finished_repeat < 1:
            raise ValueError(f"TrainConfig.finished_repeat must be >= 1, got {self.finished_repeat}")
        if self.vocab_version not in (0, 1, 2):
            raise ValueError(f"TrainConfig.vocab_version must be 0 (auto), 1 or 2, got {self.vocab_version!r}")


# TrainConfig fields that decide the trained weights: a resumed run must use the values it started with.
# (Threads, workers, device, evaluation, logging and checkpoint cadence do not change the recipe.)
RECIPE_FIELDS = ("steps", "batch_size", "grad_accum", "lr", "min_lr_ratio", "warmup", "weight_decay", "beta1",
                 "beta2", "grad_clip", "seed", "precision", "preset", "model", "max_seq_len", "encoder_options",
                 "search_fraction", "search_shapes", "trace_form", "init_from", "vocab_version", "finished_repeat",
                 "search_mirror")


def saved_train_config(out: Union[str, Path]) -> Optional[Dict[str, Any]]:
    """The TrainConfig (as a dict) of the run whose checkpoint is in ``out``, or None when there is none."""
    path = Path(out) / CHECKPOINT
    if not path.exists():
        return None
    return dict(load_checkpoint(path)["train_config"])


CHECKPOINT_KEYS = ("model", "optimizer", "step", "model_config", "train_config", "rng")


def load_checkpoint(path: Union[str, Path]) -> Dict[str, Any]:
    """The state of a ``mavgame train`` checkpoint, read as data (:func:`mavgame._checkpoint.load_state`:
    a pickle naming any code is refused unexecuted); ValueError naming the file when it is not one."""
    d = load_state(path, "training checkpoint")
    missing = [k for k in CHECKPOINT_KEYS if not isinstance(d, dict) or k not in d]
    if missing:
        got = sorted(d)[:8] if isinstance(d, dict) else type(d).__name__
        raise ValueError(f"{str(path)!r} is not a mavgame train checkpoint: it lacks {', '.join(missing)} "
                         f"(it holds {got})")
    if not isinstance(d["train_config"], dict) or not isinstance(d["model_config"], dict):
        raise ValueError(f"{str(path)!r} is not a mavgame train checkpoint: its train_config and model_config "
                         "are not dicts")
    return d


def check_resume_config(saved: Dict[str, Any], cfg: TrainConfig) -> None:
    """ValueError naming every recipe field whose value differs from the checkpoint's run (the resumed run
    would silently stop being the run it continues)."""
    diff = []
    for name in RECIPE_FIELDS:
        if name in saved and saved[name] != getattr(cfg, name):
            diff.append(f"{name} {saved[name]!r} in the checkpoint, {getattr(cfg, name)!r} now")
    if diff:
        raise ValueError(f"cannot resume the run in {cfg.out} with another recipe: " + "; ".join(diff)
                         + " (use another --out to start a new run)")


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate for optimiser step `step` (0-based): linear warmup, then cosine to lr * min_lr_ratio."""
    if cfg.warmup and step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    span = max(1, cfg.steps - cfg.warmup)
    t = min(1.0, (step - cfg.warmup) / span)
    lo = cfg.lr * cfg.min_lr_ratio
    return lo + 0.5 * (cfg.lr - lo) * (1.0 + math.cos(math.pi * t))


def save_checkpoint(path: Path, state: Dict[str, Any]) -> None:
    """Write the checkpoint durably (temporary file, fsync, rename)."""
    save_state(state, path)


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float (NaN, inf) replaced by None, so that ``json.dumps`` writes JSON
    (which has no NaN) that every reader accepts."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj
