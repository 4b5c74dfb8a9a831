"""What an MCTS evaluator receives and returns, and the plumbing between it and the C tree.

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

Here: :class:`Request` (one leaf to evaluate), :class:`EvaluatorError`, :func:`check_evaluator` (the
constructor's check of an evaluator), :func:`resolve_evaluator` (the C evaluator or the bridge of a Python
callable, for a game) and :class:`OutputReader` (an output to the forms the C bridge takes).
"""
from __future__ import annotations

import inspect
import math
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _core

__all__ = ["Request", "EvaluatorError", "OutputReader", "EVALUATOR_NAMES", "check_evaluator", "resolve_evaluator",
           "make_bridge"]


class EvaluatorError(ValueError):
    """A Python evaluator returned an output no evaluator could mean (the message names the request and
    the value); see the module docstring for what an output may be."""


class _Hallucinated(Exception):
    """A state-tracking prediction (state, result) that does not hold: the leaf is marked hallucinated."""


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

    def __init__(self, search: Any, t: tuple):
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


#: The built-in evaluators by name (``"solver"`` is another name of ``"c4_solver"``).
EVALUATOR_NAMES = ("playout", "constant", "c4_solver")
_EXPECTED = ("'playout', 'constant', 'c4_solver' (or 'solver'), a capsule from mavgame._core, an object with a "
             "capsule() method or a callable fn(requests) -> outputs")


def check_evaluator(ev: Any, game: Optional[str] = None) -> None:
    """Refuse, when the search is made, an evaluator no search could use: an unknown name (ValueError naming it
    and the valid ones), the Connect Four solver where it is not built in or ``game`` is another game, or an
    object that is neither a name, a capsule nor a callable (TypeError)."""
    if isinstance(ev, str):
        if ev in ("c4_solver", "solver"):
            if not hasattr(_core, "mcts_c4_solver_evaluator"):
                raise ValueError("the Connect Four solver evaluator is not built into this mavgame")
            if game is not None and game != "connect_four":
                raise ValueError(f"the Connect Four solver evaluator cannot evaluate {game!r}")
        elif ev not in EVALUATOR_NAMES:
            raise ValueError(f"unknown evaluator {ev!r}: expected {_EXPECTED}")
        return
    if type(ev).__name__ == "PyCapsule" or callable(getattr(ev, "capsule", None)) or callable(ev):
        return
    raise TypeError(f"evaluator must be {_EXPECTED}; not {type(ev).__name__} {ev!r:.100}")


def resolve_evaluator(ev: Any, game: Optional[str], playouts: Tuple[int, int, int], search: Any,
                      reader: "OutputReader") -> Any:
    """The evaluator the C tree calls for a search of ``game``: a built-in one by name (``playouts``: playouts
    per leaf, max plies per playout and seed of ``"playout"``), a capsule, or the bridge of a Python callable
    (its requests refer to ``search``, its outputs are read by ``reader``)."""
    check_evaluator(ev)
    if isinstance(ev, str):
        n, max_plies, seed = playouts
        if ev == "playout":
            return _core.mcts_playout_evaluator(n, max_plies, seed)
        if ev == "constant":
            return _core.mcts_constant_evaluator(0.5)
        if game != "connect_four":
            raise ValueError(f"the Connect Four solver evaluator cannot evaluate {game!r}")
        return _core.mcts_c4_solver_evaluator()
    if type(ev).__name__ == "PyCapsule":
        return ev
    cap = getattr(ev, "capsule", None)
    if callable(cap):
        return cap()
    return make_bridge(search, ev, reader)


def make_bridge(search: Any, fn: Callable, reader: "OutputReader") -> Callable:
    """The C tree's callback for a Python evaluator ``fn`` of ``search``: a batch of request tuples to
    ``(outputs, arrival ranks)``, outputs normalized by ``reader``."""
    takes_timeout = False
    try:
        sig = inspect.signature(fn)
        takes_timeout = "timeout" in sig.parameters or any(
            p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    except (TypeError, ValueError):
        pass

    def bridge(batch, timeout):
        reqs = [Request(search, t) for t in batch]
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
                outs[i] = None if late else reader.normalize(reqs[i], o)
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
                outs[i] = reader.normalize(reqs[i], o)
                seq[i] = rank
                rank += 1
        return outs, seq

    return bridge


class OutputReader:
    """Reads a Python evaluator's outputs (see the module docstring) into the forms the C bridge takes: None,
    str, False or a canonical dict; EvaluatorError names the request and the value of an output no evaluator
    could mean.  ``value_range``: the evaluator's value convention; ``state_tracking``: the search's mode."""

    def __init__(self, value_range: Tuple[float, float], state_tracking: bool):
        self.value_range = value_range
        self.state_tracking = state_tracking

    def bad(self, req: Request, what: str) -> EvaluatorError:
        return EvaluatorError(f"evaluator output for {req!r}: {what}")

    def number(self, req: Request, v: Any, what: str, *, value: bool = True) -> float:
        """A win probability in [0, 1] from an evaluator's number (value=True: in ``value_range``,
        mapped to [0, 1]; False: a policy weight, finite and >= 0); EvaluatorError otherwise."""
        if isinstance(v, (bool, str, bytes)) or getattr(v, "ndim", 0) != 0:
            raise self.bad(req, f"{what} {v!r} is not a number")
        if _is_complex(v):
            raise self.bad(req, f"{what} {v!r} is complex ({getattr(v, 'dtype', type(v).__name__)}): values "
                                 "must be real")
        try:
            x = float(v)
        except (TypeError, ValueError, OverflowError):
            raise self.bad(req, f"{what} {v!r} is not a number") from None
        if not value:
            if not (math.isfinite(x) and x >= 0.0):
                raise self.bad(req, f"{what} {v!r} is not a finite weight >= 0")
            return x
        lo, hi = self.value_range
        if math.isnan(x):
            raise self.bad(req, f"{what} {v!r} is NaN")
        if not (lo <= x <= hi):
            hint = " (values in [-1, 1]: give MCTS(value_range=(-1, 1)))" if lo == 0.0 and hi == 1.0 else ""
            raise self.bad(req, f"{what} {v!r} is outside [{lo:g}, {hi:g}]{hint}")
        return x if (lo, hi) == (0.0, 1.0) else (x - lo) / (hi - lo)

    def normalize(self, req: Request, o: Any):
        """An output in the forms the C bridge takes: None, str or a canonical dict (EvaluatorError for an
        output no evaluator could mean)."""
        if o is None or o is False or isinstance(o, str):
            return o
        if isinstance(o, dict):
            try:
                return self.normalize_dict(req, o)
            except _Hallucinated:
                return False
        if isinstance(o, (int, float, np.number)) or (getattr(o, "ndim", None) == 0 and hasattr(o, "__float__")):
            return {"value": self.number(req, o, "value")}
        raise self.bad(req, f"{type(o).__name__} {o!r:.200} is not an output (None, a MAV text, a dict of "
                             "values or a number)")

    def normalize_dict(self, req: Request, o: dict):
        d: Dict[str, Any] = {}
        if "value" in o and o["value"] is not None:
            d["value"] = self.number(req, o["value"], "'value'")
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
                        raise self.bad(req, f"{key!r} names {m!r}, which is not a legal move or action here "
                                             f"(legal: {', '.join(map(str, req.legal_moves or []))})")
                    arr[i] = None if v is None else self.number(req, v, f"{key}[{m!r}]", value=is_value)
                d[key] = arr
            elif isinstance(src, (str, bytes)) or not hasattr(src, "__len__"):
                raise self.bad(req, f"{key!r} is a {type(src).__name__}, not a dict or a list")
            elif _is_complex(src):
                raise self.bad(req, f"{key!r} has dtype {getattr(src, 'dtype', 'complex')}: values must be real")
            else:
                if len(src) != n:
                    raise self.bad(req, f"{key!r} has {len(src)} entries for {n} legal moves")
                d[key] = [None if v is None else self.number(req, v, f"{key}[{i}]", value=is_value)
                          for i, v in enumerate(src)]
        return d

    # ---- search --------------------------------------------------------------------------
