"""Bounded mate proofs for Gardner 5x5 minichess (the C prover, csrc/games/gardner/gardner_prover.h).

    >>> from mavgame.games.gardner import Gardner
    >>> from mavgame.games.gardner_prover import Prover
    >>> prover = Prover()
    >>> r = prover.mates_in(Gardner("r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 3 12"), 2)
    >>> r.status, r.mate_plies, r.line
    (<Status.PROVEN: 'proven'>, 3, ['c4a3', 'd5d4', 'b3c4'])
    >>> prover.cannot_lose(Gardner(), 8, side="black").proven
    True

Two questions, each answered ``proven``, ``refuted`` or ``unknown`` (a budget ran out):

- :meth:`Prover.mates_in` - "``side`` mates in at most ``n`` moves" (``side`` gives mate with its
  n-th move at the latest, whatever the other side plays);
- :meth:`Prover.cannot_lose` - "``side`` cannot lose within ``n`` plies" (the other side has no forced
  mate within n plies; refuted with the other side's mating line).

The search is an AND/OR alpha-beta with iterative deepening on the distance to mate and a
transposition table owned by the :class:`Prover` (allocated once, reused by every call, so related
queries get cheaper).  It runs in C without the GIL; Ctrl-C stops it (KeyboardInterrupt).
Repetition and the fifty-move rule are not applied below the root (as in chess problems and the
paper's ``#x`` leaves): a refuted mate holds under the full rules, and a proven mate does when
:attr:`ProofResult.rule50_safe` and no position of the line occurred twice before the root (see the
C header for why).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional, Union

from .. import _core

__all__ = ["Prover", "ProofResult", "Status", "MATE", "NO_LOSS", "MAX_PLIES", "METHODS"]

MATE, NO_LOSS = 0, 1
#: the longest mate a query may ask for, in plies (MG_GPROVE_MAX_PLIES)
MAX_PLIES = 120
_STOPS = ("done", "node limit", "time limit", "cancelled")
_SIDES = {"white": 0, "w": 0, "black": 1, "b": 1}


class Status(enum.Enum):
    """The answer to a query."""

    UNKNOWN = "unknown"
    PROVEN = "proven"
    REFUTED = "refuted"


_STATUS = (Status.UNKNOWN, Status.PROVEN, Status.REFUTED)


@dataclass(frozen=True)
class ProofResult:
    """What the prover established about one claim.

    ``mate_plies``: the distance in plies from the root to the mating move of the mate found (the
    claimed side's for :meth:`Prover.mates_in`, the other side's when :meth:`Prover.cannot_lose` is
    refuted; with ``method="pns"`` an upper bound: the proof tree's depth), None when none was found;
    ``line``: that mate, fastest for the mating side against the longest resistance (pns: the proof
    tree's deepest line), as UCI-style moves; ``depth_done``: plies searched completely without finding
    a mate (-1: none); ``stop``: "done", "node limit" or "time limit"."""

    claim: str
    status: Status
    mate_plies: Optional[int]
    depth_done: int
    nodes: int
    seconds: float
    line: List[str] = field(default_factory=list)
    stop: str = "done"
    rule50_safe: bool = True

    @property
    def proven(self) -> bool:
        return self.status is Status.PROVEN

    @property
    def refuted(self) -> bool:
        return self.status is Status.REFUTED

    @property
    def unknown(self) -> bool:
        return self.status is Status.UNKNOWN

    def __str__(self) -> str:
        s = f"{self.claim}: {self.status.value} ({self.nodes} nodes, {self.seconds:.3f} s"
        if self.stop != "done":
            s += f", stopped by the {self.stop} after {self.depth_done} plies"
        s += ")"
        if self.line:
            s += " " + " ".join(self.line)
        return s


def _side(board, side) -> int:
    if side is None:
        return int(board.to_move)
    if isinstance(side, bool):   # python-chess: WHITE = True
        return 0 if side else 1
    if isinstance(side, str) and side.lower() in _SIDES:
        return _SIDES[side.lower()]
    if isinstance(side, int) and side in (0, 1):
        return side
    raise ValueError(f"side must be 'white', 'black', 0, 1 or None (the side to move), not {side!r}")


def _board(board):
    if isinstance(board, str):
        return _core.State("gardner", board)
    if not isinstance(board, _core.State) or board.game != "gardner":
        raise TypeError(f"the Gardner prover needs a Gardner position (a Gardner board, a gardner State or a "
                        f"FEN), not {board!r}")
    return board


def _count(value, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{what} must be an integer in {lo}..{hi}, not {value!r}")
    return value


METHODS = ("alphabeta", "pns")


class Prover:
    """A Gardner prover with its own transposition table of 2^``tt_log2`` entries (0: 2^20; 10..30).
    One search at a time per prover (other threads wait).

    ``method``: ``"alphabeta"`` (default), the exhaustive search: a proven mate comes with its exact
    distance (``mate_plies``), and it reaches mates of about 8 moves; or ``"pns"``, depth-bounded
    proof-number search (df-pn, csrc/games/gardner/gardner_pns.h), which reaches much deeper forced
    mates: it proves or refutes the same claim ("mate within the bound"), but a proven mate's
    ``mate_plies`` is the depth of the proof tree it found, an upper bound on the distance to mate
    (the exact distance may be shorter); ``line`` is the proof tree's deepest line and ends in mate."""

    def __init__(self, tt_log2: int = 0, method: str = "alphabeta"):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, not {method!r}")
        self._p = _core.GardnerProver(tt_log2, method)
        self.method = method

    @property
    def tt_bytes(self) -> int:
        return self._p.tt_bytes

    def clear(self) -> None:
        """Forget what the table learned (for cold timings)."""
        self._p.clear()

    def _run(self, board, goal: int, side: int, n: int, claim: str, max_nodes: int,
             max_seconds: float) -> ProofResult:
        if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 0:
            raise ValueError(f"max_nodes must be an integer >= 0 (0: no limit), not {max_nodes!r}")
        st, stop, mate, done, safe, nodes, secs, line = self._p.prove(board, goal, side, n, max_nodes,
                                                                      float(max_seconds))
        return ProofResult(claim=claim, status=_STATUS[st], mate_plies=None if mate < 0 else mate, depth_done=done,
                           nodes=nodes, seconds=secs, line=line, stop=_STOPS[stop], rule50_safe=bool(safe))

    def mates_in(self, board: Union[str, "_core.State"], n: int, side=None, *, max_nodes: int = 0,
                 max_seconds: float = 0.0) -> ProofResult:
        """Prove or refute "``side`` (default: the side to move) mates in at most ``n`` moves"."""
        b = _board(board)
        s = _side(b, side)
        n = _count(n, "n (moves)", 1, MAX_PLIES // 2)
        claim = f"{'White' if s == 0 else 'Black'} mates in at most {n} move{'s' if n != 1 else ''}"
        return self._run(b, MATE, s, n, claim, max_nodes, max_seconds)

    def cannot_lose(self, board: Union[str, "_core.State"], plies: int, side=None, *, max_nodes: int = 0,
                    max_seconds: float = 0.0) -> ProofResult:
        """Prove or refute "``side`` (default: the side to move) cannot lose within ``plies`` plies"."""
        b = _board(board)
        s = _side(b, side)
        plies = _count(plies, "plies", 0, MAX_PLIES)
        claim = f"{'White' if s == 0 else 'Black'} cannot lose within {plies} plies"
        return self._run(b, NO_LOSS, s, plies, claim, max_nodes, max_seconds)
