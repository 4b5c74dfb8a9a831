"""Deprecated alias of :mod:`mavgame.mav.search_trace` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.mav import search_trace as _module

warnings.warn("mavgame.mav_search is deprecated: import mavgame.mav.search_trace", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
