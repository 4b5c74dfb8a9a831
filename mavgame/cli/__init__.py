"""The ``mavgame`` command line (``mavgame --help``; ``python -m mavgame``).

    mavgame games                              list the games of the C core
    mavgame perft --game chess --depth 5       count leaf nodes (with --divide per move)
    mavgame play --game connect_four           play against an agent in the terminal
    mavgame match uct:sims=100 perfect         two agents, every opening with both colours
    mavgame league                             a round robin with Elo (default: a Connect Four league)
    mavgame annotate positions.txt -o out.jsonl  Stockfish values for every legal move
    mavgame gardner-prove FEN --mate N         Gardner: prove or refute a bounded mate (docs/gardner.md)
    mavgame gardner-proof                      Gardner: check the paper's transcribed oracles
    mavgame gardner-push --state FILE          Gardner: push the oracle proofs (resumable; --report)
    mavgame bench [--peers]                    speed of the C core (and against its peers)
    mavgame train ...                          train a MAV model (needs PyTorch)

One module per command (:mod:`mavgame.cli.main` holds the table); shared options and checks in
:mod:`mavgame.cli.options`. Every subcommand explains its options with ``--help``.
"""
from .main import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
