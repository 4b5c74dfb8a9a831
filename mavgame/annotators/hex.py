"""The Hex annotator of the MAV data pipeline (``make_annotator("hex")`` in :mod:`mavgame.annotators`, through
the game registry's ``GameInfo.annotator``).

``hex_annotator(options)`` returns ``annotate(state) -> ({move: value}, best move)`` for a Hex state of
any size; values are win probabilities of the player making the move (the MAV convention).

- Exact region: on boards of at most ``solve_max_cells`` cells (and at most 7x7, the solver's limit) the
  exact solver (``mavgame._core.hex_solve``) runs first with a budget of ``solver_max_nodes`` positions.
  A proven winning move gets 1.0, a proven losing one 0.0. When the solve completes, that is the whole
  annotation; best = a winning move (one that connects at once if there is one, else the one nearest the
  centre of the board, ties to the lowest action), or, in a lost position, the losing move nearest the
  centre.
- Beyond it (a larger board, or a solve that ran out of its budget): UCT with uniformly random playouts
  (``mavgame._core.playout_mcts``, ``sims`` simulations): a move's value is its mean playout score from
  the root player's view, best = the most visited move. Moves the budgeted solve proved keep their
  exact 1.0 / 0.0 (and a proven win is then the best move; a most-visited move proven lost gives way to
  the most visited move not proven lost). ``exact_only`` leaves such positions out instead (None, like the
  Connect Four annotator over its budget).

The search seed is derived from the position text and the ``seed`` option, so a position gets the same
annotation whichever worker meets it, in whatever order: generated data is identical for any worker
count. Use node/simulation budgets (there is no time budget) for that reason.

Options (a dict): ``solve_max_cells`` (default 49; 0 turns the solver off), ``solver_max_nodes``
(default 1000000, about a second at most; 0 = no limit), ``sims`` (default 10000), ``c`` (UCT
exploration, default sqrt 2), ``seed`` (default 0), ``exact_only`` (default False).
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, Callable, Dict, List, Optional, Tuple

MAX_SOLVER_SIZE = 7     # MG_HEX_SOLVER_MAX_N in csrc/search/hex_solver.h

from . import register_annotator  # noqa: E402

DEFAULT_OPTIONS: Dict[str, Any] = {"solve_max_cells": 49, "solver_max_nodes": 1_000_000, "sims": 10_000}

_KNOWN = {"solve_max_cells", "solver_max_nodes", "sims", "c", "seed", "exact_only"}


def _int_option(options: Dict[str, Any], name: str, default: int, minimum: int) -> int:
    v = options.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or int(v) < minimum:
        raise ValueError(f"hex annotator option {name} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def position_seed(text: str, seed: int = 0) -> int:
    """The MCTS seed of a position: a 63-bit hash of (seed, state text)."""
    h = hashlib.blake2b(f"{int(seed)}\x00{text}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(h, "little") & ((1 << 63) - 1)


def _centre_distance(n: int, action: int) -> int:
    """Twice the hex distance of a cell from the board's centre (the swap move counts as farthest)."""
    if action >= n * n:
        return 4 * n
    r, c = divmod(action, n)
    dq, dr = 2 * c - (n - 1), 2 * r - (n - 1)
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def _pick_exact(state, n: int, actions: List[int]) -> int:
    """Among moves of equal exact value: one that ends the game, else the one nearest the centre."""
    st = state.copy()
    for a in actions:
        st.push(a)
        done = st.is_terminal()
        st.pop()
        if done:
            return a
    return min(actions, key=lambda a: (_centre_distance(n, a), a))


def hex_annotator(options: Optional[Dict[str, Any]] = None) -> Callable:
    """annotate(state) -> ({move: win probability of the mover}, best move), or None (``exact_only`` and
    the solve did not complete). See the module documentation for the options."""
    from .. import _core
    options = dict(options or {})
    unknown = sorted(set(options) - _KNOWN)
    if unknown:
        raise ValueError(f"unknown hex annotator option(s) {', '.join(unknown)} "
                         f"(have {', '.join(sorted(_KNOWN))})")
    solve_cells = _int_option(options, "solve_max_cells", DEFAULT_OPTIONS["solve_max_cells"], 0)
    max_nodes = _int_option(options, "solver_max_nodes", DEFAULT_OPTIONS["solver_max_nodes"], 0)
    sims = _int_option(options, "sims", DEFAULT_OPTIONS["sims"], 1)
    seed = _int_option(options, "seed", 0, 0)
    c = options.get("c", math.sqrt(2.0))
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not c >= 0 or math.isinf(c):
        raise ValueError(f"hex annotator option c must be a finite number >= 0, got {c!r}")
    c = float(c)
    exact_only = options.get("exact_only", False)
    if not isinstance(exact_only, bool):
        raise ValueError(f"hex annotator option exact_only must be true or false, got {exact_only!r}")

    def annotate(state) -> Optional[Tuple[Dict[str, float], str]]:
        if state.game != "hex":
            raise ValueError(f"the hex annotator got a {state.game!r} state")
        if state.is_terminal():
            raise ValueError(f"the hex annotator got a finished game: {state.text()!r}")
        text = state.text()
        n = text.split(" ", 1)[0].count("/") + 1   # the size (board_size is 0 for a default-size state)
        actions = [int(a) for a in state.legal_actions()]
        proven: Dict[int, int] = {}
        if n <= MAX_SOLVER_SIZE and n * n <= solve_cells:
            _, arr, complete = _core.hex_solve(state, max_nodes=max_nodes)
            proven = {a: int(arr[a]) for a in actions if arr[a] != 0}
            if complete:
                wins = [a for a in actions if proven[a] > 0]
                best = _pick_exact(state, n, wins or actions)
                values = {state.action_to_str(a): 1.0 if proven[a] > 0 else 0.0 for a in actions}
                return values, state.action_to_str(best)
        if exact_only:
            return None
        r = _core.playout_mcts(state, sims, seed=position_seed(text, seed), c=c, fast_playout=True)
        root = min(1.0, max(0.0, float(r["value"])))
        values: Dict[str, float] = {}
        q = {int(a): float(v) for a, v in zip(r["actions"], r["q"])}
        visits = {int(a): int(v) for a, v in zip(r["actions"], r["visits"])}
        for a in actions:
            if a in proven:
                v = 1.0 if proven[a] > 0 else 0.0
            else:
                v = q[a]
                v = root if math.isnan(v) else min(1.0, max(0.0, v))
            values[state.action_to_str(a)] = v
        wins = [a for a in actions if proven.get(a, 0) > 0]
        if wins:
            best = _pick_exact(state, n, wins)
        else:
            best = int(r["best_action"])
            if proven.get(best, 0) < 0:
                alive = [a for a in actions if proven.get(a, 0) >= 0]
                if alive:  # the most visited move not proven lost (ties: higher value, then lower action)
                    best = min(alive, key=lambda a: (-visits[a], -values[state.action_to_str(a)], a))
        return values, state.action_to_str(best)

    return annotate


__all__ = ["hex_annotator", "position_seed", "DEFAULT_OPTIONS", "MAX_SOLVER_SIZE"]


# the games this annotator serves, with their default per-position budgets
register_annotator("hex", hex_annotator, DEFAULT_OPTIONS)
