"""The annotators of the MAV data pipeline, one module per annotator, each reached through the game registry
(``GameInfo.annotator``, a ``"module:function"`` string; ``function(options) -> annotate(state)``).

``annotate(state)`` returns ``({move: win probability of the mover}, best move)``, or None for a position the
engine could not annotate within its budget (left out of the data).  An annotator may carry ``close()``
(an engine process to end) and ``reset()`` (tables to clear between chunks of games).

- :mod:`.chess`: chess and Chess960, Stockfish (or any UCI engine) through :class:`mavgame.engines.annotate.Annotator`
- :mod:`.connect_four`: the perfect Connect Four solver
- :mod:`.hex`: Hex, the exact solver on small boards, playout UCT beyond
- :mod:`.exhaustive`: tiny games (tic-tac-toe), exact negamax
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Optional


class _DefaultAnnotatorOptions(Mapping):
    """{game: its annotator's default options}, read from the game registry (``GameInfo.annotator_options``:
    a per-position budget that keeps generation finite; an unbudgeted Connect Four solve of an opening
    position can take many minutes).  Games whose annotator takes no options are left out."""

    def _table(self) -> Dict[str, Dict[str, Any]]:
        from ..games import registry
        return {g.name: dict(g.annotator_options) for g in registry.infos() if g.annotator and g.annotator_options}

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
    """annotate(state) -> ({move: value}, best move) for `game`'s engine: the annotator of the game's
    registry entry (``GameInfo.make_annotator``; ValueError naming the game if it is unknown or has none)."""
    from ..games import registry
    return registry.get(game).make_annotator(options)


__all__ = ["DEFAULT_ANNOTATOR_OPTIONS", "make_annotator"]
