"""Gardner's 5x5 minichess with the python-chess style API of :class:`ChessFamily`.

>>> from mavgame.games.gardner import Gardner
>>> board = Gardner()
>>> board.fen()
'rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1'
>>> sorted(board.legal_moves)
['a2a3', 'b1a3', 'b1c3', 'b2b3', 'c2c3', 'd2d3', 'e2e3']
>>> board.push_san("Nc3")
301
>>> board.perft(4)
6811

Rules (csrc/games/gardner.h): chess on a 5x5 board from ``rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1``
without the pawn double step, en passant and castling.  Pawns promote to a knight, rook or queen;
``bishop_promotion=True`` also allows a bishop (pgx's gardner_chess does; the solved-game paper
of Mhalla and Prost does not).  The game ends by checkmate, stalemate, insufficient material (kings
only, king and one minor piece against a king, or only bishops all on one square colour), the
fifty-move rule (halfmove clock 100) or threefold repetition, both automatic here: ``outcome()``,
``is_game_over()`` and ``result()`` are the rules' (``claim_draw`` changes nothing: there is no claim, and
no seventy-five-move or fivefold rule; the python-chess claim methods are Chess's and Chess960's only).

Moves are UCI-style strings on squares a1..e5 (``"b2b3"``, ``"a4a5q"``) or integer actions
``from + 25 * to + 625 * promo`` (squares ``file + 5 * rank``; promo 0 none, 1 knight, 2 bishop,
3 rook, 4 queen).  The text is a 5x5 FEN whose castling and en passant fields are always ``-``.
"""
from __future__ import annotations

from typing import List, Optional

from .. import _core
from . import registry
from .chess import ChessFamily, Outcome, _GardnerMove

#: ``mg_config.flags`` bit that allows promotion to a bishop (MG_FLAG_GARDNER_BISHOP in game.h).
FLAG_BISHOP_PROMOTION = _core.FLAG_GARDNER_BISHOP

START_FEN = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"


class Gardner(ChessFamily):
    """Gardner 5x5 minichess.  ``Gardner()`` is the start position, ``Gardner(fen)`` any legal
    position; ``bishop_promotion=True`` allows promotion to a bishop."""

    GAME = "gardner"
    FILES = 5
    RANKS = 5
    _MOVE = _GardnerMove

    def __init__(self, fen: Optional[str] = None, bishop_promotion: bool = False):
        flags = FLAG_BISHOP_PROMOTION if bishop_promotion else 0
        super().__init__(self.GAME, fen, 0, flags)

    @property
    def bishop_promotion(self) -> bool:
        """Whether pawns may promote to a bishop in this game."""
        return bool(self.flags & FLAG_BISHOP_PROMOTION)

    def __repr__(self) -> str:
        extra = ", bishop_promotion=True" if self.bishop_promotion else ""
        return f"Gardner({self.fen()!r}{extra})"



registry.register(registry.GameInfo(
    name=Gardner.GAME, cls=Gardner, family="chess",
    from_text=lambda text, size, flags: Gardner(text, bishop_promotion=bool(flags & FLAG_BISHOP_PROMOTION)),
    flags={"bishop_promotion": FLAG_BISHOP_PROMOTION}, san=True, pgn_variant="Gardner", uci_variant="gardner"))


def paper_moves(state: "Gardner") -> Optional[List[str]]:
    """The ``searchmoves`` that keep the engine to mavgame's rules in ``state``: its legal moves when
    the game forbids bishop promotion and a promotion is legal (the engine would also consider the
    bishop promotion), else None (the engine's own moves are the game's)."""
    if state.flags & FLAG_BISHOP_PROMOTION:
        return None
    moves = [str(m) for m in state.legal_moves]
    return moves if any(len(m) == 5 for m in moves) else None


__all__ = ["Gardner", "Outcome", "START_FEN", "FLAG_BISHOP_PROMOTION", "paper_moves"]
