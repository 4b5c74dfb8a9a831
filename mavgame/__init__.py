"""mavgame: planning with language models in board games.

Games, search and the MAV text format live in the C core (``mavgame._core``); this package
wraps them in Python classes in the style of python-chess and OpenSpiel.  Its layers, one
subpackage each (docs/architecture.md):

- :mod:`mavgame.games`: the game classes, the game registry, the exact solvers and the Connect Four book;
- :mod:`mavgame.mav`: the MAV text format (writing, parsing, metrics, tokenizer, training examples,
  internal-search traces);
- :mod:`mavgame.search`: MCTS over the C engine and batched evaluators;
- :mod:`mavgame.engines`: UCI engines (Stockfish), their skill levels, engine annotation;
- :mod:`mavgame.play`: games between agents, leagues, results, Elo;
- :mod:`mavgame.datasets`: position sets and the training data pipeline;
- :mod:`mavgame.model`: the MAV transformer (training, export, inference; training needs PyTorch);
- :mod:`mavgame.policy`: the IDP chess policy network (needs PyTorch);
- :mod:`mavgame.agents`: the agent interface, the agent specs and their kinds (the top layer).

The public API is re-exported here (``__all__``); the play and engine names load on first use.
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
from .games import registry
from . import mav
from .search.mcts import MCTS
from .search.results import SearchError, SearchResult
from .search.uct import playout_uct

__version__ = "0.1.0"

# name -> (module, attribute): loaded on first use (PEP 562), so `import mavgame` stays light
_LAZY = {
    "MAVModel": ("mavgame.model", "MAVModel"),
    "Agent": ("mavgame.agents.base", "Agent"),
    "AgentError": ("mavgame.agents.base", "AgentError"),
    "make_agent": ("mavgame.agents.spec", "make_agent"),
    "register_agent": ("mavgame.agents.spec", "register_agent"),
    "League": ("mavgame.play.league", "League"),
    "LeagueError": ("mavgame.play.league", "LeagueError"),
    "LeagueResults": ("mavgame.play.results", "LeagueResults"),
    "GameRecord": ("mavgame.play.records", "GameRecord"),
    "Opening": ("mavgame.play.records", "Opening"),
    "Adjudicator": ("mavgame.play.adjudication", "Adjudicator"),
    "play_game": ("mavgame.play.game_loop", "play_game"),
    "match": ("mavgame.play.league", "match"),
    "fit_elo": ("mavgame.play.elo", "fit_elo"),
    "UCIEngine": ("mavgame.engines.uci", "UCIEngine"),
    "EngineError": ("mavgame.engines.uci_protocol", "EngineError"),
}

__all__ = [
    "State", "Chess", "Chess960", "ChessFamily", "Gardner", "ConnectFour", "Hex", "TicTacToe", "registry",
    "game_names", "Outcome", "Termination", "IllegalMoveError", "InvalidMoveError", "AmbiguousMoveError",
    "mav", "MCTS", "SearchResult", "SearchError", "playout_uct", *_LAZY, "__version__",
]


def __getattr__(name: str):
    # The model needs the optional PyTorch inference code, the league SQLite and worker processes: each
    # loads on first use.
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mavgame' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# c4_solve's default solver, with the shipped Connect Four opening book (if the package has one), is made
# by the first solve that needs it: importing mavgame neither reads the book nor allocates the solver's table.
from .games.connect_four import install_lazy_default_solver as _install_lazy_default_solver  # noqa: E402

_install_lazy_default_solver()


def game_names() -> list:
    """Names of the games in the C registry (``mavgame.State(name)`` builds any of them)."""
    return _core.games()
