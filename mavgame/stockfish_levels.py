"""Deprecated alias of :mod:`mavgame.engines.stockfish_levels` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.engines import stockfish_levels as _module

warnings.warn("mavgame.stockfish_levels is deprecated: import mavgame.engines.stockfish_levels", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
