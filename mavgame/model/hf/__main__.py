"""``python -m mavgame.model.hf export MODEL OUTDIR`` / ``import FOLDER OUT``: the same as ``mavgame hf ...``."""
import sys

from ...cli.main import main

if __name__ == "__main__":
    sys.exit(main(["hf", *sys.argv[1:]]))
