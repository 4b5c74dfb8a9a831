"""``mavgame hf export|import``: MAV models as Hugging Face ``transformers`` folders and back (docs/huggingface.md)."""
from __future__ import annotations

import argparse
import json

from .options import fail

DESCRIPTION = ("Export a MAV model file (mavgame safetensors) to a folder that transformers' "
               "AutoModelForCausalLM and AutoTokenizer load (a stock Llama, or mavgame's registered mavgame_mav "
               "class for line_pos / abs_pos models), or import such a folder (fine-tuned or not) back into a "
               "MAV model file for mavgame's engine. Export needs the hf extra (transformers, tokenizers); "
               "import needs neither. See docs/huggingface.md.")

_DTYPES = ("float32", "float16", "bfloat16")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="hf_cmd", required=True)
    e = sub.add_parser("export", help="write a MAV model file as a transformers folder",
                       description="Write MODEL as a transformers folder OUTDIR (created; files of the same "
                       "names replaced): config.json, model.safetensors, generation_config.json, the tokenizer, "
                       "README.md.")
    e.add_argument("model", help="a MAV model file (mavgame safetensors), e.g. "
                   "mavgame/data/mav_connect_four.safetensors")
    e.add_argument("outdir", help="the folder to write")
    e.add_argument("--dtype", choices=_DTYPES, default="float32", help="type of the stored weights (default: float32)")
    e.set_defaults(func=cmd_export)
    i = sub.add_parser("import", help="write a transformers folder back as a MAV model file",
                       description="Read the transformers folder FOLDER (an export, or a save_pretrained of a "
                       "fine-tuned one: merge PEFT adapters first) and write the MAV model file OUT.")
    i.add_argument("folder", help="a transformers model folder (config.json, model.safetensors)")
    i.add_argument("out", help="the MAV model file to write (.safetensors)")
    i.add_argument("--dtype", choices=_DTYPES, default="float32", help="type of the stored weights (default: float32)")
    i.set_defaults(func=cmd_import)


def cmd_export(args: argparse.Namespace) -> int:
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        raise fail(f"hf export: needs transformers and tokenizers (pip install 'mavgame[hf]'): {e}")
    from ..model.hf import export_hf
    try:
        summary = export_hf(args.model, args.outdir, dtype=args.dtype)
    except (OSError, ValueError) as e:
        raise fail(f"hf export: {e}")
    print(json.dumps(summary, sort_keys=True))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..model.hf import import_hf
    try:
        summary = import_hf(args.folder, args.out, dtype=args.dtype)
    except (OSError, ValueError, KeyError) as e:
        raise fail(f"hf import: {e}")
    print(json.dumps({k: summary[k] for k in ("out", "vocab_version", "dtype")}, sort_keys=True))
    return 0


def run(args: argparse.Namespace) -> int:
    return args.func(args)
