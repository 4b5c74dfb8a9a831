"""Deprecated alias of :mod:`mavgame.play.elo` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import elo as _module

warnings.warn("mavgame.elo is deprecated: import mavgame.play.elo", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
