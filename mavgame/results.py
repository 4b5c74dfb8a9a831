"""Deprecated alias of :mod:`mavgame.play.results` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import results as _module

warnings.warn("mavgame.results is deprecated: import mavgame.play.results", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
