"""The ``mavgame`` command line: a table of commands, each in its own module of this package.

A command module has ``HELP`` (its line in ``mavgame --help``), ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args) -> int``; importing it imports nothing heavy (the work imports what it needs when it runs). Only
the module of the command being run is imported: ``mavgame --help`` imports none of them.

Adding a command: a new module here with those four names, and one line in :data:`COMMANDS`.
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import List, Optional

from .options import Parser, check_args

#: command -> (module of mavgame.cli, its one-line help), in the order ``mavgame --help`` lists them
COMMANDS = {
    "games": ("games", "list the games of the C core"),
    "perft": ("perft", "count the leaf nodes of the legal move tree"),
    "play": ("play", "play against an agent in the terminal"),
    "match": ("match", "two agents play every opening with both colours"),
    "league": ("league", "round robin between agents with an Elo table"),
    "annotate": ("annotate", "label chess positions with engine values for every legal move"),
    "bench": ("bench", "measure the speed of the C core (--peers: against the strongest installed peers)"),
    "book": ("book", "the Connect Four solver's opening book: build (resumable) or describe one"),
    "train": ("train", "generate annotated positions and train a MAV model (needs PyTorch)"),
    "data-stats": ("data_stats", "statistics of a position set (finished or being generated)"),
    "gardner-prove": ("gardner_prove", "prove or refute a bounded mate in Gardner minichess"),
    "gardner-proof": ("gardner_proof", "check the paper's Gardner oracles (replay, mates, coverage)"),
    "gardner-push": ("gardner_push", "push the Gardner oracle proofs: a resumable job with growing budgets"),
    "policy": ("policy", "the IDP chess policy network: train from PGN, RL self-play, accuracy (needs PyTorch)"),
    "az": ("az", "train AlphaZero by self-play (needs PyTorch)"),
    "az-puzzles": ("az_puzzles", "puzzle suites with known solutions; solve rates of agents and AZdb teams"),
    "hf": ("hf", "a MAV model as a Hugging Face transformers folder (export) and back (import)"),
}


def command_module(name: str) -> ModuleType:
    """The module of command ``name`` (KeyError for an unknown command)."""
    return importlib.import_module(f"{__package__}.{COMMANDS[name][0]}")


def build_parser(only: Optional[str] = None) -> Parser:
    """The argument parser of ``mavgame``: every command's arguments, or with ``only`` those of that command
    alone (the others are listed with their help line but their modules are not imported)."""
    from .. import __version__
    from ..games import registry
    p = Parser(prog="mavgame", description="Planning with language models in board games.",
               epilog="`mavgame COMMAND --help` explains each command's options.")
    p.add_argument("--version", action="version",
                   version=f"mavgame {__version__} (games: {', '.join(registry.names())})")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_module, help_line) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_line)
            continue
        mod = command_module(name)
        sp = sub.add_parser(name, help=help_line, description=mod.DESCRIPTION)
        sp.set_defaults(func=mod.run)
        mod.add_arguments(sp)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """The command line; returns the exit status.  Errors end in one ``mavgame: ...`` line on stderr
    (``MAVGAME_DEBUG=1`` shows the traceback of an unexpected one)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    only = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser("" if only is None else only)
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        check_args(args)
        return args.func(args)
    except KeyboardInterrupt as e:
        print(f"mavgame: interrupted{': ' + str(e) if str(e) else ''}", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - one line, never a traceback (MAVGAME_DEBUG=1 for one)
        if os.environ.get("MAVGAME_DEBUG"):
            raise
        print(f"mavgame: {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
