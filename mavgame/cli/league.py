"""``mavgame league``: a round robin (or the paper's match-ups, or a gauntlet) with an Elo table; also
the league runner that ``mavgame match`` uses."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Dict, Optional, Sequence

from ..games import registry
from .options import (add_game_options, add_league_options, agent_table, at_least_one, fail,
                      parse_agents)

DESCRIPTION = ("Every pair of agents plays every opening with both colours (--matchups N: the paper's N random "
               'match-ups instead); games run in parallel and are stored one by one in a SQLite results store, '
               'so an interrupted league resumes when run again.  Prints the W/D/L matrix and a '
               'maximum-likelihood Elo table with confidence intervals (mean 0, or --zero NAME at 0 as the '
               "paper's basic MCTS; the footer and the store say which).  Without --agent: a Connect Four league "
               'of random, playout UCT at 100/400/1600 simulations, MCTS guided by the perfect solver and the '
               'perfect player, from six shipped openings (a few minutes on two cores).')


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_game_options(p, "connect_four")
    p.add_argument("--agent", action="append", metavar="[NAME=]SPEC",
                    help="an agent (repeat for each): a spec such as uct:sims=400 or stockfish:skill=3,movetime=100, "
                         "optionally named NAME=SPEC (see `mavgame match --help` for the kinds)")
    p.add_argument("--stockfish-levels", default=None, metavar="LEVELS",
                    help="add Stockfish at these skill levels (0-20, 0,5,10 or 0-4,10) as agents sf-skillL: the "
                         "paper's protocol with --stockfish-movetime 2000")
    p.add_argument("--stockfish-movetime", type=at_least_one, default=2000, metavar="MS",
                    help="milliseconds per move of the --stockfish-levels agents (default: 2000, the paper's)")
    add_league_options(p)
    p.add_argument("--gauntlet", default=None, metavar="NAME",
                    help="play every other agent against NAME only (each pair on every opening, both colours; with "
                         "--matchups, the match-ups are drawn among those pairs) and put NAME at Elo 0 unless "
                         "--zero names another agent: each row is then that agent's rating head to head against NAME")
    p.add_argument("--out", default=None, metavar="FILE.sqlite",
                    help="SQLite results store, reused to resume (default: league-GAME.sqlite in the current "
                         "directory; a .jsonl name stores in the .sqlite beside it and imports the JSON-lines file "
                         "once); '-': not stored, the games to stdout as JSON lines and the tables to stderr; "
                         "'none': not stored")
    add_concurrent_option(p)
    p.add_argument("--fresh", action="store_true", help="delete the results file first instead of resuming")
    p.add_argument("--max-games", type=int, default=None,
                    help="stop after this many new games (the rest can be played by a later run)")
    p.epilog = agent_table()


def concurrent_games(v: str) -> Optional[int]:
    """--concurrent: a number of games >= 1, or 'auto'."""
    if v == "auto":
        return None
    if not v.isdigit() or int(v) < 1:
        raise argparse.ArgumentTypeError(f"--concurrent takes a number of games >= 1 or 'auto', not {v!r}")
    return int(v)


def add_concurrent_option(p: argparse.ArgumentParser) -> None:
    """--concurrent N|auto, for league and match."""
    p.add_argument("--concurrent", type=concurrent_games, default=None, metavar="N",
                   help="play N games at once in this process (--workers is then unused): the searches of "
                        "MAV-MCTS agents over a native model share one batched model call per round, and each game "
                        "is the one played alone (same seeds); default 'auto': 8 when an agent batches across "
                        "games (mav_mcts on the native backend), else 1")


DEFAULT_LEAGUE = {
    # The README's main command: a small Connect Four league that runs in a few minutes on two cores.
    "game": "connect_four",
    "agents": [
        "random=random",
        "uct-100=uct:sims=100",
        "uct-400=uct:sims=400",
        "uct-1600=uct:sims=1600",
        "solver-mcts-50=solver_mcts:sims=50",
        "perfect=perfect",
    ],
    # openings the solver handles quickly (see mavgame/data/openings_connect_four.txt)
    "openings": "c4-1,c4-2,c4-12,c4-16,c4-18,c4-20",
}


def _parse_anchors(items: Optional[Sequence[str]]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for it in items or []:
        name, eq, val = it.rpartition("=")
        if not eq or not name:
            raise fail(f"--anchor takes NAME=RATING (an external rating), not {it!r}; to fix the scale with "
                        f"one agent at 0, as the paper does with its basic MCTS: --zero {it}")
        try:
            out[name] = float(val)
        except ValueError:
            raise fail(f"--anchor {it!r}: {val!r} is not a number")
    return out


def _resolve_openings(arg: Optional[str], game: str, board_size: int, seed: int):
    """--openings: a number, comma-separated names of the shipped openings, a file, a named set of the
    game (chess: tcec, the MAV paper's TCEC book), or random:PLIES:N."""
    from ..play.openings import load_openings, opening_sets, random_openings

    if arg is None:
        return None
    try:
        if arg.isdigit():
            return int(arg)
        if arg.startswith("random:"):
            parts = arg.split(":")
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                raise fail(f"--openings random:PLIES:N expected, not {arg!r}")
            return random_openings(game, int(parts[1]), int(parts[2]), seed=seed, board_size=board_size)
        if os.path.exists(arg):
            return load_openings(game, board_size=board_size, path=arg)
        if arg in opening_sets(game):
            return load_openings(game, board_size=board_size, name=arg)
        info = registry.get(game)
        if info.start_position is not None and arg.startswith(info.start_prefix):   # Chess960's 960-N
            from ..play.league import Opening
            return [Opening(n, (), info.numbered_start(n)) for n in arg.split(",")]
        shipped = {o.name: o for o in load_openings(game, board_size=board_size)}
        names = [n.strip() for n in arg.split(",") if n.strip()]
        missing = [n for n in names if n not in shipped]
        if missing:
            sets = "".join(f", the set {k}" for k in opening_sets(game))
            raise fail(f"unknown opening(s) {missing} for {game} (shipped: {', '.join(list(shipped)[:8])}...; "
                        f"or give a number, a file{sets} or random:PLIES:N)")
        return [shipped[n] for n in names]
    except (ValueError, FileNotFoundError) as e:
        raise fail(str(e))


def _adjudicator(args):
    if not getattr(args, "adjudicate", None):
        return None
    from ..play.league import Adjudicator
    return Adjudicator(args.adjudicate, plies=args.adjudicate_plies, nodes=args.adjudicate_nodes)


def run_league(args, agents: Dict[str, str], out: Optional[str], event: Optional[str] = None) -> int:
    import warnings

    from ..play.league import League
    from ..play.results import ResultsWarning
    from ..play.store import StoreError

    for path in getattr(args, "export", None) or []:
        ext = os.path.splitext(path)[1].lower()
        if ext not in (".jsonl", ".csv", ".pgn", ".txt"):
            raise fail(f"--export {path}: use a .jsonl, .csv, .pgn (chess games) or .txt (move lists) name")
        if ext == ".pgn" and not registry.in_family(args.game, "chess"):
            raise fail(f"--export {path}: PGN is a chess format; {args.game} games export as .txt move lists, "
                       ".jsonl or .csv")
    anchors = _parse_anchors(args.anchor)
    unknown = [k for k in anchors if k not in agents]
    if unknown:
        raise fail(f"--anchor {unknown[0]}=...: {unknown[0]!r} is not an agent of this league "
                    f"(agents: {', '.join(agents)})")
    if getattr(args, "zero", None) is not None and args.zero not in agents:
        raise fail(f"--zero {args.zero}: {args.zero!r} is not an agent of this league (agents: {', '.join(agents)})")
    pairs = None
    gauntlet = getattr(args, "gauntlet", None)
    if gauntlet is not None:
        if gauntlet not in agents:
            raise fail(f"--gauntlet {gauntlet}: {gauntlet!r} is not an agent of this league "
                        f"(agents: {', '.join(agents)})")
        pairs = [(a, gauntlet) for a in agents if a != gauntlet]
        if getattr(args, "zero", None) is None:
            args.zero = gauntlet
    to_stdout = out == "-"
    if to_stdout:
        out = None
    openings = _resolve_openings(args.openings, args.game, args.board_size, args.seed)
    with warnings.catch_warnings():  # refused or uncounted stored games: one line each
        warnings.simplefilter("always", ResultsWarning)
        said: set = set()

        def show(m, *a, **k):
            if str(m) not in said:
                said.add(str(m))
                print(f"mavgame: warning: {m}", file=sys.stderr)

        warnings.showwarning = show
        try:
            lg = League(agents, args.game, openings, rounds=args.rounds, path=out, workers=args.workers,
                        board_size=args.board_size, adjudicate=_adjudicator(args), max_plies=args.max_plies,
                        seed=args.seed, event=event, matchups=getattr(args, "matchups", None), pairs=pairs,
                        concurrent=getattr(args, "concurrent", None))
            todo = len(lg.schedule())
            done = len(lg.finished()) if out else 0
            return _play_league(args, lg, agents, anchors, lg.store_path, todo, done, to_stdout)
        except StoreError as e:
            raise fail(str(e))
        except ValueError as e:
            raise fail(str(e))


def _play_league(args, lg, agents: Dict[str, str], anchors: Dict[str, float], out: Optional[str], todo: int,
                 done: int, to_stdout: bool) -> int:
    from ..play.league import LeagueError, LeagueInterrupted

    where = f"; results in {out}" + (f" ({done} game(s) there already: resuming)" if done else "") if out else ""
    print(f"{args.game}: {len(agents)} agents, {len(lg.openings)} opening(s), {todo} games{where}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        res = lg.run(progress=not args.no_progress, max_games=getattr(args, "max_games", None))
    except LeagueInterrupted as e:   # Ctrl-C: the status of every interrupted command
        print(f"mavgame: {e}", file=sys.stderr)
        return 130
    except LeagueError as e:
        print(f"mavgame: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        raise fail(str(e))
    dt = time.perf_counter() - t0
    report = sys.stdout
    if to_stdout:  # --out -: the games as JSON lines on stdout, the tables on stderr
        for g in res.games:
            print(json.dumps(g.to_dict()), file=sys.stdout)
        sys.stdout.flush()
        report = sys.stderr
    print(f"\n{len(res)} games ({dt:.0f} s)\n", file=report)
    print(res.matrix_table(), file=report)
    print(file=report)
    if getattr(args, "anchor_uci_elo", False):
        from ..agents import parse_spec
        for name, spec in agents.items():
            kind, kw = parse_spec(spec)
            if kind in ("stockfish", "uci") and kw.get("elo") is not None:
                anchors.setdefault(name, float(kw["elo"]))
        if not anchors:
            print("mavgame: --anchor-uci-elo: no agent has elo=N; no calibration", file=sys.stderr)
    if getattr(args, "anchor_stockfish", None):
        from ..engines.stockfish_levels import TABLE_SOURCES, stockfish_anchors
        found = stockfish_anchors(agents, args.anchor_stockfish)
        for k, v in found.items():
            anchors.setdefault(k, v)
        print(f"mavgame: --anchor-stockfish {args.anchor_stockfish}: {len(found)} anchor(s) from "
              f"{TABLE_SOURCES[args.anchor_stockfish]}", file=sys.stderr)
    try:
        zero = getattr(args, "zero", None)
        elo = res.elo(prior_draws=args.prior, ci=args.ci, anchor=None if zero is None else (zero, 0.0))
    except ValueError as e:
        print(f"mavgame: no Elo table: {e}", file=sys.stderr)
        return 1
    if anchors:
        from ..play.elo import calibrate
        try:
            elo = calibrate(elo, {k: v for k, v in anchors.items() if k in elo.names})
        except ValueError as e:
            print(f"mavgame: no calibration: {e}", file=sys.stderr)
    print(elo.table(), file=report)
    if out:  # the table with its origin and prior, beside the games it was fitted on
        from ..play.store import ResultStore
        with ResultStore(out, create=False) as store:
            store.set_elo(elo.to_dict())
    if args.games_out:
        n = res.write_games(args.games_out)
        print(f"\n{n} games written to {args.games_out}", file=sys.stderr)
    for path in args.export or []:
        n = res.export(path)
        print(f"{n} games exported to {path}", file=sys.stderr)
    if args.plot:
        elo.plot(args.plot, title=f"{args.game} league ({len(res)} games)")
        print(f"plot saved to {args.plot}", file=sys.stderr)
    return 0


def _stockfish_level_agents(args: argparse.Namespace) -> Dict[str, str]:
    """The agents of --stockfish-levels (the paper's protocol: Skill Level L at --stockfish-movetime ms)."""
    from ..engines.stockfish_levels import paper_stockfish_agents, parse_levels
    try:
        return paper_stockfish_agents(parse_levels(args.stockfish_levels), args.stockfish_movetime)
    except ValueError as e:
        raise fail(f"--stockfish-levels: {e}")


def cmd_league(args: argparse.Namespace) -> int:
    sf_levels = _stockfish_level_agents(args) if getattr(args, "stockfish_levels", None) else {}
    if args.agent or sf_levels:
        agents = parse_agents(args.agent or [], args.game)
        for name, spec in sf_levels.items():
            if name in agents:
                raise fail(f"two agents are named {name!r} (--agent and --stockfish-levels)")
            agents[name] = spec
    else:
        if args.game != DEFAULT_LEAGUE["game"]:
            raise fail(f"give the agents of a {args.game} league with --agent (the default agents are for "
                        f"{DEFAULT_LEAGUE['game']})")
        agents = parse_agents(DEFAULT_LEAGUE["agents"])
        if args.openings is None:
            args.openings = DEFAULT_LEAGUE["openings"]
    if len(agents) < 2:
        raise fail("a league needs at least two agents")
    out = None if args.out in ("", "none") else (args.out or f"league-{args.game}.sqlite")
    if out and out != "-" and args.fresh:
        from ..play.store import store_path_for
        store, old = store_path_for(out)
        if old and os.path.exists(old):
            raise fail(f"--fresh with --out {out}: that JSON-lines file would be imported again; give a .sqlite "
                        "--out (or move the file away)")
        for f in (store, store + "-wal", store + "-shm"):
            if os.path.exists(f):
                os.remove(f)
    return run_league(args, agents, out, event=f"mavgame {args.game} league")


run = cmd_league
