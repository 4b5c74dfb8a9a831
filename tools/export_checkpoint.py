"""Export a training run's current checkpoint (OUT/checkpoint.pt) to a .safetensors model, while the run goes on.

    python tools/export_checkpoint.py runs/c4-ktp-long /tmp/step.safetensors [--dtype float32]

The same file `mavgame train` exports at the end (the run's metadata, the step reached), so the evaluation
tools (mavgame.analysis.mav_eval, mavgame.analysis.mav_is_eval,
experiments/2026-11-27-c4-mav-finished-games/c4_outcome_probe.py) can follow a long run.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a training run folder (holding checkpoint.pt)")
    ap.add_argument("out", help="the .safetensors file to write")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--game", default=None, help="the game (default: from the run's training data manifest)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import export_model
    from mavgame.model.train_config import TrainConfig, load_checkpoint
    path = Path(args.run) / "checkpoint.pt"
    if not path.is_file():
        raise SystemExit(f"export_checkpoint: no checkpoint.pt in {args.run}")
    try:
        ck = load_checkpoint(path)
    except ValueError as e:
        raise SystemExit(f"export_checkpoint: {e}")
    cfg = MAVConfig(**ck["model_config"])
    tcfg = ck["train_config"]
    tcfg = dataclasses.asdict(TrainConfig(**tcfg)) if isinstance(tcfg, dict) else dataclasses.asdict(tcfg)
    tok = ck.get("tokenizer") or {}
    game = args.game
    if game is None:
        from mavgame.datasets.store import PositionStore
        try:
            game = PositionStore(Path(tcfg["data"]) / "train").game
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"export_checkpoint: cannot read the game from the run's data ({e}); give --game")
    meta = {"game": game, "steps": ck["step"], "tokens_seen": ck["tokens_seen"],
            "train_config": tcfg, "checkpoint": str(path)}
    if tcfg.get("search_data"):
        meta["trace_form"] = tcfg.get("trace_form", "short")
    if tok.get("vocab_fingerprint"):
        meta["vocab_fingerprint"] = tok["vocab_fingerprint"]
    export_model(args.out, ck["model"], cfg, str(tok.get("vocab_version", "")), info=meta, dtype=args.dtype)
    print(f"{args.out}: step {ck['step']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
