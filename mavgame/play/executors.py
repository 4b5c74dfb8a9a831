"""Where a league's games run: the task a worker plays, the worker's state, and the serial and process-pool
executors (worker processes come from :mod:`mavgame.workers`)."""
from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..agents import Agent, make_agent
from .game_loop import play_game
from .records import GameRecord, Opening


@dataclass
class _Task:
    key: str
    first: str
    second: str
    opening: Opening
    round: int
    seed: int


class _WorkerState:
    """What a worker process holds: agent specs/objects (instances built on first use)."""

    def __init__(self, config: dict):
        self.config = config
        self.agents: Dict[str, Agent] = {}
        self.adjudicator = config.get("adjudicator")

    def agent(self, name: str) -> Agent:
        a = self.agents.get(name)
        if a is None:
            a = make_agent(self.config["agents"][name], name=name)
            self.agents[name] = a
        return a

    def play(self, task: _Task) -> GameRecord:
        c = self.config
        return play_game(self.agent(task.first), self.agent(task.second), c["game"], task.opening,
                         board_size=c["board_size"], flags=c["flags"], max_plies=c["max_plies"],
                         adjudicator=self.adjudicator, seed=task.seed, key=task.key, round=task.round)

    def close(self) -> None:
        for a in self.agents.values():
            try:
                a.close()
            except Exception:  # noqa: BLE001
                pass
        if self.adjudicator is not None:
            self.adjudicator.close()


def _run_task(ws: _WorkerState, task: _Task) -> Tuple[str, Any]:
    try:
        return "ok", ws.play(task).to_dict()
    except BaseException as e:  # noqa: BLE001 - reported to the parent with the game's identity
        if isinstance(e, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=6)
        return "error", {"key": task.key, "error": f"{type(e).__name__}: {e}", "traceback": tb}


_WS: Optional[_WorkerState] = None  # the worker process's state (set by the pool initializer)


def _pool_init(config: dict) -> None:
    global _WS
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _WS = _WorkerState(config)
    from ..workers import close_at_exit
    close_at_exit(_WS)  # close engines when the worker exits


def _pool_run(task: _Task) -> Tuple[_Task, str, Any]:
    assert _WS is not None
    status, payload = _run_task(_WS, task)
    return task, status, payload


class _SerialExecutor:
    def __init__(self, config):
        self.ws = _WorkerState(config)

    def run(self, tasks: List[_Task], stop: Callable[[], bool]) -> Iterator[Tuple[_Task, str, Any]]:
        try:
            for t in tasks:
                if stop():
                    return
                status, payload = _run_task(self.ws, t)
                yield t, status, payload
        finally:
            self.ws.close()


class _ProcessExecutor:
    """Games over a process pool; stops submitting when asked and drains the games in flight.

    A worker process that dies (killed, or a crash in C code) breaks the pool: the games that
    were in flight are played again in a fresh pool, and a game in flight at two such deaths is
    reported as failed ("the worker process playing it died"), never silently lost."""

    def __init__(self, config, workers: int):
        self.config = config
        self.workers = workers

    def _pool(self):
        from ..workers import process_pool_executor
        return process_pool_executor(self.workers, _pool_init, (self.config,))

    @staticmethod
    def _kill(pool) -> None:
        for p in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                p.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass
        pool.shutdown(wait=True, cancel_futures=True)

    def run(self, tasks: List[_Task], stop: Callable[[], bool]) -> Iterator[Tuple[_Task, str, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        pool = self._pool()
        pending: Dict[Any, _Task] = {}
        suspects: List[_Task] = []  # in flight when a worker died: played again one at a time
        it = iter(tasks)
        clean = False
        try:
            exhausted = False
            while True:
                while not stop():
                    if suspects:
                        if pending:
                            break
                        t = suspects.pop(0)
                    elif exhausted or len(pending) >= 2 * self.workers:
                        break
                    else:
                        try:
                            t = next(it)
                        except StopIteration:
                            exhausted = True
                            break
                    pending[pool.submit(_pool_run, t)] = t
                if not pending:
                    break
                done, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                lost: List[_Task] = []
                for fut in done:
                    try:
                        res = fut.result()
                    except BrokenProcessPool:
                        continue
                    pending.pop(fut)
                    yield res
                if any(f.done() and f.exception() is not None for f in pending):
                    lost = list(pending.values())  # the pool broke: every game in flight failed with it
                    pending.clear()
                    self._kill(pool)
                    pool = self._pool()
                    if len(lost) == 1:
                        t = lost[0]
                        yield t, "error", {"key": t.key, "traceback": "", "error": (
                            "the worker process playing this game died (killed by a signal, or a crash in C "
                            "code); the game was not recorded")}
                    else:
                        suspects.extend(lost)
            clean = True
        finally:
            if clean:
                pool.shutdown(wait=True)
            else:
                self._kill(pool)
