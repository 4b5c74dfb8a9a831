"""The parameters of :class:`mavgame.search.mcts.MCTS`, checked by name: the core's defaults (the one copy,
from ``mg_mcts_config_default``), the names of its enums, and :func:`check_params`, which turns the
constructor's arguments into the core's configuration (``_core.MCTSTree(game, **cfg)``)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core

__all__ = ["DEFAULTS", "CheckedParams", "check_params", "check_seconds", "integer_param", "real_param"]

VIRTUAL_COUNTS = {"dynamic": 0, "static": 1, "none": 2}      # the names of the core's enum values
PRIORS = {"mav": 0, "policy": 1}
INVALID_MODES = {"loss": 0, "exclude": 1}
#: The core's configuration defaults (mg_mcts_config_default), the one copy: MCTS's signature uses them.
DEFAULTS: Dict[str, Any] = _core.mcts_defaults()
for _key, _names in (("virtual_count", VIRTUAL_COUNTS), ("prior", PRIORS), ("invalid", INVALID_MODES)):
    DEFAULTS[_key] = next(n for n, v in _names.items() if v == DEFAULTS[_key])
del _key, _names

INT32_MAX = 2 ** 31 - 1


def check_seconds(v: Optional[float]) -> float:
    """A time budget in seconds: None or 0 for none, else a finite positive number."""
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
            math.isfinite(v) and v >= 0):
        raise ValueError(f"max_seconds must be a finite number of seconds >= 0 (0 or None: no limit), not {v!r}")
    return float(v)


def integer_param(name: str, v: Any, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """An int parameter: TypeError naming it for anything but an integer (a float is not truncated),
    ValueError naming it and the value outside [lo, hi] (None: no bound here; the core checks its own)."""
    if not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(v).__name__} {v!r:.100}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in [{'' if lo is None else lo}, {'' if hi is None else hi}], "
                         f"not {v}")
    return v


def real_param(name: str, v: Any, lo: float, hi: float, *, lo_open: bool = False, hint: str = "") -> float:
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


@dataclass(frozen=True)
class CheckedParams:
    """The constructor's arguments, checked: ``cfg`` the core's configuration, ``params`` the paper's
    parameters as given (for display), and the ones the Python side keeps."""

    cfg: Dict[str, Any]
    params: Dict[str, Any]
    value_range: Tuple[float, float]
    num_simulations: int
    timeout: Optional[float]
    max_seconds: float
    playouts: Tuple[int, int, int]    # (playouts per leaf, max plies per playout, seed) of "playout"


def check_params(*, num_simulations: int, batch_size: int, timeout: Optional[float], k: int, eps: float,
                 tau: Union[float, Sequence], n_max: int, n_min: int, virtual_count: str, virtual_loss: int,
                 c_puct: Optional[float], c_base: float, c_init: float, prior: str, fpu: Optional[float],
                 invalid: str, seed: int, state_tracking: bool, board_size: int, flags: int, playouts: int,
                 max_plies: int, value_range: Sequence[float], max_seconds: Optional[float]) -> CheckedParams:
    """Every parameter of :class:`mavgame.search.mcts.MCTS` checked by name (ValueError or TypeError naming it and
    the value), then the whole configuration by the core (a tree without a game)."""
    try:
        lo, hi = (float(x) for x in value_range)
    except (TypeError, ValueError):
        raise ValueError(f"value_range must be a (low, high) pair such as (0, 1) or (-1, 1), "
                         f"not {value_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"value_range must be finite with low < high, not {value_range!r}")
    if virtual_count not in VIRTUAL_COUNTS:
        raise ValueError(f"virtual_count must be one of {sorted(VIRTUAL_COUNTS)}, not {virtual_count!r}")
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {sorted(PRIORS)}, not {prior!r}")
    if invalid not in INVALID_MODES:
        raise ValueError(f"invalid must be one of {sorted(INVALID_MODES)}, not {invalid!r}")
    # a search of no simulation returns no move: refused here rather than answered None by best_move
    # (search(state, 0) still re-roots the tree without simulating)
    num_simulations = integer_param("num_simulations", num_simulations, 1, INT32_MAX)
    if timeout is not None:
        real_param("timeout", timeout, 0.0, 1e9, lo_open=True, hint=" seconds (None: wait for every result)")
    # the float parameters: finite and in range, refused here by name (c_base 0, negative or NaN used
    # to fall through to a zero c_puct: a greedy search with NaN q values and piled visits)
    c_base = real_param("c_base", c_base, 0.0, math.inf, lo_open=True,
                        hint=" (AlphaZero's c(s); give c_puct for a constant exploration)")
    c_init = real_param("c_init", c_init, 0.0, math.inf)
    if c_puct is not None:
        c_puct = real_param("c_puct", c_puct, 0.0, math.inf)
    eps = real_param("eps", eps, 0.0, 1.0)
    if fpu is not None:
        fpu = real_param("fpu", fpu, -1.0, 1.0, hint=" (None: the lowest value the evaluator gave)")
    if isinstance(tau, (int, float, np.integer, np.floating, complex)) and not isinstance(tau, bool):
        tau = real_param("tau", tau, 0.0, math.inf, lo_open=True)
    seed = integer_param("seed", seed, 0, 2 ** 64 - 1)
    playouts = integer_param("playouts", playouts, 1, INT32_MAX)
    max_plies = integer_param("max_plies", max_plies, 0, INT32_MAX)
    max_seconds_checked = check_seconds(max_seconds)
    # the ints: integers (not truncated floats); the core checks their ranges, naming each
    cfg = dict(board_size=integer_param("board_size", board_size), flags=integer_param("flags", flags),
               state_tracking=bool(state_tracking),
               batch_size=integer_param("batch_size", batch_size), timeout=float(timeout or 0.0),
               virtual_count=VIRTUAL_COUNTS[virtual_count], n_max=integer_param("n_max", n_max),
               n_min=integer_param("n_min", n_min), virtual_loss=integer_param("virtual_loss", virtual_loss),
               c_puct=c_puct if c_puct is not None else 0.0,
               c_base=c_base if c_puct is None else 0.0, c_init=c_init,
               prior=PRIORS[prior], k=integer_param("k", k), eps=eps, tau=tau,
               fpu=float("nan") if fpu is None else fpu, seed=seed,
               invalid=INVALID_MODES[invalid])
    params = dict(k=k, eps=eps, tau=tau, batch_size=batch_size, timeout=timeout, n_max=n_max,
                  n_min=n_min, virtual_count=virtual_count, virtual_loss=virtual_loss, c_puct=c_puct,
                  c_base=c_base, c_init=c_init, prior=prior, fpu=fpu, invalid=invalid, seed=seed)
    # Validate the configuration now (a tree without a game is fine for checking).
    _core.MCTSTree(None, **{**cfg, "state_tracking": True})
    return CheckedParams(cfg=cfg, params=params, value_range=(lo, hi), num_simulations=num_simulations,
                         timeout=timeout, max_seconds=max_seconds_checked, playouts=(playouts, max_plies, seed))
