"""The basic agents, registered as the kinds ``random`` (uniformly random legal moves), ``minimax`` (exact
memoized minimax for small games), ``perfect`` (the game registry's perfect player: the Connect Four solver,
the Hex solver up to 7x7, minimax for tic-tac-toe) and ``python`` (a Python callable ``fn(state) -> move``).
Their options: :func:`mavgame.agents.spec.describe_kinds`.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from .. import _core
from ..games import registry
from ..games.negamax import NegamaxSolver, NodeLimitError
from .base import Agent, AgentError, CallableAgent, Move
from .spec import Option, options_of, register_agent

__all__ = ["RandomAgent", "MinimaxAgent", "PerfectConnectFourAgent", "PerfectHexAgent", "perfect_connect_four",
           "perfect_hex", "perfect_minimax"]


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
        cols = {int(state.action_from_str(str(c + 1))): c for c in range(7) if str(c + 1) in state.legal_moves}
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
            self.check_game(game)
            agent = PERFECT_PLAYERS[game][0](**self.kw)
            self._players[game] = agent
        return agent

    def check_game(self, game: str) -> None:
        """AgentError when ``game`` has no perfect player (checked before any game is played)."""
        try:
            registry.get(game)
        except registry.UnknownGameError as e:
            raise AgentError(f"agent {self.name!r}: {e}") from None
        if game not in PERFECT_PLAYERS:
            have = sorted(PERFECT_PLAYERS)
            raise AgentError(f"agent {self.name!r}: no perfect player for {game!r} (games with one: "
                             f"{', '.join(have)})")

    def setup(self, game, *, seed=None, player=None):
        self._cur = self._pick(game)
        self._cur.setup(game, seed=seed, player=player)

    def act(self, state):
        if self._cur is None:
            self._cur = self._pick(state.game)
        return self._cur.act(state)


# The perfect players of the games, registered here (the games layer names no agent): the options of the
# ``perfect`` spec, each taking the ones it has (the spec is one for every game).

def _own(cls, kw) -> dict:
    names = inspect.signature(cls).parameters
    return {k: v for k, v in kw.items() if k in names}


def perfect_connect_four(**kw) -> Agent:
    """Connect Four: the solver (:class:`PerfectConnectFourAgent`)."""
    return PerfectConnectFourAgent(**_own(PerfectConnectFourAgent, kw))


def perfect_hex(**kw) -> Agent:
    """Hex up to 7x7: the exact solver (:class:`PerfectHexAgent`)."""
    return PerfectHexAgent(**_own(PerfectHexAgent, kw))


def perfect_minimax(**kw) -> Agent:
    """Small games (tic-tac-toe): exact minimax (:class:`MinimaxAgent`)."""
    return MinimaxAgent(**_own(MinimaxAgent, kw))


# game -> (factory(**options) -> Agent, slow: it solves the game exactly, so early moves can take minutes)
PERFECT_PLAYERS: Dict[str, Tuple[Callable[..., Agent], bool]] = {}


def register_perfect_player(game: str, factory: Callable[..., Agent], slow: bool = False) -> None:
    """Make ``factory(**options)`` the ``perfect`` agent of ``game``."""
    PERFECT_PLAYERS[game] = (factory, bool(slow))


def is_slow_perfect_player(game: str) -> bool:
    """Whether the perfect player of ``game`` solves exactly (early moves can take minutes)."""
    return PERFECT_PLAYERS.get(game, (None, False))[1]


register_perfect_player("connect_four", perfect_connect_four, slow=True)
register_perfect_player("hex", perfect_hex, slow=True)
register_perfect_player("tictactoe", perfect_minimax)


def _make_python(fn: str, name: Optional[str] = None, **kw):
    """A Python callable ``fn(state) -> move`` (or an Agent class): fn=package.module:function; the other
    options are passed to it"""
    if not fn or ":" not in str(fn):
        raise ValueError("the python agent needs fn=package.module:function")
    mod, _, attr = str(fn).partition(":")
    try:
        obj = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot load agent function {fn!r}: {e}") from None
    if isinstance(obj, type) and issubclass(obj, Agent):
        return obj(**kw)
    if not callable(obj):
        raise ValueError(f"agent function {fn!r} is a {type(obj).__name__}, not a callable")
    try:   # the call every move makes, checked now rather than at the first move
        inspect.signature(obj).bind(None, **kw)
    except TypeError as e:
        raise ValueError(f"agent function {fn!r} cannot be called as fn(state"
                         f"{''.join(f', {k}=...' for k in kw)}): {e}") from None
    except ValueError:   # a callable without a signature (a builtin): called as it is
        pass
    if kw:
        base = obj
        obj = lambda state, _b=base, _kw=kw: _b(state, **_kw)  # noqa: E731
    return CallableAgent(obj, name=name or attr)


register_agent("random", RandomAgent, help="uniformly random legal moves")
register_agent("minimax", MinimaxAgent, help="exact memoized minimax (small games only: tic-tac-toe, tiny Hex)")
register_agent("perfect", _PerfectAny,
               options=options_of(PerfectConnectFourAgent, PerfectHexAgent, MinimaxAgent,
                                  choices={"tiebreak": ("random", "center")},
                                  extra=[Option("max_nodes", int, None, nullable=False)]),
               help="perfect play: the Connect Four solver (tiebreak, max_seconds, tt_log2), the Hex solver "
                    "(boards up to 7x7), exact minimax for tic-tac-toe (max_nodes)")
register_agent("python", _make_python,
               options=[Option("fn", str, required=True, help="package.module:function"), Option("name", str)],
               extra=True, help="a Python callable fn(state) -> move, or an Agent class: fn=package.module:function "
                                "(the spec's other options are passed to it)")
