"""Deprecated alias of :mod:`mavgame.engines.uci` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.engines import uci as _module

warnings.warn("mavgame.uci is deprecated: import mavgame.engines.uci", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
