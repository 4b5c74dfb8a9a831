"""Deprecated alias of :mod:`mavgame.engines.annotate` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.engines import annotate as _module

warnings.warn("mavgame.annotate is deprecated: import mavgame.engines.annotate", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
