"""Export of MAV models as safetensors: weights, configuration and vocabulary version in one file.

The file is plain safetensors (an 8-byte little-endian header length, a JSON header, then the raw tensor
bytes), written and read here with NumPy only, so exported models load without PyTorch and without the
``safetensors`` package (files written here also load with ``safetensors.numpy.load_file``).

Tensor names are those of :class:`mavgame.model.transformer.MAVTransformer`'s ``state_dict``::

    embed.weight                         [vocab, d_model]
    pos_embed.weight                     [max_seq_len, d_model]   (only when abs_pos is true)
    line_embed.weight                    [line_pos, d_model]      (only when line_pos > 0)
    blocks.{i}.attn_norm.weight          [d_model]
    blocks.{i}.attn.wq.weight            [n_heads * head_dim, d_model]
    blocks.{i}.attn.wk.weight            [n_kv_heads * head_dim, d_model]
    blocks.{i}.attn.wv.weight            [n_kv_heads * head_dim, d_model]
    blocks.{i}.attn.wo.weight            [d_model, n_heads * head_dim]
    blocks.{i}.mlp_norm.weight           [d_model]
    blocks.{i}.mlp.gate.weight           [d_ff, d_model]
    blocks.{i}.mlp.up.weight             [d_ff, d_model]
    blocks.{i}.mlp.down.weight           [d_model, d_ff]
    norm.weight                          [d_model]
    lm_head.weight                       [vocab, d_model]   (only when tie_embeddings is false)

Metadata (``__metadata__``, strings): ``format`` = ``mavgame-mav``, ``format_version``, ``config`` (the
:class:`MAVConfig` as JSON), ``vocab_version`` (the MAV tokenizer's vocabulary version the token ids refer to:
``"1"`` or ``"2"``, whose size ``config.vocab_size`` must be; ``""`` for a model over other token ids, which
:class:`~mavgame.model.inference.MAVModel` does not load), and free-form ``info`` (JSON: training command, data
statistics, metrics). :func:`load_exported` reads any file of this layout (the version is returned as written);
the loaders that give the token ids a meaning refuse an unknown version and a size that does not match the
version, naming the value: :class:`~mavgame.model.inference.MAVModel` (every backend), ``mavgame train
--init-from`` and the native engine (csrc/model/model_file.c, ``mavgame.mav.check_model_vocab`` is the same
C check).
"""
from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from .._atomic import write_bytes_atomic
from .config import MAVConfig

FORMAT_NAME = "mavgame-mav"
FORMAT_VERSION = "1"
_MAX_HEADER = 100 * 1024 * 1024

# safetensors dtype names <-> numpy dtypes ("BF16" is handled through uint16 bit patterns).
_DTYPES = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U8": np.dtype("u1"), "U16": np.dtype("<u2"), "U32": np.dtype("<u4"), "U64": np.dtype("<u8"),
    "BOOL": np.dtype("?"),
}
_NAMES = {np.dtype("<f8"): "F64", np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("<i8"): "I64",
          np.dtype("<i4"): "I32", np.dtype("<i2"): "I16", np.dtype("i1"): "I8", np.dtype("u1"): "U8",
          np.dtype("<u2"): "U16", np.dtype("<u4"): "U32", np.dtype("<u8"): "U64", np.dtype("?"): "BOOL"}

PathLike = Union[str, os.PathLike]


def float32_to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (round to nearest even), returned as uint16 bit patterns."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounding = ((u >> 16) & 1) + np.uint32(0x7FFF)
    out = ((u + rounding) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        out[nan] = 0x7FC0
    return out


def bf16_bits_to_float32(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def save_safetensors(path: PathLike, tensors: Mapping[str, np.ndarray], metadata: Optional[Dict[str, str]] = None,
                     bf16: Tuple[str, ...] = ()) -> None:
    """Write NumPy arrays to a safetensors file. Names listed in ``bf16`` must be uint16 bf16 bit patterns."""
    data = safetensors_bytes(tensors, metadata, bf16)
    write_bytes_atomic(path, data)


def safetensors_bytes(tensors: Mapping[str, np.ndarray], metadata: Optional[Dict[str, str]] = None,
                      bf16: Tuple[str, ...] = ()) -> bytes:
    """The bytes of the safetensors file :func:`save_safetensors` writes."""
    header: Dict[str, Any] = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValueError(f"safetensors metadata must map str to str, got {k!r}: {type(v).__name__}")
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name in sorted(tensors):
        if name == "__metadata__" or not name:
            raise ValueError(f"invalid tensor name {name!r}")
        a = np.asarray(tensors[name])
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        if name in bf16:
            if a.dtype != np.uint16:
                raise ValueError(f"tensor {name!r} marked bf16 must be uint16 bit patterns, got {a.dtype}")
            dt = "BF16"
        else:
            a = a.astype(a.dtype.newbyteorder("<"), copy=False)
            dt = _NAMES.get(a.dtype)
            if dt is None:
                raise ValueError(f"tensor {name!r}: unsupported dtype {a.dtype}")
        data = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hbytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hbytes += b" " * ((8 - len(hbytes) % 8) % 8)
    return b"".join([struct.pack("<Q", len(hbytes)), hbytes, *blobs])


def load_safetensors(path: PathLike) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """Read a safetensors file into NumPy arrays (BF16 is widened to float32) and its metadata.

    Every malformed part (short file, bad header, offsets out of bounds or overlapping, unknown dtype, shape
    not matching the byte count) raises ValueError naming it.
    """
    path = Path(path)
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: not a safetensors file (only {len(raw)} bytes)")
    (hlen,) = struct.unpack("<Q", raw[:8])
    if hlen > _MAX_HEADER or 8 + hlen > len(raw):
        raise ValueError(f"{path}: invalid safetensors header length {hlen} for a file of {len(raw)} bytes")
    try:
        header = json.loads(raw[8:8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: invalid safetensors header JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: safetensors header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise ValueError(f"{path}: safetensors __metadata__ must map strings to strings")
    buf = memoryview(raw)[8 + hlen:]
    spans = []
    out: Dict[str, np.ndarray] = {}
    for name, info in header.items():
        if not isinstance(info, dict):
            raise ValueError(f"{path}: tensor {name!r}: header entry is not an object")
        dt, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dt not in _DTYPES:
            raise ValueError(f"{path}: tensor {name!r}: unsupported dtype {dt!r}")
        if (not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                   for s in shape)):
            raise ValueError(f"{path}: tensor {name!r}: invalid shape {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(isinstance(o, int) for o in offs)
                or not 0 <= offs[0] <= offs[1] <= len(buf)):
            raise ValueError(f"{path}: tensor {name!r}: data offsets {offs!r} outside the {len(buf)}-byte buffer")
        npdt = _DTYPES[dt]
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if n * npdt.itemsize != offs[1] - offs[0]:
            raise ValueError(f"{path}: tensor {name!r}: shape {shape} of {dt} needs {n * npdt.itemsize} bytes, "
                             f"data offsets give {offs[1] - offs[0]}")
        spans.append((offs[0], offs[1], name))
        a = np.frombuffer(buf[offs[0]:offs[1]], dtype=npdt).reshape(tuple(shape)).copy()
        out[name] = bf16_bits_to_float32(a) if dt == "BF16" else a
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise ValueError(f"{path}: tensors {n0!r} and {n1!r} overlap in the data buffer")
    return out, meta


def expected_shapes(cfg: MAVConfig) -> Dict[str, Tuple[int, ...]]:
    """Tensor names and shapes of a model with configuration ``cfg``."""
    d, hd, V = cfg.d_model, cfg.head_dim, cfg.vocab_size
    shapes: Dict[str, Tuple[int, ...]] = {"embed.weight": (V, d), "norm.weight": (d,)}
    if not cfg.tie_embeddings:
        shapes["lm_head.weight"] = (V, d)
    if cfg.abs_pos:
        shapes["pos_embed.weight"] = (cfg.max_seq_len, d)
    if cfg.line_pos:
        shapes["line_embed.weight"] = (cfg.line_pos, d)
    for i in range(cfg.n_layers):
        p = f"blocks.{i}."
        shapes.update({
            p + "attn_norm.weight": (d,), p + "mlp_norm.weight": (d,),
            p + "attn.wq.weight": (cfg.n_heads * hd, d), p + "attn.wk.weight": (cfg.n_kv_heads * hd, d),
            p + "attn.wv.weight": (cfg.n_kv_heads * hd, d), p + "attn.wo.weight": (d, cfg.n_heads * hd),
            p + "mlp.gate.weight": (cfg.d_ff, d), p + "mlp.up.weight": (cfg.d_ff, d),
            p + "mlp.down.weight": (d, cfg.d_ff),
        })
    return shapes


def export_model(path: PathLike, weights: Mapping[str, Any], cfg: MAVConfig, vocab_version: str,
                 info: Optional[Dict[str, Any]] = None, dtype: str = "float32") -> None:
    """Write a model (a ``state_dict`` of torch tensors or NumPy arrays) with its config to safetensors.

    ``dtype``: ``float32``, ``float16`` or ``bfloat16`` for the stored weights (loaded back as float32).
    """
    if dtype not in ("float32", "float16", "bfloat16"):
        raise ValueError(f"export dtype must be float32, float16 or bfloat16, got {dtype!r}")
    shapes = expected_shapes(cfg)
    arrays: Dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        if name not in weights:
            raise ValueError(f"cannot export: weight {name!r} missing")
        t = weights[name]
        a = t.detach().cpu().float().numpy() if hasattr(t, "detach") else np.asarray(t, dtype=np.float32)
        if tuple(a.shape) != shape:
            raise ValueError(f"cannot export: weight {name!r} has shape {tuple(a.shape)}, config says {shape}")
        if dtype == "float16":
            a = a.astype(np.float16)
        elif dtype == "bfloat16":
            a = float32_to_bf16_bits(a)
        arrays[name] = a
    extra = sorted(set(k for k in weights if not k.startswith("rope_")) - set(shapes))
    if extra:
        raise ValueError(f"cannot export: unexpected weights {extra}")
    meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "config": cfg.to_json(),
            "vocab_version": str(vocab_version), "info": json.dumps(info or {}, sort_keys=True)}
    save_safetensors(path, arrays, meta, bf16=tuple(arrays) if dtype == "bfloat16" else ())


def check_finite_weights(path: PathLike, tensors: Mapping[str, np.ndarray], what: str = "weight") -> None:
    """ValueError naming the file, the tensor and the first non-finite element of any weight holding NaN or
    inf (such a model answers nothing usable instead of failing: the native readers refuse it the same way)."""
    for name, a in tensors.items():
        a = np.asarray(a)
        if a.dtype.kind != "f":
            continue
        bad = ~np.isfinite(a.reshape(-1))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{path}: {what} {name!r} holds {a.reshape(-1)[i]} at element {i}: non-finite weights "
                             "are refused (a diverged training run or a corrupt file)")


def load_exported(path: PathLike) -> Tuple[Dict[str, np.ndarray], MAVConfig, str, Dict[str, Any]]:
    """(float32 weights, config, vocabulary version, info) of an exported model; checks names and shapes."""
    tensors, meta = load_safetensors(path)
    if meta.get("format") != FORMAT_NAME:
        raise ValueError(f"{path}: not a mavgame MAV model (format {meta.get('format')!r})")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: unsupported MAV model format version {meta.get('format_version')!r}")
    cfg = MAVConfig.from_json(meta.get("config", ""))
    shapes = expected_shapes(cfg)
    missing = sorted(set(shapes) - set(tensors))
    extra = sorted(set(tensors) - set(shapes))
    if missing or extra:
        raise ValueError(f"{path}: weights do not match the config (missing {missing}, unexpected {extra})")
    weights = {}
    for name, shape in shapes.items():
        a = tensors[name]
        if tuple(a.shape) != shape:
            raise ValueError(f"{path}: weight {name!r} has shape {tuple(a.shape)}, config says {shape}")
        weights[name] = np.ascontiguousarray(a, dtype=np.float32)
    check_finite_weights(path, weights)
    try:
        info = json.loads(meta.get("info", "{}"))
    except json.JSONDecodeError:
        raise ValueError(f"{path}: metadata 'info' is not valid JSON") from None
    return weights, cfg, meta.get("vocab_version", ""), info
