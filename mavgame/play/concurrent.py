"""Many games at once in one process: the concurrent game loop of ``League(..., concurrent=N)`` and
``mavgame league|match --concurrent N``.

Up to N games are in flight. Each round, every game in flight asks for one move (:func:`game_steps`); the agents
to move that can decide together (the same ``batch_key()``, e.g. MAV-MCTS agents over one native evaluator, whose
searches then run as one :func:`mavgame.search.multi.search_many` with one batched model call per round) are
asked once through their class's ``act_many(agents, states)``; the others move one by one with ``act``. Finished
games come out as soon as they end and new ones start in their place.

Each game in flight has its own agent instances (a game sets its agents up with its seed and they keep state:
a search tree, a generator): the first game of an agent uses the league worker's instance, the others a copy
from its ``fork()`` (MAV agents: sharing the model and the native evaluator), else a new agent from its spec, else
a deep copy. Since every game sets its agents up with its own seed, a game played here is the game the serial
executor plays (same moves and result) whenever its agents' moves depend only on the position and that seed
(not on time budgets, engine threads or hash tables, and the evaluator answering a leaf the same way whatever
else is in its batch: true of the native MAV engine, checked by tests/test_concurrent_league.py).

The automatic choice (:func:`auto_concurrency`): 1 unless an agent of the league can batch across games (a
MAV-MCTS agent over a native evaluator), then :data:`AUTO_CONCURRENT` games.
"""
from __future__ import annotations

import copy
import time
import traceback
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..agents import Agent, make_agent
from .executors import _Task, _WorkerState
from .game_loop import game_steps

__all__ = ["ConcurrentExecutor", "auto_concurrency", "batches_across_games", "wants_concurrency",
           "AUTO_CONCURRENT"]

#: games in flight when a league has an agent that batches across games and ``concurrent`` is None: the
#: native engine's batch grows from 16 leaves (one search) to 128 (docs/mcts.md, "Many games at once").
AUTO_CONCURRENT = 8


def batches_across_games(agent: Any) -> bool:
    """True if ``agent`` decides faster together with others of its kind (it has ``act_many`` and says so)."""
    probe = getattr(agent, "batches_across_games", None)
    return bool(probe() if callable(probe) else probe) and callable(getattr(type(agent), "act_many", None))


def wants_concurrency(agent: Any) -> bool:
    """True if ``agent`` batches across games and asks for it by default (``auto_concurrent``: the MAV-MCTS agents
    over a native evaluator, whose searches alone give the engine batches of only ``batch_size`` leaves)."""
    return bool(getattr(agent, "auto_concurrent", False)) and batches_across_games(agent)


def auto_concurrency(agents: List[Any]) -> int:
    """The automatic number of concurrent games for a league of these agents (see the module docstring)."""
    return AUTO_CONCURRENT if any(wants_concurrency(a) for a in agents) else 1


class _Game:
    """A game in flight: its task, its generator, its agents and the move it waits for."""

    __slots__ = ("task", "steps", "agents", "agent", "state")

    def __init__(self, task: _Task, steps, agents: Tuple[Agent, Agent]):
        self.task = task
        self.steps = steps
        self.agents = agents
        self.agent: Optional[Agent] = None
        self.state = None


def _error(task: _Task, e: BaseException) -> Tuple[_Task, str, dict]:
    return task, "error", {"key": task.key, "error": f"{type(e).__name__}: {e}",
                           "traceback": traceback.format_exc(limit=6)}


class ConcurrentExecutor:
    """The league executor that plays up to ``n`` games at once in this process (see the module docstring);
    ``run(tasks, stop)`` yields ``(task, "ok", record dict)`` or ``(task, "error", {...})`` as games end, like the
    serial executor (in the order games finish). ``stop()`` true: no new game starts, the games in flight end."""

    def __init__(self, config: dict, n: int):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"concurrent must be a number of games >= 1, not {n!r}")
        self.config = config
        self.n = n
        self.ws = _WorkerState(config)
        self._free: Dict[str, List[Agent]] = {}
        self._made: Dict[str, int] = {}
        self.rounds = 0
        self.batched_moves = 0

    # -- agents per game ---------------------------------------------------------------------------

    def _take(self, name: str) -> Agent:
        free = self._free.setdefault(name, [])
        if free:
            return free.pop()
        base = self.ws.agent(name)
        if not self._made.get(name):
            prepare = getattr(base, "prepare_concurrent", None)
            if callable(prepare):
                prepare(self.n)
            self._made[name] = 1
            return base
        self._made[name] += 1
        fork = getattr(base, "fork", None)
        if callable(fork):
            ag = fork()
        else:
            spec = self.config["agents"][name]
            ag = make_agent(spec, name=name) if isinstance(spec, str) else copy.deepcopy(base)
        self.ws.agents[f"{name}#{self._made[name]}"] = ag  # closed with the worker's agents
        return ag

    def _release(self, g: _Game) -> None:
        for ag in g.agents:
            self._free.setdefault(ag.name, []).append(ag)

    def _start(self, task: _Task) -> Tuple[Optional[_Game], Optional[Tuple[_Task, str, Any]]]:
        c = self.config
        first, second = self._take(task.first), self._take(task.second)
        g = _Game(task, None, (first, second))
        try:
            g.steps = game_steps(first, second, c["game"], task.opening, board_size=c["board_size"],
                                 flags=c["flags"], max_plies=c["max_plies"], adjudicator=self._adjudicator(),
                                 seed=task.seed, key=task.key, round=task.round)
            g.agent, g.state = next(g.steps)
        except StopIteration as done:
            self._release(g)
            return None, (task, "ok", done.value.to_dict())
        except Exception as e:  # noqa: BLE001 - the game's error, reported with its identity
            self._release(g)
            return None, _error(task, e)
        return g, None

    def _adjudicator(self):
        adj = self.ws.adjudicator
        if adj is not None and self.n > 1:
            raise ValueError("adjudication keeps one engine position per game: play adjudicated leagues with "
                             "concurrent=1")
        return adj

    # -- moves ---------------------------------------------------------------------------------------

    def _moves(self, games: List[_Game]) -> List[Tuple[Any, float, Optional[BaseException]]]:
        """One move for each game: (move, seconds, error)."""
        out: List[Any] = [None] * len(games)
        groups: Dict[Any, List[int]] = {}
        for i, g in enumerate(games):
            ag = g.agent
            key = ag.batch_key() if batches_across_games(ag) else None
            if key is None:
                groups[("single", i)] = [i]
            else:
                groups.setdefault(("batch", type(ag), key), []).append(i)
        for key, idx in groups.items():
            t = time.perf_counter()
            if key[0] == "batch" and len(idx) > 1:
                try:
                    mvs = key[1].act_many([games[i].agent for i in idx], [games[i].state for i in idx])
                    dt = (time.perf_counter() - t) / len(idx)
                    for i, mv in zip(idx, mvs):
                        out[i] = (mv, dt, None)
                    self.batched_moves += len(idx)
                except Exception as e:  # noqa: BLE001 - every game of the batch fails with it
                    for i in idx:
                        out[i] = (None, 0.0, e)
                continue
            i = idx[0]
            try:
                mv = games[i].agent.act(games[i].state)
                out[i] = (mv, time.perf_counter() - t, None)
            except Exception as e:  # noqa: BLE001
                out[i] = (None, 0.0, e)
        return out

    def run(self, tasks: List[_Task], stop: Callable[[], bool]) -> Iterator[Tuple[_Task, str, Any]]:
        it = iter(tasks)
        games: List[_Game] = []
        exhausted = False
        try:
            while True:
                while not exhausted and len(games) < self.n and not stop():
                    try:
                        task = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    g, done = self._start(task)
                    if done is not None:
                        yield done
                    else:
                        games.append(g)
                if not games:
                    break
                self.rounds += 1
                moves = self._moves(games)
                still: List[_Game] = []
                for g, (mv, dt, err) in zip(games, moves):
                    if err is not None:
                        g.steps.close()
                        self._release(g)
                        yield _error_from(g.task, err)
                        continue
                    try:
                        g.agent, g.state = g.steps.send((mv, dt))
                        still.append(g)
                    except StopIteration as done:
                        self._release(g)
                        yield g.task, "ok", done.value.to_dict()
                    except Exception as e:  # noqa: BLE001 - an illegal move, a failing adjudicator
                        self._release(g)
                        yield _error(g.task, e)
                games = still
        finally:
            for g in games:
                g.steps.close()
            self.ws.close()


def _error_from(task: _Task, e: BaseException) -> Tuple[_Task, str, dict]:
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=6))
    return task, "error", {"key": task.key, "error": f"{type(e).__name__}: {e}", "traceback": tb}
