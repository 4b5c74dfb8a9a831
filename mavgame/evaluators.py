"""Deprecated alias of :mod:`mavgame.search.evaluators` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.search import evaluators as _module

warnings.warn("mavgame.evaluators is deprecated: import mavgame.search.evaluators", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
