"""Deprecated alias of :mod:`mavgame.search.mcts` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.search import mcts as _module

warnings.warn("mavgame.mcts is deprecated: import mavgame.search.mcts", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
