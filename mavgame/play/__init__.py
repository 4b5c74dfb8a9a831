"""Playing games between agents (:mod:`mavgame.agents`): the league (game loop, adjudication, executors,
scheduling), its records, result store, PGN, openings, Elo fits and distributed execution.

The names users reach for load on first use (``from mavgame.play import ResultStore, load_results``)::

    >>> from mavgame.play import League, load_results
    >>> res = load_results("league-connect_four.sqlite")   # a store file -> LeagueResults
    >>> res.elo()                                           # refit; Jupyter shows the table
"""
from __future__ import annotations

import importlib
from typing import Any, List

# name -> module of mavgame.play that defines it
_NAMES = {
    "League": "league", "LeagueError": "league", "LeagueInterrupted": "league", "match": "league",
    "play_game": "game_loop", "Adjudicator": "adjudication",
    "GameRecord": "records", "Opening": "records", "RecordError": "records",
    "ResultStore": "store", "StoreError": "store", "StoredElo": "store", "read_league_store": "store",
    "LeagueResults": "results", "load_results": "results",
    "EloResult": "elo", "fit_elo": "elo", "calibrate": "elo",
    "load_openings": "openings", "random_openings": "openings",
    "to_pgn": "pgn",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_NAMES))
