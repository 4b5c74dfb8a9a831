"""Head-to-head matches and leagues between agents, with Elo ratings.

A league plays every pair of agents from every opening of an opening set, once with each colour
(``rounds`` times over).  ``matchups=N`` is the MAV paper's scheduler instead: N match-ups, each a
pair drawn uniformly at random with one opening drawn uniformly at random, played with both colours
(the draws depend only on the seed and the match-up's index, so a league extended to more match-ups
keeps the ones it played).  Games run in parallel over processes
(or Ray actors) with a progress bar.  The process that schedules the games records each finished
game at once in a SQLite results store (:mod:`mavgame.play.store`), so a league that is interrupted
(Ctrl-C, a crash, kill -9) resumes where it stopped when run again with the same store: finished
games are never played twice, counted twice, nor lost.

    >>> from mavgame.play.league import League
    >>> lg = League({"random": "random", "uct100": "uct:sims=100", "perfect": "perfect"},
    ...             game="connect_four", openings=4, path="c4.sqlite", workers=2)
    >>> res = lg.run()                  # plays what the store does not have yet
    >>> print(res.matrix_table())       # W/D/L per pair (in Jupyter, ``res`` shows as a table)
    >>> print(res.elo().table())        # maximum-likelihood Elo with 95% intervals
    >>> res.write_games("c4.pgn")       # PGN for the chess family, move lists for other games
    >>> res.to_pandas()                 # one row per game (pandas optional); write_csv, write_jsonl

Chess960: ``openings=League.chess960(n, seed)`` (random start positions, both colours each).
Adjudication: ``adjudicate=Adjudicator(margin_cp=1200)`` ends chess games once an engine
evaluation passes the margin (the MAV paper did this for its internal-search runs);
``max_plies`` ends any game as a draw after that many moves.

A results path ending in ``.jsonl`` (the results file of older versions) keeps its results in the
``.sqlite`` store beside it and reads the JSON-lines file into it once, validated (refused lines
are reported).  The pieces live in their own modules, re-exported here: one game's loop
(:mod:`mavgame.play.game_loop`), engine adjudication (:mod:`mavgame.play.adjudication`), the serial and
process executors (:mod:`mavgame.play.executors`), random start positions (:mod:`mavgame.play.openings`), records
(:mod:`mavgame.play.records`), the store (:mod:`mavgame.play.store`), results and exports
(:mod:`mavgame.play.results`), PGN (:mod:`mavgame.play.pgn`).
"""
from __future__ import annotations

import os
import warnings
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from ..games import registry
from .adjudication import Adjudicator, _check_uci_game
from ..agents import Agent, AgentError, make_agent
from .concurrent import ConcurrentExecutor, auto_concurrency
from .executors import _ProcessExecutor, _SerialExecutor, _Task
from .game_loop import _check_max_plies, play_game
from .openings import random_start_positions
from .pgn import to_movelist, to_pgn
from .records import CHESS_FAMILY, GameRecord, Opening, RecordError, check_record, game_key
from .results import LeagueResults, ResultsWarning, load_results
from .store import ResultStore, StoreError, store_path_for

__all__ = ["Opening", "GameRecord", "Adjudicator", "League", "LeagueResults", "LeagueError", "LeagueInterrupted", "play_game",
           "match", "load_results", "to_pgn", "to_movelist", "CHESS_FAMILY", "ResultStore", "StoreError",
           "ResultsWarning"]

FILE_VERSION = 1


class LeagueError(RuntimeError):
    """A game of the league failed (the message names the game and the cause); finished games are saved."""


class LeagueInterrupted(LeagueError):
    """The league was interrupted (Ctrl-C); finished games are saved and a rerun resumes."""


# ---------------------------------------------------------------------------------------------
# the league


def _stable_seed(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode()) & 0x7FFFFFFF


class League:
    """A round robin over agents and openings (see the module docstring).

    Parameters
    ----------
    agents:
        ``{name: spec or Agent or callable}`` or a list of specs (named after the spec or agent).
    game:
        Game name (``mavgame.games()``).
    openings:
        A list of :class:`Opening`, a number n (the first n of the game's shipped openings; for
        Chess960, n random start positions), or None (all shipped openings; the start position for
        games without any).
    rounds:
        How many times each (pair, opening, colour) game is played.
    path:
        The SQLite results store (None: keep the results in memory only); reused to resume.  A
        ``.jsonl`` name stores in the ``.sqlite`` file beside it and imports the JSON-lines file
        once (see the module docstring).
    workers:
        Processes playing games in parallel (1: in this process; 0 or less is refused).
    adjudicate:
        An :class:`Adjudicator` (chess and Chess960), or a centipawn margin.
    max_plies:
        Moves after the opening before a game is called a draw (>= 1; None: play to the end).
    pairs:
        Restrict to these (a, b) pairs (default: all pairs).
    matchups:
        None (default): the full round robin above.  N >= 1: the paper's scheduler, N match-ups of a
        uniformly random pair (among ``pairs``) and a uniformly random opening, both colours (2N
        games; ``rounds`` must be 1).  A store keeps one kind of schedule.
    on_error:
        "stop" (default): finish the games in flight, save them, raise :class:`LeagueError`;
        "skip": record the error in the store and continue (the game is retried on resume).
    event:
        The PGN Event name of the games (default: ``mavgame <game> league``).
    concurrent:
        Games played at once in this process (:mod:`mavgame.play.concurrent`: the searches of MAV-MCTS agents
        over one native evaluator share one batched model call per round); None (default): automatic, 1 unless
        an agent batches across games (then :data:`mavgame.play.concurrent.AUTO_CONCURRENT`). Above 1 the games
        run in this process (``workers`` is not used; the native engine has its own threads) and adjudication is
        refused.
    """

    def __init__(self, agents: Union[Dict[str, Any], Sequence[Any]], game: str = "connect_four",
                 openings: Union[None, int, Sequence[Opening]] = None, *, rounds: int = 1, path: Optional[str] = None,
                 workers: int = 1, board_size: int = 0, flags: int = 0,
                 adjudicate: Union[None, int, Adjudicator] = None, max_plies: Optional[int] = None, seed: int = 0,
                 pairs: Optional[Sequence[Tuple[str, str]]] = None, on_error: str = "stop",
                 executor: Any = None, event: Optional[str] = None, matchups: Optional[int] = None,
                 concurrent: Optional[int] = None):
        if game not in _core.games():
            raise ValueError(f"unknown game {game!r} (known: {', '.join(_core.games())})")
        self.game = game
        if isinstance(agents, dict):
            self.agent_specs: Dict[str, Any] = dict(agents)
        else:
            self.agent_specs = {}
            for a in agents:
                nm = a.name if isinstance(a, Agent) else (a if isinstance(a, str) else getattr(a, "__name__", "agent"))
                if nm in self.agent_specs:
                    raise ValueError(f"two agents are named {nm!r}: pass a dict to name them")
                self.agent_specs[nm] = a
        if len(self.agent_specs) < 2:
            raise ValueError("a league needs at least two agents")
        built = []
        for nm, sp in self.agent_specs.items():
            if not nm or "|" in nm or any(ch.isspace() for ch in nm):
                raise ValueError(f"agent name {nm!r}: use a non-empty name without spaces or '|'")
            try:
                if isinstance(sp, str):
                    ag = make_agent(sp, name=nm)  # validates the spec now
                    ag.check_game(game)
                    built.append(ag)
                    ag.close()
                elif isinstance(sp, Agent):
                    sp.check_game(game)
                    built.append(sp)
            except AgentError as e:
                raise ValueError(str(e)) from None
        if on_error not in ("stop", "skip"):
            raise ValueError(f"on_error must be 'stop' or 'skip', not {on_error!r}")
        self.rounds = int(rounds)
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, not {rounds}")
        if matchups is not None:
            if isinstance(matchups, bool) or not isinstance(matchups, (int, np.integer)) or matchups < 1:
                raise ValueError(f"matchups must be a number of match-ups >= 1 (or None), not {matchups!r}")
            if self.rounds != 1:
                raise ValueError(f"rounds={rounds} with matchups={matchups}: sampled match-ups take no rounds")
        self.matchups = None if matchups is None else int(matchups)
        self.path = None if path is None else os.fspath(path)
        self.store_path, self.import_path = store_path_for(self.path) if self.path else (None, None)
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise ValueError(f"workers must be a number of processes >= 1, not {workers!r}")
        self.workers = int(workers)
        if concurrent is None:
            self.concurrent = auto_concurrency(built) if adjudicate is None else 1
        elif isinstance(concurrent, bool) or not isinstance(concurrent, (int, np.integer)) or concurrent < 1:
            raise ValueError(f"concurrent must be a number of games >= 1 (None: automatic), not {concurrent!r}")
        else:
            self.concurrent = int(concurrent)
        if self.concurrent > 1 and adjudicate is not None:
            raise ValueError(f"concurrent={self.concurrent}: adjudication follows one game at a time; use "
                             "concurrent=1 with adjudicate")
        _check_max_plies(max_plies)
        self.event = event or f"mavgame {game} league"
        self.board_size = int(board_size)
        self.flags = int(flags)
        if isinstance(adjudicate, (int, float)) and not isinstance(adjudicate, bool):
            adjudicate = Adjudicator(int(adjudicate))
        if adjudicate is not None:
            _check_uci_game(game)
        self.adjudicator = adjudicate
        self.max_plies = max_plies
        self.seed = int(seed)
        self.on_error = on_error
        self.executor = executor
        self.openings = self._resolve_openings(openings)
        names = list(self.agent_specs)
        if pairs is None:
            self.pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
        else:
            self.pairs = []
            for a, b in pairs:
                if a not in self.agent_specs or b not in self.agent_specs or a == b:
                    raise ValueError(f"pair ({a!r}, {b!r}): both must be distinct agents of {names}")
                self.pairs.append((a, b))
        self.errors: List[dict] = []
        self.import_report = None  # the ImportReport of a JSON-lines file read into the store

    # -- openings ---------------------------------------------------------------------------------

    @staticmethod
    def chess960(n: int, seed: int = 0) -> List[Opening]:
        """n distinct random Chess960 start positions (Scharnagl numbers drawn with ``seed``)."""
        return random_start_positions("chess960", n, seed)

    def _resolve_openings(self, openings) -> List[Opening]:
        if openings is None or isinstance(openings, (int, np.integer)):
            n = None if openings is None else int(openings)
            if registry.get(self.game).start_position is not None:   # Chess960: random start positions
                ops = random_start_positions(self.game, n or 10, self.seed)
            else:
                from .openings import load_openings
                ops = load_openings(self.game, board_size=self.board_size)
                if not ops:
                    ops = [Opening("start")]
                if n is not None:
                    if n < 1:
                        raise ValueError(f"the number of openings must be >= 1, not {n}")
                    if n > len(ops):
                        raise ValueError(f"{n} openings asked, but {self.game} ships {len(ops)} (give at most "
                                         f"{len(ops)}, a file, or random:PLIES:N for more)")
                    ops = ops[:n]
        else:
            ops = [o if isinstance(o, Opening) else Opening(str(i), tuple(o)) for i, o in enumerate(openings)]
        seen = set()
        for o in ops:
            if o.name in seen:
                raise ValueError(f"two openings are named {o.name!r}")
            seen.add(o.name)
            o.state(self.game, self.board_size, self.flags)  # checks legality now
        return ops

    # -- schedule ------------------------------------------------------------------------------------

    def schedule(self) -> List[_Task]:
        """Every game of the league, in a stable order (openings outermost, so early stops are balanced;
        sampled match-ups in their order, the two colours together)."""
        tasks = []
        if self.matchups is not None:
            for i in range(self.matchups):
                a, b, o = self.matchup(i)
                for first, second in ((a, b), (b, a)):
                    key = game_key(i, o.name, first, second)
                    tasks.append(_Task(key, first, second, o, i, _stable_seed(self.seed, key)))
            return tasks
        for r in range(self.rounds):
            for o in self.openings:
                for a, b in self.pairs:
                    for first, second in ((a, b), (b, a)):
                        key = game_key(r, o.name, first, second)
                        tasks.append(_Task(key, first, second, o, r, _stable_seed(self.seed, key)))
        return tasks

    def matchup(self, i: int) -> Tuple[str, str, Opening]:
        """The paper's match-up number ``i``: (agent, agent, opening), each drawn uniformly at random from
        the league's seed and ``i`` alone (the game's ``round`` field holds ``i``)."""
        rng = np.random.default_rng([self.seed & 0x7FFFFFFF, 0x6D61, int(i)])
        a, b = self.pairs[int(rng.integers(len(self.pairs)))]
        return a, b, self.openings[int(rng.integers(len(self.openings)))]

    def _header(self) -> dict:
        specs = {}
        for n, s in self.agent_specs.items():
            specs[n] = s if isinstance(s, str) else (getattr(s, "spec", None) or f"<{type(s).__name__}>")
        return {"type": "league", "version": FILE_VERSION, "game": self.game, "board_size": self.board_size,
                "flags": self.flags, "agents": specs, "openings": [o.to_dict() for o in self.openings],
                "rounds": self.rounds, "matchups": self.matchups, "max_plies": self.max_plies,
                "adjudicate": self.adjudicator.to_dict() if self.adjudicator else None, "seed": self.seed,
                "event": self.event}

    def _config(self) -> dict:
        return {"game": self.game, "board_size": self.board_size, "flags": self.flags, "agents": self.agent_specs,
                "max_plies": self.max_plies, "adjudicator": self.adjudicator}

    def _open_store(self) -> ResultStore:
        """The results store, with a JSON-lines file of an older version imported once."""
        st = ResultStore(self.store_path)
        try:
            if self.import_path and os.path.exists(self.import_path):
                rep = st.import_jsonl(self.import_path, game=self.game)
                if not rep.already:
                    self.import_report = rep
                    warnings.warn(f"results now kept in {self.store_path}; {rep}", ResultsWarning, stacklevel=3)
        except BaseException:
            st.close()
            raise
        return st

    def finished(self) -> List[GameRecord]:
        """The games of this league already played (in the store, or in memory)."""
        return self.results().games

    def results(self) -> LeagueResults:
        """The results so far: every stored game of this league's schedule.

        Stored games that are not games of this league (an agent or opening no longer in it) are not
        counted, and stored rows that are not valid games are refused; both are reported with a
        :class:`ResultsWarning` naming them."""
        if not self.path:
            recs, refused = list(getattr(self, "_memory", [])), []
        else:
            if not os.path.exists(self.store_path) and not (self.import_path and os.path.exists(self.import_path)):
                return LeagueResults(list(self.agent_specs), [], self.game, self.event)
            st = self._open_store()
            try:
                recs, refused = st.games(self.game)
            finally:
                st.close()
        keys = {t.key for t in self.schedule()}
        outside = [r for r in recs if r.key not in keys]
        if outside:
            agents = sorted({n for r in outside for n in (r.first, r.second) if n not in self.agent_specs})
            why = f" (agents not in this league: {', '.join(agents)})" if agents else " (openings or rounds not in it)"
            refused.append(f"{len(outside)} stored game(s) are not games of this league{why}, not counted: "
                           + ", ".join(r.key for r in outside[:5]) + (" ..." if len(outside) > 5 else ""))
        for msg in refused:
            warnings.warn(msg, ResultsWarning, stacklevel=2)
        return LeagueResults(list(self.agent_specs), [r for r in recs if r.key in keys], self.game, self.event)

    # -- running -------------------------------------------------------------------------------------

    def _accept(self, task: "_Task", payload: Any) -> GameRecord:
        """The record a worker sent for a task, checked (a wrong record is the game's error)."""
        rec = check_record(payload, game=self.game)
        if rec.key != task.key:
            raise RecordError(f"the worker sent game {rec.key!r} for game {task.key!r}")
        return rec

    def run(self, progress: bool = True, max_games: Optional[int] = None) -> LeagueResults:
        """Play every game not yet in the results store; return all results.

        ``max_games`` stops after that many new games (the rest can be played by a later run)."""
        memory: List[GameRecord] = getattr(self, "_memory", [])
        self._memory = memory
        store = None
        if self.path:
            store = self._open_store()
            try:
                store.register_run()
                header = store.header()
                if header is not None:
                    self._check_header(header)
                store.set_header(self._header())
            except BaseException:
                store.close()
                raise
            done_keys = store.keys()
        else:
            done_keys = {g.key for g in memory}
        try:
            self._run(store, done_keys, memory, progress, max_games)
        finally:
            if store is not None:
                store.close()
        return self.results()

    def _run(self, store: Optional[ResultStore], done_keys: set, memory: List[GameRecord], progress: bool,
             max_games: Optional[int]) -> None:
        todo = [t for t in self.schedule() if t.key not in done_keys]
        if max_games is not None:
            todo = todo[:max(0, int(max_games))]
        bar = None
        if progress and todo:
            from .._progress import tqdm
            bar = tqdm(total=len(todo), desc=f"{self.game} league", unit="game", dynamic_ncols=True)
        failed: List[dict] = []
        stopping = [False]
        played = 0
        if self.executor is not None:
            ex = self.executor
            if hasattr(ex, "bind"):
                ex = ex.bind(self._config())
        elif self.concurrent > 1 and len(todo) > 1:
            ex = ConcurrentExecutor(self._config(), min(self.concurrent, len(todo)))
        elif self.workers > 1 and len(todo) > 1:
            ex = _ProcessExecutor(self._config(), min(self.workers, len(todo)))
        else:
            ex = _SerialExecutor(self._config())
        try:
            for task, status, payload in ex.run(todo, lambda: stopping[0]):
                if status == "ok":
                    try:
                        rec = self._accept(task, payload)
                    except RecordError as e:
                        status, payload = "error", {"key": task.key, "error": f"invalid game record: {e}",
                                                    "traceback": ""}
                if status == "ok":
                    if store is not None:
                        store.add_game(rec)
                    else:
                        memory.append(rec)
                    played += 1
                    if bar is not None:
                        bar.update(1)
                        bar.set_postfix_str(f"{rec.first} {rec.result} {rec.second}", refresh=False)
                else:
                    payload = dict(payload, type="error", first=task.first, second=task.second,
                                   opening=task.opening.name)
                    failed.append(payload)
                    self.errors.append(payload)
                    if store is not None:
                        store.add_error(task.key, payload["error"], first=task.first, second=task.second,
                                        opening=task.opening.name, traceback=payload.get("traceback", ""))
                    if bar is not None:
                        bar.write(f"error in game {task.key}: {payload['error']}")
                    if self.on_error == "stop":
                        stopping[0] = True
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
                bar = None
            where = f" in {self.store_path}; run again to resume" if store is not None else ""
            raise LeagueInterrupted(f"league interrupted after {played} new game(s); finished games are saved{where}") from None
        finally:
            if bar is not None:
                bar.close()
        if failed and self.on_error == "stop":
            e = failed[0]
            where = (f"; {played} game(s) finished in this run are saved in {self.store_path}"
                     if store is not None else "")
            more = f" (and {len(failed) - 1} more failed game(s))" if len(failed) > 1 else ""
            raise LeagueError(f"game {e['key']} ({e['first']} vs {e['second']}, opening {e['opening']}) failed: "
                              f"{e['error']}{more}{where}")

    def _check_header(self, header: dict) -> None:
        if header.get("game") != self.game:
            raise ValueError(f"{self.path} holds a {header.get('game')!r} league, not {self.game!r}: "
                             "use another file")
        if int(header.get("board_size") or 0) != self.board_size or int(header.get("flags") or 0) != self.flags:
            raise ValueError(f"{self.path} was played with board_size={header.get('board_size')} "
                             f"flags={header.get('flags')}, not {self.board_size}/{self.flags}")
        if (header.get("matchups") is None) != (self.matchups is None):
            def kind(m):
                return "the full round robin" if m is None else f"{m} sampled match-ups"
            raise ValueError(f"{self.path} holds {kind(header.get('matchups'))}, not {kind(self.matchups)}: "
                             "use another file")
        old = header.get("agents") or {}
        for n, s in self.agent_specs.items():
            if n in old and isinstance(s, str) and old[n] != s:
                raise ValueError(f"{self.path}: agent {n!r} was {old[n]!r} there, now {s!r}; "
                                 "rename the agent or use another file")


def match(first: Any, second: Any, game: str = "connect_four", openings: Union[None, int, Sequence[Opening]] = None,
          *, progress: bool = True, **kwargs) -> LeagueResults:
    """A two-agent league: each opening played with both colours (keyword arguments as for League)."""
    na = first.name if isinstance(first, Agent) else make_agent(first).name
    nb = second.name if isinstance(second, Agent) else make_agent(second).name
    if na == nb:
        na, nb = na + "-1", nb + "-2"
    kwargs.setdefault("event", f"mavgame {game} match: {na} vs {nb}")
    return League({na: first, nb: second}, game, openings, **kwargs).run(progress=progress)
