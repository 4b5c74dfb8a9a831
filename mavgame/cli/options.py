"""Options and checks shared by the commands: one-line errors naming the bad argument, argument types,
the game and league options, agent specs checked before any work starts."""
from __future__ import annotations

import argparse
import os
from typing import Dict, Optional, Sequence

from .. import _core
from ..games import registry

def make_state(game: str, text: Optional[str], board_size: int, flags: int) -> "_core.State":
    try:
        return _core.State(game, text, board_size, flags)
    except ValueError as e:
        raise SystemExit(f"mavgame: --fen {text!r}: {e}" if text is not None else f"mavgame: {e}")


def fail(msg: str) -> "SystemExit":
    return SystemExit(f"mavgame: {msg}")


class HelpFormatter(argparse.HelpFormatter):
    """Wraps one-paragraph texts as usual; keeps texts with line breaks (the agent table) as written."""

    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line + "\n" for line in text.splitlines())
        return super()._fill_text(text, width, indent)


class DefaultsHelpFormatter(HelpFormatter):
    """Adds ``(default: X)`` to an option's help where it says something: not for required options, a None or
    empty default, a flag, or a help text that already names its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if ("default" in text or action.required or d is None or d is argparse.SUPPRESS or d == [] or d == ""
                or isinstance(d, bool) or not action.option_strings):
            return text
        return text + " (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``mavgame: perft: argument --depth: must be >= 0, not -1 (see ...)``."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        sub = self.prog[len("mavgame"):].strip()
        where = f"{sub}: " if sub else ""
        self.exit(2, f"mavgame: {where}{message} (see `{self.prog} --help`)\n")


def int_type(low: int, high: Optional[int] = None):
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


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return v


def agent_table() -> str:
    """The agent kinds and their options, from the agents registry (one source: each kind's own signature)."""
    from ..agents import describe_kinds
    return describe_kinds(header="agent specs: KIND or KIND:KEY=VALUE,KEY=VALUE (optionally named NAME=SPEC); the "
                                 "kinds and their options:")


def check_writable(opt: str, path: Optional[str]) -> None:
    """A file the command will write: its folder must exist and be writable (checked before any work)."""
    if not path or path in ("-", "none"):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise fail(f"{opt} {path}: is a folder, not a file")
    if not os.path.isdir(folder):
        raise fail(f"{opt} {path}: the folder {folder} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise fail(f"{opt} {path}: not writable")
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        raise fail(f"{opt} {path}: the folder {folder} is not writable")


def check_args(args: argparse.Namespace) -> None:
    """Checks shared by the subcommands, before any work starts (so that nothing fails after an hour of
    games): seeds, the game and board size, the files to write, matplotlib for --plot."""
    seed = getattr(args, "seed", None)
    if isinstance(seed, int) and seed < 0:
        raise fail(f"--seed {seed}: must be >= 0")
    game = getattr(args, "game", None)
    for g in (game if isinstance(game, list) else [game] if isinstance(game, str) else []):  # bench: repeated
        try:
            registry.get(g)
        except registry.UnknownGameError as e:
            raise fail(f"--game {g}: {e}")
    if isinstance(game, str):
        size = getattr(args, "board_size", 0) or 0
        if size < 0:
            raise fail(f"--board-size {size}: must be >= 0 (0: the game's default)")
        if size:
            try:
                _core.State(game, None, size)
            except ValueError as e:
                raise fail(f"--board-size {size}: {e}")
    if getattr(args, "command", None) in ("train", "az", "policy"):
        return   # their --out is a run folder (train: --export one file, mavgame.cli.train.check_arguments)
    for opt, attr in (("--out", "out"), ("--output", "output"), ("--games-out", "games_out"), ("--plot", "plot")):
        val = getattr(args, attr, None)
        if isinstance(val, str):
            check_writable(opt, val)
    for val in getattr(args, "export", None) or []:
        check_writable("--export", val)
    if getattr(args, "plot", None):
        try:
            import matplotlib  # noqa: F401
        except ImportError as e:
            raise fail(f"--plot {args.plot}: needs matplotlib (pip install matplotlib): {e}")


def parse_agents(items: Sequence[str], game: Optional[str] = None) -> Dict[str, str]:
    """``name=spec`` or ``spec`` items -> {name: spec} (a bare spec is named after itself). With ``game``, an
    agent that cannot play it is refused before its engine is started (the same message with or without the
    engine installed)."""
    from ..agents import make_agent

    out: Dict[str, str] = {}
    for it in items:
        name, spec = None, it
        head = it.split(":", 1)[0]
        if "=" in head:  # name=spec (the '=' comes before any ':')
            name, spec = it.split("=", 1)
        try:
            ag = make_agent(spec)
        except (ValueError, ImportError, OSError) as e:
            raise fail(f"agent {it!r}: {e}")
        plays = getattr(ag, "games", None)
        if game is not None and plays and game not in plays:
            ag.close()
            raise fail(f"agent {it!r} cannot play {game!r} (it plays {', '.join(plays)})")
        if game is not None:
            try:
                ag.check_game(game)   # the agent's own check (the perfect player of the game, ...)
            except Exception as e:  # noqa: BLE001 - AgentError or a registry error: one line
                ag.close()
                raise fail(f"agent {it!r}: {e}")
        check_engine(it, ag)
        name = name or (spec if ":" not in spec else ag.name)
        ag.close()
        if name in out:
            raise fail(f"two agents are named {name!r}: name them with NAME=SPEC")
        out[name] = spec
    return out


def check_engine(spec: str, agent) -> None:
    """A UCI agent's engine must start and answer the UCI handshake (before any game is played)."""
    from ..agents.engines import UCIAgent
    from ..engines.uci_protocol import EngineError
    if isinstance(agent, UCIAgent):
        try:
            agent.engine  # starts the engine: the handshake and options
        except (EngineError, OSError) as e:
            raise fail(f"agent {spec!r}: {e}")


def add_game_options(p: argparse.ArgumentParser, default_game: str) -> None:
    p.add_argument("--game", default=default_game, help=f"game name (see `mavgame games`; default: {default_game})")
    sized = ", ".join(f"{g.name} 1..{g.max_board_size}, default {g.default_board_size}"
                      for g in registry.infos() if g.sized)
    p.add_argument("--board-size", type=int, default=0, help=f"board size for sized games ({sized})")


def at_least_one(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {v}")
    return v


def add_league_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--openings", default=None,
                   help="openings: N (the first N shipped for the game; N random start positions for chess960), "
                        "comma-separated names of shipped openings, a file in the openings format, a named set "
                        "(chess: tcec, the MAV paper's 586 TCEC positions; use it with --matchups N), or "
                        "random:PLIES:N (N random openings of PLIES moves); default: all shipped openings")
    p.add_argument("--rounds", type=int, default=1, help="times each (pair, opening, colour) game is played (default: 1)")
    p.add_argument("--matchups", type=at_least_one, default=None, metavar="N",
                   help="the paper's scheduler: N match-ups, each a uniformly random pair and opening played with "
                        "both colours (default: the full round robin)")
    p.add_argument("--workers", type=at_least_one, default=max(1, min(os.cpu_count() or 1, 2)),
                   help="processes playing games in parallel, >= 1 (default: min(2, CPUs))")
    p.add_argument("--max-plies", type=at_least_one, default=None,
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
                        "(chess-family games), .txt (one move list per game) (repeat for several)")
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
