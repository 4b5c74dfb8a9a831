"""python-chess style move errors, raised by every game's ``push``, ``action_from_str``,
``push_san``, ``push_uci``, ``parse_san`` and ``parse_uci``.

All three are ValueError subclasses (code that catches ValueError keeps working), named as in
python-chess, so ``except chess.IllegalMoveError`` habits carry over::

    >>> import mavgame
    >>> try:
    ...     mavgame.ConnectFour.from_moves("444444").push("4")
    ... except mavgame.IllegalMoveError as e:
    ...     print(e)
    illegal Connect Four move '4': the column is full; legal moves: 1, 2, 3, 5, 6, 7

The message names the move, says why, and lists the legal moves; the chess family's also names the position by
its FEN (``illegal move 'e2e5' in position 'rnbqkbnr/... w KQkq - 0 1'; legal moves: a2a3, ...``).

The C binding raises them (``csrc/bind/state.c``, ``mg_py_move_error``), choosing the type by the
first word of the core's message, which every game's move parser begins with ("invalid",
"illegal", "ambiguous"): the rules stay in one place, in C.
"""
from __future__ import annotations

__all__ = ["InvalidMoveError", "IllegalMoveError", "AmbiguousMoveError"]


class InvalidMoveError(ValueError):
    """A move string that is not a move in the game's notation (a syntax error: ``"e9"``, ``"Qx"``,
    column ``"9"`` in Connect Four, a Hex cell off the board, a NUL character)."""


class IllegalMoveError(ValueError):
    """A well-formed move (or an int action) that is not legal in the position (``"e2e5"`` from the
    start, an occupied cell, a full column, an action out of range)."""


class AmbiguousMoveError(ValueError):
    """A SAN move that more than one legal move matches (``"Nd2"`` when both knights can go there)."""
