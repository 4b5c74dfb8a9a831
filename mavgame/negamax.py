"""Deprecated alias of :mod:`mavgame.games.negamax` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.games import negamax as _module

warnings.warn("mavgame.negamax is deprecated: import mavgame.games.negamax", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
