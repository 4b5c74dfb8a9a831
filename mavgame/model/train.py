"""Training loop for MAV models (PyTorch; CPU or GPU).

AdamW with decoupled weight decay on the weight matrices, linear warmup then cosine decay, gradient
clipping, mixed precision where the device supports it (bf16 autocast on GPUs that have it, else fp16 with
loss scaling; fp32 on CPU unless asked), the loss on target tokens only (the prompt is masked out, as in the
paper), checkpoints that resume exactly (model, optimiser, step, RNG and the data stream position), periodic
validation (loss, token accuracy and, through :mod:`mavgame.model.inference`, the paper's metrics on
held-out positions), a tqdm progress bar and a JSON-lines log. Under ``torchrun`` (or ``mavgame train
--nproc N``) the same run trains on N processes, DDP or (``fsdp``) FSDP2, with the same global batch and
losses as one process (:mod:`mavgame.model.distributed`; docs/distributed.md).

    from mavgame.model.train import train
    from mavgame.model.train_config import TrainConfig
    train(TrainConfig(data="c4data", out="runs/c4", steps=20000, batch_size=64))

or ``mavgame train --help`` on the command line.
"""
from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import numpy as np
import torch
import torch.nn.functional as F

from . import distributed
from .config import MAVConfig
from ..datasets.dataset import MAVDataset, batch_seed, finished_repeats, pad_batch
from ..datasets.store import PositionStore
from .train_config import (CHECKPOINT, EXPORT, LOG, PRESETS, TrainConfig, check_resume_config, json_safe,
                           load_checkpoint, lr_at, save_checkpoint)
from .transformer import MAVTransformer

def masked_loss(model: MAVTransformer, tokens: torch.Tensor, mask: torch.Tensor,
                forward: Optional[Callable[..., torch.Tensor]] = None):
    """Mean cross-entropy over target tokens (mask[t] > 0: token t is predicted from tokens < t), each
    weighted by its mask value (1 for every token unless an encoder weights some, e.g. outcome_weight).

    Only the hidden states in front of target tokens go through the output layer. Returns
    (loss, total weight: the number of target tokens when every weight is 1, number predicted correctly by
    argmax). ``forward``: the module whose call runs the model (a DDP wrapper of ``model``; default ``model``).
    """
    hidden = (forward or model)(tokens[:, :-1], return_hidden=True)
    w = mask[:, 1:]
    sel = w.bool()
    h = hidden[sel]
    targets = tokens[:, 1:][sel]
    n = int(targets.numel())
    if n == 0:  # every parameter (the output layer too) in the graph, as DDP and FSDP expect
        zero = model.logits(hidden[:1, :1]).float().sum() * 0.0
        return zero, 0, 0
    logits = model.logits(h).float()
    correct = int((logits.argmax(-1) == targets).sum())
    if int(w.max()) <= 1:
        return F.cross_entropy(logits, targets), n, correct
    ww = w[sel].float()
    total = float(ww.sum())
    return (F.cross_entropy(logits, targets, reduction="none") * ww).sum() / total, int(total), correct


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda requested but torch sees no CUDA device")
    return dev


def pick_precision(name: str, dev: torch.device) -> str:
    """The training precision: ``auto`` is bf16 autocast on GPUs that support it, else fp16 with loss
    scaling; fp32 on CPU. fp16 needs a GPU."""
    if name != "auto":
        if name == "fp16" and dev.type != "cuda":
            raise ValueError("fp16 training needs a GPU; use fp32 or bf16 on CPU")
        return name
    if dev.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"


def build_model_config(cfg: TrainConfig, vocab_size: int, newline_id: Optional[int] = None) -> MAVConfig:
    d = dict(PRESETS[cfg.preset])
    d.update(cfg.model)
    if cfg.max_seq_len:
        d["max_seq_len"] = cfg.max_seq_len
    d["vocab_size"] = vocab_size
    if d.get("line_pos") and d.get("newline_id", -1) < 0:
        if newline_id is None:
            raise ValueError("line_pos needs the tokenizer's newline token id (tokenizer info 'newline_id')")
        d["newline_id"] = int(newline_id)
    return MAVConfig.from_dict(d)


def _param_groups(model: torch.nn.Module, weight_decay: float):
    return [{"params": [p for _, p in g], "weight_decay": wd}
            for g, wd in zip(_named_groups(model), (weight_decay, 0.0))]


def _named_groups(model: torch.nn.Module):
    """(name, parameter) of the two AdamW groups: weight matrices (decayed), then the rest."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if p.dim() >= 2 else no_decay).append((name, p))
    return [decay, no_decay]


def _rng_state() -> Dict[str, Any]:
    st = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def _set_rng_state(st: Dict[str, Any]) -> None:
    torch.set_rng_state(st["torch"])
    np.random.set_state(st["numpy"])
    random.setstate(st["python"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


class _StopOnInterrupt:
    """While active (main thread only), Ctrl-C sets ``requested`` instead of raising, so the training loop
    stops between two steps, writes its checkpoint and then raises KeyboardInterrupt; a second Ctrl-C
    raises at once."""

    def __init__(self) -> None:
        self.requested = False
        self._old: Any = None

    def __enter__(self) -> "_StopOnInterrupt":
        import signal
        import threading
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            import signal
            signal.signal(signal.SIGINT, self._old)


class Trainer:
    """One training run: holds model, optimiser and data; ``run()`` trains to ``cfg.steps``.

    ``encoder``: the example encoder (records, seed) -> [(tokens, mask)]; ``tokenizer_info``: dict with
    ``vocab_size``, ``pad_id``, ``vocab_version``. Both default to the MAV format's (mavgame.mav) for the
    data set's game.
    """

    def __init__(self, cfg: TrainConfig, encoder: Optional[Callable] = None,
                 tokenizer_info: Optional[Dict[str, Any]] = None, evaluate_fn: Optional[Callable] = None):
        cfg.validate()
        # one of several processes (torchrun's environment, or a process group the caller made): join it
        self.dist = distributed.init(cfg.device)
        self.mode, self.micro_per_rank = distributed.split_step(cfg.batch_size, cfg.grad_accum,
                                                                self.dist.world_size)
        self.out = Path(cfg.out)
        self.out.mkdir(parents=True, exist_ok=True)
        ckpt_path = self.out / CHECKPOINT
        self.ckpt = load_checkpoint(ckpt_path) if ckpt_path.exists() else None
        cfg = dataclasses.replace(cfg, vocab_version=self._pick_vocab(cfg))
        self.cfg = cfg
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.train_store = PositionStore(Path(cfg.data) / "train")
        val_dir = Path(cfg.data) / "val"
        self.val_store = PositionStore(val_dir) if (val_dir / "manifest.json").exists() else None
        if self.val_store is not None and len(self.val_store) == 0:
            self.val_store = None
        self.game = self.train_store.game
        if encoder is None or tokenizer_info is None:
            from ..datasets.dataset import mav_encoder
            enc, info = mav_encoder(self.game, cfg.vocab_version, **cfg.encoder_options)
            encoder = encoder or enc
            tokenizer_info = tokenizer_info or info
        self.tok = dict(tokenizer_info)
        if cfg.search_data:
            encoder = self._mix_search(encoder)
        self.encoder = encoder
        self.evaluate_fn = evaluate_fn
        self.device = pick_device(str(distributed.rank_device(cfg.device, self.dist.local_rank))
                                  if self.dist.active else cfg.device)
        self.precision = pick_precision(cfg.precision, self.device)
        self.fsdp = bool(cfg.fsdp and self.dist.active)
        if cfg.fsdp and not self.dist.active:
            print("mavgame train: note: --fsdp has no effect in a run of one process", file=sys.stderr)
        distributed.check_same(int(self.ckpt["step"]) if self.ckpt is not None else -1, "the checkpoint's step",
                               self.device, self.dist)

        if self.ckpt is not None:
            try:
                self.model_cfg = MAVConfig.from_dict(self.ckpt["model_config"])
            except (TypeError, ValueError, KeyError) as e:
                raise ValueError(f"{str(ckpt_path)!r}: its model_config does not fit this mavgame: {e}") from None
            if self.ckpt["train_config"].get("data") != cfg.data and self.ckpt["train_config"].get("data") \
                    and self.dist.is_main:
                print(f"mavgame train: note: resuming a run made on {self.ckpt['train_config']['data']}",
                      file=sys.stderr)
            check_resume_config(self.ckpt["train_config"], cfg)
        elif cfg.init_from:
            init_weights, self.model_cfg = self._init_weights()
        else:
            self.model_cfg = build_model_config(cfg, int(self.tok["vocab_size"]), self.tok.get("newline_id"))
        torch.manual_seed(cfg.seed)
        self.model = MAVTransformer(self.model_cfg).to(self.device)
        if self.ckpt is None and cfg.init_from:
            self.model.load_state_dict({k: torch.from_numpy(v) for k, v in init_weights.items()})
        if self.ckpt is not None:
            try:
                self.model.load_state_dict(self.ckpt["model"])
            except (RuntimeError, ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{str(ckpt_path)!r}: the checkpoint's state does not fit its model: "
                                 f"{type(e).__name__}: {e}") from None
        # self.model: the model (FSDP: sharded in place); self.train_module: what the training step calls
        self.train_module: torch.nn.Module = self.model
        if self.fsdp:
            distributed.shard_fsdp(self.model)
        elif self.dist.active:
            self.train_module = distributed.wrap_ddp(self.model, self.device)
        fused = self.device.type == "cuda"
        self.opt = torch.optim.AdamW(_param_groups(self.model, cfg.weight_decay), lr=cfg.lr,
                                     betas=(cfg.beta1, cfg.beta2), eps=1e-8, **({"fused": True} if fused else {}))
        self.scaler = None
        if self.precision == "fp16":
            if self.fsdp:
                from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
                self.scaler = ShardedGradScaler("cuda")
            else:
                self.scaler = torch.amp.GradScaler("cuda")
        self.step = 0
        if self.ckpt is not None:
            try:
                if self.fsdp:
                    names = [[n for n, _ in g] for g in _named_groups(self.model)]
                    distributed.load_full_optimizer_state(self.model, self.opt, self.ckpt["optimizer"], names)
                else:
                    self.opt.load_state_dict(self.ckpt["optimizer"])
                if self.scaler is not None and self.ckpt.get("scaler"):
                    self.scaler.load_state_dict(self.ckpt["scaler"])
                self.step = int(self.ckpt["step"])
                _set_rng_state(self.ckpt["rng"])
            except (RuntimeError, ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{str(ckpt_path)!r}: the checkpoint's state does not fit its model: "
                                 f"{type(e).__name__}: {e}") from None
        self.tokens_seen = int(self.ckpt.get("tokens_seen", 0)) if self.ckpt else 0

    def _mix_search(self, encoder):
        """Mix the search trees of cfg.search_data into the train (and val) stores; the mixture's encoder."""
        from ..datasets.search_data import MixedStore, MixtureEncoder, TraceEncoder, parse_shapes
        cfg = self.cfg
        shapes = parse_shapes(cfg.search_shapes)
        search = {s: Path(cfg.search_data) / s for s in ("train", "val")}
        self.train_store = MixedStore(self.train_store, PositionStore(search["train"]), cfg.search_fraction)
        if self.val_store is not None and (search["val"] / "manifest.json").exists():
            val = PositionStore(search["val"])
            if len(val):
                self.val_store = MixedStore(self.val_store, val, cfg.search_fraction)
        max_len = cfg.max_seq_len or int(cfg.model.get("max_seq_len", 0)) or 512
        return MixtureEncoder(encoder, TraceEncoder(self.game, shapes, max_len + 1, vocab_version=cfg.vocab_version,
                                                    form=cfg.trace_form, p_mirror=cfg.search_mirror))

    def _pick_vocab(self, cfg: TrainConfig) -> int:
        """The run's MAV vocabulary version: the configured one, else the checkpoint's, else 2 with search data
        (the trace keywords as single tokens: traces some 40% shorter) and 1 for MAV only (the shipped models'
        vocabulary; MAV text has the same ids in both)."""
        if cfg.vocab_version:
            return cfg.vocab_version
        if self.ckpt is not None:
            saved = self.ckpt["train_config"].get("vocab_version") or self.ckpt.get("tokenizer", {}).get(
                "vocab_version", "")
            if str(saved).isdigit() and int(saved) in (1, 2):
                return int(saved)
        return 2 if cfg.search_data else 1

    def _init_weights(self):
        """(weights, config) of cfg.init_from, the config's max_seq_len replaced by cfg.max_seq_len; a model of
        MAV vocabulary v1 fine-tuned in v2 gets embedding (and output) rows for the new tokens."""
        from .export import load_exported
        weights, mcfg, vocab_version, info = load_exported(self.cfg.init_from)
        want = str(self.tok.get("vocab_version"))
        if want.isdigit():  # the MAV tokenizer: the file must declare a MAV vocabulary of its size
            from ..mav import Tokenizer, check_model_vocab, vocab_fingerprint
            try:
                have = check_model_vocab(vocab_version, mcfg.vocab_size)
            except ValueError as e:
                raise ValueError(f"{self.cfg.init_from}: {e}") from None
            if have == 0:
                raise ValueError(f"{self.cfg.init_from} declares no MAV vocabulary (metadata vocab_version is empty)")
            if have > int(want):
                raise ValueError(f"{self.cfg.init_from} uses MAV vocabulary v{have}: it cannot be fine-tuned in "
                                 f"v{want} (pass --vocab-version {have})")
            src = Tokenizer(have)
            if info.get("vocab_fingerprint") and info["vocab_fingerprint"] != vocab_fingerprint(src):
                raise ValueError(f"{self.cfg.init_from} was trained with a different MAV vocabulary v{have} "
                                 f"(fingerprint {info['vocab_fingerprint']}, installed {vocab_fingerprint(src)})")
            if have < int(want):
                from .grow import extend_vocabulary
                weights, mcfg = extend_vocabulary(weights, mcfg, src, Tokenizer(int(want)))
        elif str(vocab_version) != want:
            raise ValueError(f"{self.cfg.init_from}: vocabulary {vocab_version!r} differs from the tokenizer's "
                             f"{want!r}")
        if self.cfg.max_seq_len:
            mcfg = MAVConfig.from_dict({**mcfg.to_dict(), "max_seq_len": self.cfg.max_seq_len})
        if mcfg.abs_pos and self.cfg.max_seq_len:
            raise ValueError("a model with learned absolute positions cannot change its max_seq_len")
        return weights, mcfg

    # -- data -------------------------------------------------------------------------------------
    def _loader(self):
        """This rank's micro-batches from the current step on (all of them for one process):
        :class:`mavgame.model.distributed.RankBatches` over the data stream."""
        cfg = self.cfg
        ds = MAVDataset(self.train_store, self.encoder, cfg.batch_size, seed=cfg.seed,
                        pad_id=int(self.tok["pad_id"]), max_len=self.model_cfg.max_seq_len + 1,
                        repeats=finished_repeats(self.train_store, cfg.finished_repeat))
        ds = distributed.RankBatches(ds, self.step, cfg.steps - self.step, cfg.grad_accum, self.dist.rank,
                                     self.dist.world_size)
        kw = dict(batch_size=None, num_workers=cfg.workers)
        if cfg.workers:
            kw.update(prefetch_factor=4, persistent_workers=False)
        return torch.utils.data.DataLoader(ds, **kw)

    def _autocast(self):
        if self.precision == "fp32":
            return torch.autocast(self.device.type, enabled=False)
        dt = torch.bfloat16 if self.precision == "bf16" else torch.float16
        return torch.autocast(self.device.type, dtype=dt)

    # -- evaluation -------------------------------------------------------------------------------
    @torch.no_grad()
    def validate(self) -> Dict[str, float]:
        """Validation loss and token accuracy on fixed held-out batches (+ generation metrics).

        Several processes: rank 0 evaluates (the others get {}); with FSDP every rank takes part in the
        validation loss (the forward passes are collective) and rank 0 decodes on a gathered copy."""
        out: Dict[str, float] = {}
        if self.val_store is None or not (self.dist.is_main or self.fsdp):
            return out
        self.model.eval()
        cfg = self.cfg
        tot_loss, tot_n, tot_c = 0.0, 0, 0
        n_val = len(self.val_store)
        for j in range(cfg.eval_batches):
            idx = [(j * cfg.batch_size + i) for i in range(cfg.batch_size)]
            if idx[0] >= n_val:
                break
            recs = [self.val_store.record(i) for i in idx if i < n_val]
            ex = self.encoder(recs, batch_seed(cfg.seed + 7919, j))
            toks, mask = pad_batch(ex, int(self.tok["pad_id"]), self.model_cfg.max_seq_len + 1)
            with self._autocast():
                loss, n, c = masked_loss(self.model, torch.from_numpy(toks).to(self.device),  # unweighted
                                         torch.from_numpy(mask).clamp(max=1).to(self.device))
            tot_loss += float(loss) * n
            tot_n += n
            tot_c += c
        if tot_n:
            out["val_loss"] = tot_loss / tot_n
            out["val_token_acc"] = tot_c / tot_n
        if self.evaluate_fn is not None and cfg.gen_eval_positions > 0:
            sharded = self.model
            if self.fsdp:
                self.model = self.gathered_model(everywhere=False)
            try:
                if self.dist.is_main:
                    out.update(self.evaluate_fn(self))
            except Exception as e:  # a metrics failure must not end a long run; it is logged
                print(f"mavgame train: warning: generation metrics failed at step {self.step}: {e!r}",
                      file=sys.stderr)
                out["eval_error"] = repr(e)
            finally:
                self.model = sharded
        self.model.train()
        return out if self.dist.is_main else {}

    def gathered_model(self, everywhere: bool = True) -> MAVTransformer:
        """The model whole, as a plain module on this rank's device (FSDP: gathered from the shards, a
        collective, on every rank or, without ``everywhere``, on rank 0 only, the others getting the sharded
        model back; otherwise the model itself)."""
        if not self.fsdp:
            return self.model
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
        sd = get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True,
                                                                       cpu_offload=not everywhere))
        if not everywhere and not self.dist.is_main:
            return self.model
        plain = MAVTransformer(self.model_cfg).to(self.device)
        plain.load_state_dict(sd)
        return plain

    def unshard(self) -> None:
        """End an FSDP run's sharding (collective): ``self.model`` becomes the whole model on every rank, for
        the final evaluation and the export; no more training steps after this."""
        if self.fsdp:
            self.model = self.train_module = self.gathered_model()
            self.fsdp = False

    # -- checkpoints ------------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write OUT/checkpoint.pt (rank 0, atomically; with FSDP every rank calls it: the full model and
        optimiser state are gathered to rank 0). The same file resumes any number of processes."""
        if self.fsdp:
            model_sd = distributed.full_model_state(self.model)
            opt_sd = distributed.full_optimizer_state(self.model, self.opt)
        elif self.dist.is_main:
            model_sd, opt_sd = self.model.state_dict(), self.opt.state_dict()
        if not self.dist.is_main:
            return
        state = {"model": model_sd, "optimizer": opt_sd, "step": self.step,
                 "model_config": self.model_cfg.to_dict(), "train_config": dataclasses.asdict(self.cfg),
                 "rng": _rng_state(), "tokens_seen": self.tokens_seen, "tokenizer": self.tok,
                 "scaler": self.scaler.state_dict() if self.scaler is not None else None,
                 "world_size": self.dist.world_size}
        save_checkpoint(self.out / CHECKPOINT, state)

    def export(self, path: Optional[str] = None, info: Optional[Dict[str, Any]] = None) -> Path:
        """Write the model as safetensors (rank 0; an FSDP run is first gathered: every rank calls this)."""
        from .export import export_model
        path = Path(path) if path else self.out / EXPORT
        self.unshard()
        if not self.dist.is_main:
            return path
        meta = {"game": self.game, "steps": self.step, "tokens_seen": self.tokens_seen,
                "train_config": dataclasses.asdict(self.cfg)}
        if self.cfg.search_data:
            meta["trace_form"] = self.cfg.trace_form  # the form the mav_is agent prompts and parses in
        if self.tok.get("vocab_fingerprint"):
            meta["vocab_fingerprint"] = self.tok["vocab_fingerprint"]
        meta.update(info or {})
        export_model(path, {k: v for k, v in self.model.state_dict().items()}, self.model_cfg,
                     str(self.tok.get("vocab_version", "")), info=meta, dtype=self.cfg.export_dtype)
        return path

    def log(self, rec: Dict[str, Any]) -> None:
        """Append ``rec`` to OUT/log.jsonl (rank 0 only)."""
        if not self.dist.is_main:
            return
        with open(self.out / LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(json_safe(rec), sort_keys=True) + "\n")

    # -- the loop ---------------------------------------------------------------------------------
    def run(self, stop_after: Optional[int] = None) -> Dict[str, Any]:
        """Train until cfg.steps (or for at most ``stop_after`` more steps: a resumable partial run)."""
        cfg = self.cfg
        stop = cfg.steps if stop_after is None else min(cfg.steps, self.step + stop_after)
        self.model.train()
        if self.step >= cfg.steps:
            return {"step": self.step}
        bar = None
        if cfg.progress and self.dist.is_main:
            from .._progress import tqdm
            bar = tqdm(total=cfg.steps, initial=self.step, desc="train", unit="step", dynamic_ncols=True,
                       file=sys.stderr)
        it = iter(self._loader())
        t0, tok0 = time.perf_counter(), self.tokens_seen
        run_loss, run_n, last = 0.0, 0, {}
        with _StopOnInterrupt() as interrupt:
            last = self._steps(it, stop, bar, t0, tok0, run_loss, run_n, last, interrupt)
        if bar is not None:
            bar.close()
        if interrupt.requested:
            self.checkpoint()
            raise KeyboardInterrupt(f"training interrupted at step {self.step}; the checkpoint "
                                    f"{self.out / CHECKPOINT} holds it: run the same command to resume")
        return last

    def _steps(self, it, stop, bar, t0, tok0, run_loss, run_n, last, interrupt) -> Dict[str, Any]:
        cfg = self.cfg
        world = self.dist.world_size
        while self.step < stop and not (interrupt.requested and not self.dist.active):
            lr = lr_at(self.step, cfg)
            for g in self.opt.param_groups:
                g["lr"] = lr
            micro = [next(it) for _ in range(self.micro_per_rank)]
            # the step's target tokens and padded tokens over all ranks, and whether any rank was interrupted
            n_total, tok_step, stop_now = distributed.all_sum(
                [sum(int(b["mask"][:, 1:].sum()) for b in micro), sum(b["tokens_counted"] for b in micro),
                 float(interrupt.requested)], self.device, self.dist)
            if stop_now:
                interrupt.requested = True
                break
            step_loss = 0.0
            for i, b in enumerate(micro):
                toks = b["tokens"].to(self.device, non_blocking=True)
                mask = b["mask"].to(self.device, non_blocking=True)
                sync = i == len(micro) - 1   # gradients are reduced over the ranks after the last micro-batch
                with self._grad_sync(sync):
                    with self._autocast():
                        loss, n, _ = masked_loss(self.model, toks, mask, forward=self.train_module)
                    # weight each micro-batch by its share of the step's target tokens (all ranks): the step's
                    # loss is the token mean; DDP and FSDP average the ranks' gradients, hence the * world
                    scaled = loss * (n * world / max(1.0, n_total))
                    if self.scaler is not None:
                        self.scaler.scale(scaled).backward()
                    else:
                        scaled.backward()
                step_loss += float(loss.detach()) * n
            self.tokens_seen += int(tok_step)
            if self.scaler is not None:
                self.scaler.unscale_(self.opt)
            gnorm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
            if self.scaler is not None:
                self.scaler.step(self.opt)
                self.scaler.update()
            else:
                self.opt.step()
            self.opt.zero_grad(set_to_none=True)
            self.step += 1
            run_loss += step_loss
            run_n += n_total
            if bar is not None:
                bar.update(1)
            if self.step % cfg.log_every == 0 or self.step == cfg.steps:
                run_loss, = distributed.all_sum([run_loss], self.device, self.dist)
                dt = time.perf_counter() - t0
                last = {"step": self.step, "loss": run_loss / max(1, run_n), "lr": lr,
                        "grad_norm": distributed.local_value(gnorm),
                        "tokens_per_s": (self.tokens_seen - tok0) / dt if dt > 0 else 0.0,
                        "tokens_seen": self.tokens_seen, "world_size": world}
                self.log(last)
                if bar is not None:
                    bar.set_postfix(loss=f"{last['loss']:.4f}", lr=f"{lr:.2e}",
                                    tok_s=f"{last['tokens_per_s']:.0f}")
                run_loss, run_n = 0.0, 0
                t0, tok0 = time.perf_counter(), self.tokens_seen
            if self.step % cfg.checkpoint_every == 0 or self.step in (cfg.steps, stop):
                self.checkpoint()
            if self.step % cfg.eval_every == 0 or self.step == cfg.steps:
                metrics = self.validate()
                if metrics:
                    metrics["step"] = self.step
                    self.log(metrics)
                    last.update(metrics)
                    if bar is not None:
                        bar.write(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in metrics.items()))
        return last

    def _grad_sync(self, sync: bool):
        """Context of one micro-batch's forward and backward: gradients reduced over the ranks (sync) or
        accumulated locally (DDP's no_sync; FSDP's requires_gradient_sync)."""
        import contextlib
        if self.fsdp:
            distributed.set_grad_sync(self.model, sync)
        elif self.train_module is not self.model and not sync:
            return self.train_module.no_sync()
        return contextlib.nullcontext()


def train(cfg: TrainConfig, encoder=None, tokenizer_info=None, evaluate_fn=None, export: bool = True,
          stop_after: Optional[int] = None):
    """Train (or resume) the run in ``cfg.out``; export the model when it reaches cfg.steps.

    Returns (trainer, last metrics)."""
    tr = Trainer(cfg, encoder, tokenizer_info, evaluate_fn)
    last = tr.run(stop_after)
    if export and tr.step >= cfg.steps:
        tr.export()   # (rank 0 writes it)
    return tr, last
