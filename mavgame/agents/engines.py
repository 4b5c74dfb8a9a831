"""UCI engines as agents, registered as the kinds ``uci`` (any UCI binary), ``stockfish`` (chess, Chess960:
skill levels, UCI_Elo, the paper's protocol) and ``fairy`` (Fairy-Stockfish playing Gardner minichess). The
engine side lives in :mod:`mavgame.engines` (the UCI client, Fairy-Stockfish's variant and rules, the
paper's Stockfish levels); these are the agent wrappers. Their options:
:func:`mavgame.agents.spec.describe_kinds`.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from .. import _core
from ..engines import fairy
from ..engines.stockfish_levels import PAPER_MOVETIME_MS
from ..games import registry
from ..games.gardner import paper_moves
from .base import Agent, AgentError
from .spec import options_of, register_agent

__all__ = ["UCIAgent", "StockfishAgent", "FairyStockfishAgent", "STOCKFISH_PRESETS"]


class _GamesWhere:
    """The class attribute ``games`` of agents that play every registered game with a descriptor
    property (such as ``uci``): read from :mod:`mavgame.games.registry` at each use."""

    def __init__(self, prop: str):
        self.prop = prop

    def __get__(self, obj, owner=None) -> tuple:
        return tuple(g.name for g in registry.infos() if getattr(g, self.prop))


class UCIAgent(Agent):
    """A UCI engine playing chess or Chess960 (Stockfish by default).

    The engine process starts on first use (so an agent can be built in one process and play in
    another) and gets the game's full move history, so it sees repetitions.  ``skill`` sets
    Stockfish's Skill Level (0..20), ``elo`` its UCI_LimitStrength/UCI_Elo; the search limit is
    ``movetime`` (ms), ``nodes`` or ``depth`` (default: movetime 100)."""

    games = _GamesWhere("uci")   # chess and Chess960

    def __init__(self, path: str = "stockfish", *, skill: Optional[int] = None, elo: Optional[int] = None,
                 movetime: Optional[int] = None, nodes: Optional[int] = None, depth: Optional[int] = None,
                 threads: int = 1, hash: int = 16, options: Optional[Dict[str, Any]] = None,
                 name: Optional[str] = None, timeout: float = 10.0):
        self.path = path
        self.skill = skill
        self.elo = elo
        if movetime is None and nodes is None and depth is None:
            movetime = 100
        self.limits = {k: int(v) for k, v in (("movetime", movetime), ("nodes", nodes), ("depth", depth))
                       if v is not None}
        self.options: Dict[str, Any] = {"Threads": threads, "Hash": hash}
        if skill is not None:
            if not 0 <= int(skill) <= 20:
                raise ValueError(f"Stockfish skill level must lie in 0..20, not {skill}")
            self.options["Skill Level"] = int(skill)
        if elo is not None:
            self.options["UCI_LimitStrength"] = True
            self.options["UCI_Elo"] = int(elo)
        if options:
            self.options.update(options)
        self.timeout = timeout
        if name is None:
            base = "stockfish" if path == "stockfish" else path.rsplit("/", 1)[-1]
            name = base + (f"-skill{skill}" if skill is not None else "") + (f"-elo{elo}" if elo is not None else "")
        self.name = name
        self._engine = None
        self._game = None

    @property
    def engine(self):
        if self._engine is not None and getattr(self, "_engine_pid", None) != os.getpid():
            self._engine = None  # inherited through fork: that engine belongs to the parent process
        if self._engine is None or self._engine.closed:
            from ..engines.uci import UCIEngine
            opts = {k: v for k, v in self.options.items()}
            eng = UCIEngine(self.path, timeout=self.timeout)
            for k in ("Threads", "Hash"):  # tolerate engines without these
                if k.lower() not in eng.options:
                    opts.pop(k, None)
            try:
                eng.configure(opts)
            except BaseException:
                eng.close()
                raise
            self._engine = eng
            self._engine_pid = os.getpid()
            self._chess960 = None
        return self._engine

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        eng = self.engine
        c960 = registry.get(game).uci_chess960
        if "uci_chess960" in eng.options and self._chess960 != c960:
            eng.set_option("UCI_Chess960", c960)
            self._chess960 = c960
        eng.new_game()
        self._game = game

    def act(self, state) -> int:
        if self._game != state.game:
            self.setup(state.game)
        root = _core.State(state.game, state.root_text(), state.board_size, state.flags)
        moves = []
        for a in state.history():
            moves.append(root.action_to_str(int(a)))
            root.push(int(a))
        best = self.engine.play(state.root_text(), moves, searchmoves=self.search_moves(state), **self.limits)
        if best is None:
            raise AgentError(f"engine {self.name!r} found no move in position {state.text()!r}")
        try:
            return int(state.action_from_str(best))
        except ValueError as e:
            raise AgentError(f"engine {self.name!r} played the illegal move {best!r} in position "
                             f"{state.text()!r}: {e}") from None

    def search_moves(self, state) -> Optional[list]:
        """The root moves the engine may choose from (None: all of its own); subclasses restrict an
        engine whose rules allow more moves than the game (Fairy-Stockfish's bishop promotions)."""
        return None

    def close(self) -> None:
        if self._engine is not None and getattr(self, "_engine_pid", None) == os.getpid():
            self._engine.close()
        self._engine = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_engine"] = None  # engines do not travel between processes; a new one starts on use
        return d


#: named Stockfish protocols of the agent spec's ``preset``: the search limit they fix
STOCKFISH_PRESETS: Dict[str, Dict[str, int]] = {"paper": {"movetime": PAPER_MOVETIME_MS}}


class StockfishAgent(UCIAgent):
    """Stockfish at a skill level (see :class:`UCIAgent`); ``level`` is another name for ``skill``.

    ``preset="paper"`` is the MAV paper's protocol: Skill Level ``level`` (0..20, required) at 2 s per
    move (``stockfish:preset=paper,level=5``); it fixes the search limit, so ``movetime``, ``nodes``
    and ``depth`` are refused with it.  :mod:`mavgame.engines.stockfish_levels` has published ratings
    of the levels to calibrate a league against."""

    def __init__(self, skill: Optional[int] = None, *, path: str = "stockfish", level: Optional[int] = None,
                 preset: Optional[str] = None, **kwargs):
        if level is not None:
            if skill is not None and int(skill) != int(level):
                raise ValueError(f"Stockfish skill={skill} and level={level} disagree (level is another name "
                                 "for skill)")
            skill = level
        if preset is not None:
            if preset not in STOCKFISH_PRESETS:
                raise ValueError(f"unknown Stockfish preset {preset!r} (have {', '.join(STOCKFISH_PRESETS)})")
            if skill is None:
                raise ValueError(f"Stockfish preset={preset} needs a skill level: level=0..20")
            given = [k for k in ("movetime", "nodes", "depth") if kwargs.get(k) is not None]
            if given:
                raise ValueError(f"Stockfish preset={preset} fixes the search limit "
                                 f"({STOCKFISH_PRESETS[preset]}); {given[0]} cannot be given with it")
            kwargs.update(STOCKFISH_PRESETS[preset])
        self.preset = preset
        super().__init__(path, skill=skill, **kwargs)


class FairyStockfishAgent(UCIAgent):
    """Fairy-Stockfish playing Gardner (agent spec ``fairy``; the engine side: :mod:`mavgame.engines.fairy`).

    ``skill``: Skill Level -20..20 (Fairy-Stockfish's range), ``elo``: UCI_LimitStrength with
    UCI_Elo (1350..2850); the search limit is ``movetime`` ms (default 100), ``nodes`` or ``depth``;
    ``path`` the binary (default :func:`mavgame.engines.fairy.find_fairy_stockfish`).  Under mavgame's
    default rules the engine never plays a bishop promotion (:func:`mavgame.games.gardner.paper_moves`)."""

    games = ("gardner",)

    def __init__(self, skill: Optional[int] = None, *, path: Optional[str] = None, elo: Optional[int] = None,
                 name: Optional[str] = None, options: Optional[Dict[str, Any]] = None, **kwargs: Any):
        opts: Dict[str, Any] = {"UCI_Variant": fairy.VARIANT}
        if skill is not None:
            if isinstance(skill, bool) or not isinstance(skill, int) or not fairy.SKILL_MIN <= skill <= fairy.SKILL_MAX:
                raise ValueError(f"Fairy-Stockfish skill level must be an integer in "
                                 f"{fairy.SKILL_MIN}..{fairy.SKILL_MAX}, not {skill!r}")
            opts["Skill Level"] = int(skill)
        if options:
            opts.update(options)
        if name is None:
            name = "fairy" + (f"-skill{skill}" if skill is not None else "") + (f"-elo{elo}" if elo is not None else "")
        super().__init__(fairy.binary_path(path), elo=elo, name=name, options=opts, **kwargs)
        self.skill = skill

    def search_moves(self, state) -> Optional[List[str]]:
        return paper_moves(state)


def _make_uci(path: str, **kw) -> UCIAgent:
    if not path:
        raise ValueError("the uci agent needs path=<engine binary>")
    return UCIAgent(path, **kw)


_UCI_HELP = {"movetime": "ms; default 100 without nodes or depth", "hash": "MB"}
register_agent("uci", _make_uci,
               options=options_of(UCIAgent, required=("path",), help={"path": "the engine binary", **_UCI_HELP}),
               help="any UCI engine (chess, Chess960): path, and the search limit and strength options of stockfish")
register_agent("stockfish", StockfishAgent,
               options=options_of(StockfishAgent, UCIAgent, choices={"preset": tuple(STOCKFISH_PRESETS)},
                                  help={"level": "another name for skill", **_UCI_HELP}),
               help="Stockfish (chess, Chess960): skill or level (Skill Level 0..20), elo (UCI_LimitStrength), "
                    "movetime ms (default 100), nodes or depth; preset=paper: the MAV paper's protocol, level at "
                    "2 s per move")
register_agent("fairy", FairyStockfishAgent, options=options_of(FairyStockfishAgent, UCIAgent, help=_UCI_HELP),
               help="Fairy-Stockfish playing Gardner minichess: skill (-20..20), elo and the other options of "
                    "stockfish")
