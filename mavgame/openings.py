"""Deprecated alias of :mod:`mavgame.play.openings` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import openings as _module

warnings.warn("mavgame.openings is deprecated: import mavgame.play.openings", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
