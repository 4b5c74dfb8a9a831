"""Export of the chess policy network (:mod:`mavgame.policy.network`) for the native engine, and loading it back.

The exported file is plain safetensors (written with NumPy, :func:`mavgame.model.export.save_safetensors`):
the tensors of :class:`~mavgame.policy.network.PolicyNet`'s ``state_dict`` under their names and in their
shapes, float16 (default), bfloat16 or float32, and metadata ``format`` = ``mavgame-policy``,
``format_version`` = ``1``, ``config`` (``{"channels", "blocks", "head"}`` as JSON) and free-form ``info``::

    stem.weight        [C, 41, 1, 1]      stem.bias        [C]
    tower.{i}.a.weight [C, C, 3, 3]       tower.{i}.a.bias [C]     (and .b, for each residual block i)
    head_conv.weight   [32, C, 1, 1]      head_conv.bias   [32]    (head "conv" only)
    fc.weight          [1968, 16 C or 2048]   fc.bias      [1968]

The native engine (``mavgame._core.PolicyNet``, csrc/model/policy_net.h) reads it without PyTorch; the
PyTorch :class:`~mavgame.policy.network.PolicyModel` loads it too, so one file serves both backends (the network
shipped as ``policy=shipped`` is such a file: ``mavgame/data/policy_chess.safetensors``).

- :func:`export_policy`: a ``policy.pt`` (or a PolicyModel / PolicyNet) -> an exported file (needs PyTorch).
- :func:`load_native_policy`: any policy file -> ``_core.PolicyNet`` (a ``.pt`` is converted in memory, which
  needs PyTorch; an exported file does not).
- :func:`read_policy_file`: an exported file -> (config dict, NumPy state_dict) (no PyTorch).

    mavgame policy export --model runs/policy/policy.pt --out runs/policy/policy.safetensors
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Tuple, Union

import numpy as np

from .. import _core
from .._atomic import write_bytes_atomic
from ..model.export import check_finite_weights, float32_to_bf16_bits, load_safetensors, safetensors_bytes

FORMAT_NAME = "mavgame-policy"
FORMAT_VERSION = "1"
DTYPES = ("float16", "bfloat16", "float32")
POLICY_PT_FORMAT = "mavgame-policy-1"   # the format field of a policy.pt (mavgame.policy.network.FORMAT)

PathLike = Union[str, os.PathLike]


#: PolicyConfig fields whose value must be this for the native engine (the other values are PyTorch-only variants)
NATIVE_ONLY = {"arch": "residual", "pool": 2, "inputs": "planes"}


def _head(path: PathLike) -> bytes:
    with open(path, "rb") as f:
        return f.read(9)


def is_exported(path: PathLike) -> bool:
    """Whether a file looks like an exported policy (safetensors: an 8-byte header length, then ``{``)."""
    return _head(path)[8:9] == b"{"


def is_torch_file(path: PathLike) -> bool:
    """Whether a file looks like a PyTorch ``policy.pt`` (a zip archive, or a legacy pickle)."""
    head = _head(path)
    return head.startswith(b"PK") or head.startswith(b"\x80")


def policy_file_bytes(state_dict: Dict[str, Any], config: Dict[str, Any], *, dtype: str = "float16",
                      info: Dict[str, Any] = None) -> bytes:
    """The exported file's bytes for a state_dict (torch tensors or NumPy arrays) and its config."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    arrays, bf16 = {}, []
    for k, v in state_dict.items():
        a = v.detach().cpu().float().numpy() if hasattr(v, "detach") else np.asarray(v, np.float32)
        if dtype == "bfloat16":
            arrays[k] = float32_to_bf16_bits(a)
            bf16.append(k)
        else:
            arrays[k] = a.astype(np.float16 if dtype == "float16" else np.float32)
    for key, native in NATIVE_ONLY.items():
        if config.get(key, native) != native:
            raise ValueError(f"cannot export a policy network with {key}={config[key]!r}: the native engine has "
                             f"only {key}={native!r} (the report's network; the other variants run in PyTorch)")
    cfg = {"channels": int(config["channels"]), "blocks": int(config["blocks"]), "head": str(config["head"])}
    meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "config": json.dumps(cfg),
            "info": json.dumps(info or {})}
    return safetensors_bytes(arrays, meta, tuple(bf16))


def _torch_source(src) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(state_dict, config) of a policy.pt path (read as data, :func:`mavgame._checkpoint.load_state`), a
    PolicyModel or a PolicyNet (anything with ``.net``, or with ``state_dict()`` and a dataclass ``config``);
    needs PyTorch for a path."""
    import dataclasses

    if isinstance(src, (str, os.PathLike)):
        from .._checkpoint import load_state
        d = load_state(src, "policy model")
        if not isinstance(d, dict) or d.get("format") != POLICY_PT_FORMAT or "state_dict" not in d:
            raise ValueError(f"{src} is not a policy model file (format {POLICY_PT_FORMAT!r} expected)")
        return dict(d["state_dict"]), dict(d["config"])
    net = getattr(src, "net", src)
    if not (callable(getattr(net, "state_dict", None)) and dataclasses.is_dataclass(getattr(net, "config", None))):
        raise TypeError(f"expected a policy.pt path, a PolicyModel or a PolicyNet, got {type(src).__name__}")
    return net.state_dict(), dataclasses.asdict(net.config)


def export_policy(src, out: PathLike, *, dtype: str = "float16") -> Path:
    """Write the exported file of a policy network (a policy.pt path, a PolicyModel or a PolicyNet); needs
    PyTorch. Returns the path written."""
    sd, cfg = _torch_source(src)
    info = {"source": str(src)} if isinstance(src, (str, os.PathLike)) else {}
    data = policy_file_bytes(sd, cfg, dtype=dtype, info=info)
    return write_bytes_atomic(out, data)


def read_policy_file(path: PathLike) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    """(config, float32 NumPy state_dict) of an exported file; ValueError naming what is wrong (a weight holding
    NaN or inf: the file, the tensor and the element). The shapes are checked by the consumer (PyTorch's
    load_state_dict, or the native reader)."""
    tensors, meta = load_safetensors(path)
    if meta.get("format") != FORMAT_NAME:
        raise ValueError(f"{path}: not a mavgame policy network (metadata format {meta.get('format')!r}, "
                         f"{FORMAT_NAME!r} expected)")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: unsupported policy network format version {meta.get('format_version')!r}")
    try:
        cfg = json.loads(meta.get("config", ""))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: invalid policy network config JSON: {e}") from None
    weights = {k: v.astype(np.float32) for k, v in tensors.items()}
    check_finite_weights(path, weights, "policy network weight")   # as the native reader refuses them
    return cfg, weights


def load_native_policy(path: PathLike, *, max_batch: int = 64, threads: int = 1) -> "_core.PolicyNet":
    """The native network of a policy file: an exported file directly (no PyTorch), a ``policy.pt`` converted
    in memory (float32; needs PyTorch). ``threads``: a batch is split over that many threads (the same
    logits bit for bit)."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no policy model at {path}")
    if not is_torch_file(path):  # the native reader says what is wrong with anything else
        return _core.PolicyNet(str(path), max_batch=max_batch, threads=threads)
    try:
        sd, cfg = _torch_source(path)
    except ImportError as e:
        raise ImportError(f"{path} is a PyTorch policy.pt: reading it needs PyTorch ({e}); export it once with "
                          f"`mavgame policy export` for the native engine") from None
    return _core.PolicyNet(policy_file_bytes(sd, cfg, dtype="float32"), max_batch=max_batch, threads=threads)
