#!/usr/bin/env python
"""Write the MAV vocabulary files mavgame/data/vocab_v<N>.json (v1, v2) from the C tokenizer.

    python tools/gen_vocab.py                # (re)write every version's file
    python tools/gen_vocab.py --version 2    # one version
    python tools/gen_vocab.py --check        # exit 1 if a file differs from the C vocabulary

The file is the vocabulary's written form for tools outside mavgame (token texts and kinds by id,
special ids); tests/test_mav_tokenizer.py checks that it equals the C vocabulary.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavgame import mav  # noqa: E402


def render(version: int) -> str:
    data = mav.vocab_json(mav.Tokenizer(version))
    return json.dumps(data, indent=1, ensure_ascii=True) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", type=int, choices=mav.VOCAB_VERSIONS, default=None,
                    help="one vocabulary version (default: all)")
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    status = 0
    for version in [args.version] if args.version else mav.VOCAB_VERSIONS:
        path = mav.vocab_path(version)
        text = render(version)
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} differs from the C vocabulary v{version}; run tools/gen_vocab.py", file=sys.stderr)
                status = 1
            else:
                print(f"{path}: up to date ({json.loads(text)['size']} tokens)")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path} ({json.loads(text)['size']} tokens)")
    return status


if __name__ == "__main__":
    sys.exit(main())
