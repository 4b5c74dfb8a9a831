"""``mavgame gardner-push``: a resumable background push of the Gardner oracle proofs (docs/gardner.md)."""
from __future__ import annotations

import argparse

from .options import fail

DESCRIPTION = ("Work through the transcribed Gardner oracles' open #x leaves with growing proof-number budgets and "
               "push the drawn leaves' 'cannot lose within H plies' to deeper horizons, round after round, writing "
               "every answer to the state file at once (atomically): a killed run resumes where it stopped and never "
               "repeats a query.  --report prints the proven / refuted / unknown counts and the horizon reached.")

_SCHEDULE = ("mate_nodes", "draw_nodes", "growth", "rounds", "max_draw_plies", "retry_moves", "tt_log2")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", required=True, metavar="FILE", help="the state file (created when missing, else resumed)")
    p.add_argument("--budget-hours", type=float, default=0.0, help="wall-clock budget of this run (default 0: none)")
    p.add_argument("--report", action="store_true", help="print the state's counts and exit (no proving)")
    p.add_argument("--details", action="store_true", help="with --report: one line per leaf as well")
    p.add_argument("--max-queries", type=int, default=0, help="stop after this many new queries (default 0: none)")
    p.add_argument("--oracles", default=None, metavar="FILE", help="oracle file (default: the shipped transcription)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar and no line per query")
    g = p.add_argument_group("schedule (fixed when the state file is created; default: the state's, else these)")
    g.add_argument("--mate-nodes", type=int, default=None, help="PNS nodes per #x leaf in round 0 (10000000)")
    g.add_argument("--draw-nodes", type=int, default=None, help="alpha-beta nodes per drawn leaf in round 0 (2000000)")
    g.add_argument("--growth", type=int, default=None, help="budget factor per round (4)")
    g.add_argument("--rounds", type=int, default=None, help="rounds (6)")
    g.add_argument("--max-draw-plies", type=int, default=None, help="the deepest horizon asked of a drawn leaf (40)")
    g.add_argument("--retry-moves", type=int, default=None, help="bounds x+1..x+R tried above a refuted #x (3)")
    g.add_argument("--tt-log2", type=int, default=None, help="prover tables of 2^N entries (23)")


def cmd_gardner_push(args: argparse.Namespace) -> int:
    from dataclasses import asdict, replace
    from ..games.gardner_push import Schedule, _schedule_of, load_state, push, report_text
    try:
        state = load_state(args.state)
    except (OSError, ValueError) as e:
        raise fail(f"--state: {e}")
    if args.report:
        if state is None:
            raise fail(f"--state: {args.state} does not exist (nothing to report)")
        print(report_text(state, details=args.details))
        return 0
    if args.budget_hours < 0:
        raise fail(f"--budget-hours must be >= 0 (0: no limit), not {args.budget_hours}")
    if args.max_queries < 0:
        raise fail(f"--max-queries must be >= 0 (0: no limit), not {args.max_queries}")
    asked = {k: getattr(args, k) for k in _SCHEDULE if getattr(args, k) is not None}
    try:
        base = Schedule() if state is None else _schedule_of(state)
        base_d = asdict(base)
        sched = replace(base, **asked)
    except ValueError as e:
        raise fail(str(e))
    if state is not None:
        diff = [f"--{k.replace('_', '-')} {v} (the state has {base_d[k]})" for k, v in asked.items() if base_d[k] != v]
        if diff:
            raise fail(f"--state: {args.state} was started with another schedule: " + ", ".join(diff))
    log = None
    if not args.no_progress:
        from .._progress import tqdm
        log = tqdm.write
    try:
        state = push(args.state, sched, oracles=args.oracles, budget_seconds=args.budget_hours * 3600,
                     max_queries=args.max_queries, progress=not args.no_progress, log=log)
    except (OSError, ValueError) as e:
        raise fail(str(e))
    print(report_text(state))
    return 0


run = cmd_gardner_push
