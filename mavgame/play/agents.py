"""Agents: anything that picks a move in a game state.

The interface is small::

    class Agent:
        name: str
        def setup(self, game, *, seed=None, player=None): ...   # optional, before each game
        def act(self, state) -> move                              # an int action or a move string
        def close(self): ...                                      # optional, release engines

``state`` is a :class:`mavgame.State` (or one of the game classes) that the agent must not keep
modified: it may push and pop, but must leave it as it found it.  Built-in agents:

======================  =====================================================================
spec                    agent
======================  =====================================================================
``random``              uniformly random legal moves (``seed``)
``stockfish``           Stockfish (chess, Chess960): ``skill`` or ``level`` (Skill Level 0..20),
                        ``elo`` (UCI_LimitStrength), ``movetime`` ms (default 100), ``nodes``,
                        ``depth``, ``threads``, ``hash``, ``path``; ``preset=paper``: the MAV
                        paper's protocol, ``level`` at 2 s per move (``stockfish:preset=paper,level=5``)
``fairy``               Fairy-Stockfish playing Gardner minichess (:mod:`mavgame.engines.fairy`): ``skill``
                        (-20..20), ``elo`` and the other options of ``stockfish``
``uci``                 any UCI engine: ``path`` and the same options as ``stockfish``
``mcts``                :class:`mavgame.MCTS` with an evaluator: ``sims`` (default 200),
                        ``evaluator`` (playout, c4_solver, stockfish, constant), ``batch``, ``c_puct``,
                        ``k``, ``eps``, ``tau``, ``playouts``, ``nodes`` (stockfish evaluator),
                        ``movetime`` ms per move (a time budget; ``sims`` then caps the search,
                        default 100000), ``invalid`` (exclude: the paper's minus infinity for an
                        unusable answer, the default; loss: -1)
``uct``                 the basic random-playout UCT baseline: ``sims`` (default 200), ``c``,
                        ``movetime`` (as for ``mcts``)
``solver_mcts``         MCTS guided by the perfect Connect Four solver (``sims``, default 50;
                        ``movetime``)
``perfect``             perfect play: the Connect Four solver, the Hex solver (boards up to
                        7x7), exact minimax for tic-tac-toe
``minimax``             exact memoized minimax (small games only: tic-tac-toe, tiny Hex)
``python``              a Python callable ``fn(state) -> move``: ``fn=package.module:function``
``mav``                 the MAV model, searchless (numpy or torch): ``model`` (a .safetensors file;
                        default: the shipped Connect Four model), ``scoring`` (mean, max), ``best``
                        (1: %best_action breaks near ties), ``tie``, ``backend`` (auto, numpy, torch),
                        ``mirror`` (1: average with the mirror image's values; Connect Four, tic-tac-toe)
``mav_mcts``            MAV-MCTS, the model guiding MCTS: ``sims`` (default 64), ``batch`` (16),
                        ``scoring``, ``state_tracking`` (1: engine-free), ``cache``, ``model``,
                        ``backend``, ``movetime``, ``invalid`` (exclude, the default, or loss)
``alphabeta``           chess: the IDP report's baseline alpha-beta (``depth`` 4, ``movetime``,
                        ``nodes``, ``tt``); see :mod:`mavgame.play.policy_agents`
``guided_ab``           chess: probability-threshold alpha-beta guided by a policy (``policy``:
                        policy.pt, uniform or mav; ``threshold`` 0.001, ``depth`` 8, ``batch``)
``policy``              chess: the policy network, between its two best moves (``policy``, ``top``)
``policy_rollouts``     chess: ``games`` policy games a legal move, most wins (``policy``, ``games``)
``az``                  AlphaZero: the MCTS guided by a network trained with ``mavgame az`` (needs
                        torch): ``checkpoint`` (required), ``sims`` (default 100), ``batch``,
                        ``c_base``, ``c_init``, ``device``, ``movetime`` (docs/alphazero.md)
======================  =====================================================================

A spec is ``kind`` or ``kind:key=value,key=value`` (e.g. ``stockfish:skill=3,movetime=50``);
:func:`make_agent` builds an agent from it, :func:`register_agent` adds kinds (the MAV model agents
register themselves this way).  :class:`CallableAgent` wraps any Python function.
"""
from __future__ import annotations

import importlib
import os
import random as _random
from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from .. import _core
from ..games import registry
from ..search.mcts import playout_uct
from ..games.negamax import NegamaxSolver, NodeLimitError
from ..engines.stockfish_levels import PAPER_MOVETIME_MS

__all__ = [
    "Agent", "RandomAgent", "CallableAgent", "UCIAgent", "StockfishAgent", "MCTSAgent", "UCTAgent",
    "PerfectConnectFourAgent", "PerfectHexAgent", "MinimaxAgent", "make_agent", "register_agent", "agent_kinds", "parse_spec",
    "resolve_move", "AgentError",
]

Move = Union[int, str]


def _mix(a: Optional[int], b: Optional[int]) -> int:
    """A deterministic 31-bit seed from two optional seeds."""
    return ((int(a or 0) * 1_000_003) ^ (int(b or 0) * 7_919 + 12_345)) & 0x7FFFFFFF


class AgentError(RuntimeError):
    """An agent could not produce a legal move (the message names the agent and the position)."""


def resolve_move(state, move: Any, who: str = "agent") -> int:
    """An agent's answer (int action, numpy int or move string) as a legal action of ``state``."""
    if isinstance(move, (bool, np.bool_)):
        raise AgentError(f"{who} returned {move!r}, not a move, in position {state.text()!r}")
    if isinstance(move, (int, np.integer)):
        a = int(move)
        if not state.is_legal(a):
            raise AgentError(f"{who} returned the illegal action {a} in position {state.text()!r}")
        return a
    if isinstance(move, str):
        try:
            return int(state.action_from_str(move))
        except ValueError as e:
            raise AgentError(f"{who} returned the illegal move {move!r} in position {state.text()!r}: {e}") from None
    raise AgentError(f"{who} returned {move!r} ({type(move).__name__}), not a move, in position {state.text()!r}")


#: the simulation cap of a search with a ``movetime`` and no ``sims`` (memory: one node per simulation)
MOVETIME_SIMS = 100_000


def _movetime_seconds(movetime) -> Optional[float]:
    """``movetime`` (milliseconds per move, as for UCI engines) in seconds; None stays None."""
    if movetime is None:
        return None
    if isinstance(movetime, bool) or not isinstance(movetime, (int, float, np.integer, np.floating)) or not (
            np.isfinite(movetime) and movetime > 0):
        raise ValueError(f"movetime must be a positive number of milliseconds, not {movetime!r}")
    return float(movetime) / 1000.0


def _check_sims(sims) -> int:
    """A simulation count from an agent spec: an integer >= 1 (ValueError naming the value)."""
    if isinstance(sims, bool) or not isinstance(sims, (int, np.integer)) or sims < 1:
        raise ValueError(f"sims must be a number of simulations >= 1, not {sims!r}")
    return int(sims)


class _GamesWhere:
    """The class attribute ``games`` of agents that play every registered game with a descriptor
    property (such as ``uci``): read from :mod:`mavgame.games.registry` at each use."""

    def __init__(self, prop: str):
        self.prop = prop

    def __get__(self, obj, owner=None) -> tuple:
        return tuple(g.name for g in registry.infos() if getattr(g, self.prop))


class Agent:
    """Base class; subclasses override :meth:`act` (and :meth:`setup` / :meth:`close` if needed).

    ``games``: the games the agent can play (None: any)."""

    name: str = "agent"
    games: Optional[tuple] = None
    spec: Optional[str] = None  # the spec string that rebuilds this agent, when built from one

    def setup(self, game: str, *, seed: Optional[int] = None, player: Optional[int] = None) -> None:
        """Called before each game with its name, a per-game seed and the player (0 or 1)."""

    def act(self, state) -> Move:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (engine processes)."""

    def check_game(self, game: str) -> None:
        if self.games is not None and game not in self.games:
            raise AgentError(f"agent {self.name!r} cannot play {game!r} (it plays {', '.join(self.games)})")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RandomAgent(Agent):
    """Uniformly random legal moves."""

    def __init__(self, seed: Optional[int] = None, name: str = "random"):
        self.name = name
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    def setup(self, game, *, seed=None, player=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed if self._seed is None else (self._seed, seed))

    def act(self, state) -> int:
        acts = state.legal_actions()
        if acts.size == 0:
            raise AgentError(f"no legal move in position {state.text()!r}")
        return int(acts[self._rng.integers(acts.size)])


class CallableAgent(Agent):
    """Any Python callable ``fn(state) -> move`` as an agent.

    ``setup`` (optional) is called as ``setup(game, seed=..., player=...)`` before each game."""

    def __init__(self, fn: Callable[[Any], Move], name: Optional[str] = None,
                 setup: Optional[Callable[..., None]] = None, games: Optional[tuple] = None):
        if not callable(fn):
            raise TypeError(f"CallableAgent needs a callable, not {type(fn).__name__}")
        self.fn = fn
        self._setup = setup
        self.games = games
        self.name = name or getattr(fn, "__name__", "callable")

    def setup(self, game, *, seed=None, player=None):
        if self._setup is not None:
            self._setup(game, seed=seed, player=player)

    def act(self, state) -> Move:
        return self.fn(state)


# ---------------------------------------------------------------------------------------------
# UCI engines


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


# ---------------------------------------------------------------------------------------------
# search agents


class MCTSAgent(Agent):
    """:class:`mavgame.MCTS` with any evaluator (a name, a capsule or a Python callable).

    The tree is rebuilt before each game (``seed`` per game) and reused between the agent's moves.
    ``movetime`` (milliseconds) gives each move a time budget (``sims`` stays the cap; None for
    ``sims`` means :data:`MOVETIME_SIMS` then); ``max_seconds`` is the same in seconds."""

    def __init__(self, evaluator: Any = "playout", sims: Optional[int] = 200, *, name: Optional[str] = None,
                 games: Optional[tuple] = None, movetime: Optional[float] = None, **mcts_kwargs):
        self.evaluator = evaluator
        if movetime is not None:
            mcts_kwargs["max_seconds"] = _movetime_seconds(movetime)
        if sims is None:
            if not mcts_kwargs.get("max_seconds"):
                raise ValueError("sims=None needs a time budget (movetime or max_seconds)")
            sims = MOVETIME_SIMS
        self.sims = _check_sims(sims)
        self.kwargs = mcts_kwargs
        self.games = games
        ev_name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "name", type(evaluator).__name__)
        self.name = name or f"mcts-{ev_name}-{self.sims}"
        self._mcts = None
        self._ev_instance = None
        self._seed = mcts_kwargs.pop("seed", 0)

    def _new(self, seed):
        from ..search.mcts import MCTS
        ev = self.evaluator
        if callable(ev) and getattr(ev, "_agent_factory", False):
            # an evaluator built in the process that plays (an engine), once, reused across games;
            # one inherited through fork belongs to the parent process and is left alone
            if getattr(self, "_ev_pid", None) != os.getpid():
                self._ev_instance = None
            if self._ev_instance is None:
                self._ev_instance = ev()
                self._ev_pid = os.getpid()
            ev = self._ev_instance
        self._mcts = MCTS(ev, num_simulations=self.sims, seed=int(seed) & 0x7FFFFFFF, **self.kwargs)

    def close(self) -> None:
        inst = getattr(self, "_ev_instance", None)
        if inst is not None and hasattr(inst, "close") and getattr(self, "_ev_pid", None) == os.getpid():
            inst.close()
        self._ev_instance = None
        self._mcts = None

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self._new(_mix(self._seed, seed))

    def act(self, state) -> Move:
        self.check_game(state.game)
        if self._mcts is None:
            self._new(self._seed)
        from ..search.mcts import SearchError
        try:
            res = self._mcts.search(state)
        except SearchError as e:
            raise AgentError(f"MCTS agent {self.name!r}: {e}") from e
        if res.best_action is not None:
            return int(res.best_action)
        if res.best_move is None:
            raise AgentError(f"MCTS agent {self.name!r} found no move in position {state.text()!r} "
                             f"(search counters: {res.stats})")
        return res.best_move

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_mcts"] = None
        d["_ev_instance"] = None
        return d


class UCTAgent(Agent):
    """The basic MCTS baseline: UCT with uniformly random playouts (:func:`mavgame.search.mcts.playout_uct`,
    the core's ``playout_mcts``): its most visited action."""

    def __init__(self, sims: Optional[int] = 200, *, c: Optional[float] = None, name: Optional[str] = None,
                 seed: int = 0, movetime: Optional[float] = None):
        self.max_seconds = _movetime_seconds(movetime) or 0.0
        if sims is None:
            if not self.max_seconds:
                raise ValueError("sims=None needs a movetime")
            sims = MOVETIME_SIMS
        self.sims = _check_sims(sims)
        self.c = None if c is None else float(c)   # None: the core's exploration constant
        self.name = name or (f"uct-{movetime}ms" if movetime is not None else f"uct-{self.sims}")
        self._seed = seed
        self._rng = _random.Random(seed)

    def setup(self, game, *, seed=None, player=None):
        self._rng = _random.Random(_mix(self._seed, seed))

    def act(self, state) -> Move:
        return playout_uct(state, self.sims, seed=self._rng.getrandbits(31), c=self.c,
                           max_seconds=self.max_seconds).best_action


class PerfectConnectFourAgent(Agent):
    """Perfect Connect Four play with the core's solver: the fastest win, else a draw, else the
    slowest loss; ties broken at random (``seed``) or towards the centre (``tiebreak="center"``).

    ``max_seconds`` caps each solve (then the best of the moves solved so far is played, which is
    no longer guaranteed perfect); 0 means no cap."""

    games = ("connect_four",)

    def __init__(self, *, seed: Optional[int] = None, tiebreak: str = "random", max_seconds: float = 0.0,
                 tt_log2: int = 0, name: str = "perfect"):
        if tiebreak not in ("random", "center"):
            raise ValueError(f"tiebreak must be 'random' or 'center', not {tiebreak!r}")
        self.name = name
        self.tiebreak = tiebreak
        self.max_seconds = float(max_seconds)
        self.tt_log2 = int(tt_log2)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._solver = None

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        if seed is not None:
            self._rng = np.random.default_rng(seed if self._seed is None else (self._seed, seed))

    def move_scores(self, state) -> np.ndarray:
        """Solver score of each column (NaN: full)."""
        if self._solver is None:
            self._solver = _core.C4Solver(self.tt_log2)
            from ..games.c4_book import attach
            attach(self._solver)  # the shipped opening book, when the package has one
        _, scores, _, _ = _core.c4_solve(state, max_seconds=self.max_seconds, moves=True, solver=self._solver)
        return np.asarray(scores, dtype=float)

    def act(self, state) -> Move:
        scores = self.move_scores(state)
        legal = [int(a) for a in state.legal_actions()]
        cols = {int(state.action_from_str(str(c + 1))): c for c in range(7) if str(c + 1) in state.legal_moves()}
        vals = {a: scores[cols[a]] for a in legal if a in cols and not np.isnan(scores[cols[a]])}
        if not vals:
            if not legal:
                raise AgentError(f"no legal move in position {state.text()!r}")
            return legal[int(self._rng.integers(len(legal)))]
        best = max(vals.values())
        cands = sorted(a for a, v in vals.items() if v == best)
        if self.tiebreak == "center":
            from ..games.connect_four import central_best
            col = {str(cols[a] + 1): a for a in cands}
            return col[central_best(dict.fromkeys(col, best))]
        return cands[int(self._rng.integers(len(cands)))]

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_solver"] = None
        return d


class PerfectHexAgent(Agent):
    """Perfect Hex play on small boards (up to 7x7) with the core's exact solver: a winning move
    if there is one (at random among them, ``seed``), else a random move (every move loses)."""

    games = ("hex",)

    def __init__(self, *, seed: Optional[int] = None, max_nodes: int = 0, name: str = "perfect"):
        self.name = name
        self._seed = seed
        self.max_nodes = int(max_nodes)
        self._rng = np.random.default_rng(seed)

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        if seed is not None:
            self._rng = np.random.default_rng(seed if self._seed is None else (self._seed, seed))

    def act(self, state) -> int:
        value, move_values, complete = _core.hex_solve(state, max_nodes=self.max_nodes)
        legal = [int(a) for a in state.legal_actions()]
        if not legal:
            raise AgentError(f"no legal move in position {state.text()!r}")
        wins = [a for a in legal if a < len(move_values) and move_values[a] > 0]
        pool = wins or legal
        return pool[int(self._rng.integers(len(pool)))]


class MinimaxAgent(Agent):
    """Exact minimax with memoization, for small games (tic-tac-toe, tiny Hex boards).

    Prefers the fastest win and the slowest loss; ties broken at random (``seed``).  ``max_nodes``
    guards against games that are too large.  The search is :class:`mavgame.games.negamax.NegamaxSolver`."""

    def __init__(self, *, seed: Optional[int] = None, max_nodes: int = 5_000_000, name: str = "minimax"):
        self.name = name
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.max_nodes = max_nodes
        self._solver = NegamaxSolver(max_nodes)

    def setup(self, game, *, seed=None, player=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed if self._seed is None else (self._seed, seed))

    def action_values(self, state) -> Dict[int, int]:
        """{action: score} for the side to move: +(1000 - plies after the move to the win), 0 draw,
        -(1000 - plies) loss."""
        try:
            return self._solver.action_values(state)
        except NodeLimitError as e:
            raise AgentError(f"minimax agent {self.name!r}: {e}") from None

    def act(self, state) -> int:
        vals = self.action_values(state)
        if not vals:
            raise AgentError(f"no legal move in position {state.text()!r}")
        best = max(vals.values())
        cands = sorted(a for a, v in vals.items() if v == best)
        return cands[int(self._rng.integers(len(cands)))]


# ---------------------------------------------------------------------------------------------
# specs


def _parse_value(v: str) -> Any:
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def parse_spec(spec: str):
    """``"kind:key=value,key=value"`` -> (kind, {key: value}) with numbers and booleans parsed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty agent spec {spec!r}")
    kind, _, rest = spec.strip().partition(":")
    kwargs: Dict[str, Any] = {}
    if rest:
        for part in rest.split(","):
            if not part.strip():
                continue
            k, eq, v = part.partition("=")
            if not eq or not k.strip():
                raise ValueError(f"agent spec {spec!r}: expected key=value, got {part!r}")
            kwargs[k.strip()] = _parse_value(v.strip())
    return kind.strip(), kwargs


def _make_stockfish(**kw):
    return StockfishAgent(**kw)


def _make_fairy(**kw):
    from ..engines.fairy import FairyStockfishAgent
    return FairyStockfishAgent(**kw)


def _make_uci(path: Optional[str] = None, **kw):
    if not path:
        raise ValueError("the uci agent needs path=<engine binary>")
    return UCIAgent(path, **kw)


def _make_mcts(sims: Optional[int] = None, evaluator: str = "playout", batch: int = 1, nodes: int = 2000, **kw):
    if sims is None:
        sims = None if kw.get("movetime") is not None else 200
    games = None
    ev: Any = evaluator
    if evaluator in ("stockfish", "uci"):
        path = kw.pop("path", "stockfish")

        def factory(path=path, nodes=nodes):
            from ..search.evaluators import UCIEvaluator
            return UCIEvaluator(path, nodes=nodes)
        factory._agent_factory = True  # type: ignore[attr-defined]
        ev = factory
        games = ("chess",)
    elif evaluator in ("c4_solver", "solver"):
        games = ("connect_four",)
    name = kw.pop("name", None) or f"mcts-{evaluator}-{_budget_label(sims, kw)}"
    return MCTSAgent(ev, sims, batch_size=batch, name=name, games=games, **kw)


def _budget_label(sims, kw) -> str:
    """``200`` or ``100ms`` (with ``movetime`` and no ``sims``) or ``200-100ms``, for agent names."""
    mt = kw.get("movetime")
    if mt is None:
        return str(sims)
    return f"{mt}ms" if sims is None else f"{sims}-{mt}ms"


def _make_uct(sims: Optional[int] = None, **kw):
    if sims is None and kw.get("movetime") is None:
        sims = 200
    return UCTAgent(sims, **kw)


def _make_solver_mcts(sims: Optional[int] = None, **kw):
    if sims is None and kw.get("movetime") is None:
        sims = 50
    name = kw.pop("name", None) or f"solver-mcts-{_budget_label(sims, kw)}"
    return MCTSAgent("c4_solver", sims, name=name, games=("connect_four",), **kw)


class _PerfectAny(Agent):
    """``perfect``: the Connect Four solver in Connect Four, exact minimax in other (small) games."""

    def __init__(self, **kw):
        self.kw = kw
        self.name = kw.get("name", "perfect")
        self._players: Dict[str, Agent] = {}   # game -> its perfect player (made on first use)
        self._cur: Optional[Agent] = None

    def _pick(self, game):
        agent = self._players.get(game)
        if agent is None:
            try:
                agent = registry.get(game).make_perfect_player(**self.kw)
            except ValueError as e:
                raise AgentError(f"agent {self.name!r}: {e}") from None
            self._players[game] = agent
        return agent

    def setup(self, game, *, seed=None, player=None):
        self._cur = self._pick(game)
        self._cur.setup(game, seed=seed, player=player)

    def act(self, state):
        if self._cur is None:
            self._cur = self._pick(state.game)
        return self._cur.act(state)


# The perfect players of the game registry (GameInfo.perfect_player): kwargs of the ``perfect`` spec.

def perfect_connect_four(**kw) -> Agent:
    """Connect Four: the solver (:class:`PerfectConnectFourAgent`)."""
    return PerfectConnectFourAgent(**kw)


def perfect_hex(**kw) -> Agent:
    """Hex up to 7x7: the exact solver (:class:`PerfectHexAgent`)."""
    return PerfectHexAgent(**{k: v for k, v in kw.items() if k in ("seed", "name", "max_nodes")})


def perfect_minimax(**kw) -> Agent:
    """Small games (tic-tac-toe): exact minimax (:class:`MinimaxAgent`)."""
    return MinimaxAgent(**{k: v for k, v in kw.items() if k in ("seed", "name", "max_nodes")})


def _make_python(fn: Optional[str] = None, name: Optional[str] = None, **kw):
    if not fn or ":" not in str(fn):
        raise ValueError("the python agent needs fn=package.module:function")
    mod, _, attr = str(fn).partition(":")
    try:
        obj = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot load agent function {fn!r}: {e}") from None
    if isinstance(obj, type) and issubclass(obj, Agent):
        return obj(**kw)
    if kw:
        base = obj
        obj = lambda state, _b=base, _kw=kw: _b(state, **_kw)  # noqa: E731
    return CallableAgent(obj, name=name or attr)


_KINDS: Dict[str, Callable[..., Agent]] = {
    "random": lambda **kw: RandomAgent(**kw),
    "stockfish": _make_stockfish,
    "fairy": _make_fairy,
    "uci": _make_uci,
    "mcts": _make_mcts,
    "uct": _make_uct,
    "solver_mcts": _make_solver_mcts,
    "perfect": lambda **kw: _PerfectAny(**kw),
    "minimax": lambda **kw: MinimaxAgent(**kw),
    "python": _make_python,
}


# Modules imported on demand when a spec names a kind not registered yet.
_PLUGINS = ("mavgame.model.agents", "mavgame.model.mav_is", "mavgame.play.policy_agents", "mavgame.az.agent")


def register_agent(kind: str, factory: Callable[..., Agent]) -> None:
    """Make ``kind`` available in specs: ``factory(**kwargs)`` builds the agent."""
    if not kind or ":" in kind or "=" in kind or "," in kind:
        raise ValueError(f"invalid agent kind {kind!r}")
    _KINDS[kind] = factory


def agent_kinds() -> list:
    return sorted(_KINDS)


def make_agent(spec: Union[str, Agent, Callable], name: Optional[str] = None) -> Agent:
    """An agent from a spec string (see the module docstring), an Agent, or a callable."""
    if isinstance(spec, Agent):
        if name:
            spec.name = name
        return spec
    if callable(spec) and not isinstance(spec, str):
        return CallableAgent(spec, name=name)
    kind, kwargs = parse_spec(spec)
    factory = _KINDS.get(kind)
    if factory is None:
        for plugin in _PLUGINS:  # modules that register more kinds (the MAV model agents)
            try:
                importlib.import_module(plugin)
            except ImportError:
                continue
        factory = _KINDS.get(kind)
    if factory is None:
        raise ValueError(f"unknown agent kind {kind!r} in spec {spec!r} (known: {', '.join(agent_kinds())})")
    try:
        agent = factory(**kwargs)
    except TypeError as e:
        raise ValueError(f"agent spec {spec!r}: {e}") from None
    agent.spec = spec
    if name:
        agent.name = name
    return agent
