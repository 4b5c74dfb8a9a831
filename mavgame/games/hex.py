"""Hex on mavgame's C core: n x n boards (1 <= n <= 19), the optional swap (pie) rule, an exact
solver for small boards and a random-playout MCTS as value annotator.

>>> from mavgame.games.hex import Hex
>>> board = Hex(3)
>>> board.push("b2")
4
>>> board.text()
'.../.x./... o'
>>> board.solve().value          # o to move on 3x3 after x b2: o loses
-1

Board.  Cells are named by a column letter and a row number, ``"a1"`` .. ``"s19"``: column ``a``
is the left edge, row ``1`` the top edge.  Each row is shifted half a cell to the right of the row
above, so the board is a rhombus leaning right (as in HexGui and OpenSpiel) and the cell on row r,
column c (0-based) touches (r, c-1), (r, c+1), (r-1, c), (r-1, c+1), (r+1, c-1) and (r+1, c).

Players.  The first player (player 0, "black", written ``x``) connects the top edge (row 1) with
the bottom edge (row n); the second player (player 1, "white", ``o``) connects the left edge
(column a) with the right edge (the last column).  There are no draws; the game ends as soon as a
player connects its edges (``outcome()`` termination ``"connected"``).

Actions.  A stone on row r, column c (0-based) is action ``r * n + c`` (``a1`` = 0, ``b1`` = 1,
``a2`` = n, ...).  With the swap rule (``Hex(n, swap=True)``) white may answer black's first stone
with action ``n * n``, written ``"swap"``: as in OpenSpiel and HexGui's "swap-pieces", the black
stone on (r, c) is replaced by a white stone on the mirrored cell (c, r) and black moves next;
the players keep their colours and edges.

Text.  Rows 1 .. n from the top, separated by ``/``, each with n cells from column a on: ``x``,
``o`` or ``.``; then a space and the side to move (``x`` or ``o``).  The size is the number of
rows, e.g. ``".../.x./... o"``.  The stone counts must fit the side to move (after a swap white
has one stone more than usual; such texts need ``swap=True``), and play must not have gone on
after a connection; errors are ValueError naming the text.

Solver (``solve``, C code in ``csrc/search/hex_solver.c``): exact win/loss of the position and of
every legal move, for boards up to 7x7 (the empty 4x4 board takes milliseconds, the empty 5x5
board tens of seconds; positions with stones are much faster).  MCTS (``mcts``): UCT with
uniformly random playouts (``csrc/search/playout_mcts.c``), values as win probabilities of the
player to move.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple, Union

from .. import _core
from . import registry
from .base import GameBase, Outcome

Move = Union[str, int]

MAX_SIZE = 19
DEFAULT_SIZE = 11
SWAP = "swap"
FLAG_SWAP = _core.FLAG_HEX_SWAP   # MG_FLAG_HEX_SWAP in csrc/game.h
COLUMNS = "abcdefghijklmnopqrs"


@dataclass(frozen=True)
class HexSolveResult:
    """Result of :meth:`Hex.solve`: ``value`` +1 if the player to move wins, -1 if it loses, None if
    unknown (node or time budget spent); ``move_values`` {move: +1 / -1} for every legal move solved (all of
    them when ``complete``)."""

    value: Optional[int]
    move_values: Dict[str, int] = field(default_factory=dict)
    complete: bool = True

    def winning_moves(self) -> List[str]:
        """The moves proven to win for the player to move."""
        return [m for m, v in self.move_values.items() if v > 0]




class Hex(GameBase):
    """Hex.  ``Hex()`` is the empty 11x11 board, ``Hex(size)`` the empty size x size board,
    ``Hex(text=...)`` a position from text (the size is taken from the text); ``swap=True`` turns
    on the swap rule.

    The hot methods (push, pop, legal_actions, legal_moves, copy, perft) are the C methods of
    mavgame._core.State; ``push`` takes a cell name ("c3"), "swap" or an action and raises
    ValueError (state unchanged) for an occupied or off-board cell, an illegal swap or a finished
    game.
    """

    GAME = "hex"

    def __init__(self, size: Optional[int] = None, swap: bool = False, text: Optional[str] = None):
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int):
                raise TypeError(f"hex board size must be an int, not {type(size).__name__}")
            if not 1 <= size <= MAX_SIZE:
                raise ValueError(f"hex board size {size} is out of range (1..{MAX_SIZE})")
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"hex text must be a str, not {type(text).__name__}")
            rows = text.split(" ", 1)[0].count("/") + 1
            if size is None and rows <= MAX_SIZE:
                size = rows     # the C parser checks the text against it (and reports longer texts)
        elif size is None:
            size = DEFAULT_SIZE
        super().__init__(self.GAME, text, size or 0, FLAG_SWAP if swap else 0)

    @classmethod
    def from_moves(cls, moves: Union[str, Iterable[Move]], size: int = DEFAULT_SIZE, swap: bool = False) -> "Hex":
        """The position after a sequence of moves, given as a list or a space-separated string
        (``"c3 swap b2"``)."""
        board = cls(size, swap=swap)
        for m in moves.split() if isinstance(moves, str) else moves:
            board.push(m)
        return board

    # --- configuration ------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The board size n."""
        return self.board_size

    @property
    def swap(self) -> bool:
        """True if the swap rule is on."""
        return bool(self.flags & FLAG_SWAP)

    @property
    def swap_action(self) -> int:
        """The action id of "swap" (n * n)."""
        return self.size * self.size

    # --- text ---------------------------------------------------------------------------

    def board_rows(self) -> List[str]:
        """The n rows, row 1 (top) first, as strings of 'x', 'o', '.'."""
        return self.text().split(" ", 1)[0].split("/")

    def cell_index(self, cell: Union[str, int, Tuple[int, int]]) -> int:
        """Action id of a cell given as "c3", an action or a 0-based (row, column) pair."""
        n = self.size
        if isinstance(cell, str):
            name = cell.strip()
            if (len(name) >= 2 and name[0].lower() in COLUMNS[:n] and name[1:].isdigit()
                    and not name[1:].startswith("0") and 1 <= int(name[1:]) <= n):
                return (int(name[1:]) - 1) * n + COLUMNS.index(name[0].lower())
            raise ValueError(f"invalid hex cell {cell!r}: expected a1..{COLUMNS[n - 1]}{n}")
        if isinstance(cell, tuple):
            if len(cell) != 2:
                raise ValueError(f"hex cell {cell!r}: expected (row, column)")
            r, c = (int(v) for v in cell)
            if not (0 <= r < n and 0 <= c < n):
                raise ValueError(f"hex cell {cell!r} is off the {n}x{n} board")
            return r * n + c
        a = int(cell)
        if not 0 <= a < n * n:
            raise ValueError(f"hex cell {cell} is off the {n}x{n} board (expected 0..{n * n - 1})")
        return a

    def cell_name(self, action: int) -> str:
        """Name of a cell action ("a1" ...), or "swap"."""
        return self.action_to_str(int(action))

    def cell(self, cell: Union[str, int, Tuple[int, int]]) -> Optional[str]:
        """'x', 'o' or None on a cell given as "c3", an action or a 0-based (row, column) pair."""
        a = self.cell_index(cell)
        ch = self.board_rows()[a // self.size][a % self.size]
        return None if ch == "." else ch

    def cells(self) -> List[Optional[str]]:
        """The n * n cells in action order: 'x', 'o' or None."""
        return [None if ch == "." else ch for row in self.board_rows() for ch in row]

    def __str__(self) -> str:
        """The board as a rhombus: column letters on top, row numbers on the left."""
        n = self.size
        lines = ["    " + " ".join(COLUMNS[:n])]
        for r, row in enumerate(self.board_rows()):
            lines.append(f"{r + 1:>2}  " + " " * r + " ".join(row))
        return "\n".join(lines)

    def __repr__(self) -> str:
        extra = ", swap=True" if self.swap else ""
        return f"Hex(text={self.text()!r}{extra})"

    # --- moves and status ---------------------------------------------------------------

    def winning_path(self) -> List[int]:
        """Actions of the winning group (the winner's stones in a group that touches both of its
        edges), empty while the game is on."""
        o = self.outcome()
        if o is None:
            return []
        mark = "x" if o.winner else "o"
        n = self.size
        cells = self.cells()
        first = [a for a in range(n * n) if cells[a] == mark and (a // n if o.winner else a % n) == 0]
        last = [a for a in range(n * n) if cells[a] == mark and (a // n if o.winner else a % n) == n - 1]
        return sorted(_flood(n, cells, mark, first) & _flood(n, cells, mark, last))

    # --- search ---------------------------------------------------------------------------

    def solve(self, max_nodes: int = 0, max_seconds: float = 0.0) -> HexSolveResult:
        """Exact solve (boards up to 7x7): the value of the position and of every legal move for the
        player to move (+1 win, -1 loss).  ``max_nodes`` and ``max_seconds`` (0 = no limit) bound the
        search; when either runs out, ``complete`` is False and only the moves proven so far are
        listed.  The GIL is released during the search; Ctrl-C raises KeyboardInterrupt."""
        value, arr, complete = _core.hex_solve(self, max_nodes=int(max_nodes), max_seconds=float(max_seconds))
        moves = {self.action_to_str(int(a)): int(arr[a]) for a in self.legal_actions() if arr[a] != 0}
        return HexSolveResult(value, moves, bool(complete))

    # --- pictures -----------------------------------------------------------------------

    def _repr_svg_(self) -> str:
        return self.svg()

    def svg(self, size: int = 400, coordinates: bool = True) -> str:
        """An SVG picture: the rhombus of hexagons with the edges in their owner's colour (black
        top and bottom, white left and right), the stones, the last move ringed and the winning
        group marked."""
        n = self.size
        # pointy-top hexagons of circumradius R: width w = sqrt(3) R, rows 1.5 R apart
        span_w = (n + (n - 1) / 2) * math.sqrt(3) + 2.2  # in units of R (board plus margins)
        R = size / span_w
        w = math.sqrt(3) * R
        mx = R * 1.1 + (w * 0.4 if coordinates else 0.0)
        my = R * 1.3 + (R * 0.6 if coordinates else 0.0)
        width = mx * 2 + (n + (n - 1) / 2) * w
        height = my * 2 + (1.5 * (n - 1) + 2) * R
        cells = self.cells()
        h = self.history()
        last = int(h[-1]) if len(h) and int(h[-1]) < n * n else None
        win = set(self.winning_path())

        def centre(r: int, c: int) -> Tuple[float, float]:
            return mx + w / 2 + (c + r / 2) * w, my + R + 1.5 * r * R

        def corner(x: float, y: float, k: int, scale: float = 1.0) -> Tuple[float, float]:
            ang = math.pi / 180 * (60 * k - 90)
            return x + scale * R * math.cos(ang), y + scale * R * math.sin(ang)

        black, white = "#222222", "#f4f4f4"
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.2f} {height:.2f}">',
            f'<rect width="{width:.2f}" height="{height:.2f}" fill="#d9c7a0"/>',
        ]
        # edges: thick lines just outside the border cells, in the owner's colour
        ew = R * 0.35
        for c in range(n):
            x, y = centre(0, c)
            (x1, y1), (x2, y2), (x3, y3) = corner(x, y, 5, 1.15), corner(x, y, 0, 1.15), corner(x, y, 1, 1.15)
            out.append(f'<polyline points="{x1:.2f},{y1:.2f} {x2:.2f},{y2:.2f} {x3:.2f},{y3:.2f}" fill="none" '
                       f'stroke="{black}" stroke-width="{ew:.2f}" class="edge top"/>')
            x, y = centre(n - 1, c)
            (x1, y1), (x2, y2), (x3, y3) = corner(x, y, 2, 1.15), corner(x, y, 3, 1.15), corner(x, y, 4, 1.15)
            out.append(f'<polyline points="{x1:.2f},{y1:.2f} {x2:.2f},{y2:.2f} {x3:.2f},{y3:.2f}" fill="none" '
                       f'stroke="{black}" stroke-width="{ew:.2f}" class="edge bottom"/>')
        for r in range(n):
            x, y = centre(r, 0)
            (x1, y1), (x2, y2), (x3, y3) = corner(x, y, 3, 1.15), corner(x, y, 4, 1.15), corner(x, y, 5, 1.15)
            out.append(f'<polyline points="{x1:.2f},{y1:.2f} {x2:.2f},{y2:.2f} {x3:.2f},{y3:.2f}" fill="none" '
                       f'stroke="{white}" stroke-width="{ew:.2f}" class="edge left"/>')
            x, y = centre(r, n - 1)
            (x1, y1), (x2, y2), (x3, y3) = corner(x, y, 0, 1.15), corner(x, y, 1, 1.15), corner(x, y, 2, 1.15)
            out.append(f'<polyline points="{x1:.2f},{y1:.2f} {x2:.2f},{y2:.2f} {x3:.2f},{y3:.2f}" fill="none" '
                       f'stroke="{white}" stroke-width="{ew:.2f}" class="edge right"/>')
        for r in range(n):
            for c in range(n):
                a = r * n + c
                x, y = centre(r, c)
                pts = " ".join(f"{px:.2f},{py:.2f}" for px, py in (corner(x, y, k) for k in range(6)))
                out.append(f'<polygon points="{pts}" fill="#e8d8b0" stroke="#7a6a4a" '
                           f'stroke-width="{R * 0.06:.2f}" class="cell"/>')
                mark = cells[a]
                if mark is not None:
                    fill, stroke = (black, "#000000") if mark == "x" else (white, "#888888")
                    out.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{R * 0.72:.2f}" fill="{fill}" '
                               f'stroke="{stroke}" stroke-width="{R * 0.06:.2f}" class="stone {mark}"/>')
                    if a in win:
                        out.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{R * 0.22:.2f}" fill="#2a9d3a" '
                                   f'class="win"/>')
                if a == last:
                    out.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{R * 0.8:.2f}" fill="none" '
                               f'stroke="#e03030" stroke-width="{R * 0.1:.2f}" class="last"/>')
        if coordinates:
            fs = R * 0.6
            for c in range(n):
                x, y = centre(0, c)
                out.append(f'<text x="{x:.2f}" y="{y - R * 1.55:.2f}" font-size="{fs:.2f}" text-anchor="middle" '
                           f'fill="#333333" font-family="sans-serif">{COLUMNS[c]}</text>')
            for r in range(n):
                x, y = centre(r, 0)
                out.append(f'<text x="{x - w * 0.95:.2f}" y="{y + fs * 0.35:.2f}" font-size="{fs:.2f}" '
                           f'text-anchor="end" fill="#333333" font-family="sans-serif">{r + 1}</text>')
        out.append("</svg>")
        return "\n".join(out)


def _flood(n: int, cells: List[Optional[str]], mark: str, start: List[int]) -> set:
    """Cells holding ``mark`` connected to ``start`` through cells holding ``mark``."""
    seen, stack = set(start), list(start)
    while stack:
        a = stack.pop()
        for b in _neighbours(n, a):
            if b not in seen and cells[b] == mark:
                seen.add(b)
                stack.append(b)
    return seen


def _neighbours(n: int, a: int) -> List[int]:
    """Actions of the cells adjacent to cell action ``a`` on the n x n board."""
    r, c = divmod(a, n)
    out = []
    for dr, dc in ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < n and 0 <= cc < n:
            out.append(rr * n + cc)
    return out



registry.register(registry.GameInfo(
    name=Hex.GAME, cls=Hex, family="hex",
    from_text=lambda text, size, flags: Hex(size or None, swap=bool(flags & FLAG_SWAP), text=text),
    flags={"swap": FLAG_SWAP}, default_board_size=DEFAULT_SIZE, max_board_size=MAX_SIZE,
    openings="openings_hex_{board_size}.txt"))


__all__ = ["Hex", "HexSolveResult", "Outcome", "SWAP", "FLAG_SWAP", "MAX_SIZE", "DEFAULT_SIZE"]
