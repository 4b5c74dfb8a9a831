"""torch.distributed for ``mavgame train``: the process group from torchrun's environment, each rank's share of
a training step, DDP and FSDP wrapping, and full (unsharded) state dicts for the one checkpoint rank 0 writes.

A run of ``N`` processes trains on the same global batch as one process: step ``s`` consumes the data
stream's micro-batches ``s*K .. s*K+K-1`` (``K`` = ``grad_accum``, each of ``batch_size`` examples) whatever
``N`` is, and the gradient is the token-weighted mean over all of them (each rank's loss is weighted by its
share of the step's target tokens, all-reduced before the backward pass, and DDP/FSDP average the
gradients). A rank's share (:func:`split_step`):

- ``"whole"`` when ``K`` is a multiple of ``N``: rank ``r`` takes the micro-batches ``k = r, r+N, ...`` of
  each step whole (no example is encoded twice);
- ``"slice"`` otherwise (``batch_size`` a multiple of ``N``): every rank builds every micro-batch and keeps
  its ``batch_size/N`` examples ``[r*B/N, (r+1)*B/N)``, in the stream's example order (each example's
  randomisation depends on its whole batch, so the batch is built whole).

The world size is therefore not part of a run's recipe: a checkpoint written by ``N`` processes resumes on
``M`` (or on one), with DDP or FSDP, within float tolerance of the uninterrupted run.

Nothing here is imported by ``import mavgame``; it needs PyTorch.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from torch.utils.data import IterableDataset, get_worker_info

from ..datasets.dataset import ExampleOrder, MAVDataset

#: Collective timeout of the training process group (seconds): a rank waits this long in a collective for
#: the others (rank 0 alone runs the evaluations between steps, and writes the checkpoints).
DEFAULT_TIMEOUT_S = 3600.0
#: Timeout of :func:`wait_for_rank0` (rank 0 generating the position set while the others wait).
DATA_TIMEOUT_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the run: ``rank`` of ``world_size`` (``local_rank`` on its node), and the
    process group's backend ("" for a run of one process)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str = ""

    @property
    def active(self) -> bool:
        """True when there is more than one process."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """True on rank 0 (the one that logs, evaluates and writes files)."""
        return self.rank == 0


SINGLE = DistInfo()


def env_world_size() -> int:
    """The world size torchrun (or another launcher) set in the environment (1 when none did)."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1") or 1))
    except ValueError:
        return 1


def current() -> DistInfo:
    """The process group's rank and size once it is initialised, else :data:`SINGLE`."""
    if dist.is_available() and dist.is_initialized():
        rank = dist.get_rank()
        local = int(os.environ.get("LOCAL_RANK", rank))
        return DistInfo(rank, dist.get_world_size(), local, str(dist.get_backend()))
    return SINGLE


def rank_device(name: str, local_rank: int = 0) -> torch.device:
    """The device of a rank: ``auto`` is ``cuda:LOCAL_RANK`` where torch sees GPUs, else the CPU; ``cuda``
    without an index is ``cuda:LOCAL_RANK``; an explicit ``cuda:N`` or ``cpu`` is kept."""
    if name == "auto":
        return torch.device(f"cuda:{local_rank}") if torch.cuda.is_available() else torch.device("cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and dev.index is None:
        return torch.device(f"cuda:{local_rank}")
    return dev


def backend_for(device: torch.device) -> str:
    """NCCL for GPUs, gloo for CPUs."""
    return "nccl" if device.type == "cuda" else "gloo"


def init(device: str = "auto", timeout_s: float = DEFAULT_TIMEOUT_S) -> DistInfo:
    """Join the run's process group when a launcher started this process as one of several (``WORLD_SIZE``
    > 1 with ``RANK``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` in the environment, as torchrun sets
    them): NCCL when the rank's device (:func:`rank_device`) is a GPU, gloo otherwise. Returns the group that
    already exists when there is one, and :data:`SINGLE` (nothing initialised) for one process."""
    if dist.is_available() and dist.is_initialized():
        return current()
    if env_world_size() <= 1:
        return SINGLE
    if not dist.is_available():
        raise RuntimeError("this PyTorch build has no torch.distributed")
    missing = [k for k in ("RANK", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        raise RuntimeError(f"WORLD_SIZE is {env_world_size()} but {', '.join(missing)} is not set: start the "
                           "processes with torchrun (or mavgame train --nproc N)")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = rank_device(device, local)
    backend = backend_for(dev)
    kw: Dict[str, Any] = {}
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
        kw["device_id"] = dev
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s), **kw)
    return current()


def shutdown(together: bool = True) -> None:
    """Leave the process group (when one was initialised). ``together`` (a run that ended well): a barrier
    first, so that no rank tears its group down and exits while another is still at work on it (rank 0
    writing the export, or evaluating: hence the long timeout of :func:`wait_for_rank0`), which made gloo
    abort a process at exit now and then. Without it (a rank that is failing), leave at once rather than wait
    for ranks that may never come."""
    if dist.is_available() and dist.is_initialized():
        try:
            if together:
                wait_for_rank0(current())
        finally:
            dist.destroy_process_group()


def wait_for_rank0(info: DistInfo, timeout_s: float = DATA_TIMEOUT_S) -> None:
    """Barrier with a long timeout, on a gloo group of its own: the other ranks wait here while rank 0
    prepares what they all read (the position set), which may take far longer than a collective's timeout."""
    if not info.active:
        return
    group = dist.new_group(backend="gloo", timeout=timedelta(seconds=timeout_s))
    dist.barrier(group=group)
    dist.destroy_process_group(group)


def all_sum(values: Sequence[float], device: torch.device, info: DistInfo) -> List[float]:
    """``values`` summed over the ranks (float64; the values themselves for one process)."""
    if not info.active:
        return [float(v) for v in values]
    t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return [float(v) for v in t.tolist()]


def check_same(value: int, what: str, device: torch.device, info: DistInfo) -> None:
    """ValueError on every rank when the ranks disagree on ``value`` (e.g. the checkpoint step each read)."""
    if not info.active:
        return
    t = torch.tensor([value, -value], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    hi, lo = int(t[0]), -int(t[1])
    if hi != lo:
        raise ValueError(f"the ranks disagree on {what} (from {lo} to {hi}): every rank must see the same run "
                         "directory (--out) and data (--data), e.g. on a file system all nodes share")


# -- each rank's share of a step ------------------------------------------------------------------

def split_step(batch_size: int, grad_accum: int, world_size: int) -> Tuple[str, int]:
    """How each of ``world_size`` ranks takes its share of a step's ``grad_accum`` micro-batches of
    ``batch_size`` examples: ``("whole", m)`` (``m`` whole micro-batches per rank) when ``grad_accum`` is a
    multiple of ``world_size``, else ``("slice", grad_accum)`` (``batch_size/world_size`` examples of every
    micro-batch); ValueError when neither divides."""
    if world_size <= 1:
        return "whole", grad_accum
    if grad_accum % world_size == 0:
        return "whole", grad_accum // world_size
    if batch_size % world_size == 0:
        return "slice", grad_accum
    raise ValueError(f"{world_size} processes cannot share micro-batches of {batch_size} examples x {grad_accum}: "
                     f"make --batch-size or --grad-accum a multiple of {world_size}")


class RankBatches(IterableDataset):
    """This rank's micro-batches of steps ``first_step .. first_step+steps-1`` of ``ds``'s stream (``ds``
    serves :meth:`MAVDataset.make_batch` only), in training order; DataLoader workers take turns (item ``i``
    is made by worker ``i mod W``, and the DataLoader's round robin restores the order).

    Each item is a :meth:`MAVDataset.make_batch` dict (sliced and right-trimmed to its last target token in
    ``"slice"`` mode) plus ``"tokens_counted"``: the padded token count this rank adds to the run's
    ``tokens_seen`` (the whole batch's on one rank, so that the sum over ranks is one process's count)."""

    def __init__(self, ds: MAVDataset, first_step: int, steps: int, grad_accum: int, rank: int = 0,
                 world_size: int = 1):
        self.ds = ds
        self.first_step, self.steps, self.grad_accum = int(first_step), max(0, int(steps)), int(grad_accum)
        self.rank, self.world_size = int(rank), int(world_size)
        self.mode, self.per_step = split_step(ds.batch_size, self.grad_accum, self.world_size)

    def make_batch(self, j: int, order: Optional[ExampleOrder] = None) -> Dict[str, Any]:
        """Batch ``j`` of the stream, whole (:meth:`MAVDataset.make_batch`)."""
        return self.ds.make_batch(j, order)

    def batch_numbers(self) -> Iterator[int]:
        """The stream's batch numbers this rank makes, in order."""
        K, N = self.grad_accum, self.world_size
        for s in range(self.first_step, self.first_step + self.steps):
            if self.mode == "whole":
                for m in range(self.per_step):
                    yield s * K + self.rank + m * N
            else:
                yield from range(s * K, (s + 1) * K)

    def share(self, b: Dict[str, Any]) -> Dict[str, Any]:
        """This rank's part of batch ``b``."""
        if self.mode == "whole":
            return {**b, "tokens_counted": int(b["tokens"].numel())}
        per = self.ds.batch_size // self.world_size
        rows = slice(self.rank * per, (self.rank + 1) * per)
        mask = b["mask"][rows]
        cols = torch.nonzero(mask.any(0)).flatten()
        T = max(2, int(cols[-1]) + 1) if cols.numel() else 2
        T = min(T, int(mask.shape[1]))
        return {"tokens": b["tokens"][rows, :T].contiguous(), "mask": mask[:, :T].contiguous(),
                "index": b["index"][rows], "epoch": b["epoch"][rows], "batch": b["batch"],
                "tokens_counted": int(b["tokens"].numel()) if self.rank == 0 else 0}

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        order = ExampleOrder(len(self.ds.store), self.ds.seed, self.ds.repeats)
        for i, j in enumerate(self.batch_numbers()):
            if i % nw == wid:
                yield self.share(self.ds.make_batch(j, order))


# -- wrapping -------------------------------------------------------------------------------------

def wrap_ddp(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """``model`` in DistributedDataParallel (its buffers are constants: not broadcast)."""
    from torch.nn.parallel import DistributedDataParallel
    ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids, broadcast_buffers=False)


def _fully_shard():
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import fully_shard  # torch 2.4 and 2.5
        except ImportError:
            raise RuntimeError("--fsdp needs FSDP2 (torch.distributed.fsdp.fully_shard, torch >= 2.4)") from None
    return fully_shard


def shard_fsdp(model: torch.nn.Module) -> torch.nn.Module:
    """Shard ``model`` in place with FSDP2: each transformer block, then the root (embeddings, final norm,
    output layer). Parameters become DTensors sharded over the ranks; names are unchanged."""
    fully_shard = _fully_shard()
    for block in getattr(model, "blocks", []):
        fully_shard(block)
    fully_shard(model)
    return model


def is_fsdp(model: torch.nn.Module) -> bool:
    """True when ``model`` was sharded by :func:`shard_fsdp`."""
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # pragma: no cover - old torch
        return False
    return any(isinstance(p, DTensor) for p in model.parameters())


def set_grad_sync(model: torch.nn.Module, sync: bool) -> None:
    """FSDP: whether this backward reduce-scatters the gradients (False while accumulating micro-batches)."""
    fn = getattr(model, "set_requires_gradient_sync", None)
    if fn is not None:
        fn(sync)


def local_value(t: Any) -> float:
    """A scalar tensor (a DTensor's full value) as a float."""
    if hasattr(t, "full_tensor"):
        t = t.full_tensor()
    return float(t)


# -- full state dicts -----------------------------------------------------------------------------

def _sd_options(**kw):
    from torch.distributed.checkpoint.state_dict import StateDictOptions
    return StateDictOptions(full_state_dict=True, **kw)


def full_model_state(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """An FSDP model's full state dict, on the CPU of rank 0 ({} on the other ranks); collective: every
    rank calls it."""
    from torch.distributed.checkpoint.state_dict import get_model_state_dict
    return get_model_state_dict(model, options=_sd_options(cpu_offload=True))


def optimizer_to_plain(osd: Dict[str, Any]) -> Dict[str, Any]:
    """An optimizer state dict keyed by parameter names (torch.distributed.checkpoint's form) in the form of
    ``Optimizer.state_dict()`` (parameters numbered in param-group order), which a run of one process loads."""
    if not osd:
        return {}
    groups, state, n = [], {}, 0
    for g in osd["param_groups"]:
        ids = []
        for name in g["params"]:
            if name in osd["state"]:
                state[n] = osd["state"][name]
            ids.append(n)
            n += 1
        groups.append({**g, "params": ids})
    return {"state": state, "param_groups": groups}


def optimizer_from_plain(plain: Dict[str, Any], names: Sequence[Sequence[str]]) -> Dict[str, Any]:
    """The inverse of :func:`optimizer_to_plain`: ``names`` lists the parameter names of each param group in
    the optimizer's order."""
    groups, state = [], {}
    if len(plain["param_groups"]) != len(names):
        raise ValueError(f"the optimizer state has {len(plain['param_groups'])} param groups, the model "
                         f"{len(names)}")
    for g, gnames in zip(plain["param_groups"], names):
        if len(g["params"]) != len(gnames):
            raise ValueError(f"an optimizer param group of {len(g['params'])} parameters for {len(gnames)}")
        for pid, name in zip(g["params"], gnames):
            if pid in plain["state"]:
                state[name] = plain["state"][pid]
        groups.append({**g, "params": list(gnames)})
    return {"state": state, "param_groups": groups}


def full_optimizer_state(model: torch.nn.Module, opt: torch.optim.Optimizer) -> Dict[str, Any]:
    """An FSDP run's optimizer state, whole, in ``Optimizer.state_dict()``'s form on rank 0 ({} on the
    others); collective."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict
    return optimizer_to_plain(get_optimizer_state_dict(model, opt, options=_sd_options(cpu_offload=True)))


def load_full_optimizer_state(model: torch.nn.Module, opt: torch.optim.Optimizer, plain: Dict[str, Any],
                              names: Sequence[Sequence[str]]) -> None:
    """Load a whole optimizer state (``Optimizer.state_dict()``'s form, as every checkpoint holds it) into an
    FSDP run's sharded optimizer; every rank passes the same state."""
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict
    set_optimizer_state_dict(model, opt, optimizer_from_plain(plain, names), options=_sd_options())


def launch_command(nproc: int, argv: Sequence[str], python: Optional[str] = None) -> List[str]:
    """The command that runs ``python -m mavgame ARGV`` in ``nproc`` processes on this node through torchrun
    (``python -m torch.distributed.run --standalone``)."""
    import sys
    return [python or sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
            "-m", "mavgame", *argv]


__all__ = ["DEFAULT_TIMEOUT_S", "DATA_TIMEOUT_S", "DistInfo", "SINGLE", "env_world_size", "current",
           "rank_device", "backend_for", "init", "shutdown", "wait_for_rank0", "all_sum", "check_same",
           "split_step", "RankBatches", "wrap_ddp", "shard_fsdp", "is_fsdp", "set_grad_sync", "local_value",
           "full_model_state", "optimizer_to_plain", "optimizer_from_plain", "full_optimizer_state",
           "load_full_optimizer_state", "launch_command"]
