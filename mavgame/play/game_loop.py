"""One game between two agents: the game loop (openings, move checks, ply limit, adjudication) and its record;
also as a generator of the moves it asks for (:func:`game_steps`), for loops that play many games at once."""
from __future__ import annotations

import time
from typing import Any, Callable, Generator, List, Optional, Tuple

import numpy as np

from .adjudication import Adjudicator
from .. import State
from ..agents import Agent, resolve_move
from .records import GameRecord, Opening


def play_game(first: Agent, second: Agent, game: str, opening: Optional[Opening] = None, *, board_size: int = 0,
              flags: int = 0, max_plies: Optional[int] = None, adjudicator: Optional[Adjudicator] = None,
              seed: int = 0, key: str = "", round: int = 0, on_move: Optional[Callable] = None) -> GameRecord:
    """Play one game between two agents and return its record.

    ``max_plies`` (moves after the opening, >= 1; None: no limit) ends the game as a draw;
    ``on_move(state, move)`` is called after every move (e.g. to print the board)."""
    steps = game_steps(first, second, game, opening, board_size=board_size, flags=flags, max_plies=max_plies,
                       adjudicator=adjudicator, seed=seed, key=key, round=round, on_move=on_move)
    try:
        ag, probe = next(steps)
        while True:
            t = time.perf_counter()
            mv = ag.act(probe)
            ag, probe = steps.send((mv, time.perf_counter() - t))
    except StopIteration as done:
        return done.value


#: What :func:`game_steps` yields (the agent to move and a copy of the position) and is sent back (its move and
#: the seconds it thought).
Step = Tuple[Agent, State]


def game_steps(first: Agent, second: Agent, game: str, opening: Optional[Opening] = None, *, board_size: int = 0,
               flags: int = 0, max_plies: Optional[int] = None, adjudicator: Optional[Adjudicator] = None,
               seed: int = 0, key: str = "", round: int = 0,
               on_move: Optional[Callable] = None) -> Generator[Step, Tuple[Any, float], GameRecord]:
    """The game of :func:`play_game` as a generator, for loops that play many games at once
    (:mod:`mavgame.play.concurrent`): it yields ``(agent, position)`` whenever an agent is to move (the position
    is a copy the agent may keep), takes ``(move, seconds thought)`` back, and returns the record."""
    _check_max_plies(max_plies)
    opening = opening or Opening("start")
    state = opening.state(game, board_size, flags)
    agents = (first, second)
    for p, ag in enumerate(agents):
        ag.setup(game, seed=(seed * 2 + p) & 0x7FFFFFFF, player=p)
    if adjudicator is not None:
        adjudicator.start(game)
    t0 = time.perf_counter()
    think = [0.0, 0.0]
    moves: List[str] = []
    reason = ""
    result = None
    while True:
        res, why = state.outcome()
        if res != 0:
            result = {1: "1-0", 2: "0-1", 3: "1/2-1/2"}[res]
            reason = why
            break
        if max_plies is not None and len(moves) >= max_plies:
            result, reason = "1/2-1/2", "max plies"
            break
        p = state.to_move
        ag = agents[p]
        mv, seconds = yield ag, state.copy()
        think[p] += seconds
        a = resolve_move(state, mv, f"agent {ag.name!r}")
        moves.append(state.action_to_str(a))
        state.push(a)
        if on_move is not None:
            on_move(state, moves[-1])
        if adjudicator is not None and not state.is_terminal():
            adj = adjudicator.check(state)
            if adj is not None:
                result, reason = adj, "adjudication"
                break
    return GameRecord(key=key, game=game, first=first.name, second=second.name, opening=opening.name,
                      round=round, start=opening.text, opening_moves=list(opening.moves), moves=moves,
                      result=result, reason=reason, seconds=time.perf_counter() - t0, think=think, seed=seed,
                      board_size=board_size, flags=flags,
                      finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def _check_max_plies(max_plies: Optional[int]) -> None:
    if max_plies is not None and (isinstance(max_plies, bool) or not isinstance(max_plies, (int, np.integer))
                                  or max_plies < 1):
        raise ValueError(f"max_plies must be a number of moves >= 1 (None: no limit), not {max_plies!r}")
