"""The annotators of the MAV data pipeline, one module per annotator; each module registers its games here
(:func:`register_annotator`) when imported, and :func:`make_annotator` imports them all on first use.

``annotate(state)`` returns ``({move: win probability of the mover}, best move)``, or None for a position the
engine could not annotate within its budget (left out of the data).  An annotator may carry ``close()``
(an engine process to end) and ``reset()`` (tables to clear between chunks of games).

- :mod:`.chess`: chess and Chess960, Stockfish (or any UCI engine) through :class:`mavgame.engines.annotate.Annotator`
- :mod:`.gardner`: Gardner minichess, Fairy-Stockfish
- :mod:`.connect_four`: the perfect Connect Four solver
- :mod:`.hex`: Hex, the exact solver on small boards, playout UCT beyond
- :mod:`.exhaustive`: tiny games (tic-tac-toe), exact negamax
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Tuple

# game -> (annotator factory ``function(options) -> annotate``, its default options)
_ANNOTATORS: Dict[str, Tuple[Callable[[Dict[str, Any]], Callable], Dict[str, Any]]] = {}
_loaded = False


def register_annotator(game: str, factory: Callable[[Dict[str, Any]], Callable],
                       options: Optional[Dict[str, Any]] = None) -> None:
    """Make ``factory(options) -> annotate(state)`` the annotator of ``game``, with ``options`` as its default
    per-position budget (called by each annotator module for its games)."""
    _ANNOTATORS[game] = (factory, dict(options or {}))


def _load() -> None:
    global _loaded
    if not _loaded:
        for m in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{m.name}")
        _loaded = True


def annotated_games() -> list:
    """The games that have an annotator."""
    _load()
    return sorted(_ANNOTATORS)


class _DefaultAnnotatorOptions(Mapping):
    """{game: its annotator's default options} (a per-position budget that keeps generation finite; an
    unbudgeted Connect Four solve of an opening position can take many minutes).  Games whose annotator
    takes no options are left out."""

    def _table(self) -> Dict[str, Dict[str, Any]]:
        _load()
        return {g: dict(o) for g, (_, o) in _ANNOTATORS.items() if o}

    def __getitem__(self, game: str) -> Dict[str, Any]:
        return self._table()[game]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table())


DEFAULT_ANNOTATOR_OPTIONS: Mapping[str, Dict[str, Any]] = _DefaultAnnotatorOptions()


def make_annotator(game: str, options: Optional[Dict[str, Any]] = None):
    """annotate(state) -> ({move: value}, best move) for ``game`` with ``options`` (the annotator's own
    defaults where a key is missing; :data:`DEFAULT_ANNOTATOR_OPTIONS` holds the budgets data generation
    passes); ValueError naming the game if it is unknown or has no annotator."""
    from ..games import registry
    registry.get(game)   # UnknownGameError (a ValueError) for a name that is no game
    _load()
    if game not in _ANNOTATORS:
        raise ValueError(f"no annotator for game {game!r} (games with one: {', '.join(sorted(_ANNOTATORS))})")
    return _ANNOTATORS[game][0](dict(options or {}))


__all__ = ["DEFAULT_ANNOTATOR_OPTIONS", "make_annotator", "register_annotator", "annotated_games"]
