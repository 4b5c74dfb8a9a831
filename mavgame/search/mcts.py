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
  probabilities with temperature tau + eps / ``|legal|``.  ``tau`` may be a number or a schedule
  ``[(from_ply, tau), ...]`` over the move number (the first step from ply 0).
  ``prior="policy"`` uses the evaluator's ``policy`` instead of its values.
- ``batch_size`` (B), ``timeout`` (seconds, None: wait for every result; what arrives late depends on the
  evaluator: docs/mcts.md, "Where the timeout applies"), ``n_max``, ``n_min``:
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

Evaluators (what they receive and may return: :mod:`mavgame.search.evaluator_io`): ``"playout"``, ``"constant"``,
``"c4_solver"``, a capsule, an object with a ``capsule()`` method, or a Python callable ``fn(requests) -> outputs``
(:mod:`mavgame.search.evaluators` has ready ones).  An unknown evaluator name, or ``num_simulations`` < 1, is
refused when the MCTS is made.  Results: :mod:`mavgame.search.results`; the parameters' checks:
:mod:`mavgame.search.config`; the playout UCT baseline: :mod:`mavgame.search.uct`.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .. import _core
from .config import DEFAULTS as _DEFAULTS
from .config import INT32_MAX, check_params, check_seconds, integer_param
from .evaluator_io import OutputReader, check_evaluator, resolve_evaluator
from .results import SearchError, SearchResult

__all__ = ["MCTS"]


def _same_start(a, b) -> bool:
    """Whether game states ``a`` and ``b`` start from the same position (their positions with every pushed move
    taken back are equal: ``==``, which compares the game, the board size, the flags, the text and the hash)."""
    if a.ply == 0 and b.ply == 0:
        return a == b
    sa = a.copy(stack=True)
    while sa.ply:
        sa.pop()
    sb = b.copy(stack=True)
    while sb.ply:
        sb.pop()
    return sa == sb


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
        p = check_params(num_simulations=num_simulations, batch_size=batch_size, timeout=timeout, k=k, eps=eps,
                         tau=tau, n_max=n_max, n_min=n_min, virtual_count=virtual_count, virtual_loss=virtual_loss,
                         c_puct=c_puct, c_base=c_base, c_init=c_init, prior=prior, fpu=fpu, invalid=invalid,
                         seed=seed, state_tracking=state_tracking, board_size=board_size, flags=flags,
                         playouts=playouts, max_plies=max_plies, value_range=value_range, max_seconds=max_seconds)
        check_evaluator(evaluator, game)   # an unknown name is refused now, not at the first search
        self.value_range = p.value_range
        self.max_seconds = p.max_seconds
        self.num_simulations = p.num_simulations
        self.state_tracking = bool(state_tracking)
        self.reuse_tree = bool(reuse_tree)
        self.timeout = p.timeout
        self.mav_spec = mav_spec
        self.game = game
        self._cfg = p.cfg
        self.params = p.params
        self._reader = OutputReader(p.value_range, self.state_tracking)
        self._evaluator_spec = evaluator
        self._playouts = p.playouts
        self._evaluator = None
        self._tree = None
        self._tree_game = None
        self._root = None          # engine mode: the root State (with its history)
        self._root_hist = None
        self._root_key = None      # state tracking: (text, to_move) of the root
        self.last_result: Optional[SearchResult] = None

    # ---- search --------------------------------------------------------------------------

    def _ensure_tree(self, game: Optional[str]):
        if self._tree is None or self._tree_game != game:
            self._tree = _core.MCTSTree(game, **self._cfg)
            self._tree_game = game
            self._root = self._root_hist = self._root_key = None
            self._evaluator = None
        if self._evaluator is None:
            self._evaluator = resolve_evaluator(self._evaluator_spec, game, self._playouts, self, self._reader)

    def reset(self) -> None:
        """Forget the tree (the next search starts afresh)."""
        self._root = self._root_hist = self._root_key = None
        self._tree = None

    def _place_root_engine(self, state) -> None:
        """The tree's root at ``state``: the previous search's subtree where ``state`` continues its game (with
        ``reuse_tree``), else a new tree."""
        t = self._tree
        if self.reuse_tree and self._root is not None:
            hist = state.history().tolist()
            old = self._root_hist
            if old is None:
                old = self._root_hist = self._root.history().tolist()
            # the cheap tests first: the previous root's moves begin this game's, then the same start position
            if len(hist) >= len(old) and hist[:len(old)] == old and _same_start(state, self._root):
                for a in hist[len(old):]:
                    t.advance(a)
                self._root = state.copy()
                self._root_hist = hist
                return
        t.set_root(state)   # at ply len(state.history())
        self._root = state.copy()
        self._root_hist = None   # made when a reuse test needs it

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
        if (self._tree is not None and ply is None and not self.state_tracking and self._evaluator is not None
                and self._tree_game == state.game):
            # engine mode with its tree and evaluator made: the part of _prepare this needs, in this frame (a tiny
            # search's cost is mostly Python's; issue 52, bench/call_overhead.py)
            budget = self.max_seconds if max_seconds is None else check_seconds(max_seconds)
            n = self.num_simulations if num_simulations is None else integer_param("num_simulations",
                                                                                   num_simulations, 0, INT32_MAX)
            self._place_root_engine(state)
            timed_out = self._tree.search(self._evaluator, n, self.mav_spec, budget)
            self.last_result = res = self._tree.snapshot(self._root, timed_out, 64, SearchResult)   # as _finish
            if res._snapshot.best_edge < 0:
                self._check_found(state, n, res)
            return res
        n, budget = self._prepare(state, num_simulations, to_move=to_move, ply=ply, played=played,
                                  max_seconds=max_seconds)
        timed_out = self._tree.search(self._evaluator, n, self.mav_spec, budget)
        return self._finish(state, n, timed_out)

    def _prepare(self, state, num_simulations: Optional[int] = None, *, to_move: Optional[int] = None,
                 ply: Optional[int] = None, played: Optional[Sequence[str]] = None,
                 max_seconds: Optional[float] = None):
        """The tree and evaluator of a search from ``state``, its root placed (arguments as for :meth:`search`):
        (simulations, time budget). :mod:`mavgame.search.multi` runs the search between this and :meth:`_finish`."""
        budget = self.max_seconds if max_seconds is None else check_seconds(max_seconds)
        n = self.num_simulations if num_simulations is None else integer_param("num_simulations", num_simulations, 0,
                                                                                 INT32_MAX)
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
                    hist = state.history().tolist()
                    if self._root_hist is None:
                        self._root_hist = self._root.history().tolist()
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
                self._root_hist = state.history().tolist()
        else:
            self._ensure_tree(state.game)
            self._place_root_engine(state)
            if ply is not None:
                self._tree.set_root(state, ply)
        return n, budget

    def _finish(self, state, n: int, timed_out: bool) -> SearchResult:
        """The result of the search :meth:`_prepare` set up (SearchError if it found no move): a copy of the tree's
        root taken in one C call (``MCTSTree.snapshot``, which also makes the result object), from which the
        :class:`SearchResult` builds each field when it is first read (engine mode: the moves are written in the
        root position ``self._root``, which is therefore never changed in place, only replaced)."""
        self.last_result = res = self._tree.snapshot(None if self.state_tracking else self._root, timed_out, 64,
                                                     SearchResult)
        if res._snapshot.best_edge < 0:   # best_move is None exactly then
            self._check_found(state, n, res)
        return res

    @staticmethod
    def _check_found(state, n: int, res: SearchResult) -> None:
        """Raise SearchError for a search with no best move (``res.best_move`` is None) that should have found
        one: it ran simulations from a position that is not terminal, none of which reached a terminal state."""
        if n > 0 and (isinstance(state, str) or not state.is_terminal()):
            st = res.stats
            if not st.get("terminal_visits", 0):
                where = state if isinstance(state, str) else state.text()
                raise SearchError(f"search from {where!r} found no move: the evaluator gave no usable output for "
                                  f"the root in {st.get('simulations', n)} simulation(s) ({st.get('dropped', 0)} "
                                  f"dropped or timed out, {st.get('invalid', 0)} invalid or hallucinated)", st)

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
        root = self._root.copy()   # a new object: the last result writes its moves in the old one
        root.push(int(move))
        self._root = root
        self._root_hist = root.history().tolist()

    def check(self) -> None:
        """Check the tree invariants (ValueError on a violation)."""
        if self._tree is not None:
            self._tree.check()

    @property
    def tree(self):
        """The underlying ``_core.MCTSTree`` (None before the first search)."""
        return self._tree
