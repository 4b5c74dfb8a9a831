"""The Python game registry: one :class:`GameInfo` per game of the C core, so that generic code (the
command line, agents, leagues, openings, the MAV data pipeline) never switches on a game's name.

The names come from the C registry (``mavgame._core.games()``) and the rule flags from
``mavgame._core.FLAG_*``; each game module (``mavgame/games/<game>.py``) registers the descriptors of its
games with :func:`register` when it is imported.  Lookups load every module of ``mavgame.games`` first.

    >>> from mavgame.games import registry
    >>> registry.get("hex").default_board_size
    11
    >>> [g.name for g in registry.infos() if g.uci]
    ['chess', 'chess960']
    >>> registry.get("go")
    Traceback (most recent call last):
    ...
    mavgame.games.registry.UnknownGameError: unknown game 'go' (games: tictactoe, gardner, chess, ...)

The registry names nothing above the games: the tools of a game register themselves from their own layer
(OpenSpiel's registration beside what it registers): annotators in the annotators package, perfect players
beside the basic agents, out-of-distribution sets beside the model's data code.  See
docs/architecture.md, "Adding a game (Python side)", for the checklist.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .. import _core

__all__ = ["GameInfo", "UnknownGameError", "register", "get", "names", "infos", "in_family", "override", "replace",
           "DATA"]

DATA = Path(__file__).resolve().parent.parent / "data"   # shipped opening files

# Modules of this package that hold no game.
_NOT_GAMES = frozenset({"base", "registry"})


class UnknownGameError(ValueError):
    """A game name that the registry does not know (the message names it and lists the known ones)."""


@dataclass(frozen=True)
class GameInfo:
    """What generic Python code needs to know about one game.

    - ``name``: the C registry's name (``mavgame.State(name)``); ``cls``: the Python class
      (``ConnectFour``, ``Hex``...); ``family``: games that share rules and tools ("chess" for chess,
      Chess960 and Gardner: SAN, PGN, FEN).
    - ``from_text(text, board_size, flags)``: an instance of ``cls`` for a position (display, SVG).
    - ``flags``: the game's rule flags by name (``_core.FLAG_*`` values); ``default_board_size`` /
      ``max_board_size``: 0 for a game of fixed size.
    - ``san``: moves may also be written in SAN (and games exported as PGN with ``pgn_variant``).
    - ``uci``: UCI engines (Stockfish) play it; ``uci_chess960``: with the UCI_Chess960 option.
    - ``uci_variant``: the ``UCI_Variant`` a Fairy-Stockfish engine plays it under (Gardner: ``gardner``),
      None for games that standard Stockfish analyses.
    - ``start_position(n)`` / ``start_positions`` / ``start_prefix``: numbered start positions used as
      openings instead of an opening file (Chess960's 960 positions, named ``960-N``).
    - ``openings``: the shipped opening file in ``mavgame/data`` (``{board_size}`` filled in), or None.
    - ``phases``: ``(name, first ply, last ply)`` of the opening, middle and end game for the data
      statistics (``mavgame data-stats``); empty: per ply only.
    """

    name: str
    cls: type
    family: str
    from_text: Callable[[Optional[str], int, int], Any]
    flags: Mapping[str, int] = field(default_factory=dict)
    default_board_size: int = 0
    max_board_size: int = 0
    san: bool = False
    pgn_variant: Optional[str] = None
    uci: bool = False
    uci_chess960: bool = False
    uci_variant: Optional[str] = None
    start_position: Optional[Callable[[int], str]] = None
    start_positions: int = 0
    start_prefix: str = ""
    openings: Optional[str] = None
    phases: Tuple[Tuple[str, int, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "flags", types.MappingProxyType(dict(self.flags)))

    @property
    def sized(self) -> bool:
        """Whether the game is played on boards of several sizes (``--board-size``)."""
        return self.max_board_size > 0

    def state(self, text: Optional[str] = None, board_size: int = 0, flags: int = 0) -> "_core.State":
        """A core state of this game (``board_size`` ignored by games of fixed size)."""
        return _core.State(self.name, text, board_size if self.sized else 0, flags)

    def wrap(self, state: "_core.State") -> Any:
        """The position of a core state as an instance of the game's class."""
        return self.from_text(state.text(), state.board_size, state.flags)

    def display(self, state: "_core.State") -> str:
        """The board as the game's class prints it."""
        return str(self.wrap(state))

    def svg(self, state: "_core.State", **kwargs: Any) -> str:
        """The board as SVG (the game class's ``svg``)."""
        return self.wrap(state).svg(**kwargs)

    def openings_path(self, board_size: int = 0) -> Optional[Path]:
        """The shipped opening file (per board size for sized games), None if the game has none."""
        if self.openings is None:
            return None
        return DATA / self.openings.format(board_size=board_size or self.default_board_size)

    def numbered_start(self, label: str) -> str:
        """The start position named ``<start_prefix>N`` (e.g. ``960-518``)."""
        if self.start_position is None or not label.startswith(self.start_prefix):
            raise ValueError(f"{label!r} is not a numbered start position of {self.name}")
        num = label[len(self.start_prefix):]
        if not num.isdigit() or not 0 <= int(num) < self.start_positions:
            raise ValueError(f"{label!r}: the start positions of {self.name} are "
                             f"{self.start_prefix}0..{self.start_prefix}{self.start_positions - 1}")
        return self.start_position(int(num))


_REGISTRY: Dict[str, GameInfo] = {}
_loaded = False


def register(info: GameInfo, replace: bool = False) -> GameInfo:
    """Add a game's descriptor (called by each game module on import).  The name must be one of the C
    core's games; registering a name twice needs ``replace=True``."""
    if not isinstance(info, GameInfo):
        raise TypeError(f"register() takes a GameInfo, not {type(info).__name__}")
    known = _core.games()
    if info.name not in known:
        raise UnknownGameError(f"cannot register {info.name!r}: not a game of the C core "
                               f"(games: {', '.join(known)})")
    if info.name in _REGISTRY and not replace and _REGISTRY[info.name] != info:
        raise ValueError(f"game {info.name!r} is registered already (pass replace=True)")
    _REGISTRY[info.name] = info
    return info


def _load() -> None:
    """Import every game module of this package (each registers its games)."""
    global _loaded
    if _loaded:
        return
    pkg = importlib.import_module(__package__)
    for m in pkgutil.iter_modules(pkg.__path__):
        if m.name not in _NOT_GAMES and not m.name.startswith("_"):
            importlib.import_module(f"{__package__}.{m.name}")
    _loaded = True


def names() -> List[str]:
    """The games, in the C registry's order."""
    return list(_core.games())


def get(name: str) -> GameInfo:
    """The descriptor of game ``name``; :class:`UnknownGameError` naming it and the known games."""
    _load()
    info = _REGISTRY.get(name) if isinstance(name, str) else None
    if info is None:
        known = names()
        if isinstance(name, str) and name in known:
            raise UnknownGameError(f"game {name!r} of the C core has no Python descriptor (register a GameInfo "
                                   f"in mavgame/games/; see docs/architecture.md)")
        raise UnknownGameError(f"unknown game {name!r} (games: {', '.join(known)})")
    return info


def infos() -> List[GameInfo]:
    """Every game's descriptor, in the C registry's order."""
    return [get(n) for n in names()]


def in_family(name: str, family: str) -> bool:
    """Whether ``name`` is a registered game of ``family`` (False for unknown names)."""
    _load()
    info = _REGISTRY.get(name)
    return info is not None and info.family == family


class override:
    """Context manager that registers descriptors for a while (tests, experiments) and restores the
    registry afterwards::

        with registry.override(dataclasses.replace(registry.get("tictactoe"), openings=None)):
            ...
    """

    def __init__(self, *descriptors: GameInfo):
        self.descriptors = descriptors
        self._saved: Dict[str, GameInfo] = {}

    def __enter__(self) -> "override":
        _load()
        self._saved = dict(_REGISTRY)
        for d in self.descriptors:
            register(d, replace=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        _REGISTRY.clear()
        _REGISTRY.update(self._saved)


def replace(name: str, **changes: Any) -> GameInfo:
    """A copy of game ``name``'s descriptor with ``changes`` (for :class:`override`)."""
    return dataclasses.replace(get(name), **changes)
