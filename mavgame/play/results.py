"""Results of a league or match: W/D/L matrix, Elo, exports (JSON lines, CSV, PGN), tables.

:class:`LeagueResults` holds finished games; in Jupyter it shows as a W/D/L table
(``_repr_html_``), and ``to_pandas()`` gives one row per game (pandas is optional).
:func:`load_results` reads a results store (SQLite) or a JSON-lines export.
"""
from __future__ import annotations

import csv
import json
import os
import warnings
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .pgn import to_movelist, to_pgn
from ..games import registry
from .records import GameRecord

__all__ = ["LeagueResults", "ResultsWarning", "load_results"]

_CSV_COLUMNS = ("key", "game", "round", "opening", "first", "second", "result", "reason", "plies", "seconds",
                "think_first", "think_second", "seed", "finished_at", "moves")


class ResultsWarning(UserWarning):
    """Stored games that were refused or not counted (the message names them and says why)."""


class LeagueResults:
    """Finished games of a league: results matrix, Elo and exports.

    Every game counts in the matrix; ``names`` are the agents (a game of an agent not among them is
    refused with ValueError: build results from the games of these agents only)."""

    def __init__(self, names: Sequence[str], games: Sequence[GameRecord], game: str = "",
                 event: Optional[str] = None):
        self.names = list(names)
        self.games = list(games)
        self.game = game
        self.event = event or (f"mavgame {game} league" if game else "mavgame league")
        idx = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        self.wins = np.zeros((n, n), dtype=np.int64)
        self.draws = np.zeros((n, n), dtype=np.int64)
        for g in self.games:
            if g.first not in idx or g.second not in idx:
                who = g.first if g.first not in idx else g.second
                raise ValueError(f"game {g.key!r}: agent {who!r} is not one of {self.names}")
            i, j = idx[g.first], idx[g.second]
            if g.result == "1-0":
                self.wins[i, j] += 1
            elif g.result == "0-1":
                self.wins[j, i] += 1
            elif g.result == "1/2-1/2":
                self.draws[i, j] += 1
                self.draws[j, i] += 1
            else:
                raise ValueError(f"game {g.key!r}: result {g.result!r} is not 1-0, 0-1 or 1/2-1/2")

    def __len__(self) -> int:
        return len(self.games)

    def wdl(self, a: str, b: str) -> Tuple[int, int, int]:
        """(wins, draws, losses) of agent a against agent b."""
        i, j = self.names.index(a), self.names.index(b)
        return int(self.wins[i, j]), int(self.draws[i, j]), int(self.wins[j, i])

    def _cells(self) -> List[List[str]]:
        n = len(self.names)
        return [["" if i == j else f"{self.wins[i, j]}/{self.draws[i, j]}/{self.wins[j, i]}" for j in range(n)]
                for i in range(n)]

    def matrix_table(self) -> str:
        """Square table: row agent's W/D/L against the column agent."""
        cells = self._cells()
        w0 = max([len("W/D/L")] + [len(x) for x in self.names])
        w = max([6] + [len(x) for x in self.names] + [len(c) for row in cells for c in row])
        lines = [f"{'W/D/L':<{w0}}  " + "  ".join(f"{x:>{w}}" for x in self.names)]
        for i, name in enumerate(self.names):
            lines.append(f"{name:<{w0}}  " + "  ".join(f"{c:>{w}}" for c in cells[i]))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.matrix_table()

    def __repr__(self) -> str:
        return f"<LeagueResults {self.game}: {len(self.names)} agents, {len(self.games)} games>"

    def _repr_html_(self) -> str:
        """The W/D/L matrix as HTML (Jupyter shows it as a table)."""
        from .._tables import html_table
        return html_table(self.names, self._cells(), f"{self.event}: {len(self.games)} games, row's W/D/L",
                          index=self.names)

    def rows(self) -> List[dict]:
        """One dict per game (the CSV and pandas columns)."""
        out = []
        for g in self.games:
            out.append({"key": g.key, "game": g.game, "round": g.round, "opening": g.opening, "first": g.first,
                        "second": g.second, "result": g.result, "reason": g.reason,
                        "plies": len(g.moves), "seconds": g.seconds, "think_first": g.think[0],
                        "think_second": g.think[1], "seed": g.seed, "finished_at": g.finished_at,
                        "moves": " ".join(g.moves)})
        return out

    def to_pandas(self):
        """One row per game as a pandas DataFrame (needs pandas); ``score_first`` is 1, 1/2 or 0."""
        from .._tables import pandas
        df = pandas().DataFrame(self.rows(), columns=list(_CSV_COLUMNS))
        df["score_first"] = df["result"].map({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5})
        return df

    to_dataframe = to_pandas

    def matrix_pandas(self):
        """The W/D/L matrix as a DataFrame of "W/D/L" strings (rows: agent, columns: opponent)."""
        from .._tables import pandas
        return pandas().DataFrame(self._cells(), index=self.names, columns=self.names)

    def elo(self, anchors: Optional[Dict[str, float]] = None, **kwargs):
        """Maximum-likelihood Elo (see :func:`mavgame.play.elo.fit_elo`), calibrated if ``anchors`` given.

        An anchor that names no agent with games is refused (ValueError naming it)."""
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
            unknown = [k for k in anchors if k not in names]
            if unknown:
                raise ValueError(f"anchor {unknown[0]!r} is not an agent with finished games "
                                 f"(agents: {', '.join(names)})")
            r = calibrate(r, dict(anchors))
        return r

    # -- exports -------------------------------------------------------------------------------------

    def write_games(self, path: str, event: Optional[str] = None) -> int:
        """PGN (chess family) or move lists (other games) of all games; returns the count."""
        with open(path, "w") as f:
            for g in self.games:
                if registry.in_family(g.game, "chess"):
                    f.write(to_pgn(g, event or self.event) + "\n")
                else:
                    f.write(to_movelist(g) + "\n")
        return len(self.games)

    def write_jsonl(self, path: str, header: Optional[dict] = None) -> int:
        """JSON lines: a ``{"type": "league"}`` header, then one ``{"type": "game"}`` line per game
        (readable by :func:`load_results` and importable into a store)."""
        head = dict(header or {"game": self.game, "agents": {n: n for n in self.names}, "event": self.event})
        head["type"] = "league"
        with open(path, "w") as f:
            f.write(json.dumps(head) + "\n")
            for g in self.games:
                f.write(json.dumps(g.to_dict()) + "\n")
        return len(self.games)

    def write_csv(self, path: str) -> int:
        """One row per game (columns as :meth:`rows`); returns the count."""
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(_CSV_COLUMNS))
            w.writeheader()
            w.writerows(self.rows())
        return len(self.games)

    def export(self, path: str) -> int:
        """Writes by the file name's extension: ``.jsonl`` (records), ``.csv`` (one row per game), ``.pgn`` (chess-family
        games only) or ``.txt`` (one move list per game, any game); ValueError for any other, or PGN of a non-chess
        game."""
        ext = os.path.splitext(path)[1].lower()
        if ext == ".jsonl":
            return self.write_jsonl(path)
        if ext == ".csv":
            return self.write_csv(path)
        if ext == ".pgn":
            if not registry.in_family(self.game, "chess"):
                raise ValueError(f"export {path!r}: PGN is a chess format and {self.game} games are not chess; "
                                 "use .txt (one move list per game), .jsonl or .csv")
            return self.write_games(path)
        if ext == ".txt":
            with open(path, "w") as f:
                for g in self.games:
                    f.write(to_movelist(g) + "\n")
            return len(self.games)
        raise ValueError(f"export {path!r}: unknown extension {ext!r} (use .jsonl, .csv, .pgn for chess games, "
                         ".txt for move lists)")


def load_results(path: str) -> LeagueResults:
    """The results in a league store (SQLite) or a JSON-lines file (validated: refused lines and
    rows are reported with a :class:`ResultsWarning` naming them, and not counted)."""
    from .store import ResultStore, read_jsonl

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such results file")
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3"):
        st = ResultStore(path, create=False)
        try:
            header = st.header() or {}
            recs, refused = st.games(header.get("game"))
        finally:
            st.close()
    else:
        header, pairs, _, bad = read_jsonl(path)
        header = header or {}
        recs = [r for _, r in pairs]
        refused = [f"{path}:{n}: {why}" for n, why in bad]
        if not header and not recs:
            raise ValueError(f"{path} is not a league file (no header and no games)"
                             + (f": {refused[0]}" if refused else ""))
    for msg in refused:
        warnings.warn(msg, ResultsWarning, stacklevel=2)
    names = list(header.get("agents", {}))
    for r in recs:
        for n in (r.first, r.second):
            if n not in names:
                names.append(n)
    return LeagueResults(names, recs, header.get("game", recs[0].game if recs else ""), header.get("event"))
