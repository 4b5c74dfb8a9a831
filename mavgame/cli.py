"""The ``mavgame`` command line.

    mavgame games                              list the games of the C core
    mavgame perft --game chess --depth 5       count leaf nodes (with --divide per move)
    mavgame play --game connect_four           play against an agent in the terminal
    mavgame match uct:sims=100 perfect         two agents, every opening with both colours
    mavgame league                             a round robin with Elo (default: a Connect Four league)
    mavgame annotate positions.txt -o out.jsonl  Stockfish values for every legal move
    mavgame gardner-prove FEN --mate N         Gardner: prove or refute a bounded mate (docs/gardner.md)
    mavgame gardner-proof                      Gardner: check the paper's transcribed oracles
    mavgame bench                              speed of the C core (perft, playouts, MCTS)
    mavgame train ...                          train a MAV model (needs PyTorch)

Every subcommand explains its options with ``--help``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Dict, List, Optional, Sequence

from . import _core
from .games import registry
from .model import policy_command as _policy_command


def _make_state(game: str, text: Optional[str], board_size: int, flags: int) -> "_core.State":
    try:
        return _core.State(game, text, board_size, flags)
    except ValueError as e:
        raise SystemExit(f"mavgame: --fen {text!r}: {e}" if text is not None else f"mavgame: {e}")


# ---- argument checking: every bad argument ends in one "mavgame: ..." line naming it, never a traceback


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps one-paragraph texts as usual; keeps texts with line breaks (the agent table) as written."""

    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line + "\n" for line in text.splitlines())
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``mavgame: perft: argument --depth: must be >= 0, not -1 (see ...)``."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        sub = self.prog[len("mavgame"):].strip()
        where = f"{sub}: " if sub else ""
        self.exit(2, f"mavgame: {where}{message} (see `{self.prog} --help`)\n")


def _int_type(low: int, high: Optional[int] = None):
    """argparse type: an integer in [low, high]."""
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < low or (high is not None and v > high):
            raise argparse.ArgumentTypeError(f"must be {f'in {low}..{high}' if high is not None else f'>= {low}'}"
                                             f", not {v}")
        return v
    conv.__name__ = "int"
    return conv


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return v


_positive_float.__name__ = "number"


def _agent_table() -> str:
    """The agent kinds and their options, from the table in mavgame.play.agents' docstring (one copy)."""
    import re

    from .play import agents
    lines = (agents.__doc__ or "").splitlines()
    rules = [i for i, ln in enumerate(lines) if ln.startswith("=====")]
    if len(rules) < 3:  # docstrings stripped (python -OO)
        return "agent kinds: " + ", ".join(agents.agent_kinds())
    col = lines[rules[0]].index(" ") + 2          # where the second column starts
    out = ["agent specs: KIND or KIND:KEY=VALUE,KEY=VALUE (optionally named NAME=SPEC); the kinds and their "
           "options:", ""]
    for ln in lines[rules[1] + 1:rules[2]]:
        kind, text = ln[:col].strip().strip("`"), re.sub(r":\w+:`([^`]*)`", r"\1", ln[col:]).replace("``", "")
        out.append(f"  {kind:<12} {text}" if kind else f"  {'':<12} {text}")
    return "\n".join(out) + "\n"


def _check_writable(opt: str, path: Optional[str]) -> None:
    """A file the command will write: its folder must exist and be writable (checked before any work)."""
    if not path or path in ("-", "none"):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise _fail(f"{opt} {path}: is a folder, not a file")
    if not os.path.isdir(folder):
        raise _fail(f"{opt} {path}: the folder {folder} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise _fail(f"{opt} {path}: not writable")
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        raise _fail(f"{opt} {path}: the folder {folder} is not writable")


def _check_args(args: argparse.Namespace) -> None:
    """Checks shared by the subcommands, before any work starts (so that nothing fails after an hour of
    games): seeds, the game and board size, the files to write, matplotlib for --plot."""
    seed = getattr(args, "seed", None)
    if isinstance(seed, int) and seed < 0:
        raise _fail(f"--seed {seed}: must be >= 0")
    game = getattr(args, "game", None)
    for g in (game if isinstance(game, list) else [game] if isinstance(game, str) else []):  # bench: repeated
        try:
            registry.get(g)
        except registry.UnknownGameError as e:
            raise _fail(f"--game {g}: {e}")
    if isinstance(game, str):
        size = getattr(args, "board_size", 0) or 0
        if size < 0:
            raise _fail(f"--board-size {size}: must be >= 0 (0: the game's default)")
        if size:
            try:
                _core.State(game, None, size)
            except ValueError as e:
                raise _fail(f"--board-size {size}: {e}")
    if getattr(args, "command", None) in ("train", "az", "policy"):
        return   # their --out is a run folder (train: --export one file, mavgame.model.command.check_arguments)
    for opt, attr in (("--out", "out"), ("--output", "output"), ("--games-out", "games_out"), ("--plot", "plot")):
        val = getattr(args, attr, None)
        if isinstance(val, str):
            _check_writable(opt, val)
    for val in getattr(args, "export", None) or []:
        _check_writable("--export", val)
    if getattr(args, "plot", None):
        try:
            import matplotlib  # noqa: F401
        except ImportError as e:
            raise _fail(f"--plot {args.plot}: needs matplotlib (pip install matplotlib): {e}")


def cmd_games(args: argparse.Namespace) -> int:
    for name in registry.names():
        print(name)
    return 0


def cmd_data_stats(args: argparse.Namespace) -> int:
    from .model.data_stats import format_stats, position_set_stats
    try:
        st = position_set_stats(args.data)
    except ValueError as e:
        raise _fail(str(e)) from None
    print(json.dumps(st, sort_keys=True) if args.json else format_stats(st))
    return 0


def cmd_perft(args: argparse.Namespace) -> int:
    state = _make_state(args.game, args.fen, args.board_size, 0)
    if args.divide:
        t0 = time.perf_counter()
        try:
            acts, counts = state.perft_divide(args.depth)
        except ValueError as e:
            raise _fail(f"--depth {args.depth}: {e}")
        dt = time.perf_counter() - t0
        for a, c in sorted(zip(acts.tolist(), counts.tolist()), key=lambda x: state.action_to_str(x[0])):
            print(f"{state.action_to_str(a)}: {c}")
        total = int(counts.sum())
        print(f"\nNodes searched: {total}")
    else:
        t0 = time.perf_counter()
        try:
            total = state.perft(args.depth)
        except ValueError as e:
            raise _fail(f"--depth {args.depth}: {e}")
        dt = time.perf_counter() - t0
        print(f"perft({args.depth}) = {total}")
    nps = total / dt if dt > 0 else float("inf")
    print(f"time {dt:.3f} s, {nps / 1e6:.1f} M nodes/s", file=sys.stderr)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from .model import command
    return command.run(args)


# ---------------------------------------------------------------------------------------------
# shared helpers for play / match / league


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


def _fail(msg: str) -> "SystemExit":
    return SystemExit(f"mavgame: {msg}")


def _parse_agents(items: Sequence[str], game: Optional[str] = None) -> Dict[str, str]:
    """``name=spec`` or ``spec`` items -> {name: spec} (a bare spec is named after itself). With ``game``, an
    agent that cannot play it is refused before its engine is started (the same message with or without the
    engine installed)."""
    from .play.agents import make_agent

    out: Dict[str, str] = {}
    for it in items:
        name, spec = None, it
        head = it.split(":", 1)[0]
        if "=" in head:  # name=spec (the '=' comes before any ':')
            name, spec = it.split("=", 1)
        try:
            ag = make_agent(spec)
        except (ValueError, ImportError, OSError) as e:
            raise _fail(f"agent {it!r}: {e}")
        plays = getattr(ag, "games", None)
        if game is not None and plays and game not in plays:
            ag.close()
            raise _fail(f"agent {it!r} cannot play {game!r} (it plays {', '.join(plays)})")
        _check_engine(it, ag)
        name = name or (spec if ":" not in spec else ag.name)
        ag.close()
        if name in out:
            raise _fail(f"two agents are named {name!r}: name them with NAME=SPEC")
        out[name] = spec
    return out


def _check_engine(spec: str, agent) -> None:
    """A UCI agent's engine must start and answer the UCI handshake (before any game is played)."""
    from .play.agents import UCIAgent
    from .engines.uci import EngineError
    if isinstance(agent, UCIAgent):
        try:
            agent.engine  # starts the engine: the handshake and options
        except (EngineError, OSError) as e:
            raise _fail(f"agent {spec!r}: {e}")


def _parse_anchors(items: Optional[Sequence[str]]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for it in items or []:
        name, eq, val = it.rpartition("=")
        if not eq or not name:
            raise _fail(f"--anchor takes NAME=RATING (an external rating), not {it!r}; to fix the scale with "
                        f"one agent at 0, as the paper does with its basic MCTS: --zero {it}")
        try:
            out[name] = float(val)
        except ValueError:
            raise _fail(f"--anchor {it!r}: {val!r} is not a number")
    return out


def _resolve_openings(arg: Optional[str], game: str, board_size: int, seed: int):
    """--openings: a number, comma-separated names of the shipped openings, a file, or random:PLIES:N."""
    from .play.openings import load_openings, random_openings

    if arg is None:
        return None
    try:
        if arg.isdigit():
            return int(arg)
        if arg.startswith("random:"):
            parts = arg.split(":")
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                raise _fail(f"--openings random:PLIES:N expected, not {arg!r}")
            return random_openings(game, int(parts[1]), int(parts[2]), seed=seed, board_size=board_size)
        if os.path.exists(arg):
            return load_openings(game, board_size=board_size, path=arg)
        info = registry.get(game)
        if info.start_position is not None and arg.startswith(info.start_prefix):   # Chess960's 960-N
            from .play.league import Opening
            return [Opening(n, (), info.numbered_start(n)) for n in arg.split(",")]
        shipped = {o.name: o for o in load_openings(game, board_size=board_size)}
        names = [n.strip() for n in arg.split(",") if n.strip()]
        missing = [n for n in names if n not in shipped]
        if missing:
            raise _fail(f"unknown opening(s) {missing} for {game} (shipped: {', '.join(list(shipped)[:8])}...; "
                        "or give a number, a file or random:PLIES:N)")
        return [shipped[n] for n in names]
    except (ValueError, FileNotFoundError) as e:
        raise _fail(str(e))


def _adjudicator(args):
    if not getattr(args, "adjudicate", None):
        return None
    from .play.league import Adjudicator
    return Adjudicator(args.adjudicate, plies=args.adjudicate_plies, nodes=args.adjudicate_nodes)


def _add_game_options(p: argparse.ArgumentParser, default_game: str) -> None:
    p.add_argument("--game", default=default_game, help=f"game name (see `mavgame games`; default: {default_game})")
    sized = ", ".join(f"{g.name} 1..{g.max_board_size}, default {g.default_board_size}"
                      for g in registry.infos() if g.sized)
    p.add_argument("--board-size", type=int, default=0, help=f"board size for sized games ({sized})")


def _at_least_one(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {v}")
    return v


def _add_league_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--openings", default=None,
                   help="openings: N (the first N shipped for the game; N random start positions for chess960), "
                        "comma-separated names of shipped openings, a file in the openings format, or "
                        "random:PLIES:N (N random openings of PLIES moves); default: all shipped openings")
    p.add_argument("--rounds", type=int, default=1, help="times each (pair, opening, colour) game is played (default: 1)")
    p.add_argument("--matchups", type=_at_least_one, default=None, metavar="N",
                   help="the paper's scheduler: N match-ups, each a uniformly random pair and opening played with "
                        "both colours (default: the full round robin)")
    p.add_argument("--workers", type=_at_least_one, default=max(1, min(os.cpu_count() or 1, 2)),
                   help="processes playing games in parallel, >= 1 (default: min(2, CPUs))")
    p.add_argument("--max-plies", type=_at_least_one, default=None,
                   help="moves after the opening before a game is scored a draw, >= 1 (default: no limit, "
                        "play to the end)")
    p.add_argument("--adjudicate", type=int, default=None, metavar="CP",
                   help="chess: end a game once Stockfish's evaluation reaches CP centipawns for one side "
                        "(the MAV paper used 1200 for some runs)")
    p.add_argument("--adjudicate-plies", type=int, default=1,
                   help="consecutive decisive evaluations needed to adjudicate (default: 1)")
    p.add_argument("--adjudicate-nodes", type=int, default=20000,
                   help="Stockfish nodes per adjudication evaluation (default: 20000)")
    p.add_argument("--seed", type=int, default=0, help="seed for per-game agent seeds and random openings (default: 0)")
    p.add_argument("--games-out", "--pgn", dest="games_out", default=None, metavar="FILE",
                   help="write all games: PGN for the chess family, one move list per line for other games")
    p.add_argument("--export", action="append", default=None, metavar="FILE",
                   help="also export the results by extension: .jsonl (records), .csv (one row per game), .pgn "
                        "(repeat for several)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--prior", type=float, default=1.0,
                   help="virtual draws added to each pair in the Elo fit (keeps perfect scores finite; 0: plain "
                        "maximum likelihood; default: 1)")
    p.add_argument("--ci", choices=["hessian", "bootstrap"], default="hessian",
                   help="confidence intervals: normal approximation from the Hessian, or bootstrap over games "
                        "(default: hessian)")
    p.add_argument("--zero", default=None, metavar="NAME",
                   help="fix the Elo scale with this agent at 0 (the paper anchors basic MCTS at 0; default: "
                        "the mean of all agents is 0)")
    p.add_argument("--anchor", action="append", metavar="NAME=RATING",
                   help="calibrate to an external scale: an agent with a known rating (repeat; two or more fit "
                        "slope and offset, one only the offset)")
    p.add_argument("--anchor-uci-elo", action="store_true",
                   help="use every stockfish/uci agent given elo=N (UCI_LimitStrength) as an anchor rated N")
    p.add_argument("--anchor-stockfish", default=None, metavar="TABLE", choices=["sf-2023", "sf7-2016"],
                   help="calibrate on the published ratings of the Stockfish skill levels in the league (tables "
                        "sf-2023 or sf7-2016, see mavgame.engines.stockfish_levels)")
    p.add_argument("--plot", default=None, metavar="FILE", help="save a plot of the ratings (needs matplotlib)")


def _run_league(args, agents: Dict[str, str], out: Optional[str], event: Optional[str] = None) -> int:
    import warnings

    from .play.league import League
    from .play.results import ResultsWarning
    from .play.store import StoreError

    for path in getattr(args, "export", None) or []:
        if os.path.splitext(path)[1].lower() not in (".jsonl", ".csv", ".pgn", ".txt"):
            raise _fail(f"--export {path}: use a .jsonl, .csv, .pgn or .txt name")
    anchors = _parse_anchors(args.anchor)
    unknown = [k for k in anchors if k not in agents]
    if unknown:
        raise _fail(f"--anchor {unknown[0]}=...: {unknown[0]!r} is not an agent of this league "
                    f"(agents: {', '.join(agents)})")
    if getattr(args, "zero", None) is not None and args.zero not in agents:
        raise _fail(f"--zero {args.zero}: {args.zero!r} is not an agent of this league (agents: {', '.join(agents)})")
    pairs = None
    gauntlet = getattr(args, "gauntlet", None)
    if gauntlet is not None:
        if gauntlet not in agents:
            raise _fail(f"--gauntlet {gauntlet}: {gauntlet!r} is not an agent of this league "
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
                        seed=args.seed, event=event, matchups=getattr(args, "matchups", None), pairs=pairs)
            todo = len(lg.schedule())
            done = len(lg.finished()) if out else 0
            return _play_league(args, lg, agents, anchors, lg.store_path, todo, done, to_stdout)
        except StoreError as e:
            raise _fail(str(e))
        except ValueError as e:
            raise _fail(str(e))


def _play_league(args, lg, agents: Dict[str, str], anchors: Dict[str, float], out: Optional[str], todo: int,
                 done: int, to_stdout: bool) -> int:
    from .play.league import LeagueError

    where = f"; results in {out}" + (f" ({done} game(s) there already: resuming)" if done else "") if out else ""
    print(f"{args.game}: {len(agents)} agents, {len(lg.openings)} opening(s), {todo} games{where}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        res = lg.run(progress=not args.no_progress, max_games=getattr(args, "max_games", None))
    except LeagueError as e:
        print(f"mavgame: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        raise _fail(str(e))
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
        from .play.agents import parse_spec
        for name, spec in agents.items():
            kind, kw = parse_spec(spec)
            if kind in ("stockfish", "uci") and kw.get("elo") is not None:
                anchors.setdefault(name, float(kw["elo"]))
        if not anchors:
            print("mavgame: --anchor-uci-elo: no agent has elo=N; no calibration", file=sys.stderr)
    if getattr(args, "anchor_stockfish", None):
        from .engines.stockfish_levels import TABLE_SOURCES, stockfish_anchors
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
        from .play.elo import calibrate
        try:
            elo = calibrate(elo, {k: v for k, v in anchors.items() if k in elo.names})
        except ValueError as e:
            print(f"mavgame: no calibration: {e}", file=sys.stderr)
    print(elo.table(), file=report)
    if out:  # the table with its origin and prior, beside the games it was fitted on
        from .play.store import ResultStore
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
    from .engines.stockfish_levels import paper_stockfish_agents, parse_levels
    try:
        return paper_stockfish_agents(parse_levels(args.stockfish_levels), args.stockfish_movetime)
    except ValueError as e:
        raise _fail(f"--stockfish-levels: {e}")


def cmd_league(args: argparse.Namespace) -> int:
    sf_levels = _stockfish_level_agents(args) if getattr(args, "stockfish_levels", None) else {}
    if args.agent or sf_levels:
        agents = _parse_agents(args.agent or [], args.game)
        for name, spec in sf_levels.items():
            if name in agents:
                raise _fail(f"two agents are named {name!r} (--agent and --stockfish-levels)")
            agents[name] = spec
    else:
        if args.game != DEFAULT_LEAGUE["game"]:
            raise _fail(f"give the agents of a {args.game} league with --agent (the default agents are for "
                        f"{DEFAULT_LEAGUE['game']})")
        agents = _parse_agents(DEFAULT_LEAGUE["agents"])
        if args.openings is None:
            args.openings = DEFAULT_LEAGUE["openings"]
    if len(agents) < 2:
        raise _fail("a league needs at least two agents")
    out = None if args.out in ("", "none") else (args.out or f"league-{args.game}.sqlite")
    if out and out != "-" and args.fresh:
        from .play.store import store_path_for
        store, old = store_path_for(out)
        if old and os.path.exists(old):
            raise _fail(f"--fresh with --out {out}: that JSON-lines file would be imported again; give a .sqlite "
                        "--out (or move the file away)")
        for f in (store, store + "-wal", store + "-shm"):
            if os.path.exists(f):
                os.remove(f)
    return _run_league(args, agents, out, event=f"mavgame {args.game} league")


def cmd_match(args: argparse.Namespace) -> int:
    a = _parse_agents([args.first], args.game)
    b = _parse_agents([args.second], args.game)
    (na, sa), (nb, sb) = next(iter(a.items())), next(iter(b.items()))
    if na == nb:  # the same kind of agent on both sides
        na, nb = na + "-1", nb + "-2"
    return _run_league(args, {na: sa, nb: sb}, args.out, event=f"mavgame {args.game} match: {na} vs {nb}")


# ---- play --------------------------------------------------------------------------------------


def _display(state) -> str:
    """The board as the game's Python class prints it (plain text as a fallback)."""
    text = state.text()
    try:
        return registry.get(state.game).display(state)
    except Exception:  # noqa: BLE001 - fall back to the text
        pass
    return "\n".join(text.split(" ")[0].split("/")) + f"\n({text})"


def _parse_human_move(state, s: str) -> int:
    try:
        return int(state.action_from_str(s))
    except ValueError as e:
        if registry.get(state.game).san:
            from . import _core
            try:
                return int(_core.parse_san(state, s))
            except (ValueError, AttributeError):
                pass
        raise ValueError(str(e))


THINKING_DELAY = 2.0  # seconds an agent thinks in `mavgame play` before the elapsed time is shown


class _Thinking:
    """Shows that an agent is still thinking: after ``delay`` seconds, an elapsed-time line on stderr
    (updated in place on a terminal, a line every ``every`` seconds otherwise), from a background thread
    while the agent runs in the main thread (where Ctrl-C reaches long C work)."""

    def __init__(self, name: str, hint: str = "", delay: Optional[float] = None, every: float = 15.0, out=None):
        import threading
        self.name, self.hint, self.every = name, hint, every
        self.delay = THINKING_DELAY if delay is None else delay
        self.out = out or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._shown = False

    def _run(self) -> None:
        t0 = time.monotonic()
        if self._stop.wait(self.delay):
            return
        tty = hasattr(self.out, "isatty") and self.out.isatty()
        last = -self.every
        while not self._stop.is_set():
            t = time.monotonic() - t0
            if tty:
                self.out.write(f"\r{self.name} is thinking... {t:.0f} s{self.hint}")
            elif t - last >= self.every:
                self.out.write(f"{self.name} is thinking... {t:.0f} s{self.hint}\n")
                last = t
            self.out.flush()
            self._shown = True
            self._stop.wait(1.0)
        if tty and self._shown:
            self.out.write("\r\033[K")
            self.out.flush()

    def __enter__(self) -> "_Thinking":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _thinking_hint(spec: str, game: str) -> str:
    kind = spec.split(":", 1)[0].split("=")[-1]
    if kind in ("perfect", "minimax") and registry.get(game).slow_perfect_player:
        return " (the perfect player solves the position exactly: early moves can take minutes; Ctrl-C quits)"
    return ""


def cmd_play(args: argparse.Namespace) -> int:
    from . import _core
    from .play.agents import AgentError, make_agent, resolve_move

    try:
        agent = make_agent(args.agent)
        agent.check_game(args.game)
    except (ValueError, AgentError, ImportError, OSError) as e:
        raise _fail(f"--agent {args.agent}: {e}")
    _check_engine(args.agent, agent)
    try:
        make_agent(args.hint).close()
    except (ValueError, ImportError, OSError) as e:
        raise _fail(f"--hint {args.hint}: {e}")
    try:
        state = _core.State(args.game, args.fen, args.board_size, _core.FLAG_HEX_SWAP if args.swap else 0)
    except ValueError as e:
        raise _fail(f"--fen {args.fen!r}: {e}" if args.fen is not None else str(e))
    for m in (args.moves or "").split():
        try:
            state.push(m)
        except ValueError as e:
            raise _fail(f"--moves: {e}")
    human = 0 if args.color in ("first", "white", "x") else 1
    agent.setup(args.game, seed=args.seed, player=1 - human)
    names = {human: "you", 1 - human: agent.name}
    out = sys.stdout
    print(f"{args.game}: you play {'first' if human == 0 else 'second'} against {agent.name}. "
          "Type a move, 'moves' for the legal moves, 'undo', 'hint' or 'quit'.", file=out)
    hint_agent = None
    while True:
        print("\n" + _display(state), file=out)
        res, why = state.outcome()
        if res != 0:
            print(f"\nGame over: {state.result()} ({why})", file=out)
            return 0
        if state.to_move != human:
            t = time.perf_counter()
            try:
                with _Thinking(agent.name, _thinking_hint(args.agent, args.game)):
                    a = resolve_move(state, agent.act(state.copy()), agent.name)
            except (AgentError, Exception) as e:  # noqa: BLE001 - report any agent failure
                print(f"mavgame: {agent.name} failed: {e}", file=sys.stderr)
                return 2
            mv = state.action_to_str(a)
            state.push(a)
            print(f"\n{agent.name} plays {mv} ({time.perf_counter() - t:.1f} s)", file=out)
            continue
        try:
            line = input(f"{names[human]} ({'first' if human == 0 else 'second'}) > ").strip()
        except EOFError:
            print("\n(end of input: quitting)", file=out)
            agent.close()
            return 0
        if not line:
            continue
        cmd = line.lower()
        if cmd in ("quit", "exit", "resign", "q"):
            agent.close()
            return 0
        if cmd in ("moves", "legal", "?"):
            print(" ".join(state.legal_moves()), file=out)
            continue
        if cmd == "undo":
            if len(state.history()) >= 2:
                state.pop()
                state.pop()
                agent.setup(args.game, seed=args.seed, player=1 - human)
            else:
                print("nothing to undo", file=out)
            continue
        if cmd == "hint":
            if hint_agent is None:
                hint_agent = make_agent(args.hint)
                hint_agent.setup(args.game, seed=args.seed, player=human)
            try:
                with _Thinking(hint_agent.name, _thinking_hint(args.hint, args.game)):
                    a = resolve_move(state, hint_agent.act(state.copy()), hint_agent.name)
                print(f"hint ({hint_agent.name}): {state.action_to_str(a)}", file=out)
            except (AgentError, Exception) as e:  # noqa: BLE001
                print(f"no hint: {e}", file=out)
            continue
        try:
            a = _parse_human_move(state, line)
        except ValueError as e:
            print(f"illegal move: {e}", file=out)
            continue
        state.push(a)


# ---- annotate -----------------------------------------------------------------------------------


def cmd_annotate(args: argparse.Namespace) -> int:
    import shutil

    from .engines.annotate import Annotator, annotate_file, check_positions
    from .engines.uci import EngineError, find_stockfish

    engine = args.engine
    variant = registry.get(args.game).uci_variant
    game = args.game if variant else None   # None: standard chess or Chess960, told apart by the FEN
    if variant and engine == "stockfish":
        from .engines.fairy import find_fairy_stockfish
        if find_fairy_stockfish() is None:
            raise _fail(f"--game {args.game}: Fairy-Stockfish not found (apt-get install fairy-stockfish, "
                        "or --engine PATH)")
    elif engine == "stockfish" and find_stockfish() is None:
        raise _fail("--engine stockfish: Stockfish not found (apt-get install stockfish, or --engine PATH)")
    if engine != "stockfish" and shutil.which(engine) is None:
        raise _fail(f"--engine {engine}: no such executable")
    if args.input != "-" and not os.path.isfile(args.input):
        raise _fail(f"input file {args.input} not found")
    out = args.output or (os.path.splitext(args.input)[0] + ".annotated.jsonl" if args.input != "-" else None)
    if out is None:
        raise _fail("give -o OUTPUT when reading positions from stdin")
    _check_writable("--output", out)
    inp = args.input
    tmp = None
    if inp == "-":
        import tempfile
        tmp = tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False)
        tmp.write(sys.stdin.buffer.read())
        tmp.close()
        inp = tmp.name
    try:
        try:   # every line checked (UTF-8, FEN, legal moves) before an engine starts
            n_in = len(check_positions(inp, args.chess960, game))
        except ValueError as e:
            raise _fail(str(e).replace(inp, "standard input") if tmp is not None else str(e))
        limits = {"nodes": args.nodes, "movetime": args.movetime, "depth": args.depth}
        limits = {k: v for k, v in limits.items() if v is not None}
        try:   # the engine must start and speak UCI before any work
            Annotator(engine, hash_mb=args.hash, chess960=args.chess960, game=game, **limits).close()
        except (EngineError, OSError) as e:
            raise _fail(f"--engine {engine}: {e}")
        t0 = time.perf_counter()
        try:
            n = annotate_file(inp, out, workers=args.workers, progress=not args.no_progress, resume=not args.fresh,
                              mav_commands=args.mav, engine=engine, chess960=args.chess960, hash_mb=args.hash,
                              game=game, **limits)
        except (EngineError, ValueError) as e:
            raise _fail(f"{e} (annotations finished so far are kept in {out}; run again to resume)")
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
    dt = time.perf_counter() - t0
    print(f"{n} position(s) annotated in {dt:.1f} s ({n_in} in {args.input}); results in {out}", file=sys.stderr)
    return 0


# ---- bench ---------------------------------------------------------------------------------------


def cmd_bench(args: argparse.Namespace) -> int:
    if args.peers or args.full:
        from . import bench
        return bench.main(["--full"] if args.full else [])
    from . import _core

    games = args.game or registry.names()
    rows = []
    try:
        from ._progress import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None
    items = [(g, k) for g in games for k in ("perft", "playouts", "uct", "mcts")]
    bar = tqdm(items, desc="bench", unit="test", disable=args.no_progress) if tqdm else items
    for g, kind in bar:
        try:
            s = registry.get(g).state(None, args.board_size)
        except ValueError as e:
            raise _fail(str(e))
        budget = args.seconds
        if kind == "perft":
            depth, n, dt = 1, 0, 0.0
            while True:  # deepen until one perft takes at least the budget / 4
                t = time.perf_counter()
                n = s.perft(depth)
                dt = time.perf_counter() - t
                if dt >= budget / 4 or depth >= 12 or n == 0:
                    break
                depth += 1
            rows.append((g, f"perft({depth})", n, dt, "nodes"))
        elif kind == "playouts":
            n, dt, k = 0, 0.0, 64
            while dt < budget:
                t = time.perf_counter()
                _core.random_playouts(s, k, seed=n)
                dt += time.perf_counter() - t
                n += k
                k = min(k * 2, 1 << 16)
            rows.append((g, "random playouts", n, dt, "playouts"))
        elif kind == "uct":
            n, dt = 0, 0.0
            while dt < budget:
                t = time.perf_counter()
                _core.playout_mcts(s, 1000, seed=n)
                dt += time.perf_counter() - t
                n += 1000
            rows.append((g, "playout UCT (1000 sims)", n, dt, "sims"))
        else:
            from .search.mcts import MCTS
            n, dt = 0, 0.0
            while dt < budget:
                m = MCTS("playout", num_simulations=1000, seed=n, reuse_tree=False)
                t = time.perf_counter()
                m.search(s)
                dt += time.perf_counter() - t
                n += 1000
            rows.append((g, "MAV-MCTS, playout evaluator (1000 sims)", n, dt, "sims"))
    if hasattr(bar, "close"):
        bar.close()
    w = max(len(r[1]) for r in rows)
    gw = max(len(r[0]) for r in rows)
    print(f"{'game':<{gw}}  {'test':<{w}}  {'count':>12}  {'seconds':>8}  {'rate':>16}")
    for g, name, n, dt, unit in rows:
        rate = n / dt if dt > 0 else float("inf")
        print(f"{g:<{gw}}  {name:<{w}}  {n:>12}  {dt:>8.3f}  {rate:>11.3g} {unit}/s")
    print(f"(one thread; {os.cpu_count()} CPUs on this machine)", file=sys.stderr)
    return 0


def cmd_book_build(args: argparse.Namespace) -> int:
    from .games.c4_book import build_book, parse_shard
    try:
        shard = parse_shard(args.shard) if args.shard else None
        stats = build_book(args.ply, args.out, root=args.root, tt_log2=args.tt_log2, progress=not args.no_progress,
                           max_seconds=args.max_seconds, shard=shard)
    except ValueError as e:
        raise _fail(f"book build: {e}")
    print(json.dumps(stats, sort_keys=True))
    return 0


def cmd_book_info(args: argparse.Namespace) -> int:
    from . import _core
    from .games.c4_book import read_book
    try:
        data = read_book(args.file)
    except (OSError, ValueError) as e:
        raise _fail(f"book info: {e}")
    lo, hi, n = _core.c4_book_info(data)
    print(f"{args.file}: Connect Four book, plies {lo}..{hi}, {n} positions, {len(data)} bytes")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    p = _Parser(prog="mavgame", description="Planning with language models in board games.",
                epilog="`mavgame COMMAND --help` explains each command's options.")
    p.add_argument("--version", action="version",
                   version=f"mavgame {__version__} (games: {', '.join(registry.names())})")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("games", help="list the games of the C core")
    g.set_defaults(func=cmd_games)

    pf = sub.add_parser("perft", help="count the leaf nodes of the legal move tree",
                        description="Count the leaf nodes of the legal move tree to a depth (move generator check).")
    pf.add_argument("--game", default="chess", help="game name (see `mavgame games`; default: chess)")
    pf.add_argument("--fen", default=None, help="start position in the game's own text (FEN for chess)")
    pf.add_argument("--depth", type=_int_type(0), default=5, help="depth in plies (default: 5)")
    pf.add_argument("--board-size", type=int, default=0, help="board size for sized games such as hex")
    pf.add_argument("--divide", action="store_true", help="print the count below each legal move")
    pf.set_defaults(func=cmd_perft)

    pl = sub.add_parser("play", help="play against an agent in the terminal",
                        description="Play a game against an agent in the terminal.  Enter moves in the game's "
                        "notation (UCI or SAN for chess, a column 1..7 for Connect Four, a cell such as c3 for Hex "
                        "and tic-tac-toe); 'moves' lists the legal moves, 'undo' takes back your last move and the "
                        "agent's reply, 'hint' asks the --hint agent, 'quit' ends the game.")
    _add_game_options(pl, "connect_four")
    pl.add_argument("--agent", default="uct:sims=2000",
                    help="the opponent as an agent spec, e.g. perfect, uct:sims=2000, stockfish:skill=3,movetime=200 "
                         "(default: uct:sims=2000)")
    pl.add_argument("--color", choices=["first", "second", "white", "black", "x", "o"], default="first",
                    help="your side: first (White, x) or second (default: first)")
    pl.add_argument("--fen", default=None, help="start position in the game's own text (FEN for chess)")
    pl.add_argument("--moves", default=None, help="moves to play from the start position first (space-separated)")
    pl.add_argument("--swap", action="store_true", help="Hex: play with the swap (pie) rule")
    pl.add_argument("--hint", default="uct:sims=2000", help="agent that answers 'hint' (default: uct:sims=2000)")
    pl.add_argument("--seed", type=int, default=0, help="seed of the agent, >= 0 (default: 0)")
    pl.set_defaults(func=cmd_play)

    ma = sub.add_parser("match", help="two agents play every opening with both colours",
                        description="A match between two agents: each opening is played twice, colours swapped. "
                        "Prints the W/D/L and the Elo difference with its confidence interval.  Agents are specs "
                        "(random, uct:sims=400, uct:movetime=100 (ms per move), mcts:sims=200,evaluator=playout, solver_mcts, perfect, "
                        "stockfish:skill=5,movetime=100, stockfish:preset=paper,level=5 (the paper's 2 s per move), uci:path=ENGINE, python:fn=module:function, mav, mav_mcts), "
                        "optionally named NAME=SPEC.")
    ma.add_argument("first", help="first agent spec (NAME=SPEC to name it)")
    ma.add_argument("second", help="second agent spec (NAME=SPEC to name it)")
    _add_game_options(ma, "connect_four")
    _add_league_options(ma)
    ma.add_argument("--out", default=None, metavar="FILE.sqlite",
                    help="store the games in this SQLite results store (rerun to resume; a .jsonl name stores in "
                         "the .sqlite beside it and imports the JSON-lines file once); '-': write the games to "
                         "stdout as JSON lines, the tables to stderr (default: not stored)")
    ma.set_defaults(func=cmd_match)

    lg = sub.add_parser("league", help="round robin between agents with an Elo table",
                        description="Every pair of agents plays every opening with both colours (--matchups N: "
                        "the paper's N random match-ups instead); games run in "
                        "parallel and are stored one by one in a SQLite results store, so an interrupted league "
                        "resumes "
                        "when run again.  Prints the W/D/L matrix and a maximum-likelihood Elo table with "
                        "confidence intervals (mean 0, or --zero NAME at 0 as the paper's basic MCTS; the footer and "
                        "the store say which).  Without --agent: a Connect Four league of random, playout UCT at "
                        "100/400/1600 simulations, MCTS guided by the perfect solver and the perfect player, from "
                        "six shipped openings (a few minutes on two cores).")
    _add_game_options(lg, "connect_four")
    lg.add_argument("--agent", action="append", metavar="[NAME=]SPEC",
                    help="an agent (repeat for each): a spec such as uct:sims=400 or stockfish:skill=3,movetime=100, "
                         "optionally named NAME=SPEC (see `mavgame match --help` for the kinds)")
    lg.add_argument("--stockfish-levels", default=None, metavar="LEVELS",
                    help="add Stockfish at these skill levels (0-20, 0,5,10 or 0-4,10) as agents sf-skillL: the "
                         "paper's protocol with --stockfish-movetime 2000")
    lg.add_argument("--stockfish-movetime", type=_at_least_one, default=2000, metavar="MS",
                    help="milliseconds per move of the --stockfish-levels agents (default: 2000, the paper's)")
    _add_league_options(lg)
    lg.add_argument("--gauntlet", default=None, metavar="NAME",
                    help="play every other agent against NAME only (each pair on every opening, both colours; with "
                         "--matchups, the match-ups are drawn among those pairs) and put NAME at Elo 0 unless "
                         "--zero names another agent: each row is then that agent's rating head to head against NAME")
    lg.add_argument("--out", default=None, metavar="FILE.sqlite",
                    help="SQLite results store, reused to resume (default: league-GAME.sqlite in the current "
                         "directory; a .jsonl name stores in the .sqlite beside it and imports the JSON-lines file "
                         "once); '-': not stored, the games to stdout as JSON lines and the tables to stderr; "
                         "'none': not stored")
    lg.add_argument("--fresh", action="store_true", help="delete the results file first instead of resuming")
    lg.add_argument("--max-games", type=int, default=None,
                    help="stop after this many new games (the rest can be played by a later run)")
    lg.set_defaults(func=cmd_league)

    an = sub.add_parser("annotate", help="label chess positions with engine values for every legal move",
                        description="Label positions with Stockfish (or any UCI engine): the value of every "
                        "legal move as a win probability for the side to move (the MAV format's formula; mates "
                        "1 or 0) and the best move.  Input: one position per line, a FEN optionally followed by "
                        "'moves m1 m2 ...' (UCI), or 'startpos'; '#' starts a comment.  Output: JSON lines, "
                        "written as they finish, so an interrupted run resumes.")
    an.add_argument("input", help="file of positions ('-' for standard input)")
    an.add_argument("-o", "--output", default=None, help="output JSON-lines file (default: INPUT.annotated.jsonl)")
    an.add_argument("--engine", default="stockfish", help="UCI engine binary (default: stockfish)")
    an.add_argument("--nodes", type=_int_type(1), default=None,
                    help="nodes per position (default 100000 if no limit given)")
    an.add_argument("--movetime", type=_int_type(1), default=None, help="milliseconds per position")
    an.add_argument("--depth", type=_int_type(1), default=None, help="search depth per position")
    an.add_argument("--workers", type=_int_type(1), default=max(1, min(os.cpu_count() or 1, 2)),
                    help="engine processes (one thread each; default: min(2, CPUs))")
    an.add_argument("--hash", type=_int_type(1), default=16, help="engine hash in MB per process (default: 16)")
    an.add_argument("--game", default="chess", choices=["chess", "gardner"],
                    help="gardner: Gardner 5x5 minichess positions, annotated by Fairy-Stockfish (UCI_Variant "
                         "gardner; the default engine then is fairy-stockfish)")
    an.add_argument("--chess960", action="store_true",
                    help="Chess960 castling for every position (otherwise detected from the FEN's castling field)")
    an.add_argument("--mav", default=None, metavar="COMMANDS",
                    help="also write each position as MAV text (field 'mav') with these commands, e.g. "
                         "'%%state %%top_all %%best_action' (see docs/format.md)")
    an.add_argument("--fresh", action="store_true", help="overwrite the output instead of resuming")
    an.add_argument("--no-progress", action="store_true", help="no progress bar")
    an.set_defaults(func=cmd_annotate)

    be = sub.add_parser("bench", help="measure the speed of the C core",
                        description="Single-thread speed of the C core for each game: perft (deepened until it takes "
                        "a quarter of the budget), uniformly random playouts, the playout UCT baseline and MAV-MCTS "
                        "with its playout evaluator.  See bench/ for the comparisons with other libraries.")
    be.add_argument("--game", action="append", help="a game to measure (repeat; default: all)")
    be.add_argument("--board-size", type=int, default=0, help="Hex board size (default: 11)")
    be.add_argument("--seconds", type=_positive_float, default=0.5,
                    help="time budget per measurement (default: 0.5)")
    be.add_argument("--no-progress", action="store_true", help="no progress bar")
    be.add_argument("--peers", action="store_true",
                    help="instead: run bench/'s comparisons with the strongest installed peers and print a summary "
                         "(python -m mavgame.bench; --full for the docs' settings)")
    be.add_argument("--full", action="store_true", help="with --peers: the settings of docs/benchmarks.md")
    be.set_defaults(func=cmd_bench)

    bk = sub.add_parser("book", help="the Connect Four solver's opening book: build (resumable) or describe one",
                        description="Exact scores of every Connect Four position up to a ply (a position and its "
                        "mirror once), for the solver: see mavgame.games.c4_book.  `book build` resumes from "
                        "OUT.partial when it exists.")
    bsub = bk.add_subparsers(dest="book_cmd", required=True)
    bb = bsub.add_parser("build", help="solve every position up to --ply stones and write the book")
    bb.add_argument("--ply", type=int, required=True, help="deepest ply (stones on the board) of the book")
    bb.add_argument("--out", required=True, help="the book file to write (progress goes to OUT.partial)")
    bb.add_argument("--root", default="", help="only the positions below these moves (columns 1..7, e.g. 4453)")
    bb.add_argument("--tt-log2", type=int, default=24, help="solver table of 2^N 8-byte entries (default: 24)")
    bb.add_argument("--max-seconds", type=float, default=None,
                    help="stop after about this long (run again to continue)")
    bb.add_argument("--shard", default=None, metavar="I/N",
                    help="solve only shard I of N of the deepest ply (one process per core; OUT.partial.I); "
                    "a run without --shard then finishes the book")
    bb.add_argument("--no-progress", action="store_true", help="no progress bar")
    bb.set_defaults(func=cmd_book_build)
    bi = bsub.add_parser("info", help="check a book file and print its plies and size")
    bi.add_argument("file", help="a book file")
    bi.set_defaults(func=cmd_book_info)

    try:
        from .model import command as _train_command
    except ImportError as e:  # an installation without mavgame.model: the other subcommands still work
        _train_command, _train_error = None, e
    tr = sub.add_parser("train", help="generate annotated positions and train a MAV model (needs PyTorch)",
                        description="Generate engine-annotated positions (epsilon-greedy games), train a MAV "
                        "transformer on them, export it (safetensors) and report the held-out metrics. "
                        "Resumes from OUT/checkpoint.pt when it exists.")
    if _train_command is not None:
        _train_command.add_arguments(tr)
        tr.set_defaults(func=cmd_train)
    else:
        def _no_train(args, _e=_train_error):
            raise _fail(f"the train command is not available in this installation: {_e}")
        tr.set_defaults(func=_no_train)
    ds = sub.add_parser("data-stats", help="statistics of a position set (finished or being generated)",
                        description="Positions per ply and per phase, distinct positions, terminal share and "
                        "results, move and position values, annotation time per phase and the rate of a "
                        "position set written by `mavgame train --generate-only` (also while it is still "
                        "being generated, or after it was interrupted).")
    ds.add_argument("data", help="directory of the position set (train/ and val/)")
    ds.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    ds.set_defaults(func=cmd_data_stats)
    from .gardner_cli import add_commands as _add_gardner_commands   # gardner-prove, gardner-proof
    _add_gardner_commands(sub)
    po = sub.add_parser("policy", help="the IDP chess policy network: train from PGN, RL self-play, accuracy (needs PyTorch)")
    _policy_command.add_arguments(po)
    po.set_defaults(func=lambda a: _policy_command.run(a))
    from .az import command as _az_command  # AlphaZero (needs PyTorch to run, not to parse)
    azp = sub.add_parser("az", help="train AlphaZero by self-play (needs PyTorch)",
                         description="AlphaZero self-play with the C MCTS and batched network calls, a replay "
                         "buffer and a residual network; writes OUT/checkpoint.pt and OUT/log.jsonl after every "
                         "iteration and resumes from OUT/checkpoint.pt. See docs/alphazero.md.")
    _az_command.add_arguments(azp)
    azp.set_defaults(func=_az_command.run)
    from .az import puzzle_command as _puzzle_command
    pzp = sub.add_parser("az-puzzles", help="puzzle suites with known solutions; solve rates of agents and AZdb teams",
                         description="Generate Connect Four (solver-verified, missed by a plain search) or chess "
                         "(Stockfish-verified only-move) puzzles; score agents and AZdb teams (per player, "
                         "max-over-latents, sub-additive rules) on them or on a user's CSV / EPD suite. "
                         "See docs/alphazero.md.")
    _puzzle_command.add_arguments(pzp)
    pzp.set_defaults(func=_puzzle_command.run)
    for sp in (pl, ma, lg):  # the agent kinds and their options, from mavgame.play.agents (one table)
        sp.epilog = _agent_table()
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """The command line; returns the exit status.  Errors end in one ``mavgame: ...`` line on stderr
    (``MAVGAME_DEBUG=1`` shows the traceback of an unexpected one)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        _check_args(args)
        return args.func(args)
    except KeyboardInterrupt:
        print("mavgame: interrupted", file=sys.stderr)
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
