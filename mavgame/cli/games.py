"""``mavgame games``: the games of the C core."""
from __future__ import annotations

import argparse

from ..games import registry

DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """No options."""


def cmd_games(args: argparse.Namespace) -> int:
    for name in registry.names():
        print(name)
    return 0


run = cmd_games
