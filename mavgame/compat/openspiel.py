"""mavgame's games as OpenSpiel games: OpenSpiel's algorithms on mavgame's C rules.

Importing this module registers every game with OpenSpiel (``pyspiel.register_game``, as OpenSpiel's own
Python games do); :func:`register` does it again harmlessly::

    import pyspiel
    import mavgame.compat.openspiel                      # registers the mavgame_* games
    game = pyspiel.load_game("mavgame_connect_four")     # or "mavgame_hex(board_size=7,swap=True)"
    state = game.new_initial_state()
    state.apply_action(3)                                # the centre column

The games and their parameters:

==========================  =============================================================================
``mavgame_tictactoe``       no parameters
``mavgame_connect_four``    no parameters
``mavgame_hex``             ``board_size`` (int, 11, 1..19), ``swap`` (bool, False: the swap rule)
``mavgame_gardner``         ``bishop_promotion`` (bool, False)
``mavgame_chess``           no parameters
``mavgame_chess960``        ``position`` (int, 518: the Scharnagl number of the start position, 0..959)
==========================  =============================================================================

Each game is sequential, deterministic (no chance nodes: a Chess960 start position is a parameter, not
OpenSpiel's chance node), perfect-information and zero-sum; the reward comes at the end only:
``returns()`` is ``[1, -1]``, ``[-1, 1]`` or ``[0, 0]`` (also before the end).  A state wraps one
``mavgame._core.State``: legal actions, moves, the end of the game and the observation planes are the C
core's (one C call each, no Python loop over cells).  ``state.mavgame_state()`` gives a copy of it, for
mavgame's own tools (solvers, MAV text).

Where these games differ from OpenSpiel's own on purpose (docs/compat.md):

- **Action ids are mavgame's** (``State.legal_actions()``), so policies and data move between the two
  unchanged.  Connect Four (the column 0..6) and Hex (``row * board_size + column``, the swap action
  ``board_size**2``) number them as OpenSpiel does.  Tic-tac-toe's action is ``rank * 3 + file`` from
  the bottom-left corner ``a1`` (OpenSpiel's ``tic_tac_toe``: row-major from the top-left).  Chess and
  Chess960 use ``from + 64 * to + 4096 * promotion`` (squares a1=0..h8=63; promotion 0 none, 1 knight,
  2 bishop, 3 rook, 4 queen; castling is the king moving onto its rook's square), 20,480 ids, where
  OpenSpiel's chess uses its 4,674 AlphaZero-style ids; Gardner the same on 25 squares (3,125 ids).
- **Observations are mavgame's C planes** ``(planes, rows, cols)`` in absolute colours, the top row
  first, with a side-to-move plane (docs/binding.md, "Observation tensors"): Connect Four
  ``(4, 6, 7)`` where OpenSpiel's has ``(3, 6, 7)`` with the bottom row first; chess ``(18, 8, 8)``
  where OpenSpiel's has 20 planes.
- **Move strings are mavgame's**: UCI for the chess games (OpenSpiel writes SAN), ``"1".."7"`` for the
  Connect Four columns, ``a1``-style cells for tic-tac-toe and Hex.  ``str(state)`` is the game's own
  text (FEN for the chess games), as is the observation string.
- **Draws in chess are automatic**: the fifty-move rule and threefold repetition end the game (OpenSpiel's
  chess does the same), so every game ends within ``max_game_length()``.

An illegal action raises mavgame's :class:`mavgame.IllegalMoveError` (a ValueError) naming the action and
the position; the state is unchanged.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

import numpy as np
import pyspiel

from .. import _core
from . import _games

__all__ = ["register", "game_names", "load_game", "MavgameGame", "MavgameState", "BoardObserver", "GAME_CLASSES",
           "PREFIX"]

PREFIX = "mavgame_"

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_RETURNS = {0: [0.0, 0.0], 1: [1.0, -1.0], 2: [-1.0, 1.0], 3: [0.0, 0.0]}   # enum mg_result


def _game_type(g: _games.CompatGame) -> "pyspiel.GameType":
    return pyspiel.GameType(
        short_name=PREFIX + g.name,
        long_name=f"mavgame {g.long_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(g.defaults))


class MavgameGame(pyspiel.Game):
    """An OpenSpiel game over one mavgame game (made by ``pyspiel.load_game("mavgame_<game>")``).

    One subclass per game (``GAME_CLASSES["connect_four"]``) is the factory registered with OpenSpiel, as
    OpenSpiel's own Python games register their class."""

    _compat: _games.CompatGame   # set by each game's subclass

    def __init__(self, params: Optional[Mapping[str, Any]] = None):
        compat = self._compat
        p = compat.params(params)
        self._start = compat.state(p)
        self._shape = tuple(self._start.observation_shape)
        super().__init__(_game_type(compat), pyspiel.GameInfo(
            num_distinct_actions=compat.actions(p), max_chance_outcomes=0, num_players=2,
            min_utility=-1.0, max_utility=1.0, utility_sum=0.0, max_game_length=compat.max_length(p)), p)

    @property
    def mavgame_name(self) -> str:
        """The core's game name (``"connect_four"``)."""
        return self._compat.name

    def new_initial_state(self) -> "MavgameState":
        """The start position."""
        return MavgameState(self, self._start.copy())

    def state_from(self, position) -> "MavgameState":
        """A state at a mavgame position: a ``mavgame.State`` of this game or its text (FEN for chess).  The
        position only, as a FEN start in OpenSpiel's chess: OpenSpiel's history starts there (empty), and the
        moves before it do not count for threefold repetition."""
        if isinstance(position, str):
            s = _core.State(self._start.game, position, self._start.board_size, self._start.flags)
        elif isinstance(position, _core.State):
            if (position.game, position.board_size, position.flags) != (
                    self._start.game, self._start.board_size, self._start.flags):
                raise ValueError(f"{position!r} is not a position of {self}")
            s = _core.State(position.game, position.text(), position.board_size, position.flags)
        else:
            raise TypeError(f"state_from takes a mavgame State or a text, not {type(position).__name__}")
        return MavgameState(self, s)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer of the C planes (observation tensor and string); for perfect-recall observation
        types, OpenSpiel's public-info observer (the action history)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return BoardObserver(self._shape, params)
        from open_spiel.python.observation import IIGObserverForPublicInfoGame
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class MavgameState(pyspiel.State):
    """An OpenSpiel state wrapping one ``mavgame._core.State`` (the C position and its move history)."""

    def __init__(self, game: MavgameGame, core: "_core.State"):
        super().__init__(game)
        self._s = core

    # -- the API every perfect-information sequential OpenSpiel game implements
    def current_player(self) -> int:
        s = self._s
        return _TERMINAL if s.is_terminal() else s.to_move

    def _legal_actions(self, player: int) -> List[int]:
        s = self._s
        if s.is_terminal() or player != s.to_move:
            return []
        a = s.legal_actions()
        a.sort()                    # OpenSpiel's contract: ascending (the C order is move generation's)
        return a.tolist()

    def _apply_action(self, action: int) -> None:
        self._s.push(int(action))   # IllegalMoveError (a ValueError) names the action and the position

    def _action_to_string(self, player: int, action: int) -> str:
        return self._s.action_to_str(int(action))

    def is_terminal(self) -> bool:
        return self._s.is_terminal()

    def returns(self) -> List[float]:
        return list(_RETURNS[_core.State.outcome(self._s)[0]])

    def __str__(self) -> str:
        return self._s.text()

    # -- mavgame
    def mavgame_state(self) -> "_core.State":
        """A copy of the wrapped mavgame state (with its move history)."""
        return self._s.copy()


class BoardObserver:
    """OpenSpiel's PyObserver over mavgame's observation planes: ``tensor`` (flat float32) and ``dict``
    (``{"observation": the (planes, rows, cols) view}``), filled from the C core in one call."""

    def __init__(self, shape, params=None):
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self._planes = self.tensor.reshape(shape)
        self.dict = {"observation": self._planes}

    def set_from(self, state: MavgameState, player: int) -> None:
        del player   # perfect information, absolute colours: the same for both players
        np.copyto(self._planes, state._s.observation_tensor())

    def string_from(self, state: MavgameState, player: int) -> str:
        del player
        return state._s.text()


# One class per game: the factory registered with OpenSpiel is the class, as in OpenSpiel's own Python
# games.  (OpenSpiel's registry outlives the interpreter; a function factory, a closure or a lambda, freed at
# that point crashes the process on exit, a class does not.)
class TicTacToeGame(MavgameGame):
    """OpenSpiel's ``mavgame_tictactoe``."""
    _compat = _games.get("tictactoe")


class ConnectFourGame(MavgameGame):
    """OpenSpiel's ``mavgame_connect_four``."""
    _compat = _games.get("connect_four")


class HexGame(MavgameGame):
    """OpenSpiel's ``mavgame_hex(board_size=11,swap=False)``."""
    _compat = _games.get("hex")


class GardnerGame(MavgameGame):
    """OpenSpiel's ``mavgame_gardner(bishop_promotion=False)``."""
    _compat = _games.get("gardner")


class ChessGame(MavgameGame):
    """OpenSpiel's ``mavgame_chess``."""
    _compat = _games.get("chess")


class Chess960Game(MavgameGame):
    """OpenSpiel's ``mavgame_chess960(position=518)``."""
    _compat = _games.get("chess960")


GAME_CLASSES: Dict[str, type] = {c._compat.name: c for c in (
    TicTacToeGame, ConnectFourGame, HexGame, GardnerGame, ChessGame, Chess960Game)}
_registered: Dict[str, "pyspiel.GameType"] = {}


def register() -> List[str]:
    """Register every mavgame game with OpenSpiel (done on import; calling it again does nothing).
    Returns the OpenSpiel names, ``["mavgame_tictactoe", ...]``."""
    already = set(pyspiel.registered_names())
    for name in _games.names():
        g = _games.get(name)
        short = PREFIX + name
        if short not in _registered and short not in already:
            gt = _game_type(g)
            pyspiel.register_game(gt, GAME_CLASSES[name])
            _registered[short] = gt
    return game_names()


def game_names() -> List[str]:
    """The OpenSpiel names of mavgame's games."""
    return [PREFIX + n for n in _games.names()]


def load_game(game: str, **params: Any) -> MavgameGame:
    """``pyspiel.load_game`` for a mavgame game by its mavgame or OpenSpiel name, with parameters as
    keywords: ``load_game("hex", board_size=7)``."""
    register()
    name = game[len(PREFIX):] if game.startswith(PREFIX) else game
    _games.get(name)   # a clear error for an unknown game
    return pyspiel.load_game(PREFIX + name, params)


register()
