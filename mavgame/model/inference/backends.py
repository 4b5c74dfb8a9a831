"""Where a MAV model runs: the torch module behind the reference interface, the native C inference engine, and
the probing of the devices each can use (the NumPy reference is :mod:`.reference`)."""
from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from ..config import MAVConfig
from .decode import Generation, _size_arg
from .threads import _TorchThreads, default_torch_threads


class _TorchBackend:
    """Runs the torch MAVTransformer behind the same prefill/step interface as NumpyTransformer.

    ``threads``: torch intra-op threads while this backend generates (0: :func:`default_torch_threads`); the
    process-wide setting is restored after each generation call, so the caller's own torch work keeps its
    thread count. A backend wrapping a training module (:meth:`from_module`) leaves the setting alone.

    Threads: every generation has its own KV cache and the module runs under ``no_grad``, so concurrent calls
    are safe (not while the module trains); they race on the process-wide intra-op thread count."""

    def __init__(self, weights: Dict[str, np.ndarray], cfg: MAVConfig, device: str, threads: int = 0):
        import torch

        from ..transformer import MAVTransformer
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        self.threads = threads or default_torch_threads()
        self.cfg = cfg
        self.device = torch.device(device)
        self.model = MAVTransformer(cfg)
        self.model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
        self.model.to(self.device).eval()

    @classmethod
    def from_module(cls, model, device=None) -> "_TorchBackend":
        self = cls.__new__(cls)
        import torch
        self.cfg = model.cfg
        self.model = model
        self.threads = 0
        self.device = next(model.parameters()).device if device is None else torch.device(device)
        return self

    def threads_scope(self) -> "_TorchThreads":
        return _TorchThreads(self.threads)

    def new_cache(self, batch: int, capacity: int):
        from ..transformer import KVCache
        return KVCache(self.cfg, batch, capacity, device=self.device)

    @staticmethod
    def select_cache(cache, rows: np.ndarray):
        import torch
        cache.reorder(torch.as_tensor(rows, dtype=torch.long, device=cache.k[0].device))
        return cache

    def forward(self, tokens: np.ndarray, positions: np.ndarray, key_valid: np.ndarray, cache) -> np.ndarray:
        import torch
        with torch.no_grad():
            dev = self.device
            h = self.model(torch.as_tensor(tokens, dtype=torch.long, device=dev),
                           positions=torch.as_tensor(positions, dtype=torch.long, device=dev),
                           key_valid=torch.as_tensor(key_valid, dtype=torch.bool, device=dev), cache=cache,
                           return_hidden=True)
            return self.model.logits(h[:, -1]).float().cpu().numpy()


def _torch_auto_device() -> str:
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def native_available() -> bool:
    """True when the C extension has the native inference engine (csrc/model)."""
    from ... import _core
    return hasattr(_core, "MavEngine")


def native_device_error(device: str) -> Optional[str]:
    """None if the native engine can run on ``device``, else why not, in one sentence: a device other than
    'cpu', 'cuda' or 'cuda:0', or (for 'cuda') the CUDA kernels (kernels/, ``_core.WITH_CUDA``) missing
    from this build, or no usable CUDA device (``_core.cuda_status()`` says which)."""
    from ... import _core
    device = str(device)
    if device == "cpu":
        return None
    if device not in ("cuda", "cuda:0"):
        return f"the native backend runs on 'cpu' or 'cuda' (the first GPU, 'cuda:0'), not on {device!r}"
    n, why = _core.cuda_status()
    if n == 0:
        return f"device={device!r}: {why}; the native backend runs on the CPU with device='cpu'"
    return None


def native_device(device: str) -> str:
    """The device the native engine uses for ``device``: 'cpu', 'cuda' (ValueError saying why where it
    cannot), or for 'auto' the GPU when the build has the CUDA kernels and a device is usable, else the CPU
    (with a one-line note on stderr, once, when the build has the kernels but no GPU is usable)."""
    from ... import _core
    if device != "auto":
        why = native_device_error(device)
        if why is not None:
            raise ValueError(why)
        return "cpu" if device == "cpu" else "cuda"
    n, why = _core.cuda_status()
    if n > 0:
        return "cuda"
    if _core.WITH_CUDA:
        _note_once(f"mavgame: native engine on the CPU ({why})")
    return "cpu"


@functools.lru_cache(maxsize=None)
def _note_once(line: str) -> None:
    print(line, file=sys.stderr)


class NativeBackend:
    """The native C inference engine (``mavgame._core.MavEngine``, csrc/model) behind :func:`generate_ids`.

    Loads the file itself (the C loader validates it and names the offending field of a malformed one),
    runs prefill and the decode loop in C with the GIL released, with ``threads`` threads (0: 1) and up to
    ``max_batch`` sequences at once; ``prefix_sharing`` computes every prefix shared by a group of a batch's
    prompts (their MAV header, a state-tracking ``%prev_state``) once. Results do not depend on the thread
    count, the batch size or prefix sharing. ``device``: ``"cpu"``, ``"cuda"`` (the engine's CUDA forward pass,
    kernels/forward.cu: weights uploaded once, KV cache and token choice on the GPU; ValueError saying why where
    the build or the machine cannot) or ``"auto"`` (the GPU when usable, else the CPU). ``weights``: ``"float32"``
    (the default) or ``"bf16"``: the CUDA engine keeps its weight matrices (attention projections, MLP, output
    layer) in bfloat16 on the GPU, half their memory, with float32 accumulation; ValueError on the CPU.

    Threads: one generation (or ``logits``) at a time; a call from another thread while one runs raises
    RuntimeError "MavEngine is in use by another thread" (serialise the calls, or make one backend per thread)."""

    def __init__(self, path, threads: int = 0, max_batch: int = 64, prefix_sharing: bool = True, simd: bool = True,
                 device: str = "cpu", weights: str = "float32"):
        from ... import _core
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        if weights not in ("float32", "bf16"):
            raise ValueError(f"weights must be 'float32' or 'bf16' (device='cuda' only), not {weights!r}")
        if not Path(path).is_file():
            raise FileNotFoundError(f"no MAV model file at {path}")
        self.path = str(path)
        self.threads = threads or 1
        self.max_batch = max_batch
        self.prefix_sharing = prefix_sharing
        self.simd = simd
        self.device = native_device(device)
        if weights == "bf16" and self.device != "cuda":
            raise ValueError(f"weights='bf16' is an option of the CUDA engine (device='cuda'), not of "
                             f"device={device!r}")
        self.weights = weights
        self.engine = _core.MavEngine(self.path, threads=self.threads, max_batch=max_batch, simd=simd,
                                      device=self.device, weights=weights)
        self.cfg = MAVConfig.from_json(self.engine.config_json)

    def ensure_prefix_cache(self, tokens: int) -> None:
        """Grow the engine's cross-batch prefix cache (keys and values of prompt prefixes kept between
        requests, least recently used blocks replaced) to at least ``tokens`` tokens; a larger one is kept.
        Generation that continues its own output in several requests (a MAV-IS trace with copied lines)
        then recomputes only what each request adds."""
        if self.engine.prefix_cache < tokens:
            self.engine.set_prefix_cache(int(tokens))

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("engine")           # a C object: reloaded from the file on unpickling
        d["_prefix_cache"] = self.engine.prefix_cache
        return d

    def __setstate__(self, d):
        from ... import _core
        cache = d.pop("_prefix_cache", 0)
        self.__dict__.update(d)
        self.engine = _core.MavEngine(self.path, threads=self.threads, max_batch=self.max_batch, simd=self.simd,
                                      device=getattr(self, "device", "cpu"), prefix_cache=cache,
                                      weights=getattr(self, "weights", "float32"))

    def generate_ids(self, prompts, max_new_tokens, stop_ids, bucket_ids=None, group_ids=None) -> List["Generation"]:
        if len(prompts) == 0:
            return []
        if _size_arg("max_new_tokens", max_new_tokens, 0) == 0:
            return [Generation([]) for _ in prompts]
        group = sorted(set(int(t) for t in group_ids)) if group_ids is not None else None
        raw = self.engine.generate([np.asarray(p, dtype=np.int64) for p in prompts], int(max_new_tokens),
                                   list(stop_ids), group_ids=group, bucket_ids=bucket_ids,
                                   prefix_sharing=self.prefix_sharing)
        outs = []
        for ids, steps, probs, finished in raw:
            g = Generation(ids.tolist(), steps.tolist(), finished=bool(finished))
            if len(steps):
                g.value_probs = probs
            outs.append(g)
        return outs

    def logits(self, prompt) -> np.ndarray:
        """Logits [V] at the last position of one token-id prompt."""
        return self.engine.logits(np.asarray(prompt, dtype=np.int64))

    def stats(self) -> Dict[str, float]:
        """Token counters of the engine: prompt tokens, tokens computed, tokens saved by prefix sharing..."""
        return self.engine.stats()


__all__ = ["NativeBackend", "native_available", "native_device", "native_device_error"]
