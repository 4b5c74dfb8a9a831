"""mavgame: planning with language models in board games.

Games, search and the MAV text format live in the C core (``mavgame._core``); this package
wraps them in Python classes in the style of python-chess and OpenSpiel.
"""
from . import _core
from ._core import State
from .games.chess import Chess, Chess960, ChessFamily

__version__ = "0.1.0"

__all__ = ["State", "games", "__version__"]


def games() -> list:
    """Names of the games in the C registry."""
    return _core.games()
