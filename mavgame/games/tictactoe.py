"""Tic-tac-toe on mavgame's C core (a small game for exhaustive tests and examples).

>>> from mavgame.games.tictactoe import TicTacToe
>>> board = TicTacToe()
>>> board.push("b2")
4
>>> board.push(0)
0
>>> board.text()
'.../.x./o.. x'
>>> len(board.legal_moves)
7

Cells are named a1..c3 (column a..c, row 1..3 from the bottom); the action is
``(row - 1) * 3 + column`` (a1 = 0, b1 = 1, ..., c3 = 8).  X (the first player) moves first.
The text is the three rows from row 3 down to row 1 separated by ``/``, each three of ``x``,
``o`` or ``.``, then a space and the side to move, e.g. ``"x.o/.x./... o"``; parsing checks the
counts, the side to move and that play did not go on after a win (ValueError otherwise).
"""
from __future__ import annotations

from typing import List, Optional, Union

from . import registry
from .base import GameBase, Outcome

Move = Union[str, int]

START_TEXT = ".../.../... x"
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToe(GameBase):
    """Tic-tac-toe.  ``TicTacToe()`` is the empty board, ``TicTacToe(text)`` any reachable position.

    ``push`` takes a cell name ("a1".."c3") or an action 0..8 and raises ValueError (state
    unchanged) for an occupied cell, a bad name or a finished game; ``pop()`` takes it back.
    """

    GAME = "tictactoe"

    def __init__(self, text: Optional[str] = None):
        super().__init__(self.GAME, text)

    # --- text ---------------------------------------------------------------------------

    def board_rows(self) -> List[str]:
        """The three rows, row 3 (top) first, as strings of 'x', 'o', '.'."""
        return self.text().split(" ", 1)[0].split("/")

    def cells(self) -> List[Optional[str]]:
        """The 9 cells in action order (a1, b1, c1, a2, ..., c3): 'x', 'o' or None."""
        rows = self.board_rows()
        return [None if rows[2 - a // 3][a % 3] == "." else rows[2 - a // 3][a % 3] for a in range(9)]

    def piece_at(self, cell: Union[int, str]) -> Optional[str]:
        """'x', 'o' or None on a cell given as "b2" or an action 0..8."""
        if isinstance(cell, str):
            if not (len(cell) == 2 and cell[0] in "abc" and cell[1] in "123"):
                raise ValueError(f"invalid tic-tac-toe cell {cell!r}: expected a1..c3")
            a = (int(cell[1]) - 1) * 3 + "abc".index(cell[0])
        else:
            a = int(cell)
            if not 0 <= a < 9:
                raise ValueError(f"tic-tac-toe cell {cell} is off the board (expected 0..8)")
        return self.cells()[a]

    def __str__(self) -> str:
        return "\n".join(" ".join(row) for row in self.board_rows())

    def __repr__(self) -> str:
        return f"TicTacToe({self.text()!r})"

    # --- pictures -----------------------------------------------------------------------

    def _repr_svg_(self) -> str:
        return self.svg()

    def svg(self, size: int = 240, coordinates: bool = True) -> str:
        """An SVG picture: the grid, X and O marks, the last move shaded and a winning line drawn."""
        margin = size * 0.08 if coordinates else 0.0
        cell = (size - 2 * margin) / 3
        cells = self.cells()
        h = self.history()
        last = int(h[-1]) if len(h) else None

        def centre(a: int):
            return margin + (a % 3 + 0.5) * cell, margin + (2 - a // 3 + 0.5) * cell

        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
            f'<rect width="{size}" height="{size}" fill="#fafafa"/>',
        ]
        if last is not None:
            x, y = centre(last)
            out.append(f'<rect x="{x - cell / 2:.2f}" y="{y - cell / 2:.2f}" width="{cell:.2f}" height="{cell:.2f}" '
                       f'fill="#fff3b0" class="last"/>')
        for k in (1, 2):
            p = margin + k * cell
            out.append(f'<line x1="{p:.2f}" y1="{margin:.2f}" x2="{p:.2f}" y2="{size - margin:.2f}" '
                       f'stroke="#333333" stroke-width="{cell * 0.04:.2f}"/>')
            out.append(f'<line x1="{margin:.2f}" y1="{p:.2f}" x2="{size - margin:.2f}" y2="{p:.2f}" '
                       f'stroke="#333333" stroke-width="{cell * 0.04:.2f}"/>')
        r = cell * 0.3
        for a, mark in enumerate(cells):
            x, y = centre(a)
            if mark == "x":
                out.append(f'<path d="M{x - r:.2f},{y - r:.2f} L{x + r:.2f},{y + r:.2f} M{x + r:.2f},{y - r:.2f} '
                           f'L{x - r:.2f},{y + r:.2f}" stroke="#d62828" stroke-width="{cell * 0.09:.2f}" '
                           f'stroke-linecap="round" class="mark x"/>')
            elif mark == "o":
                out.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{r:.2f}" fill="none" stroke="#1d4fc4" '
                           f'stroke-width="{cell * 0.09:.2f}" class="mark o"/>')
        for line in LINES:
            marks = {cells[i] for i in line}
            if len(marks) == 1 and None not in marks:
                (x1, y1), (x2, y2) = centre(line[0]), centre(line[2])
                out.append(f'<line x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}" stroke="#2a9d3a" '
                           f'stroke-width="{cell * 0.06:.2f}" stroke-opacity="0.8" class="win"/>')
        if coordinates:
            fs = margin * 0.7
            for c in range(3):
                x = margin + (c + 0.5) * cell
                out.append(f'<text x="{x:.2f}" y="{size - margin * 0.25:.2f}" font-size="{fs:.2f}" '
                           f'text-anchor="middle" fill="#555555" font-family="sans-serif">{"abc"[c]}</text>')
            for row in range(3):
                y = margin + (2 - row + 0.6) * cell
                out.append(f'<text x="{margin * 0.5:.2f}" y="{y:.2f}" font-size="{fs:.2f}" text-anchor="middle" '
                           f'fill="#555555" font-family="sans-serif">{row + 1}</text>')
        out.append("</svg>")
        return "\n".join(out)



registry.register(registry.GameInfo(
    name=TicTacToe.GAME, cls=TicTacToe, family="tictactoe",
    from_text=lambda text, size, flags: TicTacToe(text), openings="openings_tictactoe.txt",
    phases=(("opening", 0, 2), ("middle", 3, 5), ("end", 6, 9))))


__all__ = ["TicTacToe", "Outcome", "START_TEXT"]
