#!/usr/bin/env python
"""Write the MAV vocabulary file mavgame/data/vocab_v<N>.json from the C tokenizer.

    python tools/gen_vocab.py            # (re)write the file
    python tools/gen_vocab.py --check    # exit 1 if the file differs from the C vocabulary

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
    ap.add_argument("--version", type=int, default=mav.VOCAB_VERSION)
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    path = mav.vocab_path(args.version)
    text = render(args.version)
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} differs from the C vocabulary v{args.version}; run tools/gen_vocab.py", file=sys.stderr)
            return 1
        print(f"{path}: up to date ({json.loads(text)['size']} tokens)")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path} ({json.loads(text)['size']} tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
