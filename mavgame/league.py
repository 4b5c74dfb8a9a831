"""Head-to-head matches and leagues between agents, with Elo ratings.

A league plays every pair of agents from every opening of an opening set, once with each colour
(``rounds`` times over), as in the MAV paper's evaluation.  Games run in parallel over processes
with a progress bar.  Each finished game is appended at once to a JSON-lines file, so a league
that is interrupted (Ctrl-C, a crash, a killed job) resumes where it stopped when run again with
the same file: finished games are never played twice nor lost.

    >>> from mavgame.league import League
    >>> lg = League({"random": "random", "uct100": "uct:sims=100", "perfect": "perfect"},
    ...             game="connect_four", openings=4, path="c4.jsonl", workers=2)
    >>> res = lg.run()                  # plays what the file does not have yet
    >>> print(res.matrix_table())       # W/D/L per pair
    >>> print(res.elo().table())        # maximum-likelihood Elo with 95% intervals
    >>> res.write_games("c4.pgn")       # PGN for the chess family, move lists for other games

Chess960: ``openings=League.chess960(n, seed)`` (random start positions, both colours each).
Adjudication: ``adjudicate=Adjudicator(margin_cp=1200)`` ends chess games once an engine
evaluation passes the margin (the MAV paper did this for its internal-search runs);
``max_plies`` ends any game as a draw after that many moves.

The file format: a first line ``{"type": "league", ...}`` with the configuration, then one line
``{"type": "game", ...}`` per finished game (a :class:`GameRecord`).  A torn last line left by a
killed run is cut off on resume.
"""
from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from .agents import Agent, AgentError, make_agent, resolve_move

__all__ = ["Opening", "GameRecord", "Adjudicator", "League", "LeagueResults", "LeagueError", "play_game",
           "match", "load_results", "to_pgn", "CHESS_FAMILY"]

CHESS_FAMILY = ("chess", "chess960", "gardner")
FILE_VERSION = 1


class LeagueError(RuntimeError):
    """A game of the league failed (the message names the game and the cause); finished games are saved."""


# ---------------------------------------------------------------------------------------------
# openings and game records


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
                s.push_str(m)
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
    reason: str                    # checkmate, connected, adjudication, max plies, ...
    seconds: float = 0.0
    think: List[float] = field(default_factory=lambda: [0.0, 0.0])
    seed: int = 0
    board_size: int = 0
    flags: int = 0

    def score_first(self) -> float:
        return {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[self.result]

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["type"] = "game"
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "GameRecord":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# ---------------------------------------------------------------------------------------------
# adjudication


class Adjudicator:
    """Ends chess-family games early by an engine evaluation.

    After each move (from ``min_ply`` on) the engine evaluates the position with ``nodes``; once the
    evaluation is decisive (at least ``margin_cp`` centipawns, or a mate score) for the same side
    ``plies`` times in a row, the game is scored as a win for that side (reason "adjudication").
    The engine starts in whichever process plays the game."""

    def __init__(self, margin_cp: int = 1200, *, plies: int = 1, engine: str = "stockfish", nodes: int = 20000,
                 min_ply: int = 0):
        if margin_cp <= 0:
            raise ValueError(f"margin_cp must be positive, not {margin_cp}")
        self.margin_cp = int(margin_cp)
        self.plies = int(plies)
        self.engine_path = engine
        self.nodes = int(nodes)
        self.min_ply = int(min_ply)
        self._engine = None
        self._pid = None
        self._streak = (0, 0)

    def to_dict(self) -> dict:
        return {"margin_cp": self.margin_cp, "plies": self.plies, "engine": self.engine_path, "nodes": self.nodes,
                "min_ply": self.min_ply}

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_engine"] = None
        return d

    def _eng(self, game: str):
        from .uci import UCIEngine
        if self._engine is not None and self._pid != os.getpid():
            self._engine = None  # inherited through fork: the parent's engine
        if self._engine is None or self._engine.closed:
            self._engine = UCIEngine(self.engine_path, options={"Threads": 1, "Hash": 16})
            self._pid = os.getpid()
        want = game == "chess960"
        if "uci_chess960" in self._engine.options and self._engine.option_value("UCI_Chess960") != (
                "true" if want else "false"):
            self._engine.set_option("UCI_Chess960", want)
        return self._engine

    def start(self, game: str) -> None:
        if game not in ("chess", "chess960"):
            raise ValueError(f"engine adjudication is for chess and Chess960, not {game!r}")
        self._streak = (0, 0)
        self._eng(game).new_game()

    def check(self, state) -> Optional[str]:
        """"1-0" / "0-1" when the game is adjudicated after the last move, else None."""
        if len(state.history()) < self.min_ply:
            return None
        eng = self._eng(state.game)
        res = eng.go(state.text(), nodes=self.nodes)
        if res.score is None:
            return None
        cp = res.score.to_cp()
        if state.to_move == 1:
            cp = -cp  # White's view
        side = 1 if cp >= self.margin_cp else (-1 if cp <= -self.margin_cp else 0)
        prev_side, n = self._streak
        n = n + 1 if side != 0 and side == prev_side else (1 if side != 0 else 0)
        self._streak = (side, n)
        if side != 0 and n >= self.plies:
            return "1-0" if side > 0 else "0-1"
        return None

    def close(self) -> None:
        if self._engine is not None and self._pid == os.getpid():
            self._engine.close()
        self._engine = None


# ---------------------------------------------------------------------------------------------
# one game


def play_game(first: Agent, second: Agent, game: str, opening: Optional[Opening] = None, *, board_size: int = 0,
              flags: int = 0, max_plies: Optional[int] = None, adjudicator: Optional[Adjudicator] = None,
              seed: int = 0, key: str = "", round: int = 0, on_move: Optional[Callable] = None) -> GameRecord:
    """Play one game between two agents and return its record.

    ``max_plies`` (moves after the opening) ends the game as a draw; ``on_move(state, move)`` is
    called after every move (e.g. to print the board)."""
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
        t = time.perf_counter()
        probe = state.copy()
        mv = ag.act(probe)
        think[p] += time.perf_counter() - t
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
                      board_size=board_size, flags=flags)


# ---------------------------------------------------------------------------------------------
# PGN and move lists


def _pgn_escape(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


def to_pgn(rec: GameRecord, event: str = "mavgame league") -> str:
    """PGN of a chess-family game (SAN moves from the opening's start, opening moves included)."""
    if rec.game not in CHESS_FAMILY:
        raise ValueError(f"PGN is for the chess family, not {rec.game!r}")
    s = _core.State(rec.game, rec.start, rec.board_size, rec.flags)
    standard = _core.State("chess").text()
    tags = [("Event", event), ("Site", "mavgame"), ("Date", "????.??.??"), ("Round", str(rec.round + 1)),
            ("White", rec.first), ("Black", rec.second), ("Result", rec.result)]
    start_text = s.text()
    if rec.game == "chess960":
        tags.append(("Variant", "Chess960"))
    elif rec.game == "gardner":
        tags.append(("Variant", "Gardner"))
    if rec.game != "chess" or start_text != standard:
        tags += [("SetUp", "1"), ("FEN", start_text)]
    tags += [("Opening", rec.opening), ("Termination", rec.reason), ("PlyCount", str(len(rec.opening_moves) + len(rec.moves)))]
    out = [f'[{k} "{_pgn_escape(v)}"]' for k, v in tags]
    toks: List[str] = []
    fields = start_text.split()
    move_no = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    all_moves = list(rec.opening_moves) + list(rec.moves)
    for i, m in enumerate(all_moves):
        a = s.action_from_str(m)
        san = _core.san(s, a)
        after_comment = False
        if i == len(rec.opening_moves) and rec.opening_moves:
            toks.append("{ end of opening }")
            after_comment = True
        if s.to_move == 0:
            toks.append(f"{move_no}.")
        elif i == 0 or after_comment:
            toks.append(f"{move_no}...")
        toks.append(san)
        s.push(a)
        if s.to_move == 0:
            move_no += 1
    toks.append(rec.result)
    body, line = [], ""
    for t in toks:
        if len(line) + len(t) + 1 > 79:
            body.append(line)
            line = t
        else:
            line = f"{line} {t}" if line else t
    body.append(line)
    return "\n".join(out) + "\n\n" + "\n".join(body) + "\n"


def to_movelist(rec: GameRecord) -> str:
    """One line per game: ``first - second result [reason] opening: moves | moves``."""
    op = " ".join(rec.opening_moves)
    return (f"{rec.first} - {rec.second} {rec.result} [{rec.reason}] {rec.opening}: "
            f"{op + ' | ' if op else ''}{' '.join(rec.moves)}")


# ---------------------------------------------------------------------------------------------
# results


class LeagueResults:
    """Finished games of a league: results matrix, Elo and exports."""

    def __init__(self, names: Sequence[str], games: Sequence[GameRecord], game: str = ""):
        self.names = list(names)
        self.games = list(games)
        self.game = game
        idx = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        self.wins = np.zeros((n, n), dtype=np.int64)
        self.draws = np.zeros((n, n), dtype=np.int64)
        for g in self.games:
            if g.first not in idx or g.second not in idx:
                continue
            i, j = idx[g.first], idx[g.second]
            if g.result == "1-0":
                self.wins[i, j] += 1
            elif g.result == "0-1":
                self.wins[j, i] += 1
            else:
                self.draws[i, j] += 1
                self.draws[j, i] += 1

    def __len__(self) -> int:
        return len(self.games)

    def wdl(self, a: str, b: str) -> Tuple[int, int, int]:
        """(wins, draws, losses) of agent a against agent b."""
        i, j = self.names.index(a), self.names.index(b)
        return int(self.wins[i, j]), int(self.draws[i, j]), int(self.wins[j, i])

    def matrix_table(self) -> str:
        """Square table: row agent's W/D/L against the column agent."""
        n = len(self.names)
        cells = [["" if i == j else f"{self.wins[i, j]}/{self.draws[i, j]}/{self.wins[j, i]}" for j in range(n)]
                 for i in range(n)]
        w0 = max([len("W/D/L")] + [len(x) for x in self.names])
        w = max([6] + [len(x) for x in self.names] + [len(c) for row in cells for c in row])
        lines = [f"{'W/D/L':<{w0}}  " + "  ".join(f"{x:>{w}}" for x in self.names)]
        for i, name in enumerate(self.names):
            lines.append(f"{name:<{w0}}  " + "  ".join(f"{c:>{w}}" for c in cells[i]))
        return "\n".join(lines)

    def elo(self, anchors: Optional[Dict[str, float]] = None, **kwargs):
        """Maximum-likelihood Elo (see :func:`mavgame.elo.fit_elo`), calibrated if ``anchors`` given."""
        from .elo import calibrate, fit_elo
        played = [i for i in range(len(self.names)) if (self.wins[i].sum() + self.wins[:, i].sum()
                                                          + self.draws[i].sum()) > 0]
        if len(played) < 2:
            raise ValueError("fewer than two agents have finished games: no ratings yet")
        names = [self.names[i] for i in played]
        W = self.wins[np.ix_(played, played)]
        D = self.draws[np.ix_(played, played)]
        r = fit_elo(names, W, D, **kwargs)
        if anchors:
            r = calibrate(r, {k: v for k, v in anchors.items() if k in names})
        return r

    def write_games(self, path: str) -> int:
        """PGN (chess family) or move lists (other games) of all games; returns the count."""
        with open(path, "w") as f:
            for g in self.games:
                if g.game in CHESS_FAMILY:
                    f.write(to_pgn(g) + "\n")
                else:
                    f.write(to_movelist(g) + "\n")
        return len(self.games)


def _read_jsonl(path: str, repair: bool = False) -> Tuple[Optional[dict], List[dict], List[dict]]:
    """(header, game dicts, error dicts) of a league file; a torn last line is cut off when ``repair``."""
    header = None
    games: List[dict] = []
    errors: List[dict] = []
    if not os.path.exists(path):
        return None, games, errors
    good = 0
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    lineno = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break  # torn last line (no newline)
        raw = data[pos:nl]
        lineno += 1
        try:
            d = json.loads(raw) if raw.strip() else None
        except ValueError:
            if data.find(b"\n", nl + 1) < 0 and nl + 1 >= len(data):
                break  # damaged last line
            raise ValueError(f"{path}:{lineno}: not a JSON line: {raw[:80]!r}") from None
        pos = nl + 1
        good = pos
        if d is None:
            continue
        t = d.get("type")
        if t == "league":
            if header is None:
                header = d
        elif t == "game":
            games.append(d)
        elif t == "error":
            errors.append(d)
    if repair and good != len(data):
        with open(path, "rb+") as f:
            f.truncate(good)
    return header, games, errors


def load_results(path: str) -> LeagueResults:
    """The results stored in a league file."""
    header, games, _ = _read_jsonl(path)
    if header is None and not games:
        raise ValueError(f"{path} is not a league file (no header and no games)")
    recs = [GameRecord.from_dict(g) for g in games]
    names = list((header or {}).get("agents", {}))
    for r in recs:
        for n in (r.first, r.second):
            if n not in names:
                names.append(n)
    return LeagueResults(names, recs, (header or {}).get("game", ""))


# ---------------------------------------------------------------------------------------------
# workers


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
    from multiprocessing.util import Finalize
    Finalize(_WS, _WS.close, exitpriority=10)  # close engines when the worker exits


def _pool_run(task: _Task) -> Tuple[_Task, str, Any]:
    assert _WS is not None
    status, payload = _run_task(_WS, task)
    return task, status, payload


def _mp_context(workers: int = 1):
    """The worker processes' context from :mod:`mavgame.workers` (the one place that creates them): fork
    where safe, forkserver once torch is loaded, threads per worker from the worker count."""
    from .workers import worker_context
    return worker_context(workers)


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
    """Games over a process pool; stops submitting when asked and drains the games in flight."""

    def __init__(self, config, workers: int):
        self.config = config
        self.workers = workers

    def run(self, tasks: List[_Task], stop: Callable[[], bool]) -> Iterator[Tuple[_Task, str, Any]]:
        from .workers import pool as worker_pool
        pool = worker_pool(self.workers, _pool_init, (self.config,))
        pending = []
        it = iter(tasks)
        window = 2 * self.workers
        clean = False
        try:
            exhausted = False
            while True:
                while not exhausted and not stop() and len(pending) < window:
                    try:
                        t = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    pending.append(pool.apply_async(_pool_run, (t,)))
                if not pending:
                    break
                # wait for the oldest-ready result
                done = None
                while done is None:
                    for i, r in enumerate(pending):
                        if r.ready():
                            done = pending.pop(i)
                            break
                    else:
                        pending[0].wait(0.05)
                yield done.get()
            clean = True
        finally:
            if clean:
                pool.close()
                pool.join()
            else:
                pool.terminate()
                pool.join()


# ---------------------------------------------------------------------------------------------
# the league


def _lock(f, path: str) -> None:
    """An exclusive lock on an open results file, so that two runs never append to the same file."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise ValueError(f"{path} is being written by another league run (it holds the file's lock)") from None


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
        JSON-lines file for the results (None: keep them in memory only); reused to resume.
    workers:
        Processes playing games in parallel (1: in this process).
    adjudicate:
        An :class:`Adjudicator` (chess and Chess960), or a centipawn margin.
    max_plies:
        Moves after the opening before a game is called a draw (None: play to the end).
    pairs:
        Restrict to these (a, b) pairs (default: all pairs).
    on_error:
        "stop" (default): finish the games in flight, save them, raise :class:`LeagueError`;
        "skip": record the error in the file and continue (the game is retried on resume).
    """

    def __init__(self, agents: Union[Dict[str, Any], Sequence[Any]], game: str = "connect_four",
                 openings: Union[None, int, Sequence[Opening]] = None, *, rounds: int = 1, path: Optional[str] = None,
                 workers: int = 1, board_size: int = 0, flags: int = 0,
                 adjudicate: Union[None, int, Adjudicator] = None, max_plies: Optional[int] = None, seed: int = 0,
                 pairs: Optional[Sequence[Tuple[str, str]]] = None, on_error: str = "stop",
                 executor: Any = None):
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
        for nm, sp in self.agent_specs.items():
            if not nm or "|" in nm or any(ch.isspace() for ch in nm):
                raise ValueError(f"agent name {nm!r}: use a non-empty name without spaces or '|'")
            try:
                if isinstance(sp, str):
                    ag = make_agent(sp, name=nm)  # validates the spec now
                    ag.check_game(game)
                    ag.close()
                elif isinstance(sp, Agent):
                    sp.check_game(game)
            except AgentError as e:
                raise ValueError(str(e)) from None
        if on_error not in ("stop", "skip"):
            raise ValueError(f"on_error must be 'stop' or 'skip', not {on_error!r}")
        self.rounds = int(rounds)
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, not {rounds}")
        self.path = path
        self.workers = max(1, int(workers))
        self.board_size = int(board_size)
        self.flags = int(flags)
        if isinstance(adjudicate, (int, float)) and not isinstance(adjudicate, bool):
            adjudicate = Adjudicator(int(adjudicate))
        if adjudicate is not None and game not in ("chess", "chess960"):
            raise ValueError(f"engine adjudication is for chess and Chess960, not {game!r}")
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

    # -- openings ---------------------------------------------------------------------------------

    @staticmethod
    def chess960(n: int, seed: int = 0) -> List[Opening]:
        """n distinct random Chess960 start positions (Scharnagl numbers drawn with ``seed``)."""
        if not 1 <= n <= 960:
            raise ValueError(f"the number of Chess960 positions must lie in 1..960, not {n}")
        rng = np.random.default_rng(seed)
        nums = rng.choice(960, size=n, replace=False)
        return [Opening(f"960-{int(k)}", (), _core.chess960_fen(int(k))) for k in nums]

    def _resolve_openings(self, openings) -> List[Opening]:
        if openings is None or isinstance(openings, (int, np.integer)):
            n = None if openings is None else int(openings)
            if self.game == "chess960":
                ops = self.chess960(n or 10, self.seed)
            else:
                from .openings import load_openings
                ops = load_openings(self.game, board_size=self.board_size)
                if not ops:
                    ops = [Opening("start")]
                if n is not None:
                    if n < 1:
                        raise ValueError(f"the number of openings must be >= 1, not {n}")
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
        """Every game of the league, in a stable order (openings outermost, so early stops are balanced)."""
        tasks = []
        for r in range(self.rounds):
            for o in self.openings:
                for a, b in self.pairs:
                    for first, second in ((a, b), (b, a)):
                        key = f"{r}|{o.name}|{first}|{second}"
                        tasks.append(_Task(key, first, second, o, r, _stable_seed(self.seed, key)))
        return tasks

    def _header(self) -> dict:
        specs = {}
        for n, s in self.agent_specs.items():
            specs[n] = s if isinstance(s, str) else (getattr(s, "spec", None) or f"<{type(s).__name__}>")
        return {"type": "league", "version": FILE_VERSION, "game": self.game, "board_size": self.board_size,
                "flags": self.flags, "agents": specs, "openings": [o.to_dict() for o in self.openings],
                "rounds": self.rounds, "max_plies": self.max_plies,
                "adjudicate": self.adjudicator.to_dict() if self.adjudicator else None, "seed": self.seed}

    def _config(self) -> dict:
        return {"game": self.game, "board_size": self.board_size, "flags": self.flags, "agents": self.agent_specs,
                "max_plies": self.max_plies, "adjudicator": self.adjudicator}

    def finished(self) -> List[GameRecord]:
        """Games already in the results file."""
        if not self.path:
            return list(getattr(self, "_memory", []))
        _, games, _ = _read_jsonl(self.path)
        return [GameRecord.from_dict(g) for g in games]

    def results(self) -> LeagueResults:
        return LeagueResults(list(self.agent_specs), self.finished(), self.game)

    # -- running -------------------------------------------------------------------------------------

    def run(self, progress: bool = True, max_games: Optional[int] = None) -> LeagueResults:
        """Play every game not yet in the results file; return all results.

        ``max_games`` stops after that many new games (the rest can be played by a later run)."""
        done_keys = set()
        memory: List[GameRecord] = getattr(self, "_memory", [])
        self._memory = memory
        out = None
        if self.path:
            header, games, _ = _read_jsonl(self.path, repair=True)
            if header is not None:
                self._check_header(header)
            done_keys = {g["key"] for g in games}
            new_file = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
            out = open(self.path, "a")
            _lock(out, self.path)
            if new_file or header is None:
                out.write(json.dumps(self._header()) + "\n")
                out.flush()
        else:
            done_keys = {g.key for g in memory}
        todo = [t for t in self.schedule() if t.key not in done_keys]
        if max_games is not None:
            todo = todo[:max(0, int(max_games))]
        bar = None
        if progress and todo:
            from ._progress import tqdm
            bar = tqdm(total=len(todo), desc=f"{self.game} league", unit="game", dynamic_ncols=True)
        failed: List[dict] = []
        stopping = [False]
        played = 0
        if self.executor is not None:
            ex = self.executor
            if hasattr(ex, "bind"):
                ex = ex.bind(self._config())
        elif self.workers > 1 and len(todo) > 1:
            ex = _ProcessExecutor(self._config(), min(self.workers, len(todo)))
        else:
            ex = _SerialExecutor(self._config())
        try:
            for task, status, payload in ex.run(todo, lambda: stopping[0]):
                if status == "ok":
                    rec = GameRecord.from_dict(payload)
                    if out is not None:
                        out.write(json.dumps(rec.to_dict()) + "\n")
                        out.flush()
                        os.fsync(out.fileno())
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
                    if out is not None:
                        out.write(json.dumps(payload) + "\n")
                        out.flush()
                    if bar is not None:
                        bar.write(f"error in game {task.key}: {payload['error']}")
                    if self.on_error == "stop":
                        stopping[0] = True
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
                bar = None
            where = f" in {self.path}; run again to resume" if self.path else ""
            raise LeagueError(f"league interrupted after {played} new game(s); finished games are saved{where}") from None
        finally:
            if bar is not None:
                bar.close()
            if out is not None:
                out.close()
        if failed and self.on_error == "stop":
            e = failed[0]
            where = f"; {played} game(s) finished in this run are saved in {self.path}" if self.path else ""
            more = f" (and {len(failed) - 1} more failed game(s))" if len(failed) > 1 else ""
            raise LeagueError(f"game {e['key']} ({e['first']} vs {e['second']}, opening {e['opening']}) failed: "
                              f"{e['error']}{more}{where}")
        return self.results()

    def _check_header(self, header: dict) -> None:
        if header.get("game") != self.game:
            raise ValueError(f"{self.path} holds a {header.get('game')!r} league, not {self.game!r}: "
                             "use another file")
        if int(header.get("board_size") or 0) != self.board_size or int(header.get("flags") or 0) != self.flags:
            raise ValueError(f"{self.path} was played with board_size={header.get('board_size')} "
                             f"flags={header.get('flags')}, not {self.board_size}/{self.flags}")
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
    return League({na: first, nb: second}, game, openings, **kwargs).run(progress=progress)
