"""Deprecated alias of :mod:`mavgame.play.distributed` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import distributed as _module

warnings.warn("mavgame.distributed is deprecated: import mavgame.play.distributed", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
