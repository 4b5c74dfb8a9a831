"""MAV-guided Monte Carlo tree search (the MAV paper's external search).

The tree lives in C (``mavgame._core.MCTSTree``, ``csrc/search/mcts.c``); this module gives it the
paper's parameter names and plugs in evaluators::

    >>> import mavgame
    >>> from mavgame.search.mcts import MCTS
    >>> s = mavgame.State("tictactoe", "xx./oo./... x")
    >>> MCTS("playout", num_simulations=400, seed=1).search(s).best_move
    'c3'

Parameters (named as in the paper):

- ``k``, ``eps``, ``tau``: the prior of equation 1, P = (1 - eps) * softmax over the top-k win
  probabilities with temperature tau + eps / |legal|.  ``tau`` may be a number or a schedule
  ``[(from_ply, tau), ...]`` over the move number (the first step from ply 0).
  ``prior="policy"`` uses the evaluator's ``policy`` instead of its values.
- ``batch_size`` (B), ``timeout`` (seconds, None: wait for every result), ``n_max``, ``n_min``:
  asynchronous batches with dynamic virtual counts max(n_min, floor(n_max / 2^d));
  ``virtual_count="static"`` uses ``virtual_loss`` virtual losses instead, ``"none"`` nothing.
- ``num_simulations``; ``c_puct`` (a constant) or AlphaZero's ``c_base``/``c_init`` (the default);
  ``fpu`` (value in [-1, 1] of actions the evaluator gave no value; None: the lowest given one);
  ``seed``; ``reuse_tree`` (keep the subtree of the moves played between searches).
- ``invalid``: what an unusable evaluator answer does to its leaf (which is never selected again
  either way): ``"exclude"`` (the default, the paper's choice) values it minus infinity: nothing is
  backed up (the simulation is counted as dropped), the leaf keeps 0 visits and the move's root ``q``
  reads ``-inf``; ``"loss"`` (mavgame's choice before issue 13) backs up one visit valued -1 for the
  player who moved into it, which keeps every ``q`` finite.
- ``max_seconds``: a time budget per search (0 or None: none), checked between batches through the
  core's cancellation poll (the first batch always runs): the search stops there and returns what
  it did (``stats['timed_out']`` True, ``stats['simulations']`` the simulations run);
  ``num_simulations`` stays the upper bound.  Ctrl-C stops a search the same way but raises
  ``KeyboardInterrupt``.
- ``state_tracking=True``: the engine-free mode of the paper; the evaluator predicts each child's
  state from its parent's text and the move.

Evaluators:

- ``"playout"``: uniform prior and random playouts to the end, in C (the paper's basic MCTS
  baseline; ``playouts`` per leaf, ``max_plies`` per playout).
- ``"constant"``: every action valued 0.5, in C (for timing the tree itself).
- ``"c4_solver"``: the perfect Connect Four oracle, in C (when the solver is built in).
- a capsule from ``mavgame._core`` (``mcts_*_evaluator``) or an object with a ``capsule()`` method
  returning one: a C evaluator (a native model plugs in this way); the GIL is released while it runs.
- any Python callable ``fn(requests) -> outputs``, called once per batch with a list of
  :class:`Request` (MAV prompt and structured data) and returning one output per request, or an
  iterator of ``(index, output)`` pairs in arrival order (see :mod:`mavgame.search.evaluators` for a
  thread-pool wrapper and the Stockfish evaluator).  An output is

  * ``None``: no answer (dropped, like a timeout);
  * a ``str``: MAV output text (the model's answer to ``request.prompt``, or a whole MAV text);
    text the MAV parser cannot use marks the leaf hallucinated (counted in ``stats['invalid']``);
  * a ``dict``: ``values`` ({move or action: win probability} or a list aligned with
    ``request.legal_actions`` / ``moves``), optional ``value`` (leaf value), ``policy`` (like
    values), and in state-tracking mode ``state`` (predicted text), ``moves``, ``result``
    ("1-0", "0-1", "1/2-1/2" or 1/2/3 for a terminal state); in state tracking, predicted moves,
    states and results that do not hold mark the leaf hallucinated;
  * a number (a Python or NumPy number, or a 0-d array or tensor): the leaf value alone (uniform prior);
  * ``False``: the evaluator's own verdict that its model's answer is unusable (the leaf is marked
    hallucinated, as for unusable text).

Values are win probabilities in [0, 1] of the player to move at the leaf (draws count one half),
as in the MAV format; ``value_range=(-1, 1)`` takes OpenSpiel's convention instead (mapped to [0, 1]).
Tree values (``q``, ``root_value``) are in [-1, 1].  An output no evaluator could mean (a value
outside the range, NaN, a key that is not a legal move or action in engine mode, a list of the wrong
length, an object of another type) raises :class:`EvaluatorError` naming the request and the value:
it is a bug in the evaluator, not a hallucination.  A search that ran simulations from a position
with legal moves and found no move (the evaluator never answered usably for the root) raises
:class:`SearchError` with the search's counters.
"""
from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from .. import _core

__all__ = ["MCTS", "Request", "SearchResult", "EvaluatorError", "SearchError", "playout_uct", "UCTResult"]


class EvaluatorError(ValueError):
    """A Python evaluator returned an output no evaluator could mean (the message names the request and
    the value); see the module docstring for what an output may be."""


class _Hallucinated(Exception):
    """A state-tracking prediction (state, result) that does not hold: the leaf is marked hallucinated."""


class SearchError(RuntimeError):
    """A search ran simulations from a position with legal moves and found no move (the evaluator never
    answered usably for the root); ``stats`` holds the search's counters."""

    def __init__(self, message: str, stats: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.stats = dict(stats or {})

_VC = {"dynamic": 0, "static": 1, "none": 2}      # the names of the core's enum values
_PRIOR = {"mav": 0, "policy": 1}
_INVALID = {"loss": 0, "exclude": 1}
# The core's configuration defaults (mg_mcts_config_default), the one copy: MCTS's signature uses them.
_DEFAULTS: Dict[str, Any] = _core.mcts_defaults()
for _key, _names in (("virtual_count", _VC), ("prior", _PRIOR), ("invalid", _INVALID)):
    _DEFAULTS[_key] = next(n for n, v in _names.items() if v == _DEFAULTS[_key])
del _key, _names
_RESULTS = {"1-0": 1, "0-1": 2, "1/2-1/2": 3, "*": 0}


class Request:
    """One leaf to evaluate.

    Attributes: ``index`` (in the batch), ``path`` (actions from the search root; state tracking:
    move strings), ``legal_actions`` (engine mode, int32 array), ``to_move``, ``ply`` (move number),
    ``depth``, ``prompt`` (the MAV prompt, or None if the game has no MAV format); engine mode:
    ``state`` (the leaf as a game state, built on first access), ``legal_moves`` (move strings),
    ``text``, ``root`` (the search root's state); state tracking: ``text`` (the root's text, for the
    root request), ``parent_text`` and ``move`` (the predicted parent state and the move played from it).
    """

    __slots__ = ("index", "path", "legal_actions", "to_move", "ply", "depth", "parent_text", "move", "prompt",
                 "_text", "_state", "_moves", "_search")

    def __init__(self, search: "MCTS", t: tuple):
        (self.index, path, self.legal_actions, self.to_move, self.ply, self.depth, self._text, self.parent_text,
         self.move, self.prompt) = t
        self.path = path
        self._search = search
        self._state = None
        self._moves = None

    @property
    def state(self):
        if self._state is None and self._search._root is not None and not self._search.state_tracking:
            s = self._search._root.copy()
            for a in self.path:
                s.push(int(a))
            self._state = s
        return self._state

    @property
    def root(self):
        """The search root as a game state (engine mode; None with state tracking): ``path`` starts
        there.  Do not modify it."""
        return None if self._search.state_tracking else self._search._root

    @property
    def legal_moves(self) -> Optional[List[str]]:
        if self._moves is None and self.legal_actions is not None:
            st = self.state
            self._moves = [st.action_to_str(int(a)) for a in self.legal_actions]
        return self._moves

    @property
    def text(self) -> Optional[str]:
        if self._text is None and not self._search.state_tracking and self.state is not None:
            return self.state.text()
        return self._text

    def __repr__(self) -> str:
        where = self.text if self.text is not None else f"{self.parent_text!r} + {self.move}"
        return f"Request(index={self.index}, depth={self.depth}, {where})"


@dataclass
class SearchResult:
    """The outcome of :meth:`MCTS.search`.

    ``moves``/``actions``/``visits``/``q``/``prior``/``values``/``hallucinated`` describe the root
    edges (``q`` and ``root_value`` in [-1, 1] from the root player's view, NaN if unvisited, -inf for a
    hallucinated move under ``invalid="exclude"``;
    ``values`` the evaluator's win probabilities, NaN where it gave none).  ``best_move`` is the
    robust child (most visits, total value as tie-break); ``pv`` the principal variation.  ``u`` is
    PUCT's exploration term U(s, a) = c(s) P(s, a) sqrt(N(s)) / (1 + N(s, a)) of each root edge after the
    search (N, Q and U per action are what AZdb's sub-additive planning reads).
    """

    best_move: Optional[str]
    best_action: Optional[int]
    moves: List[str]
    actions: np.ndarray
    visits: np.ndarray
    q: np.ndarray
    prior: np.ndarray
    values: np.ndarray
    hallucinated: np.ndarray
    pv: List[str]
    pv_actions: np.ndarray
    root_value: float
    root_visits: int
    stats: Dict[str, Any] = field(default_factory=dict)
    u: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        """Visit-count distribution over the root edges (temperature 0: one-hot on the best)."""
        v = self.visits.astype(np.float64)
        if v.size == 0:
            return v
        if temperature <= 0:
            p = np.zeros_like(v)
            if self.best_move is not None:
                p[self.moves.index(self.best_move)] = 1.0
            return p
        v = v ** (1.0 / temperature)
        s = v.sum()
        return v / s if s > 0 else np.full_like(v, 1.0 / v.size)


def _check_seconds(v: Optional[float]) -> float:
    """A time budget in seconds: None or 0 for none, else a finite positive number."""
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
            math.isfinite(v) and v >= 0):
        raise ValueError(f"max_seconds must be a finite number of seconds >= 0 (0 or None: no limit), not {v!r}")
    return float(v)


_INT32_MAX = 2 ** 31 - 1


def _integer(name: str, v: Any, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """An int parameter: TypeError naming it for anything but an integer (a float is not truncated),
    ValueError naming it and the value outside [lo, hi] (None: no bound here; the core checks its own)."""
    if not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(v).__name__} {v!r:.100}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in [{'' if lo is None else lo}, {'' if hi is None else hi}], "
                         f"not {v}")
    return v


def _real(name: str, v: Any, lo: float, hi: float, *, lo_open: bool = False, hint: str = "") -> float:
    """A float parameter: finite and in [lo, hi] (``lo_open``: > lo); TypeError naming it for a non-number (a
    complex number is not one), ValueError naming it and the value otherwise."""
    if isinstance(v, (bool, str, bytes, complex, np.complexfloating)) or not isinstance(
            v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, not {type(v).__name__} {v!r:.100}")
    x = float(v)
    if not (math.isfinite(x) and (x > lo if lo_open else x >= lo) and x <= hi):
        rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]" if math.isfinite(hi) else f"{'>' if lo_open else '>='} {lo:g}"
        raise ValueError(f"{name} must be a finite number {'in ' if math.isfinite(hi) else ''}{rng}{hint}, not {v!r}")
    return x


def _is_complex(x: Any) -> bool:
    """A complex number, or an array or tensor of a complex dtype (a cast to float drops the imaginary part)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and (bool(getattr(dt, "is_complex", False)) or getattr(dt, "kind", "") == "c")


def _result_code(r) -> Optional[int]:
    if r is None:
        return None
    if isinstance(r, str):
        return _RESULTS.get(r.strip())
    if isinstance(r, (int, np.integer)) and not isinstance(r, bool):
        return int(r)
    return None


class MCTS:
    """AlphaZero-style MCTS guided by MAV action values, with asynchronous batches and dynamic
    virtual counts (see the module docstring for parameters and evaluators).

    Every parameter is checked here, by name: the ints are integers (a float is refused, not truncated)
    that the core range-checks, ``seed`` lies in [0, 2**64), and the floats are finite and in their
    ranges (``c_base`` > 0, ``c_init`` and ``c_puct`` >= 0, ``eps`` in [0, 1], ``tau`` > 0, ``fpu`` in
    [-1, 1] or None, ``timeout`` > 0 or None).

    Threads: an MCTS object (its tree, its root and its evaluator) belongs to one thread at a time. A
    search releases the GIL; a second thread that uses the tree meanwhile gets a RuntimeError saying
    "in use by another thread" (and an evaluator that calls back into its own tree one saying so). Run
    concurrent searches with one MCTS each: a built-in evaluator (``"playout"``, ``"c4_solver"``, a
    native model's capsule) serves one search at a time too, and a capsule given to two concurrent
    searches is refused in the second the same way. A Python evaluator is called on the searching
    thread, with the GIL; one shared by several MCTS objects must be thread-safe itself."""

    def __init__(self, evaluator: Any = "playout", *, num_simulations: int = 100,
                 batch_size: int = _DEFAULTS["batch_size"], timeout: Optional[float] = _DEFAULTS["timeout"],
                 k: int = _DEFAULTS["k"], eps: float = _DEFAULTS["eps"],
                 tau: Union[float, Sequence] = _DEFAULTS["tau"], n_max: int = _DEFAULTS["n_max"],
                 n_min: int = _DEFAULTS["n_min"], virtual_count: str = _DEFAULTS["virtual_count"],
                 virtual_loss: int = _DEFAULTS["virtual_loss"], c_puct: Optional[float] = _DEFAULTS["c_puct"],
                 c_base: float = _DEFAULTS["c_base"], c_init: float = _DEFAULTS["c_init"],
                 prior: str = _DEFAULTS["prior"], fpu: Optional[float] = _DEFAULTS["fpu"],
                 invalid: str = _DEFAULTS["invalid"], seed: int = _DEFAULTS["seed"],
                 state_tracking: bool = False, game: Optional[str] = None,
                 board_size: int = 0, flags: int = 0, reuse_tree: bool = True, playouts: int = 1,
                 max_plies: int = 0, mav_spec: Optional[str] = None,
                 value_range: Sequence[float] = (0.0, 1.0), max_seconds: Optional[float] = None):
        try:
            lo, hi = (float(x) for x in value_range)
        except (TypeError, ValueError):
            raise ValueError(f"value_range must be a (low, high) pair such as (0, 1) or (-1, 1), "
                             f"not {value_range!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"value_range must be finite with low < high, not {value_range!r}")
        self.value_range = (lo, hi)
        if virtual_count not in _VC:
            raise ValueError(f"virtual_count must be one of {sorted(_VC)}, not {virtual_count!r}")
        if prior not in _PRIOR:
            raise ValueError(f"prior must be one of {sorted(_PRIOR)}, not {prior!r}")
        if invalid not in _INVALID:
            raise ValueError(f"invalid must be one of {sorted(_INVALID)}, not {invalid!r}")
        num_simulations = _integer("num_simulations", num_simulations, 0, _INT32_MAX)
        if timeout is not None:
            _real("timeout", timeout, 0.0, 1e9, lo_open=True, hint=" seconds (None: wait for every result)")
        # the float parameters: finite and in range, refused here by name (c_base 0, negative or NaN used
        # to fall through to a zero c_puct: a greedy search with NaN q values and piled visits)
        c_base = _real("c_base", c_base, 0.0, math.inf, lo_open=True,
                       hint=" (AlphaZero's c(s); give c_puct for a constant exploration)")
        c_init = _real("c_init", c_init, 0.0, math.inf)
        if c_puct is not None:
            c_puct = _real("c_puct", c_puct, 0.0, math.inf)
        eps = _real("eps", eps, 0.0, 1.0)
        if fpu is not None:
            fpu = _real("fpu", fpu, -1.0, 1.0, hint=" (None: the lowest value the evaluator gave)")
        if isinstance(tau, (int, float, np.integer, np.floating, complex)) and not isinstance(tau, bool):
            tau = _real("tau", tau, 0.0, math.inf, lo_open=True)
        seed = _integer("seed", seed, 0, 2 ** 64 - 1)
        playouts = _integer("playouts", playouts, 1, _INT32_MAX)
        max_plies = _integer("max_plies", max_plies, 0, _INT32_MAX)
        self.max_seconds = _check_seconds(max_seconds)
        self.num_simulations = num_simulations
        self.state_tracking = bool(state_tracking)
        self.reuse_tree = bool(reuse_tree)
        self.timeout = timeout
        self.mav_spec = mav_spec
        self.game = game
        # the ints: integers (not truncated floats); the core checks their ranges, naming each
        self._cfg = dict(board_size=_integer("board_size", board_size), flags=_integer("flags", flags),
                         state_tracking=self.state_tracking,
                         batch_size=_integer("batch_size", batch_size), timeout=float(timeout or 0.0),
                         virtual_count=_VC[virtual_count], n_max=_integer("n_max", n_max),
                         n_min=_integer("n_min", n_min), virtual_loss=_integer("virtual_loss", virtual_loss),
                         c_puct=c_puct if c_puct is not None else 0.0,
                         c_base=c_base if c_puct is None else 0.0, c_init=c_init,
                         prior=_PRIOR[prior], k=_integer("k", k), eps=eps, tau=tau,
                         fpu=float("nan") if fpu is None else fpu, seed=seed,
                         invalid=_INVALID[invalid])
        self.params = dict(k=k, eps=eps, tau=tau, batch_size=batch_size, timeout=timeout, n_max=n_max,
                           n_min=n_min, virtual_count=virtual_count, virtual_loss=virtual_loss, c_puct=c_puct,
                           c_base=c_base, c_init=c_init, prior=prior, fpu=fpu, invalid=invalid, seed=seed)
        # Validate the configuration now (a tree without a game is fine for checking).
        _core.MCTSTree(None, **{**self._cfg, "state_tracking": True})
        self._evaluator_spec = evaluator
        self._playouts = (playouts, max_plies, seed)
        self._evaluator = None
        self._tree = None
        self._tree_game = None
        self._root = None          # engine mode: the root State (with its history)
        self._root_hist = None
        self._root_key = None      # state tracking: (text, to_move) of the root
        self.last_result: Optional[SearchResult] = None

    # ---- evaluators ----------------------------------------------------------------------

    def _resolve_evaluator(self, game: Optional[str]):
        ev = self._evaluator_spec
        if isinstance(ev, str):
            playouts, max_plies, seed = self._playouts
            if ev == "playout":
                return _core.mcts_playout_evaluator(playouts, max_plies, seed)
            if ev == "constant":
                return _core.mcts_constant_evaluator(0.5)
            if ev in ("c4_solver", "solver"):
                if not hasattr(_core, "mcts_c4_solver_evaluator"):
                    raise ValueError("the Connect Four solver evaluator is not built into this mavgame")
                if game != "connect_four":
                    raise ValueError(f"the Connect Four solver evaluator cannot evaluate {game!r}")
                return _core.mcts_c4_solver_evaluator()
            raise ValueError(f"unknown evaluator {ev!r} (expected 'playout', 'constant', 'c4_solver', "
                             "a capsule or a callable)")
        if type(ev).__name__ == "PyCapsule":
            return ev
        cap = getattr(ev, "capsule", None)
        if callable(cap):
            return cap()
        if callable(ev):
            return self._bridge(ev)
        raise TypeError(f"evaluator must be a name, a capsule or a callable, not {type(ev).__name__}")

    def _bridge(self, fn: Callable):
        takes_timeout = False
        try:
            sig = inspect.signature(fn)
            takes_timeout = "timeout" in sig.parameters or any(
                p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        except (TypeError, ValueError):
            pass

        def bridge(batch, timeout):
            reqs = [Request(self, t) for t in batch]
            deadline = time.monotonic() + timeout if timeout > 0 else None
            out = fn(reqs, timeout=timeout if timeout > 0 else None) if takes_timeout else fn(reqs)
            n = len(reqs)
            outs: List[Any] = [None] * n
            seq: List[int] = [n + i for i in range(n)]
            if isinstance(out, (list, tuple)):
                if len(out) != n:
                    raise ValueError(f"evaluator returned {len(out)} outputs for a batch of {n}")
                late = deadline is not None and time.monotonic() > deadline
                for i, o in enumerate(out):
                    outs[i] = None if late else self._normalize(reqs[i], o)
                    seq[i] = i
            else:  # an iterator of (index, output) in arrival order
                rank = 0
                for item in out:
                    if deadline is not None and time.monotonic() > deadline:
                        close = getattr(out, "close", None)
                        if close:
                            close()
                        break
                    i, o = item
                    if not (0 <= i < n):
                        raise ValueError(f"evaluator yielded index {i} for a batch of {n}")
                    outs[i] = self._normalize(reqs[i], o)
                    seq[i] = rank
                    rank += 1
            return outs, seq

        return bridge

    def _bad(self, req: Request, what: str) -> EvaluatorError:
        return EvaluatorError(f"evaluator output for {req!r}: {what}")

    def _number(self, req: Request, v: Any, what: str, *, value: bool = True) -> float:
        """A win probability in [0, 1] from an evaluator's number (value=True: in ``value_range``,
        mapped to [0, 1]; False: a policy weight, finite and >= 0); EvaluatorError otherwise."""
        if isinstance(v, (bool, str, bytes)) or getattr(v, "ndim", 0) != 0:
            raise self._bad(req, f"{what} {v!r} is not a number")
        if _is_complex(v):
            raise self._bad(req, f"{what} {v!r} is complex ({getattr(v, 'dtype', type(v).__name__)}): values "
                                 "must be real")
        try:
            x = float(v)
        except (TypeError, ValueError, OverflowError):
            raise self._bad(req, f"{what} {v!r} is not a number") from None
        if not value:
            if not (math.isfinite(x) and x >= 0.0):
                raise self._bad(req, f"{what} {v!r} is not a finite weight >= 0")
            return x
        lo, hi = self.value_range
        if math.isnan(x):
            raise self._bad(req, f"{what} {v!r} is NaN")
        if not (lo <= x <= hi):
            hint = " (values in [-1, 1]: give MCTS(value_range=(-1, 1)))" if lo == 0.0 and hi == 1.0 else ""
            raise self._bad(req, f"{what} {v!r} is outside [{lo:g}, {hi:g}]{hint}")
        return x if (lo, hi) == (0.0, 1.0) else (x - lo) / (hi - lo)

    def _normalize(self, req: Request, o: Any):
        """An output in the forms the C bridge takes: None, str or a canonical dict (EvaluatorError for an
        output no evaluator could mean)."""
        if o is None or o is False or isinstance(o, str):
            return o
        if isinstance(o, dict):
            try:
                return self._normalize_dict(req, o)
            except _Hallucinated:
                return False
        if isinstance(o, (int, float, np.number)) or (getattr(o, "ndim", None) == 0 and hasattr(o, "__float__")):
            return {"value": self._number(req, o, "value")}
        raise self._bad(req, f"{type(o).__name__} {o!r:.200} is not an output (None, a MAV text, a dict of "
                             "values or a number)")

    def _normalize_dict(self, req: Request, o: dict):
        d: Dict[str, Any] = {}
        if "value" in o and o["value"] is not None:
            d["value"] = self._number(req, o["value"], "'value'")
        vals, pol = o.get("values"), o.get("policy")
        if self.state_tracking:
            moves = o.get("moves")
            if moves is None and isinstance(vals, dict):
                moves = list(vals.keys())
            if moves is None and isinstance(pol, dict):
                moves = list(pol.keys())
            moves = [str(m) for m in (moves or [])]
            d["moves"] = moves
            if "state" in o:
                if not isinstance(o["state"], str):
                    raise _Hallucinated("state")
                d["state"] = o["state"]
            res = _result_code(o.get("result"))
            if o.get("result") is not None and res is None:
                raise _Hallucinated("result")
            if res is not None:
                d["result"] = res
            index = {m: i for i, m in enumerate(moves)}
            n = len(moves)
        else:
            legal = req.legal_actions
            n = len(legal)
            index = {int(a): i for i, a in enumerate(legal)}
            if (isinstance(vals, dict) and any(isinstance(key, str) for key in vals)) or (
                    isinstance(pol, dict) and any(isinstance(key, str) for key in pol)):
                index.update({m: i for i, m in enumerate(req.legal_moves)})
        for key, src in (("values", vals), ("policy", pol)):
            if src is None:
                continue
            is_value = key == "values"
            if isinstance(src, dict):
                arr = [None] * n
                for m, v in src.items():
                    i = index.get(int(m) if isinstance(m, (int, np.integer)) else m)
                    if i is None:
                        raise self._bad(req, f"{key!r} names {m!r}, which is not a legal move or action here "
                                             f"(legal: {', '.join(map(str, req.legal_moves or []))})")
                    arr[i] = None if v is None else self._number(req, v, f"{key}[{m!r}]", value=is_value)
                d[key] = arr
            elif isinstance(src, (str, bytes)) or not hasattr(src, "__len__"):
                raise self._bad(req, f"{key!r} is a {type(src).__name__}, not a dict or a list")
            elif _is_complex(src):
                raise self._bad(req, f"{key!r} has dtype {getattr(src, 'dtype', 'complex')}: values must be real")
            else:
                if len(src) != n:
                    raise self._bad(req, f"{key!r} has {len(src)} entries for {n} legal moves")
                d[key] = [None if v is None else self._number(req, v, f"{key}[{i}]", value=is_value)
                          for i, v in enumerate(src)]
        return d

    # ---- search --------------------------------------------------------------------------

    def _ensure_tree(self, game: Optional[str]):
        if self._tree is None or self._tree_game != game:
            self._tree = _core.MCTSTree(game, **self._cfg)
            self._tree_game = game
            self._root = self._root_hist = self._root_key = None
            self._evaluator = None
        if self._evaluator is None:
            self._evaluator = self._resolve_evaluator(game)

    def reset(self) -> None:
        """Forget the tree (the next search starts afresh)."""
        self._root = self._root_hist = self._root_key = None
        self._tree = None

    def _place_root_engine(self, state) -> None:
        t = self._tree
        hist = [int(a) for a in state.history()]
        if self.reuse_tree and self._root is not None and self._root_hist is not None:
            old = self._root_hist
            same_start = self._root.copy(stack=True)
            while same_start.ply:
                same_start.pop()
            start = state.copy(stack=True)
            while start.ply:
                start.pop()
            if len(hist) >= len(old) and hist[:len(old)] == old and start == same_start:
                for a in hist[len(old):]:
                    t.advance(a)
                self._root = state.copy()
                self._root_hist = hist
                return
        t.set_root(state, len(hist))
        self._root = state.copy()
        self._root_hist = hist

    def _place_root_text(self, text: str, to_move: int, ply: int, played: Sequence[str]) -> None:
        t = self._tree
        if self.reuse_tree and self._root_key is not None and played is None:
            if t.root_text == text and t.root_to_move == to_move:  # the same root (e.g. after play())
                self._root_key = (text, to_move)
                return
        if self.reuse_tree and self._root_key is not None and played is not None:
            try:
                for mv in played:
                    t.advance_move(mv)
                if t.root_text == text and t.root_to_move == to_move:
                    self._root_key = (text, to_move)
                    return
            except ValueError:
                pass
        t.set_root_text(text, to_move, ply)
        self._root_key = (text, to_move)

    def search(self, state, num_simulations: Optional[int] = None, *, to_move: Optional[int] = None,
               ply: Optional[int] = None, played: Optional[Sequence[str]] = None,
               max_seconds: Optional[float] = None) -> SearchResult:
        """Search from ``state`` and return a :class:`SearchResult`.

        Engine mode: ``state`` is a game state (``mavgame.State`` or a game class); with
        ``reuse_tree`` the tree of the previous search is kept when ``state`` continues its game.
        State tracking: ``state`` is a game state (its text is the root) or a text with ``to_move``;
        ``played``: the moves made since the previous search's root (to reuse its subtree; found
        automatically when ``state`` is a game state continuing the previous one).
        ``max_seconds``: this search's time budget (None: the constructor's); when it stops the
        search, ``stats['timed_out']`` is True and the result is that of the simulations run.
        """
        budget = self.max_seconds if max_seconds is None else _check_seconds(max_seconds)
        n = self.num_simulations if num_simulations is None else _integer("num_simulations", num_simulations, 0,
                                                                           _INT32_MAX)
        if self.state_tracking:
            if isinstance(state, str):
                if to_move not in (0, 1):
                    raise ValueError("state tracking from a text needs to_move (0 or 1)")
                game = self.game
                text, tm, p = state, to_move, (ply or 0)
            else:
                game = state.game
                text, tm, p = state.text(), state.to_move, (ply if ply is not None else len(state.history()))
                if played is None and self._root is not None:
                    hist = [int(a) for a in state.history()]
                    if hist[:len(self._root_hist)] == self._root_hist:
                        s = self._root.copy()
                        played = []
                        for a in hist[len(self._root_hist):]:
                            played.append(s.action_to_str(a))
                            s.push(a)
            self._ensure_tree(game)
            self._place_root_text(text, tm, p, played)
            if not isinstance(state, str):
                self._root = state.copy()
                self._root_hist = [int(a) for a in state.history()]
        else:
            self._ensure_tree(state.game)
            self._place_root_engine(state)
            if ply is not None:
                self._tree.set_root(state, ply)
        timed_out = self._tree.search(self._evaluator, n, self.mav_spec, budget)
        self.last_result = res = self._result()
        res.stats["timed_out"] = bool(timed_out)
        if res.best_move is None and n > 0 and not res.stats.get("terminal_visits", 0) and (
                isinstance(state, str) or not state.is_terminal()):
            st = res.stats
            where = state if isinstance(state, str) else state.text()
            raise SearchError(f"search from {where!r} found no move: the evaluator gave no usable output for the "
                              f"root in {st.get('simulations', n)} simulation(s) ({st.get('dropped', 0)} dropped "
                              f"or timed out, {st.get('invalid', 0)} invalid or hallucinated)", st)
        return res

    def best_move(self, state, num_simulations: Optional[int] = None, *,
                  max_seconds: Optional[float] = None) -> Optional[str]:
        """The move the search would play (``max_seconds``: a time budget, as in :meth:`search`)."""
        return self.search(state, num_simulations, max_seconds=max_seconds).best_move

    def play(self, move) -> None:
        """Advance the tree's root by a move (engine: action or move string), keeping its subtree."""
        t = self._tree
        if t is None:
            raise ValueError("no search yet")
        if self.state_tracking:
            t.advance_move(str(move))
            self._root = None
            self._root_key = (t.root_text, t.root_to_move)
            return
        if isinstance(move, str):
            move = self._root.action_from_str(move)
        t.advance(int(move))
        self._root.push(int(move))
        self._root_hist = [int(a) for a in self._root.history()]

    def check(self) -> None:
        """Check the tree invariants (ValueError on a violation)."""
        if self._tree is not None:
            self._tree.check()

    @property
    def tree(self):
        """The underlying ``_core.MCTSTree`` (None before the first search)."""
        return self._tree

    def _result(self) -> SearchResult:
        t = self._tree
        actions, visits, q, prior, values, hal = t.root_edges()
        best_edge = t.best_edge()
        pv_actions, pv_edges, pv_moves = t.pv()
        if self.state_tracking:
            moves = t.root_moves()
            pv = list(pv_moves)
            best_action = None
        else:
            root = self._root
            moves = [root.action_to_str(int(a)) for a in actions]
            pv = []
            s = root.copy()
            for a in pv_actions:
                pv.append(s.action_to_str(int(a)))
                s.push(int(a))
            best_action = int(actions[best_edge]) if best_edge >= 0 else None
        return SearchResult(best_move=moves[best_edge] if best_edge >= 0 else None, best_action=best_action,
                            moves=moves, actions=actions, visits=visits, q=q, prior=prior, values=values,
                            hallucinated=hal, pv=pv, pv_actions=pv_actions, root_value=t.root_value,
                            root_visits=t.root_visits, stats=t.stats(), u=t.root_u())


# ---- the playout UCT baseline -----------------------------------------------------------------------

@dataclass(frozen=True)
class UCTResult:
    """Result of :func:`playout_uct`: per legal move the visit count and the mean score (win
    probability for the player to move, NaN if unvisited); ``value`` is the mean score of all
    simulations and ``best`` the most visited move (``best_action`` its action id); ``simulations``
    the simulations run and ``timed_out`` whether a ``max_seconds`` budget stopped the search
    before all of them."""

    best: str
    value: float
    visits: Dict[str, int]
    q: Dict[str, float]
    simulations: int = 0
    timed_out: bool = False
    best_action: int = -1

    def order(self) -> List[str]:
        """Moves by visits, then by q, best first."""
        def key(m: str):
            q = self.q[m]
            return (-self.visits[m], -(q if not math.isnan(q) else -1.0))
        return sorted(self.visits, key=key)


def playout_uct(state, simulations: int = 1000, *, seed: int = 0, c: Optional[float] = None,
                fast_playout: bool = True, max_seconds: float = 0.0) -> UCTResult:
    """UCT with uniformly random playouts, the MAV paper's basic MCTS baseline, for any game (the
    core's ``playout_mcts``, csrc/search/playout_mcts.c).  The one entry point of the baseline:
    ``agents.UCTAgent`` plays with it and ``Hex.mcts`` is a deprecated wrapper of it.

    Values are win probabilities of the player to move.  ``fast_playout`` (Hex) plays each playout
    by filling the board at random (the same outcome distribution as move-by-move random play, ~10x
    faster).  Reproducible for a given seed; the GIL is released during the search.  ``max_seconds``
    (0: none) is a time budget: the search stops then with the simulations run so far
    (``timed_out`` True; ``simulations`` caps it).  ``c`` is the UCT exploration constant (None: the
    core's default, sqrt(2)).  Bad arguments raise ValueError naming the value."""
    kw = {} if c is None else {"c": float(c)}
    r = _core.playout_mcts(state, int(simulations), seed=int(seed), fast_playout=bool(fast_playout),
                           max_seconds=float(max_seconds), **kw)
    names = [state.action_to_str(int(a)) for a in r["actions"]]
    best = int(r["best_action"])
    return UCTResult(best=state.action_to_str(best), value=float(r["value"]),
                     visits={m: int(v) for m, v in zip(names, r["visits"])},
                     q={m: float(q) for m, q in zip(names, r["q"])}, simulations=int(r["simulations"]),
                     timed_out=bool(r["timed_out"]), best_action=best)
