"""What UCI engines say and how mavgame reads it: the errors of the UCI client, scores, ``info`` lines, the
result of a ``go``, the options an engine declares, and the parsers of those lines.

The engine process and the protocol's dialogue are :mod:`mavgame.engines.uci` (:class:`~mavgame.engines.uci.UCIEngine`);
this module runs nothing.  Scores are from the side to move's point of view, as UCI sends them.
:meth:`Score.win_prob` converts them to a win probability with the MAV format's formula (see
:func:`cp_to_win_prob`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .. import _core

__all__ = [
    "EngineError", "EngineTerminatedError", "EngineProtocolError", "EngineTimeoutError",
    "Score", "InfoLine", "GoResult", "UCIOption", "cp_to_win_prob", "parse_info", "parse_option", "parse_int",
    "STARTPOS", "MOVE_RE",
]

STARTPOS = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

#: a move in UCI text: from and to squares (boards up to 26 files and 99 ranks) and a promotion piece, a
#: drop (``P@e4``), or the null move ``0000``
MOVE_RE = re.compile(r"^(?:[a-z]{1,2}\d{1,2}[a-z]{1,2}\d{1,2}[a-z]?|[A-Za-z]@[a-z]{1,2}\d{1,2}|0000)$")


# ---------------------------------------------------------------------------------------------
# errors


class EngineError(RuntimeError):
    """Base class of all engine errors."""


class EngineTerminatedError(EngineError):
    """The engine process exited (crash, or not a UCI engine)."""


class EngineProtocolError(EngineError):
    """The engine wrote output that breaks the UCI protocol."""


class EngineTimeoutError(EngineError):
    """The engine did not answer in time."""


# ---------------------------------------------------------------------------------------------
# scores


def cp_to_win_prob(cp: float) -> float:
    """Win probability in [0, 1] for the side to move from a centipawn score.

    The MAV format's formula (from the lichess accuracy page):
    ``Win% = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1)``, here divided by 100; computed by the C
    core (``mg_mav_win_prob_cp``, the same function as :func:`mavgame.mav.win_prob_from_cp`).
    """
    return float(_core.mav_win_prob_cp(float(cp)))


@dataclass(frozen=True)
class Score:
    """An engine score from the side to move's point of view: ``cp`` centipawns or ``mate`` in
    moves (positive: the side to move mates; negative: it is mated; 0: it is mated now)."""

    cp: Optional[int] = None
    mate: Optional[int] = None

    def __post_init__(self):
        if (self.cp is None) == (self.mate is None):
            raise ValueError("a Score has exactly one of cp and mate")

    @property
    def is_mate(self) -> bool:
        return self.mate is not None

    def win_prob(self) -> float:
        """Win probability for the side to move: the MAV formula for centipawns, 1 or 0 for mates."""
        if self.mate is not None:
            return 1.0 if self.mate > 0 else 0.0
        return cp_to_win_prob(self.cp)

    def to_cp(self, mate_cp: int = 100_000) -> int:
        """Centipawns, with mates mapped to +-(mate_cp - moves to mate) so that faster mates rank higher."""
        if self.mate is not None:
            if self.mate > 0:
                return mate_cp - self.mate
            return -mate_cp - self.mate
        return int(self.cp)

    def __neg__(self) -> "Score":
        if self.mate is not None:
            return Score(mate=-self.mate)
        return Score(cp=-self.cp)

    def __str__(self) -> str:
        if self.mate is not None:
            return f"#{self.mate}" if self.mate >= 0 else f"#-{-self.mate}"
        return f"{self.cp:+d}"


@dataclass
class InfoLine:
    """One parsed ``info`` line with a principal variation."""

    multipv: int = 1
    depth: Optional[int] = None
    seldepth: Optional[int] = None
    score: Optional[Score] = None
    bound: Optional[str] = None  # "lowerbound", "upperbound" or None (exact)
    wdl: Optional[Tuple[int, int, int]] = None
    nodes: Optional[int] = None
    nps: Optional[int] = None
    time_ms: Optional[int] = None
    pv: List[str] = field(default_factory=list)

    @property
    def move(self) -> Optional[str]:
        return self.pv[0] if self.pv else None


@dataclass
class GoResult:
    """What a ``go`` returned (``mavgame.search.results.SearchResult`` is an MCTS search's result): the best move,
    the ponder move, the final line per multipv index
    (``lines``, sorted by multipv index) and the malformed info lines that were ignored."""

    bestmove: Optional[str]  # None when the engine answered "bestmove (none)" (no legal move)
    ponder: Optional[str]
    lines: List[InfoLine]
    ignored: List[str] = field(default_factory=list)  # malformed info lines ignored, and why

    @property
    def score(self) -> Optional[Score]:
        return self.lines[0].score if self.lines else None


@dataclass
class UCIOption:
    """An option the engine declared in its ``uci`` answer."""

    name: str
    type: str
    default: Optional[str] = None
    min: Optional[int] = None
    max: Optional[int] = None
    vars: List[str] = field(default_factory=list)

    def check(self, value) -> str:
        """The value as UCI text; ValueError naming the option if it is not acceptable."""
        t = self.type
        if t == "check":
            if isinstance(value, str):
                if value.lower() not in ("true", "false"):
                    raise ValueError(f"option '{self.name}' takes true or false, not {value!r}")
                return value.lower()
            return "true" if value else "false"
        if t == "spin":
            try:
                iv = int(value)
            except (TypeError, ValueError):
                raise ValueError(f"option '{self.name}' takes an integer, not {value!r}") from None
            if isinstance(value, float) and value != iv:
                raise ValueError(f"option '{self.name}' takes an integer, not {value!r}")
            if (self.min is not None and iv < self.min) or (self.max is not None and iv > self.max):
                raise ValueError(f"option '{self.name}' must lie in [{self.min}, {self.max}], not {iv}")
            return str(iv)
        if t == "combo":
            s = str(value)
            if self.vars and s not in self.vars:
                raise ValueError(f"option '{self.name}' takes one of {self.vars}, not {s!r}")
            return s
        if t == "button":
            return ""
        s = str(value)
        if "\n" in s:
            raise ValueError(f"option '{self.name}': value contains a newline")
        return s


# ---------------------------------------------------------------------------------------------
# parsing


def parse_int(tok: str, line: str, what: str) -> int:
    """``tok`` as an int; EngineProtocolError naming ``what`` and quoting ``line`` when it is not one."""
    try:
        return int(tok)
    except ValueError:
        raise EngineProtocolError(f"engine sent a non-integer {what} {tok!r} in line: {line!r}") from None


_INFO_INT_FIELDS = {"depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull", "tbhits",
                    "currmovenumber", "cpuload", "sbhits"}


def parse_info(line: str) -> Optional[InfoLine]:
    """Parse an ``info`` line; None for lines without a score or pv (currmove, string, ...).

    Raises EngineProtocolError for a malformed field (a non-numeric depth or score, a score that is
    neither cp nor mate, a malformed move in the pv)."""
    toks = line.split()
    if not toks or toks[0] != "info":
        raise EngineProtocolError(f"not an info line: {line!r}")
    info = InfoLine()
    have_score = have_pv = False
    i = 1
    n = len(toks)
    while i < n:
        key = toks[i]
        if key == "string":
            break
        if key in _INFO_INT_FIELDS:
            if i + 1 >= n:
                raise EngineProtocolError(f"engine sent '{key}' without a value in line: {line!r}")
            v = parse_int(toks[i + 1], line, key)
            if key == "depth":
                info.depth = v
            elif key == "seldepth":
                info.seldepth = v
            elif key == "multipv":
                if v < 1:
                    raise EngineProtocolError(f"engine sent multipv {v} (must be >= 1) in line: {line!r}")
                info.multipv = v
            elif key == "nodes":
                info.nodes = v
            elif key == "nps":
                info.nps = v
            elif key == "time":
                info.time_ms = v
            i += 2
        elif key == "score":
            if i + 2 >= n:
                raise EngineProtocolError(f"engine sent an incomplete score in line: {line!r}")
            kind, val = toks[i + 1], toks[i + 2]
            if kind == "cp":
                info.score = Score(cp=parse_int(val, line, "cp score"))
            elif kind == "mate":
                info.score = Score(mate=parse_int(val, line, "mate score"))
            else:
                raise EngineProtocolError(f"engine sent a score of unknown kind {kind!r} in line: {line!r}")
            have_score = True
            i += 3
            if i < n and toks[i] in ("lowerbound", "upperbound"):
                info.bound = toks[i]
                i += 1
        elif key == "wdl":
            if i + 3 >= n:
                raise EngineProtocolError(f"engine sent an incomplete wdl in line: {line!r}")
            info.wdl = tuple(parse_int(t, line, "wdl") for t in toks[i + 1:i + 4])  # type: ignore[assignment]
            i += 4
        elif key == "pv":
            pv = toks[i + 1:]
            for m in pv:
                if not MOVE_RE.match(m):
                    raise EngineProtocolError(f"engine sent a malformed move {m!r} in the pv of line: {line!r}")
            info.pv = pv
            have_pv = True
            break
        elif key in ("currmove", "refutation", "currline"):
            # currmove <move>; refutation/currline run to the end of the line
            if key == "currmove":
                i += 2
            else:
                break
        else:
            i += 1  # unknown token: ignored, as the protocol asks
    if not (have_score or have_pv):
        return None
    return info


def parse_option(line: str) -> UCIOption:
    """Parse an ``option name <name> type <type> [default ...] [min n] [max n] [var ...]*`` line of the
    engine's ``uci`` answer; EngineProtocolError for a malformed line or a non-integer min or max."""
    m = re.match(r"^option\s+name\s+(.+?)\s+type\s+(\S+)(.*)$", line)
    if not m:
        raise EngineProtocolError(f"malformed option line: {line!r}")
    name, typ, rest = m.group(1), m.group(2), m.group(3)
    opt = UCIOption(name=name, type=typ)
    toks = rest.split()
    i = 0
    while i < len(toks):
        k = toks[i]
        if k == "default":
            j = i + 1
            vals = []
            while j < len(toks) and toks[j] not in ("min", "max", "var"):
                vals.append(toks[j])
                j += 1
            opt.default = " ".join(vals)
            i = j
        elif k in ("min", "max") and i + 1 < len(toks):
            try:
                setattr(opt, k, int(toks[i + 1]))
            except ValueError:
                raise EngineProtocolError(f"option {name!r} has a non-integer {k} in line: {line!r}") from None
            i += 2
        elif k == "var" and i + 1 < len(toks):
            j = i + 1
            vals = []
            while j < len(toks) and toks[j] != "var":
                vals.append(toks[j])
                j += 1
            opt.vars.append(" ".join(vals))
            i = j
        else:
            i += 1
    return opt
