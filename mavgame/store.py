"""Deprecated alias of :mod:`mavgame.play.store` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import store as _module

warnings.warn("mavgame.store is deprecated: import mavgame.play.store", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
