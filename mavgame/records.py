"""Deprecated alias of :mod:`mavgame.play.records` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import records as _module

warnings.warn("mavgame.records is deprecated: import mavgame.play.records", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
