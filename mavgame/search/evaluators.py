"""Evaluators for :class:`mavgame.search.mcts.MCTS` written in Python.

- :class:`ThreadPoolEvaluator`: wraps a per-request function (e.g. a call to a model server) so that
  a batch is evaluated concurrently and results come back in arrival order; results later than the
  search's ``timeout`` are dropped by the search (the asynchronous MCTS of the MAV paper).
- :class:`UCIEvaluator`: a UCI chess engine (Stockfish) giving the values of all legal moves
  (MultiPV), as win probabilities with the MAV formula; works in engine mode and, as an oracle that
  also predicts the next state exactly, in state-tracking mode.
- :class:`StateOracle`: any per-state value function turned into a state-tracking evaluator
  (predicts child states with the game engine); useful as a reference and in tests.

An evaluator is a callable ``fn(requests) -> outputs`` (optionally ``fn(requests, timeout=None)``);
see :mod:`mavgame.search.mcts` for the request and output forms.
"""
from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _core

__all__ = ["ThreadPoolEvaluator", "UCIEvaluator", "StateOracle"]


class ThreadPoolEvaluator:
    """Evaluate the requests of a batch concurrently with ``fn(request) -> output``.

    Yields ``(index, output)`` in completion order; with a timeout, stops waiting at the deadline
    (the search drops what has not arrived and removes its virtual counts).  An exception in ``fn``
    propagates and aborts the search.
    """

    def __init__(self, fn: Callable[[Any], Any], max_workers: int = 8):
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, not {max_workers}")
        self.fn = fn
        self.pool = cf.ThreadPoolExecutor(max_workers=max_workers)

    def __call__(self, requests: Sequence[Any], timeout: Optional[float] = None) -> Iterator[Tuple[int, Any]]:
        futures = {self.pool.submit(self.fn, r): i for i, r in enumerate(requests)}
        try:
            for f in cf.as_completed(futures, timeout=timeout):
                yield futures[f], f.result()
        except cf.TimeoutError:
            return
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _child_text(game: str, parent_text: str, move: str) -> Tuple[Optional[str], Optional[Any]]:
    """The engine's child state for a predicted parent text and a move; (None, None) if either is bad."""
    try:
        s = _core.State(game, parent_text)
        s.push(move)
    except ValueError:
        return None, None
    return s.text(), s


class StateOracle:
    """A state-tracking (and engine-mode) evaluator from a value function.

    ``values_fn(state) -> {move: win probability}`` gives the values of the legal moves of a
    non-terminal game state (for the player to move).  In state-tracking mode the child state is
    computed with the game engine from the request's parent text and move (an exact world model);
    an unreadable parent text or an illegal move makes the answer invalid.
    """

    def __init__(self, game: str, values_fn: Callable[[Any], Dict[str, float]]):
        self.game = game
        self.values_fn = values_fn

    def _answer(self, state) -> Dict[str, Any]:
        res = _core.State.result(state)   # the search's terminal rule (for a game class too)
        if res != "*":
            return {"state": state.text(), "result": res}
        return {"state": state.text(), "values": self.values_fn(state)}

    def __call__(self, requests: Sequence[Any]) -> List[Any]:
        out: List[Any] = []
        for r in requests:
            if r.parent_text is None and r.move is None and r.text is not None and r.legal_actions is None:
                try:
                    st = _core.State(self.game, r.text)
                except ValueError:
                    out.append(False)
                    continue
            elif r.legal_actions is not None:  # engine mode
                st = r.state
            else:
                _, st = _child_text(self.game, r.parent_text, r.move)
                if st is None:
                    out.append(False)
                    continue
            out.append(self._answer(st))
        return out


class UCIEvaluator:
    """Values of all legal moves of a chess / Chess960 position from a UCI engine (Stockfish).

    Each request is analysed with MultiPV = the number of legal moves and the given limit
    (``nodes``, ``depth`` or ``movetime`` in ms); a move's value is the engine's score after it,
    converted with the MAV formula (mates: 1 or 0).  ``engine`` is a :class:`mavgame.engines.uci.UCIEngine`
    or a path (default: Stockfish found on the PATH or in /usr/games).  Works in engine mode and in
    state-tracking mode (as an exact oracle: child states come from the chess engine).
    """

    def __init__(self, engine: Any = None, *, nodes: Optional[int] = 2000, depth: Optional[int] = None,
                 movetime: Optional[int] = None, options: Optional[Dict[str, Any]] = None,
                 game: str = "chess"):
        from ..engines import uci

        if engine is None or isinstance(engine, str):
            path = engine or uci.find_stockfish()
            if path is None:
                raise FileNotFoundError("no UCI engine given and Stockfish not found (apt install stockfish)")
            opts = {"Threads": 1, "Hash": 16}
            opts.update(options or {})
            from ..games import registry
            if registry.get(game).uci_chess960:
                opts.setdefault("UCI_Chess960", True)
            engine = uci.UCIEngine(path, options=opts)
            self._owned = True
        else:
            self._owned = False
        self.engine = engine
        self.game = game
        self.limits = {k: v for k, v in (("nodes", nodes), ("depth", depth), ("movetime", movetime)) if v}
        if not self.limits:
            self.limits = {"nodes": 2000}

    def values(self, state) -> Dict[str, float]:
        """{move: win probability for the side to move} over all legal moves of ``state``.

        One MultiPV search values most moves; with a small limit the engine may stop before it
        has a line for every move, so each move still missing is valued by searching the position
        after it (a finished game: 1 for the mating move, 0.5 for a draw)."""
        moves = list(state.legal_moves)
        if not moves:
            return {}
        fen = state.text()
        lines = self.engine.analyse(fen, multipv=min(len(moves), 500), **self.limits)
        legal = set(moves)
        out: Dict[str, float] = {}
        for ln in lines:
            if ln.move in legal and ln.score is not None and ln.move not in out:
                out[ln.move] = ln.score.win_prob()
        for mv in moves:
            if mv in out:
                continue
            child = state.copy()
            child.push(mv)
            res = _core.State.result(child)
            if res != "*":
                out[mv] = 0.5 if res == "1/2-1/2" else 1.0  # only the mover can have won
                continue
            reply = self.engine.analyse(fen, moves=[mv], multipv=1, **self.limits)
            if reply and reply[0].score is not None:
                out[mv] = 1.0 - reply[0].score.win_prob()
        return out

    def __call__(self, requests: Sequence[Any]) -> List[Any]:
        oracle = StateOracle(self.game, self.values)
        return oracle(requests)

    def close(self) -> None:
        if self._owned:
            self.engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
