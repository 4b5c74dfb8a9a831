"""mavgame: planning with language models in board games.

Games, search and the MAV text format live in the C core (``mavgame._core``); this package
wraps them in Python classes in the style of python-chess and OpenSpiel.
"""
from . import _core
from ._core import State
from .games.chess import Chess, Chess960, ChessFamily
from .games.connect_four import ConnectFour
from .games.gardner import Gardner
from .games.hex import Hex
from .games.tictactoe import TicTacToe
from .errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError
from .games.base import Outcome, Termination
from . import mav
from .search.mcts import MCTS

__version__ = "0.1.0"

__all__ = [
    "State", "Chess", "Chess960", "ChessFamily", "Gardner", "ConnectFour", "Hex", "TicTacToe", "MCTS", "MAVModel",
    "game_names", "__version__", "IllegalMoveError", "InvalidMoveError", "AmbiguousMoveError", "Outcome",
    "Termination",
]


def __getattr__(name: str):
    # The model needs the optional PyTorch/NumPy inference code: load it on first use.
    if name == "MAVModel":
        from .model import MAVModel

        return MAVModel
    raise AttributeError(f"module 'mavgame' has no attribute {name!r}")


# The shipped Connect Four opening book (if the package has one) serves c4_solve's default solver.
from .games.c4_book import install_shipped_book as _install_book  # noqa: E402

_install_book()


def game_names() -> list:
    """Names of the games in the C registry (``mavgame.State(name)`` builds any of them)."""
    return _core.games()
