"""Deprecated alias of :mod:`mavgame.play.pgn` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import pgn as _module

warnings.warn("mavgame.pgn is deprecated: import mavgame.play.pgn", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
