"""``mavgame data-stats``: statistics of a position set (finished or being generated)."""
from __future__ import annotations

import argparse
import json

from .options import (fail)

DESCRIPTION = ('Positions per ply and per phase, distinct positions, terminal share and results, move and '
               'position values, annotation time per phase and the rate of a position set written by `mavgame '
               'train --generate-only` (also while it is still being generated, or after it was interrupted).')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="directory of the position set (train/ and val/)")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")


def cmd_data_stats(args: argparse.Namespace) -> int:
    from ..datasets.stats import format_stats, position_set_stats
    try:
        st = position_set_stats(args.data)
    except ValueError as e:
        raise fail(str(e)) from None
    print(json.dumps(st, sort_keys=True) if args.json else format_stats(st))
    return 0


run = cmd_data_stats
