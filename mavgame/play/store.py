"""The results store of leagues and matches: one SQLite database per league.

Games are rows of a table whose primary key is the scheduled game (``round|opening|first|second``),
so a game can never count twice; every row is written in its own transaction by the process that
schedules the games (workers, local or on Ray, send their results to it), in WAL mode with
``synchronous=FULL``: a run killed at any moment (kill -9 included) leaves every game it recorded
and nothing half-written, and the next run resumes.  The schema's constraints refuse a result
other than ``1-0``, ``0-1``, ``1/2-1/2``, a key that does not name the game, and rows that are not
JSON where JSON is stored.

One run writes a store at a time: a run registers itself (host and process id) in the ``runs``
table inside a write transaction; a second run on the same store is refused while the first is
alive, and a run that was killed is recognised as dead (its process is gone) and replaced.

JSON lines, PGN and CSV are exports (:meth:`LeagueResults.write_jsonl`, ``write_games``,
``write_csv``).  A JSON-lines results file of older mavgame versions is read once into the store
(:meth:`ResultStore.import_jsonl`): every line is validated (:func:`mavgame.play.records.check_record`)
and each refused line is reported with its number and the reason.

Tables (``sqlite3 league.sqlite .schema`` shows them): ``meta`` (the league's configuration as
JSON under ``league``, the schema version, the last Elo table ``mavgame league`` printed under ``elo``,
with its origin and prior: :meth:`ResultStore.elo`), ``games`` (one row per finished game), ``errors``
(games that failed, with the error; they are played again on resume), ``runs`` (the run writing
the store now), ``imports`` (JSON-lines files read in, with what was refused).
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .records import GameRecord, RecordError, check_record

__all__ = ["ResultStore", "StoredElo", "StoreError", "ImportReport", "read_jsonl", "store_path_for", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL CHECK (json_valid(value))
);
CREATE TABLE IF NOT EXISTS games (
    key           TEXT PRIMARY KEY,
    game          TEXT NOT NULL,
    round         INTEGER NOT NULL CHECK (typeof(round) = 'integer' AND round >= 0),
    opening       TEXT NOT NULL,
    first         TEXT NOT NULL,
    second        TEXT NOT NULL CHECK (second <> first),
    start         TEXT,
    opening_moves TEXT NOT NULL CHECK (json_valid(opening_moves) AND json_type(opening_moves) = 'array'),
    moves         TEXT NOT NULL CHECK (json_valid(moves) AND json_type(moves) = 'array'),
    result        TEXT NOT NULL CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
    reason        TEXT NOT NULL,
    seconds       REAL NOT NULL DEFAULT 0,
    think         TEXT NOT NULL DEFAULT '[0, 0]' CHECK (json_valid(think)),
    seed          INTEGER NOT NULL DEFAULT 0,
    board_size    INTEGER NOT NULL DEFAULT 0,
    flags         INTEGER NOT NULL DEFAULT 0,
    finished_at   TEXT,
    CHECK (key = round || '|' || opening || '|' || first || '|' || second)
);
CREATE TABLE IF NOT EXISTS errors (
    id        INTEGER PRIMARY KEY,
    key       TEXT NOT NULL,
    first     TEXT,
    second    TEXT,
    opening   TEXT,
    error     TEXT NOT NULL,
    traceback TEXT,
    at        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    host    TEXT NOT NULL,
    pid     INTEGER NOT NULL,
    started TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS imports (
    source   TEXT PRIMARY KEY,
    at       TEXT NOT NULL,
    imported INTEGER NOT NULL,
    refused  TEXT NOT NULL CHECK (json_valid(refused))
);
"""

_GAME_COLUMNS = ("key", "game", "round", "opening", "first", "second", "start", "opening_moves", "moves", "result",
                 "reason", "seconds", "think", "seed", "board_size", "flags", "finished_at")
_JSON_COLUMNS = ("opening_moves", "moves", "think")


class StoreError(ValueError):
    """A results store that cannot be used (not a database, damaged, written by another run)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def store_path_for(path: str) -> Tuple[str, Optional[str]]:
    """(store path, JSON-lines file to import) for a results path given by a user.

    A ``.jsonl`` name (the results file of older versions) keeps its results in the ``.sqlite``
    file beside it and imports the JSON-lines file once; any other name is the store itself."""
    p = os.fspath(path)
    if p.endswith(".jsonl"):
        return p[: -len(".jsonl")] + ".sqlite", p
    return p, None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class ImportReport:
    """What :meth:`ResultStore.import_jsonl` did: games imported, lines refused (line number, why)."""

    source: str
    imported: int = 0
    errors: int = 0
    refused: List[Tuple[int, str]] = field(default_factory=list)
    already: bool = False

    def __str__(self) -> str:
        if self.already:
            return f"{self.source} was imported before"
        s = f"{self.source}: {self.imported} game(s) imported"
        if self.errors:
            s += f", {self.errors} failed game(s) noted"
        if self.refused:
            s += f", {len(self.refused)} line(s) refused: " + "; ".join(f"line {n}: {why}" for n, why in self.refused)
        return s



class StoredElo(dict):
    """An Elo table as stored in a results store (the JSON of :meth:`mavgame.play.elo.EloResult.to_dict`): a
    plain dict, shown as a table in Jupyter (``_repr_html_``) and by ``to_pandas()``."""

    def rows(self) -> List[dict]:
        return list(self.get("rows") or [])

    def _repr_html_(self) -> str:
        from .._tables import html_table
        rows = self.rows()
        cols = [c for c in (rows[0] if rows else {}) if c != "agent"]
        return html_table(cols, [[r.get(c) for c in cols] for r in rows], self.get("method") or "Elo",
                          index=[r.get("agent") for r in rows])

    def to_pandas(self):
        """The table as a pandas DataFrame, one row per agent (needs pandas)."""
        from .._tables import pandas
        return pandas().DataFrame(self.rows()).set_index("agent")

class ResultStore:
    """A league's SQLite results store (see the module docstring).

    ``ResultStore(path)`` opens (or creates) the database; StoreError if the file exists and is not
    a mavgame results database."""

    def __init__(self, path: str, *, create: bool = True):
        self.path = os.fspath(path)
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            with open(self.path, "rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
            if head != _SQLITE_MAGIC:
                hint = " (a JSON-lines results file: give it a .jsonl name to import it)" if head[:1] == b"{" else ""
                raise StoreError(f"{self.path} is not a SQLite results store{hint}")
        elif not create:
            raise StoreError(f"{self.path}: no such results store")
        self._run_registered = False
        try:
            self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            row = self.db.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
            if row is None:
                self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(json.loads(row[0])) > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer mavgame (schema {row[0]}, this one reads "
                                 f"{SCHEMA_VERSION})")
            self.db.execute("SELECT count(*) FROM games").fetchone()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path} is not a usable results store: {e}") from None

    # -- transactions ----------------------------------------------------------------------------

    def _write(self, fn):
        """Runs fn(db) in one write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on error)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            out = fn(self.db)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return out

    # -- the run writing the store ----------------------------------------------------------------

    def register_run(self) -> None:
        """Claims the store for this process; StoreError if another live run holds it."""
        host, pid = socket.gethostname(), os.getpid()

        def claim(db):
            row = db.execute("SELECT host, pid, started FROM runs WHERE id = 1").fetchone()
            if row is not None and (row[0], row[1]) != (host, pid):
                if row[0] != host or _pid_alive(row[1]):
                    raise StoreError(f"{self.path} is being written by another league run (process {row[1]} on "
                                     f"{row[0]}, started {row[2]}); wait for it to finish (if no run is alive "
                                     f"there, release it: sqlite3 {self.path} 'DELETE FROM runs')")
            db.execute("INSERT OR REPLACE INTO runs VALUES (1, ?, ?, ?)", (host, pid, _now()))

        self._write(claim)
        self._run_registered = True

    def release_run(self) -> None:
        if self._run_registered:
            self._run_registered = False
            self._write(lambda db: db.execute("DELETE FROM runs WHERE id = 1 AND host = ? AND pid = ?",
                                              (socket.gethostname(), os.getpid())))

    # -- configuration ----------------------------------------------------------------------------

    def header(self) -> Optional[dict]:
        row = self.db.execute("SELECT value FROM meta WHERE name = 'league'").fetchone()
        return None if row is None else json.loads(row[0])

    def set_header(self, header: dict) -> None:
        self._write(lambda db: db.execute("INSERT OR REPLACE INTO meta VALUES ('league', ?)", (json.dumps(header),)))

    def elo(self) -> Optional["StoredElo"]:
        """The last Elo table stored (:meth:`mavgame.play.elo.EloResult.to_dict`: ratings, the scale's origin,
        the prior, the calibration) as a :class:`StoredElo` (a dict that Jupyter shows as a table), or None.
        To refit from the games: ``mavgame.play.load_results(path).elo()``."""
        row = self.db.execute("SELECT value FROM meta WHERE name = 'elo'").fetchone()
        return None if row is None else StoredElo(json.loads(row[0]))

    def set_elo(self, table: dict) -> None:
        """Stores an Elo table (JSON data, NaN-free) as the store's last one."""
        text = json.dumps(table, allow_nan=False)
        self._write(lambda db: db.execute("INSERT OR REPLACE INTO meta VALUES ('elo', ?)", (text,)))

    # -- games ------------------------------------------------------------------------------------

    def add_game(self, rec: GameRecord) -> bool:
        """Records a finished game; False if the game was recorded already (it is not counted twice)."""
        row = [getattr(rec, c) for c in _GAME_COLUMNS]
        for i, c in enumerate(_GAME_COLUMNS):
            if c in _JSON_COLUMNS:
                row[i] = json.dumps(row[i])
        try:
            self._write(lambda db: db.execute(
                f"INSERT INTO games ({', '.join(_GAME_COLUMNS)}) VALUES ({', '.join('?' * len(row))})", row))
        except sqlite3.IntegrityError as e:
            if self.db.execute("SELECT 1 FROM games WHERE key = ?", (rec.key,)).fetchone():
                return False
            raise RecordError(f"game {rec.key!r} refused by the store: {e}") from None
        return True

    def add_error(self, key: str, error: str, *, first: str = "", second: str = "", opening: str = "",
                  traceback: str = "") -> None:
        self._write(lambda db: db.execute(
            "INSERT INTO errors (key, first, second, opening, error, traceback, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, first, second, opening, error, traceback, _now())))

    def keys(self) -> set:
        return {r[0] for r in self.db.execute("SELECT key FROM games")}

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM games").fetchone()[0])

    def games(self, game: Optional[str] = None) -> Tuple[List[GameRecord], List[str]]:
        """(records, refused): every stored game, checked; a row that is not a valid game is refused
        with a message naming its key and why (never counted)."""
        recs: List[GameRecord] = []
        refused: List[str] = []
        cur = self.db.execute(f"SELECT rowid, {', '.join(_GAME_COLUMNS)} FROM games ORDER BY rowid")
        for row in cur:
            d = dict(zip(_GAME_COLUMNS, row[1:]))
            try:
                for c in _JSON_COLUMNS:
                    d[c] = json.loads(d[c])
                recs.append(check_record(d, game=game, replay=False))
            except (ValueError, TypeError) as e:
                refused.append(f"{self.path}: row {row[0]} (game {d.get('key')!r}) refused: {e}")
        return recs, refused

    def errors(self) -> List[dict]:
        cur = self.db.execute("SELECT key, first, second, opening, error, traceback, at FROM errors ORDER BY id")
        return [dict(zip(("key", "first", "second", "opening", "error", "traceback", "at"), r)) for r in cur]

    # -- JSON lines -------------------------------------------------------------------------------

    def import_jsonl(self, path: str, game: Optional[str] = None, *, force: bool = False) -> ImportReport:
        """Reads a JSON-lines results file into the store, once (see :func:`read_jsonl` for the checks).

        Games already in the store are not counted again (reported as duplicates).  The file is
        remembered (by absolute path): a second call does nothing unless ``force``."""
        src = os.path.abspath(path)
        rep = ImportReport(path)
        if not force and self.db.execute("SELECT 1 FROM imports WHERE source = ?", (src,)).fetchone():
            rep.already = True
            return rep
        header, recs, errors, refused = read_jsonl(path, game=game)
        rep.refused = refused

        def load(db):
            if not force and db.execute("SELECT 1 FROM imports WHERE source = ?", (src,)).fetchone():
                rep.already = True  # another run imported it meanwhile
                rep.refused = []
                return
            if header is not None and db.execute("SELECT 1 FROM meta WHERE name = 'league'").fetchone() is None:
                db.execute("INSERT INTO meta VALUES ('league', ?)", (json.dumps(header),))
            have = {r[0] for r in db.execute("SELECT key FROM games")}
            for lineno, rec in recs:
                if rec.key in have:
                    rep.refused.append((lineno, f"game {rec.key!r} is in the store already"))
                    continue
                row = [json.dumps(getattr(rec, c)) if c in _JSON_COLUMNS else getattr(rec, c) for c in _GAME_COLUMNS]
                try:
                    db.execute(f"INSERT INTO games ({', '.join(_GAME_COLUMNS)}) VALUES "
                               f"({', '.join('?' * len(row))})", row)
                except sqlite3.IntegrityError as e:
                    rep.refused.append((lineno, f"refused by the store: {e}"))
                    continue
                have.add(rec.key)
                rep.imported += 1
            for lineno, e in errors:
                db.execute("INSERT INTO errors (key, first, second, opening, error, traceback, at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (str(e.get("key", "")), str(e.get("first", "")), str(e.get("second", "")),
                            str(e.get("opening", "")), str(e.get("error", "")), str(e.get("traceback", "")), _now()))
                rep.errors += 1
            rep.refused.sort()
            db.execute("INSERT OR REPLACE INTO imports VALUES (?, ?, ?, ?)",
                       (src, _now(), rep.imported, json.dumps(rep.refused)))

        self._write(load)
        return rep

    def close(self) -> None:
        try:
            self.release_run()
        finally:
            self.db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({self.path!r})"


def read_league_store(path: str) -> Tuple[dict, List[GameRecord]]:
    """(header, games) of a SQLite store written by a league or match, whose header names the agents
    (``header["agents"]``: name -> spec). StoreError naming the file when it is missing, not a store, or has
    no such header."""
    if not os.path.isfile(path):
        raise StoreError(f"{path}: no such results store")
    with ResultStore(path, create=False) as st:
        header = st.header()
        games, _refused = st.games()
    if not header or not isinstance(header.get("agents"), dict):
        raise StoreError(f"{path}: not a league or match store (no header with the agents)")
    return header, games


def read_jsonl(path: str, game: Optional[str] = None
               ) -> Tuple[Optional[dict], List[Tuple[int, GameRecord]], List[Tuple[int, dict]], List[Tuple[int, str]]]:
    """Reads a JSON-lines results file without changing it: (header, [(line, record)],
    [(line, error dict)], [(line, why refused)]).

    Every line is checked: JSON, an object with a known ``type``, a valid game record
    (:func:`mavgame.play.records.check_record`, moves replayed), not a second copy of a game.  A last
    line without its end of line (a run killed while writing it) is refused, as is anything else
    that does not pass; nothing is dropped without being named."""
    header = None
    recs: List[Tuple[int, GameRecord]] = []
    errors: List[Tuple[int, dict]] = []
    refused: List[Tuple[int, str]] = []
    seen = {}
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    torn = lines[-1] != b""
    if not torn:
        lines = lines[:-1]
    for i, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if torn and i == len(lines):
            refused.append((i, f"incomplete last line (no end of line; a run was killed while writing it): "
                               f"{raw[:60]!r}"))
            break
        try:
            d = json.loads(raw)
        except ValueError as e:
            refused.append((i, f"not JSON ({e}): {raw[:60]!r}"))
            continue
        if not isinstance(d, dict):
            refused.append((i, f"not a record (a JSON {type(d).__name__})"))
            continue
        t = d.get("type")
        if t == "league":
            if header is None:
                if game is not None and d.get("game") != game:
                    refused.append((i, f"the header is of a {d.get('game')!r} league, not {game!r}"))
                else:
                    header = d
            else:
                refused.append((i, "a second league header"))
        elif t == "game":
            try:
                rec = check_record(d, game=game if game is not None else (header or {}).get("game"))
            except RecordError as e:
                refused.append((i, str(e)))
                continue
            if rec.key in seen:
                refused.append((i, f"game {rec.key!r} again (first on line {seen[rec.key]})"))
                continue
            seen[rec.key] = i
            recs.append((i, rec))
        elif t == "error":
            errors.append((i, d))
        else:
            refused.append((i, f"unknown record type {t!r}"))
    return header, recs, errors, refused
