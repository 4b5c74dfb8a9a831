"""MAV models in the Hugging Face ecosystem: export to a ``transformers`` folder, import back (docs/huggingface.md).

:func:`export_hf` turns an exported MAV model (:mod:`mavgame.model.export`) into a folder that
``transformers.AutoModelForCausalLM.from_pretrained`` and ``AutoTokenizer.from_pretrained`` load:
``config.json``, ``model.safetensors``, ``generation_config.json``, the tokenizer (``tokenizer.json``, the
MAV vocabulary with the same ids: :mod:`.tokenizer`) and a short ``README.md``.

- A model without ``abs_pos`` and ``line_pos`` is a stock ``LlamaForCausalLM``: RMSNorm, rotate-half rotary
  positions (the same pairing as the reference transformer: no weight permutation), grouped-query attention,
  SwiGLU (``hidden_act="silu"``) or GeGLU (``"gelu_pytorch_tanh"``), no biases, output tied or not.
- A model with ``abs_pos`` or ``line_pos`` (the shipped Connect Four model has ``line_pos``) is
  ``model_type="mavgame_mav"``: :class:`~mavgame.model.hf.modeling.MAVLlamaForCausalLM`, which mavgame
  registers with ``AutoConfig`` / ``AutoModelForCausalLM`` when :func:`register` runs (or
  :mod:`mavgame.model.hf.modeling` is imported). ``import mavgame.model.hf; mavgame.model.hf.register()``
  first, then the Auto classes load the folder.

:func:`import_hf` reads such a folder back (a fine-tuned one too: any ``save_pretrained`` of these classes,
sharded or not, float32/float16/bfloat16) into mavgame's safetensors format, for the native engine, MCTS and
the agents. The MAV side lives in ``config.json`` as ``mavgame_vocab_version`` and ``mavgame_info`` (kept by
``save_pretrained``).

This module imports nothing heavy: ``transformers``, ``tokenizers`` and ``torch`` (the ``hf`` extra, plus the
``torch`` extra to run the models) are imported by the functions that need them.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import MAVConfig

PathLike = Union[str, os.PathLike]

#: ``model_type`` of the variant configurations (abs_pos / line_pos), see :mod:`.modeling`
MODEL_TYPE = "mavgame_mav"

_ACT = {"swiglu": "silu", "geglu": "gelu_pytorch_tanh"}
_MLP = {v: k for k, v in _ACT.items()}
_LAYER = {"attn_norm.weight": "input_layernorm.weight", "attn.wq.weight": "self_attn.q_proj.weight",
          "attn.wk.weight": "self_attn.k_proj.weight", "attn.wv.weight": "self_attn.v_proj.weight",
          "attn.wo.weight": "self_attn.o_proj.weight", "mlp_norm.weight": "post_attention_layernorm.weight",
          "mlp.gate.weight": "mlp.gate_proj.weight", "mlp.up.weight": "mlp.up_proj.weight",
          "mlp.down.weight": "mlp.down_proj.weight"}
_TOP = {"embed.weight": "model.embed_tokens.weight", "pos_embed.weight": "model.pos_embed.weight",
        "line_embed.weight": "model.line_embed.weight", "norm.weight": "model.norm.weight",
        "lm_head.weight": "lm_head.weight"}
_DTYPES = ("float32", "float16", "bfloat16")


def register() -> None:
    """Register the ``mavgame_mav`` configuration and model with ``transformers``' Auto classes (imports
    ``transformers`` and ``torch``; idempotent)."""
    from . import modeling  # noqa: F401  (registers on import)


def is_variant(cfg: MAVConfig) -> bool:
    """True when ``cfg`` needs mavgame's registered class (``abs_pos`` or ``line_pos``), False for a stock
    Llama."""
    return bool(cfg.abs_pos or cfg.line_pos)


def hf_name(name: str) -> str:
    """The ``transformers`` name of a mavgame weight (``blocks.0.attn.wq.weight`` ->
    ``model.layers.0.self_attn.q_proj.weight``); ValueError for a name the format does not have."""
    if name in _TOP:
        return _TOP[name]
    parts = name.split(".", 2)
    if len(parts) == 3 and parts[0] == "blocks" and parts[1].isdigit() and parts[2] in _LAYER:
        return f"model.layers.{parts[1]}.{_LAYER[parts[2]]}"
    raise ValueError(f"no transformers name for the weight {name!r}")


def mav_name(name: str) -> str:
    """The mavgame name of a ``transformers`` weight (the inverse of :func:`hf_name`)."""
    for k, v in _TOP.items():
        if v == name:
            return k
    parts = name.split(".", 3)
    if len(parts) == 4 and parts[:2] == ["model", "layers"] and parts[2].isdigit():
        for k, v in _LAYER.items():
            if v == parts[3]:
                return f"blocks.{parts[2]}.{k}"
    raise ValueError(f"the weight {name!r} has no place in a MAV model")


def hf_config_kwargs(cfg: MAVConfig, vocab_version: str = "", info: Optional[Dict[str, Any]] = None,
                     dtype: str = "float32") -> Dict[str, Any]:
    """The keyword arguments of the ``transformers`` configuration (LlamaConfig or MAVLlamaConfig) of a MAV
    model; ``mavgame_vocab_version`` and ``mavgame_info`` carry what mavgame's format keeps besides."""
    kw: Dict[str, Any] = dict(
        vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, intermediate_size=cfg.d_ff,
        num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads, num_key_value_heads=cfg.n_kv_heads,
        head_dim=cfg.head_dim, hidden_act=_ACT[cfg.mlp], max_position_embeddings=cfg.max_seq_len,
        initializer_range=cfg.init_std, rms_norm_eps=cfg.norm_eps, tie_word_embeddings=cfg.tie_embeddings,
        rope_parameters={"rope_type": "default", "rope_theta": float(cfg.rope_theta)}, attention_bias=False,
        mlp_bias=False, pad_token_id=0, bos_token_id=1, eos_token_id=2, dtype=dtype,
        mavgame_vocab_version=str(vocab_version), mavgame_info=dict(info or {}),
    )
    if is_variant(cfg):
        kw.update(abs_pos=bool(cfg.abs_pos), line_pos=int(cfg.line_pos), newline_id=int(cfg.newline_id))
    return kw


def hf_config(cfg: MAVConfig, vocab_version: str = "", info: Optional[Dict[str, Any]] = None,
              dtype: str = "float32") -> Any:
    """The ``transformers`` configuration object of a MAV model: ``LlamaConfig``, or ``MAVLlamaConfig`` for
    a variant (imports ``transformers``, not ``torch``)."""
    kw = hf_config_kwargs(cfg, vocab_version, info, dtype)
    if is_variant(cfg):
        from .configuration import MAVLlamaConfig
        c = MAVLlamaConfig(**kw)
        c.architectures = ["MAVLlamaForCausalLM"]
    else:
        from transformers import LlamaConfig
        c = LlamaConfig(**kw)
        c.architectures = ["LlamaForCausalLM"]
    return c


def _write_config(cfg: MAVConfig, out: Path, vocab_version: str, info: Dict[str, Any], dtype: str) -> None:
    """config.json, through the installed transformers' own configuration class (its keys are that version's),
    plus a top-level ``rope_theta`` for readers of the 4.x layout (5.x reads it into ``rope_parameters``)."""
    hf_config(cfg, vocab_version, info, dtype).save_pretrained(str(out))
    path = out / "config.json"
    d = json.loads(path.read_text())
    d.setdefault("rope_theta", float(cfg.rope_theta))
    path.write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")


def _readme(cfg: MAVConfig, vocab_version: str, info: Dict[str, Any], source: str) -> str:
    arch = "MAVLlamaForCausalLM (model_type mavgame_mav)" if is_variant(cfg) else "LlamaForCausalLM"
    load = ("import mavgame.model.hf\nmavgame.model.hf.register()          # the mavgame_mav classes\n"
            if is_variant(cfg) else "")
    return (f"# MAV model ({info.get('game') or 'MAV text'})\n\n"
            f"Exported by mavgame from `{source}`: {arch}, {cfg.num_parameters():,} parameters, "
            f"MAV vocabulary v{vocab_version or '?'} ({cfg.vocab_size} tokens).\n\n"
            "```python\n" + load +
            "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "model = AutoModelForCausalLM.from_pretrained(FOLDER)\ntok = AutoTokenizer.from_pretrained(FOLDER)\n"
            "```\n\nPrompts are MAV text (mavgame docs/format.md); mavgame's docs/huggingface.md says what the HF "
            "side does and does not do (grouped decoding, bucket values).\n")


def export_hf(model: PathLike, out_dir: PathLike, dtype: str = "float32") -> Dict[str, Any]:
    """Write the MAV model file ``model`` (mavgame safetensors) as a ``transformers`` folder ``out_dir``
    (created if missing; files of the same names are replaced). ``dtype``: the stored weights' type
    (``float32``, ``float16`` or ``bfloat16``). Returns a summary: folder, architecture, model_type,
    vocabulary version, files written.

    Needs ``transformers`` and ``tokenizers``, not ``torch``. A model over other token ids (no vocabulary
    version) is written without a tokenizer."""
    from .. import export as ex
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, not {dtype!r}")
    weights, cfg, vocab_version, info = ex.load_exported(model)
    if vocab_version:
        from ... import mav
        mav.check_model_vocab(vocab_version, cfg.vocab_size)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors: Dict[str, np.ndarray] = {}
    for name, a in weights.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        tensors[hf_name(name)] = (ex.float32_to_bf16_bits(a) if dtype == "bfloat16"
                                  else a.astype(np.float16) if dtype == "float16" else a)
    ex.save_safetensors(out / "model.safetensors", tensors, {"format": "pt"},
                        bf16=tuple(tensors) if dtype == "bfloat16" else ())
    _write_config(cfg, out, vocab_version, info, dtype)
    from transformers import GenerationConfig
    GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0, do_sample=False).save_pretrained(out)
    files = ["config.json", "generation_config.json", "model.safetensors"]
    if vocab_version:
        from .tokenizer import build_fast_tokenizer
        saved = build_fast_tokenizer(int(vocab_version), cfg.max_seq_len).save_pretrained(str(out))
        files += sorted(Path(p).name for p in saved)
        # the class every transformers version knows (5.x loads it as its tokenizers backend)
        tc = out / "tokenizer_config.json"
        d = json.loads(tc.read_text())
        d["tokenizer_class"] = "PreTrainedTokenizerFast"
        tc.write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")
    (out / "README.md").write_text(_readme(cfg, vocab_version, info, Path(model).name))
    files.append("README.md")
    return {"out": str(out), "architecture": "MAVLlamaForCausalLM" if is_variant(cfg) else "LlamaForCausalLM",
            "model_type": MODEL_TYPE if is_variant(cfg) else "llama", "vocab_version": vocab_version,
            "dtype": dtype, "files": sorted(set(files))}


def _rope_theta(d: Dict[str, Any], where: str) -> float:
    """The rotary base of a configuration dict (5.x ``rope_parameters``, or 4.x ``rope_theta`` with
    ``rope_scaling``); ValueError for any rotary scaling (the MAV transformer has plain rotary positions)."""
    rp = d.get("rope_parameters") or d.get("rope_scaling") or {}
    rope_type = rp.get("rope_type", rp.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"{where}: rotary scaling {rope_type!r} has no MAV equivalent (plain rotary positions only)")
    return float(rp.get("rope_theta", d.get("rope_theta", 10000.0)))


def mav_config(d: Dict[str, Any], where: str = "config.json") -> MAVConfig:
    """The MAVConfig of a ``transformers`` configuration (a dict of ``config.json``): a ``llama`` or
    ``mavgame_mav`` model that the MAV transformer can express, else ValueError naming the field."""
    mt = d.get("model_type")
    if mt not in ("llama", MODEL_TYPE):
        raise ValueError(f"{where}: model_type {mt!r} is not a MAV model (llama or {MODEL_TYPE})")
    for flag in ("attention_bias", "mlp_bias"):
        if d.get(flag):
            raise ValueError(f"{where}: {flag} is set: the MAV transformer has no biases")
    if d.get("pretraining_tp", 1) not in (None, 1):
        raise ValueError(f"{where}: pretraining_tp={d['pretraining_tp']} is not supported (1 only)")
    act = d.get("hidden_act", "silu")
    if act not in _MLP:
        raise ValueError(f"{where}: hidden_act {act!r} has no MAV equivalent ({', '.join(sorted(_MLP))})")
    d_model, n_heads = int(d["hidden_size"]), int(d["num_attention_heads"])
    head_dim = d.get("head_dim") or d_model // n_heads
    if head_dim * n_heads != d_model:
        raise ValueError(f"{where}: head_dim {head_dim} x {n_heads} heads != hidden_size {d_model} (the MAV "
                         "transformer's head dimension is d_model / n_heads)")
    init_std = d.get("initializer_range") or 0.02
    return MAVConfig(vocab_size=int(d["vocab_size"]), d_model=d_model, n_layers=int(d["num_hidden_layers"]),
                     n_heads=n_heads, n_kv_heads=int(d.get("num_key_value_heads") or n_heads),
                     d_ff=int(d["intermediate_size"]), max_seq_len=int(d["max_position_embeddings"]),
                     rope_theta=_rope_theta(d, where), norm_eps=float(d.get("rms_norm_eps", 1e-6)),
                     mlp=_MLP[act], tie_embeddings=bool(d.get("tie_word_embeddings", False)),
                     init_std=float(init_std), abs_pos=bool(d.get("abs_pos", False)),
                     line_pos=int(d.get("line_pos", 0) or 0), newline_id=int(d.get("newline_id", -1)))


def _read_weights(folder: Path) -> Dict[str, np.ndarray]:
    """Every tensor of the folder's safetensors weights (one file or an index of shards), as float32."""
    from ..export import load_safetensors
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    elif (folder / "model.safetensors").is_file():
        files = ["model.safetensors"]
    else:
        raise FileNotFoundError(f"{folder}: no model.safetensors or model.safetensors.index.json (only safetensors "
                                "weights are read; save with safe_serialization)")
    out: Dict[str, np.ndarray] = {}
    for f in files:
        tensors, _meta = load_safetensors(folder / f)
        for k, a in tensors.items():
            if k in out:
                raise ValueError(f"{folder}: weight {k!r} appears in two shards")
            out[k] = np.ascontiguousarray(a, dtype=np.float32)
    return out


def read_hf(folder: PathLike) -> Tuple[Dict[str, np.ndarray], MAVConfig, str, Dict[str, Any]]:
    """(float32 weights by mavgame name, MAVConfig, vocabulary version, info) of a ``transformers`` folder.

    The vocabulary version is ``config.json``'s ``mavgame_vocab_version``, else the MAV vocabulary of the
    model's size (a folder made elsewhere); ValueError for weights that do not fit the configuration (a
    missing or unexpected weight, a shape, an untied output equal to nothing)."""
    from .. import export as ex
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise FileNotFoundError(f"{folder}: no config.json (not a transformers model folder)")
    d = json.loads(cfg_path.read_text())
    cfg = mav_config(d, str(cfg_path))
    raw = _read_weights(folder)
    if cfg.tie_embeddings:
        raw.pop("lm_head.weight", None)      # a tied output saved anyway is the embedding
    weights: Dict[str, np.ndarray] = {}
    unexpected = []
    for k, a in raw.items():
        if k.endswith("rotary_emb.inv_freq"):
            continue
        try:
            weights[mav_name(k)] = a
        except ValueError:
            unexpected.append(k)
    shapes = ex.expected_shapes(cfg)
    missing = sorted(set(shapes) - set(weights))
    if missing or unexpected:
        raise ValueError(f"{folder}: weights do not match the configuration (missing {missing}, unexpected "
                         f"{sorted(unexpected)})")
    for name, shape in shapes.items():
        if tuple(weights[name].shape) != shape:
            raise ValueError(f"{folder}: weight {hf_name(name)!r} has shape {tuple(weights[name].shape)}, "
                             f"the configuration says {shape}")
    ex.check_finite_weights(folder, weights)
    vocab_version = str(d.get("mavgame_vocab_version") or "")
    if not vocab_version:
        from ... import mav
        try:
            vocab_version = str(mav.version_of_size(cfg.vocab_size))
        except ValueError:
            vocab_version = ""
    info = d.get("mavgame_info") or {}
    if not isinstance(info, dict):
        raise ValueError(f"{cfg_path}: mavgame_info must be an object, got {type(info).__name__}")
    return weights, cfg, vocab_version, info


def import_hf(folder: PathLike, out: PathLike, dtype: str = "float32") -> Dict[str, Any]:
    """Write the ``transformers`` folder ``folder`` (an :func:`export_hf` folder, fine-tuned or not) as a MAV
    model file ``out`` (mavgame safetensors, ``dtype`` float32, float16 or bfloat16). Needs neither
    ``transformers`` nor ``torch``. Returns a summary (file, configuration, vocabulary version)."""
    from ..export import export_model
    weights, cfg, vocab_version, info = read_hf(folder)
    if vocab_version:
        from ... import mav
        mav.check_model_vocab(vocab_version, cfg.vocab_size)
    export_model(out, weights, cfg, vocab_version, info=info, dtype=dtype)
    return {"out": str(out), "config": cfg.to_dict(), "vocab_version": vocab_version, "dtype": dtype}


def move_token_ids(game: str, vocab_version: int = 1) -> List[int]:
    """The token ids that can start a move of ``game`` (what :meth:`mavgame.model.MAVModel.move_tokens` groups
    in grouped decoding), for :class:`~mavgame.model.hf.modeling.GroupedMovesLogitsProcessor`."""
    from ... import mav
    tok = mav.Tokenizer(int(vocab_version))
    return sorted({int(enc[0]) for enc in map(tok.encode, mav.move_tokens(game)) if len(enc)})


def bucket_distributions(logits: Sequence[Any], tokens: Any, vocab_version: int = 1) -> List[List[Tuple[int, Any]]]:
    """The 64-way value distributions a MAV model wrote, from ``generate(..., output_logits=True,
    return_dict_in_generate=True)``: ``logits`` is its ``logits`` (one [B, V] tensor per step), ``tokens``
    the generated ids [B, steps] (``sequences[:, prompt_length:]``). Per row: (step, probabilities over
    the buckets ``<ctrl0>`` .. ``<ctrl63>``) at every step whose token is a bucket token, as
    :class:`mavgame.model.MAVOutput` keeps them (softmax over the bucket tokens' logits)."""
    import torch
    from ... import mav
    tok = mav.Tokenizer(int(vocab_version))
    lo, n = int(tok.bucket_ids[0]), len(tok.bucket_ids)
    tokens = torch.as_tensor(tokens)
    out: List[List[Tuple[int, Any]]] = [[] for _ in range(tokens.shape[0])]
    for step, lg in enumerate(logits[:tokens.shape[1]]):
        for b in torch.nonzero((tokens[:, step] >= lo) & (tokens[:, step] < lo + n)).flatten().tolist():
            out[b].append((step, torch.softmax(lg[b, lo:lo + n].double(), dim=-1).float().numpy()))
    return out


def load(folder: PathLike, **kwargs: Any) -> Tuple[Any, Any]:
    """(model, tokenizer) of an exported folder through the Auto classes, after :func:`register`
    (``kwargs`` go to ``AutoModelForCausalLM.from_pretrained``; needs ``torch``)."""
    register()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    return AutoModelForCausalLM.from_pretrained(str(folder), **kwargs), AutoTokenizer.from_pretrained(str(folder))


__all__ = ["MODEL_TYPE", "register", "is_variant", "hf_name", "mav_name", "hf_config_kwargs", "hf_config",
           "export_hf", "mav_config", "read_hf", "import_hf", "move_token_ids", "bucket_distributions", "load"]
