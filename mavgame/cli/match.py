"""``mavgame match``: two agents play every opening with both colours."""
from __future__ import annotations

import argparse

from .options import (add_game_options, add_league_options, agent_table, parse_agents)
from .league import add_concurrent_option, run_league

DESCRIPTION = ('A match between two agents: each opening is played twice, colours swapped. Prints the W/D/L and '
               'the Elo difference with its confidence interval.  Agents are specs (random, uct:sims=400, '
               'uct:movetime=100 (ms per move), mcts:sims=200,evaluator=playout, solver_mcts, perfect, '
               "stockfish:skill=5,movetime=100, stockfish:preset=paper,level=5 (the paper's 2 s per move), "
               'uci:path=ENGINE, python:fn=module:function, mav, mav_mcts), optionally named NAME=SPEC.')


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("first", help="first agent spec (NAME=SPEC to name it)")
    p.add_argument("second", help="second agent spec (NAME=SPEC to name it)")
    add_game_options(p, "connect_four")
    add_league_options(p)
    add_concurrent_option(p)
    p.add_argument("--out", default=None, metavar="FILE.sqlite",
                    help="store the games in this SQLite results store (rerun to resume; a .jsonl name stores in "
                         "the .sqlite beside it and imports the JSON-lines file once); '-': write the games to "
                         "stdout as JSON lines, the tables to stderr (default: not stored)")
    p.epilog = agent_table()


def cmd_match(args: argparse.Namespace) -> int:
    a = parse_agents([args.first], args.game)
    b = parse_agents([args.second], args.game)
    (na, sa), (nb, sb) = next(iter(a.items())), next(iter(b.items()))
    if na == nb:  # the same kind of agent on both sides
        na, nb = na + "-1", nb + "-2"
    return run_league(args, {na: sa, nb: sb}, args.out, event=f"mavgame {args.game} match: {na} vs {nb}")


run = cmd_match
