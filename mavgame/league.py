"""Deprecated alias of :mod:`mavgame.play.league` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import league as _module

warnings.warn("mavgame.league is deprecated: import mavgame.play.league", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
