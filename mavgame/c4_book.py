"""Deprecated alias of :mod:`mavgame.games.c4_book` (moved in the package layout of issue 11); removed after one release."""
import sys
import warnings

from mavgame.games import c4_book as _module

warnings.warn("mavgame.c4_book is deprecated: import mavgame.games.c4_book", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
