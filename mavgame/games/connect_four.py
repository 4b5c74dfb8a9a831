"""Connect Four (7 columns x 6 rows) on mavgame's C core, with a perfect solver.

>>> from mavgame.games.connect_four import ConnectFour
>>> board = ConnectFour.from_moves("4453")
>>> board.text()
'......./......./......./......./...o.../..oxx.. x'
>>> board.push("4")
3
>>> list(board.legal_moves)       # python-chess's board.legal_moves: a live view of the move strings
['1', '2', '3', '4', '5', '6', '7']
>>> ConnectFour(moves="44").solve(max_seconds=0.001, solver=solver(20, book=False)).complete
False

Moves are columns: the move text is the column number ``"1"`` .. ``"7"`` (left to right, as in
the public solver test sets) and the action is the column index 0..6 (as in OpenSpiel, and the
index into a policy vector), so ``push("4")`` and ``push(3)`` play the centre column.  An int is
always an action and a string always a column number: ``push(7)`` is refused with a message
saying that the move string ``"7"`` is action 6.
A position can be given as a move sequence in the convention of the public Connect Four solver
test sets (``ConnectFour.from_moves("4453")`` or ``ConnectFour(moves="4453")``) or as board text:
the six rows from the top down, separated by ``/``, each seven of ``x`` (first player), ``o``
(second player) or ``.``, then a space and the side to move (``x`` or ``o``).  Text parsing checks
gravity (no stone above an empty cell), the stone counts against the side to move and that play
did not go on after a win; errors are ValueError naming the offending input.

The C state is two bitboards (7 bits per column; see ``csrc/games/connect_four.h``) and the
hash is the unique key ``position + mask`` mixed to 64 bits, so distinct positions never share
a hash.

Solver (``solve``; C code in ``csrc/search/c4_solver.c``): exact negamax with alpha-beta on
bitboards, a transposition table, threat-count move ordering, null-window searches and pruning of
moves that lose at once.  Scores are from the point of view of the side to move: positive = it
wins, ``22 - its stone count when it completes four`` (a quicker win scores more, at most 18);
``0`` = draw; negative = it loses, ``-(22 - the opponent's stone count at its win)``.  The empty
board scores +1 and only the centre column wins.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

from .. import _core
from . import registry
from .base import GameBase, Outcome

Move = Union[str, int]

WIDTH = 7
HEIGHT = 6
START_TEXT = "/".join(["......."] * HEIGHT) + " x"

# Columns from the centre out, the left one first at equal distance: perfect play's tie-break.
CENTRE_FIRST = ("4", "3", "5", "2", "6", "1", "7")


def central_best(move_scores: Dict[str, float]) -> Optional[str]:
    """The column ("1".."7") with the highest score in ``move_scores``, ties to the most central
    column (the left one of two at the same distance); None if there is none.  The one tie-break of
    perfect play, used by ``PerfectConnectFourAgent(tiebreak="center")`` and the solver annotator."""
    best, best_s = None, None
    for mv in CENTRE_FIRST:
        sc = move_scores.get(mv)
        if sc is not None and (best_s is None or sc > best_s):
            best, best_s = mv, sc
    return best


@dataclass(frozen=True)
class SolveResult:
    """Result of :meth:`ConnectFour.solve`.

    ``score``: exact score of the position for the side to move (None if the budget ran out);
    ``move_scores``: {column "1".."7": score of playing it} for every legal move solved (all of
    them when complete); ``nodes``: search nodes; ``complete``: False if the node or time budget
    ran out first.  With ``weak=True`` scores are only +1 (win), 0 (draw), -1 (loss).  ``best``: the
    column of the highest score in ``move_scores``, ties to the most central (:func:`central_best`);
    with ``exact_best=True`` (and ``weak=True``) perfect play's column (the highest *exact* score) and
    ``score`` exact, although ``move_scores`` are only win/draw/loss; None when incomplete, finished or
    solved with ``moves=False``.
    """

    score: Optional[int]
    move_scores: Dict[str, int] = field(default_factory=dict)
    nodes: int = 0
    complete: bool = True
    best: Optional[str] = None

    def best_moves(self) -> List[str]:
        """The columns with the highest score (all optimal moves)."""
        if not self.move_scores:
            return []
        best = max(self.move_scores.values())
        return [m for m, v in self.move_scores.items() if v == best]

    def central_best_move(self) -> Optional[str]:
        """The best column, ties to the most central (:func:`central_best`; ``best`` when the solve set
        it, which ``exact_best`` solves do); None if none was solved."""
        return self.best if self.best is not None else central_best(self.move_scores)

    def outcome(self) -> Optional[str]:
        """"win", "draw" or "loss" for the side to move (None if incomplete)."""
        if self.score is None:
            return None
        return "win" if self.score > 0 else "loss" if self.score < 0 else "draw"


def moves_to_end(stones: int, score: int) -> int:
    """Moves left to the end of the game under perfect play, from a position with ``stones``
    stones and solver score ``score`` (a draw fills the board)."""
    if score == 0:
        return WIDTH * HEIGHT - stones
    k = 22 - abs(score)                      # the winner's stones at its win
    winner_first = (stones % 2 == 0) == (score > 0)
    return (2 * k - 1 if winner_first else 2 * k) - stones


class ConnectFour(GameBase):
    """Connect Four.  ``ConnectFour()`` is the empty board; ``ConnectFour(text)`` takes board text
    (or a move sequence such as ``"4453"``); ``ConnectFour(moves="4453")`` a move sequence.

    The hot methods (push, pop, legal_actions, legal_moves, copy, perft) are the C methods of
    mavgame._core.State; ``push`` takes a column string ``"1"``..``"7"`` or an action 0..6 and
    raises ValueError (state unchanged) for a full column, a bad column or a finished game.
    """

    GAME = "connect_four"

    def __init__(self, text: Optional[str] = None, moves: Optional[str] = None):
        if moves is not None:
            if text is not None:
                raise ValueError("give either text or moves, not both")
            if not isinstance(moves, str):
                raise TypeError(f"moves must be a string of columns such as '4453', not {type(moves).__name__}")
            _core.c4_from_moves(moves)   # validates with a message naming the move
        super().__init__(self.GAME, text)
        for col in moves or "":   # played, so that the history (pop, move_stack, the last move ring) is there
            self.push(col)

    @classmethod
    def from_moves(cls, moves: str) -> "ConnectFour":
        """The position after a sequence of columns 1..7 ("" = the empty board), with the moves in its
        history (``move_stack``, ``pop()``, the last move ringed in the SVG picture)."""
        return cls(moves=moves)

    # --- text ---------------------------------------------------------------------------

    def board_rows(self) -> List[str]:
        """The six rows, top row first, as strings of 'x', 'o', '.'."""
        return self.text().split(" ", 1)[0].split("/")

    def cell(self, column: int, row: int) -> Optional[str]:
        """'x', 'o' or None at column 0..6 (left to right) and row 0..5 (bottom up)."""
        if not (0 <= column < WIDTH and 0 <= row < HEIGHT):
            raise ValueError(f"cell ({column}, {row}) is off the 7x6 board")
        ch = self.board_rows()[HEIGHT - 1 - row][column]
        return None if ch == "." else ch

    def heights(self) -> List[int]:
        """Stones in each column, left to right."""
        rows = self.board_rows()
        return [sum(rows[r][c] != "." for r in range(HEIGHT)) for c in range(WIDTH)]

    @property
    def stones(self) -> int:
        """Stones on the board."""
        return sum(self.heights())

    def __str__(self) -> str:
        """ASCII board, top row first, with the column numbers underneath."""
        return "\n".join(" ".join(row) for row in self.board_rows()) + "\n" + " ".join("1234567")

    def __repr__(self) -> str:
        return f"ConnectFour({self.text()!r})"

    # --- solver -------------------------------------------------------------------------

    def solve(self, max_nodes: int = 0, max_seconds: float = 0.0, weak: bool = False, moves: bool = True,
              solver: Optional["_core.C4Solver"] = None, exact_best: bool = False) -> SolveResult:
        """Perfect solve: the exact score of the position and of every legal column.

        ``max_nodes`` / ``max_seconds`` (0 = no limit) bound the search; when either runs out the
        result has ``complete=False``, ``score=None`` and the columns solved so far.  ``weak``
        only tells win/draw/loss (much faster).  ``moves=False`` solves the position only.
        ``solver`` is a :class:`mavgame._core.C4Solver` (its transposition table is reused across
        calls); by default one kept by the module (64 MiB) is used.  The GIL is released
        during the search.

        ``weak=True, exact_best=True``: ``move_scores`` win/draw/loss (+1 / 0 / -1), but ``score`` exact
        and ``best`` the column of perfect play (the highest exact score: the fastest win, else a draw,
        else the slowest loss; ties to the most central), the same as ``central_best_move()`` of an exact
        solve, for about the cost of a weak solve: only the columns of the best value are solved further
        (a drawn column scores exactly 0; of the won or lost ones the most central is solved exactly and
        each other one gets a null-window test of whether it scores more).
        """
        # one C call builds the SolveResult (no keyword parsing, no NumPy round trip): the Python-side
        # conversion used to cost several times an easy solve (bench/c4_solver.py, per-call overhead)
        return _core.c4_solve_result(SolveResult, self, max_nodes, max_seconds, weak, moves, solver, exact_best)

    # --- pictures -----------------------------------------------------------------------

    def _repr_svg_(self) -> str:
        return self.svg()

    def svg(self, size: int = 350, coordinates: bool = True) -> str:
        """An SVG picture: blue frame, red stones for 'x', yellow for 'o', the last move ringed
        and the winning fours (if any) marked."""
        cell = size / WIDTH
        margin = cell * 0.45 if coordinates else 0.0
        width, height = WIDTH * cell, HEIGHT * cell + margin
        rows = self.board_rows()
        last = None
        h = self.history()
        if len(h):
            col = int(h[-1])
            row = self.heights()[col] - 1
            last = (col, row)
        winning = _winning_cells(rows)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.2f} {height:.2f}">',
            f'<rect width="{width:.2f}" height="{HEIGHT * cell:.2f}" rx="{cell * 0.15:.2f}" fill="#1d4fc4"/>',
        ]
        colors = {"x": "#d62828", "o": "#f4d03f", ".": "#ffffff"}
        for r, line in enumerate(rows):
            for c, ch in enumerate(line):
                cx, cy = (c + 0.5) * cell, (r + 0.5) * cell
                out.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{cell * 0.4:.2f}" fill="{colors[ch]}" '
                           f'stroke="#123a99" stroke-width="{cell * 0.03:.2f}" class="cell {ch}"/>')
                board_row = HEIGHT - 1 - r
                if (c, board_row) in winning:
                    out.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{cell * 0.15:.2f}" fill="#ffffff" '
                               f'fill-opacity="0.8" class="win"/>')
                if last == (c, board_row):
                    out.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{cell * 0.44:.2f}" fill="none" '
                               f'stroke="#00e070" stroke-width="{cell * 0.06:.2f}" class="last"/>')
        if coordinates:
            for c in range(WIDTH):
                out.append(f'<text x="{(c + 0.5) * cell:.2f}" y="{HEIGHT * cell + margin * 0.75:.2f}" '
                           f'font-size="{margin * 0.7:.2f}" text-anchor="middle" fill="#333333" '
                           f'font-family="sans-serif">{c + 1}</text>')
        out.append("</svg>")
        return "\n".join(out)


def _winning_cells(rows: List[str]) -> set:
    """(column, row-from-bottom) of every stone in a four in a row."""
    cells = set()
    grid = {(c, HEIGHT - 1 - r): ch for r, line in enumerate(rows) for c, ch in enumerate(line)}
    for (c, r), ch in grid.items():
        if ch == ".":
            continue
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            line = [(c + k * dc, r + k * dr) for k in range(4)]
            if all(grid.get(p) == ch for p in line):
                cells.update(line)
    return cells


def solver(tt_log2: int = 0, book: bool = True) -> "_core.C4Solver":
    """A new solver with its own transposition table of 2^tt_log2 8-byte entries (0: 2^23), with the
    shipped opening book (:mod:`mavgame.games.c4_book`) when the package has one and ``book`` is True."""
    sv = _core.C4Solver(tt_log2)
    if book:
        from .c4_book import attach
        attach(sv)
    return sv


_DEFAULT_SOLVER = "_c4_default_solver"  # the attribute of mavgame._core that c4_solve(solver=None) uses
_default_solver_lock = threading.Lock()


def _core_getattr(name: str) -> "_core.C4Solver":
    """``mavgame._core.__getattr__`` (PEP 562): the default solver of ``c4_solve`` and ``ConnectFour.solve``
    (``solver=None``), made with the shipped opening book by the first solve that asks for it."""
    if name != _DEFAULT_SOLVER:
        raise AttributeError(f"module 'mavgame._core' has no attribute {name!r}")
    with _default_solver_lock:  # two threads' first solves make one solver
        sv = vars(_core).get(name)
        if sv is None:
            from .c4_book import default_solver
            sv = default_solver()
            setattr(_core, name, sv)
    return sv


def install_lazy_default_solver() -> None:
    """Let ``c4_solve``'s default solver (a 64 MiB table and the 1 MB shipped book) be made on first use,
    not by ``import mavgame`` (issue 48): the C binding reads ``mavgame._core._c4_default_solver``, which,
    while unset, ``mavgame._core``'s module ``__getattr__`` (:func:`_core_getattr`) makes."""
    _core.__getattr__ = _core_getattr  # type: ignore[attr-defined]



registry.register(registry.GameInfo(
    name=ConnectFour.GAME, cls=ConnectFour, family="connect_four",
    from_text=lambda text, size, flags: ConnectFour(text), openings="openings_connect_four.txt",
    phases=(("opening", 0, 13), ("middle", 14, 27), ("end", 28, 42))))


__all__ = ["ConnectFour", "SolveResult", "Outcome", "moves_to_end", "solver", "central_best", "CENTRE_FIRST", "WIDTH",
           "HEIGHT", "START_TEXT"]
