"""The games the adapters of :mod:`mavgame.compat` offer, their parameters and their core states.

One :class:`CompatGame` per game of mavgame's C core.  Everything the adapters report about a game comes
from here, so OpenSpiel, PettingZoo and Gymnasium see the same action ids (mavgame's own), the same
observation planes (the C core's ``State.observation_tensor()``) and the same rules.

Parameters (with their defaults): ``hex``: ``board_size=11`` (1..19), ``swap=False`` (the swap rule:
the second player's first move may be action ``board_size**2``, "swap"); ``gardner``:
``bishop_promotion=False``; ``chess960``: ``position=518`` (the Scharnagl number 0..959 of the start
position; 518 is the standard array).  The other games take none.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .. import _core

__all__ = ["CompatGame", "GAMES", "get", "names"]

# A bound on the plies of a game of the chess family from its start position.  The fifty-move rule ends a
# mavgame game by itself (halfmove clock >= 100, no claim), so at most 100 plies pass between two
# irreversible moves (a pawn move or a capture).  Chess: OpenSpiel's own bound for its chess (17695, above
# 96 pawn moves + 30 captures + 127 * 100 = 12826).  Gardner: 10 pawns of 3 steps and 18 capturable
# pieces: 48 + 49 * 100.
_CHESS_MAX_GAME_LENGTH = 17695
_GARDNER_MAX_GAME_LENGTH = 48 + 49 * 100

HEX_MAX_SIZE = 19


def _as_bool(name: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
        return v.lower() in ("true", "1")
    raise ValueError(f"parameter {name}={v!r} is not a bool")


def _as_int(name: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            v = int(v)
        except (TypeError, ValueError):
            raise ValueError(f"parameter {name}={v!r} is not an int") from None
    if not lo <= v <= hi:
        raise ValueError(f"parameter {name}={v} is out of range ({lo}..{hi})")
    return v


@dataclass(frozen=True)
class CompatGame:
    """One game as the adapters see it.

    - ``name``: the core's game name (``mavgame.State(name)``); ``long_name``: for display.
    - ``defaults``: the parameters and their default values.
    - ``make(params) -> (core game name, text, board_size, flags)``: the arguments of the start state.
    - ``actions(params)``: the size of the action space the adapters declare (every action id of the game
      lies below it: mavgame's ids, unchanged); ``max_length(params)``: a bound on the plies of a game.
    """

    name: str
    long_name: str
    defaults: Mapping[str, Any]
    make: Callable[[Dict[str, Any]], Tuple[str, Optional[str], int, int]]
    actions: Callable[[Dict[str, Any]], int]
    max_length: Callable[[Dict[str, Any]], int]
    check: Callable[[Dict[str, Any]], Dict[str, Any]] = field(default=lambda p: p)

    def params(self, params: Optional[Mapping[str, Any]] = None, **kw: Any) -> Dict[str, Any]:
        """The full, checked parameters: the defaults updated by ``params`` and ``kw``; ValueError names an
        unknown parameter or a bad value."""
        out = dict(self.defaults)
        given = dict(params or {}, **kw)
        unknown = sorted(set(given) - set(out))
        if unknown:
            known = ", ".join(sorted(out)) or "none"
            raise ValueError(f"game {self.name!r} has no parameter {', '.join(unknown)} (parameters: {known})")
        out.update(given)
        return self.check(out)

    def state(self, params: Optional[Mapping[str, Any]] = None) -> "_core.State":
        """A new start state of the game for (checked) ``params``."""
        name, text, size, flags = self.make(self.params(params))
        return _core.State(name, text, size, flags)


def _hex_check(p: Dict[str, Any]) -> Dict[str, Any]:
    return {"board_size": _as_int("board_size", p["board_size"], 1, HEX_MAX_SIZE),
            "swap": _as_bool("swap", p["swap"])}


def _hex_cells(p: Dict[str, Any]) -> int:
    return p["board_size"] ** 2 + (1 if p["swap"] else 0)   # the swap action is board_size**2


def _gardner_check(p: Dict[str, Any]) -> Dict[str, Any]:
    return {"bishop_promotion": _as_bool("bishop_promotion", p["bishop_promotion"])}


def _c960_check(p: Dict[str, Any]) -> Dict[str, Any]:
    return {"position": _as_int("position", p["position"], 0, 959)}


GAMES: Dict[str, CompatGame] = {g.name: g for g in (
    CompatGame("tictactoe", "Tic-tac-toe", {}, lambda p: ("tictactoe", None, 0, 0), lambda p: 9, lambda p: 9),
    CompatGame("connect_four", "Connect Four", {}, lambda p: ("connect_four", None, 0, 0),
               lambda p: 7, lambda p: 42),
    CompatGame("hex", "Hex", {"board_size": 11, "swap": False},
               lambda p: ("hex", None, p["board_size"], _core.FLAG_HEX_SWAP if p["swap"] else 0),
               _hex_cells, _hex_cells, _hex_check),
    CompatGame("gardner", "Gardner 5x5 minichess", {"bishop_promotion": False},
               lambda p: ("gardner", None, 0, _core.FLAG_GARDNER_BISHOP if p["bishop_promotion"] else 0),
               lambda p: 25 * 25 * 5, lambda p: _GARDNER_MAX_GAME_LENGTH, _gardner_check),
    CompatGame("chess", "Chess", {}, lambda p: ("chess", None, 0, 0),
               lambda p: 64 * 64 * 5, lambda p: _CHESS_MAX_GAME_LENGTH),
    CompatGame("chess960", "Chess960", {"position": 518},
               lambda p: ("chess960", _core.chess960_fen(p["position"]), 0, 0),
               lambda p: 64 * 64 * 5, lambda p: _CHESS_MAX_GAME_LENGTH, _c960_check),
)}


def names() -> list:
    """The games, in the C registry's order."""
    return [n for n in _core.games() if n in GAMES]


def get(name: str) -> CompatGame:
    """The game ``name`` (a core game name); ValueError naming the known ones."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r} (games: {', '.join(names())})") from None


def render(render_mode: Optional[str], game: str, state: Any, warn: Callable[[str], None], how: str) -> Optional[str]:
    """The ``render()`` of the PettingZoo and Gymnasium environments: ``"ansi"``, the board as text (the game
    class's drawing and the position's text); ``"human"``, that text printed; no mode, a warning (``how``
    says how to ask for one) and None."""
    if render_mode is None:
        warn(f"render() was called without a render_mode ({how})")
        return None
    from ..games import registry
    text = f"{registry.get(game).display(state)}\n{state.text()}"
    if render_mode == "human":
        print(text)
        return None
    return text
