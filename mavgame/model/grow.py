"""Grow a MAV model without changing what it computes: a larger vocabulary, more blocks, a wider MLP.

:func:`extend_vocabulary` moves a model to a vocabulary that appends tokens (v1 -> v2; ``mavgame train
--init-from`` calls it). :func:`grow` makes an exported model deeper and/or wider, to fine-tune it further:

    python -m mavgame.model.grow runs/c4-play1/model32.safetensors runs/grown8.safetensors --layers 8
    python -m mavgame.model.grow IN OUT --d-ff 768

Depth (`--layers N`, N >= the model's layers): new block k is a copy of old block floor(k * L / N); the first
copy of each old block keeps all its weights, every further copy has its attention output (`attn.wo`) and MLP
output (`mlp.down`) set to zero, so that it adds nothing to the residual stream: the grown model gives the same
logits as the old one, and training then has the extra blocks to use (their gradients are not zero, since the
copied inputs are live). Width (`--d-ff F`): the MLP's new hidden units get small random gate/up rows and zero
`mlp.down` columns, again adding nothing at first. The output is a float32 model file of the same vocabulary
and metadata, ready for `mavgame train --init-from OUT`.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np

from .config import MAVConfig


def extend_vocabulary(weights: Dict[str, np.ndarray], cfg: MAVConfig, old_tok, new_tok
                      ) -> Tuple[Dict[str, np.ndarray], MAVConfig]:
    """Weights and config of a model moved from MAV vocabulary ``old_tok`` to ``new_tok``, a vocabulary that
    keeps every old id and appends tokens (v1 -> v2). Each new token's embedding row (and output row, when the
    output layer is not tied) is the mean of the rows of the old tokens that spell it (its encoding in the old
    vocabulary: "Playing " is the mean of P, l, a, y, i, n, g and space)."""
    n_old, n_new = old_tok.size, new_tok.size
    if cfg.vocab_size != n_old or new_tok.vocab[:n_old] != old_tok.vocab:
        raise ValueError(f"MAV vocabulary v{new_tok.version} does not extend v{old_tok.version} of a model with "
                         f"{cfg.vocab_size} tokens")
    spell = [old_tok.encode(new_tok.vocab[i]) for i in range(n_old, n_new)]
    if any(len(ids) == 0 for ids in spell):
        raise ValueError("a new token has no spelling in the old vocabulary")
    out = dict(weights)
    for name in ("embed.weight", "lm_head.weight"):
        if name in weights:
            w = np.asarray(weights[name], np.float32)
            rows = np.stack([w[ids].mean(axis=0) for ids in spell])
            out[name] = np.concatenate([w, rows.astype(np.float32)])
    return out, MAVConfig.from_dict({**cfg.to_dict(), "vocab_size": n_new})


def grow(weights: Dict[str, np.ndarray], cfg: MAVConfig, layers: int = 0, d_ff: int = 0,
         seed: int = 0) -> Tuple[Dict[str, np.ndarray], MAVConfig]:
    """(weights, config) of the grown model; ``layers`` / ``d_ff`` 0 keep the model's own."""
    L, F = cfg.n_layers, cfg.d_ff
    N = layers or L
    G = d_ff or F
    if N < L:
        raise ValueError(f"--layers {N}: the model has {L} layers; growing cannot remove any")
    if G < F:
        raise ValueError(f"--d-ff {G}: the model's MLP has {F} hidden units; growing cannot remove any")
    rng = np.random.default_rng(seed)
    out = {k: v.copy() for k, v in weights.items() if not k.startswith("blocks.")}
    seen = set()
    for k in range(N):
        i = k * L // N
        first = i not in seen
        seen.add(i)
        for name, a in weights.items():
            pre = f"blocks.{i}."
            if not name.startswith(pre):
                continue
            field = name[len(pre):]
            a = a.copy()
            if not first and field in ("attn.wo.weight", "mlp.down.weight"):
                a[...] = 0.0
            if G > F:
                if field in ("mlp.gate.weight", "mlp.up.weight"):
                    std = float(a.std()) or 0.02
                    a = np.concatenate([a, rng.normal(0.0, std, (G - F, a.shape[1])).astype(np.float32)], 0)
                elif field == "mlp.down.weight":
                    a = np.concatenate([a, np.zeros((a.shape[0], G - F), np.float32)], 1)
            out[f"blocks.{k}.{field}"] = np.ascontiguousarray(a, dtype=np.float32)
    return out, MAVConfig.from_dict({**cfg.to_dict(), "n_layers": N, "d_ff": G})


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m mavgame.model.grow MODEL OUT [--layers N] [--d-ff F] [--seed S]``; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m mavgame.model.grow", description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="an exported MAV model (.safetensors)")
    ap.add_argument("out", help="the grown model to write (.safetensors, float32)")
    ap.add_argument("--layers", type=int, default=0, help="blocks of the grown model (default: the model's)")
    ap.add_argument("--d-ff", type=int, default=0, help="MLP hidden units of the grown model (default: the model's)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the new MLP units' random rows")
    args = ap.parse_args(argv)
    from .export import export_model, load_exported
    if not args.layers and not args.d_ff:
        raise SystemExit("mavgame.model.grow: nothing to grow (give --layers and/or --d-ff)")
    try:
        weights, cfg, vocab, info = load_exported(args.model)
        new, ncfg = grow(weights, cfg, args.layers, args.d_ff, args.seed)
    except (OSError, ValueError) as e:
        raise SystemExit(f"mavgame.model.grow: {e}") from None
    info = dict(info, grown_from=str(args.model), grown_layers=f"{cfg.n_layers}->{ncfg.n_layers}",
                grown_d_ff=f"{cfg.d_ff}->{ncfg.d_ff}")
    export_model(args.out, new, ncfg, vocab, info=info, dtype="float32")
    n0 = sum(a.size for a in weights.values())
    n1 = sum(a.size for a in new.values())
    print(json.dumps({"out": args.out, "layers": [cfg.n_layers, ncfg.n_layers], "d_ff": [cfg.d_ff, ncfg.d_ff],
                      "params": [int(n0), int(n1)]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
