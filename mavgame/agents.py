"""Deprecated alias of :mod:`mavgame.play.agents` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.play import agents as _module

warnings.warn("mavgame.agents is deprecated: import mavgame.play.agents", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
