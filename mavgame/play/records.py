"""Openings and game records of leagues and matches, and the one validator of a stored game.

A :class:`GameRecord` is what a finished game leaves behind; :func:`check_record` is the single
place that decides whether a stored game (a row of the results store, a line of an imported
JSON-lines file) is a game at all: every field of the right type, a known result, a key that is
the scheduled game's key, moves that replay legally from the opening.  A refused record is named
with the reason; nothing is counted that was not checked.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union

from .. import _core
from ..games import registry
from ..games.base import Termination

__all__ = ["Opening", "GameRecord", "RecordError", "check_record", "game_key", "RESULTS", "CHESS_FAMILY"]

# The chess family's games (PGN, SAN), from the game registry.
CHESS_FAMILY = tuple(g.name for g in registry.infos() if g.family == "chess")
RESULTS = ("1-0", "0-1", "1/2-1/2")


class RecordError(ValueError):
    """A stored game that is not a valid record (the message says why)."""


def game_key(round: int, opening: str, first: str, second: str) -> str:
    """The key of a scheduled game: one game per (round, opening, first, second)."""
    return f"{round}|{opening}|{first}|{second}"


@dataclass(frozen=True)
class Opening:
    """A start for games: a position text (None: the game's start position) and moves after it."""

    name: str
    moves: Tuple[str, ...] = ()
    text: Optional[str] = None

    def state(self, game: str, board_size: int = 0, flags: int = 0):
        """The position after the opening (ValueError if a move is illegal)."""
        s = _core.State(game, self.text, board_size, flags)
        for i, m in enumerate(self.moves):
            try:
                s.push(m)
            except ValueError as e:
                raise ValueError(f"opening {self.name!r}: move {i + 1} {m!r} is illegal: {e}") from None
        if s.is_terminal():
            raise ValueError(f"opening {self.name!r} ends the game")
        return s

    def to_dict(self) -> dict:
        return {"name": self.name, "moves": list(self.moves), "text": self.text}

    @classmethod
    def from_dict(cls, d: dict) -> "Opening":
        return cls(d["name"], tuple(d.get("moves") or ()), d.get("text"))


_TERMINATIONS = frozenset(t.value for t in Termination)


@dataclass
class GameRecord:
    """One finished game.  ``first`` moved first (White in chess)."""

    key: str
    game: str
    first: str
    second: str
    opening: str
    round: int
    start: Optional[str]           # start position text before the opening (None: standard)
    opening_moves: List[str]
    moves: List[str]               # moves played by the agents
    result: str                    # "1-0", "0-1", "1/2-1/2"
    reason: Union[Termination, str]  # a Termination (checkmate, connected, ...) or "adjudication", "max plies"
    seconds: float = 0.0
    think: List[float] = field(default_factory=lambda: [0.0, 0.0])
    seed: int = 0
    board_size: int = 0
    flags: int = 0
    finished_at: Optional[str] = None   # UTC time the game ended, ISO 8601 (None in old records)

    def __post_init__(self):
        # an end by the rules reads as the Termination enum (a str enum: == "checkmate" still holds)
        if type(self.reason) is str and self.reason in _TERMINATIONS:
            self.reason = Termination(self.reason)

    def score_first(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[self.result]

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["type"] = "game"
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "GameRecord":
        """A record from a dict, checked by :func:`check_record` (RecordError names what is wrong)."""
        return check_record(d)


_FIELDS = {f.name: f for f in dataclasses.fields(GameRecord)}
_REQUIRED = ("key", "game", "first", "second", "opening", "round", "opening_moves", "moves", "result", "reason")


def _is_str_list(x) -> bool:
    return isinstance(x, list) and all(isinstance(m, str) for m in x)


def check_record(d, game: Optional[str] = None, replay: bool = True) -> GameRecord:
    """The :class:`GameRecord` of a stored game dict, or RecordError saying why it is not one.

    Checks: a JSON object with every required field of the right type; a result among
    ``1-0``, ``0-1``, ``1/2-1/2``; a key equal to ``round|opening|first|second``; the game
    ``game`` when given; and (``replay``) that the opening and the game's moves are legal from
    the start position (a move string with a NUL byte or an illegal move is refused)."""
    if not isinstance(d, dict):
        raise RecordError(f"not a game record (a JSON {type(d).__name__}, not an object)")
    missing = [k for k in _REQUIRED if k not in d]
    if missing:
        raise RecordError(f"game record without {', '.join(missing)}")
    for k in ("key", "game", "first", "second", "opening", "result", "reason"):
        if not isinstance(d[k], str):
            raise RecordError(f"field {k!r} must be a string, not {d[k]!r}")
    if not isinstance(d["round"], int) or isinstance(d["round"], bool) or d["round"] < 0:
        raise RecordError(f"field 'round' must be an integer >= 0, not {d['round']!r}")
    for k in ("opening_moves", "moves"):
        if not _is_str_list(d[k]):
            raise RecordError(f"field {k!r} must be a list of move strings")
    if d["result"] not in RESULTS:
        raise RecordError(f"result {d['result']!r} is not one of {', '.join(RESULTS)}")
    if d["first"] == d["second"]:
        raise RecordError(f"agent {d['first']!r} plays itself")
    want = game_key(d["round"], d["opening"], d["first"], d["second"])
    if d["key"] != want:
        raise RecordError(f"key {d['key']!r} does not name the game it records ({want!r})")
    if game is not None and d["game"] != game:
        raise RecordError(f"a {d['game']!r} game in a {game!r} league")
    if d["game"] not in _core.games():
        raise RecordError(f"unknown game {d['game']!r}")
    start = d.get("start")
    if start is not None and not isinstance(start, str):
        raise RecordError(f"field 'start' must be a position text or null, not {start!r}")
    kw = {k: v for k, v in d.items() if k in _FIELDS}
    for k, typ in (("seconds", (int, float)), ("seed", int), ("board_size", int), ("flags", int)):
        if k in kw and (not isinstance(kw[k], typ) or isinstance(kw[k], bool)):
            raise RecordError(f"field {k!r} must be a number, not {kw[k]!r}")
    if "think" in kw and not (isinstance(kw["think"], list) and len(kw["think"]) == 2
                              and all(isinstance(t, (int, float)) for t in kw["think"])):
        raise RecordError(f"field 'think' must be two numbers, not {kw['think']!r}")
    if kw.get("finished_at") is not None and not isinstance(kw["finished_at"], str):
        raise RecordError(f"field 'finished_at' must be a time text, not {kw['finished_at']!r}")
    rec = GameRecord(**kw)
    if replay:
        try:
            s = _core.State(rec.game, rec.start, rec.board_size, rec.flags)
        except ValueError as e:
            raise RecordError(f"start position {rec.start!r}: {e}") from None
        for i, m in enumerate(rec.opening_moves + rec.moves):
            if "\x00" in m:
                raise RecordError(f"move {i + 1} {m!r} contains a NUL byte")
            if s.is_terminal():
                raise RecordError(f"move {i + 1} {m!r} comes after the end of the game")
            try:
                s.push(m)
            except ValueError:
                raise RecordError(f"move {i + 1} {m!r} is illegal") from None
    return rec
