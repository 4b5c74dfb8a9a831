"""Out-of-distribution test positions: random-play games (any game) and random chess placements."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .generate import generate_positions
from .records import MANIFEST
from .store import PositionStore


def random_chess_positions(n: int, seed: int = 0, max_pieces: int = 30) -> List[str]:
    """The MAV paper's out-of-distribution chess positions: random placements, not positions of games.

    Each position has both kings and a uniformly random number (0..``max_pieces``) of other pieces, each of
    a uniformly random kind (queen, rook, bishop, knight, pawn) and colour on a random empty square (pawns
    off the first and last ranks), and a random side to move; no castling or en passant rights.  Kept when
    the chess reader accepts it (so the side not to move is not in check: never both kings, and no move
    buffer can overflow) and the side to move is not checkmated.  Returns ``n`` distinct FENs, the same for
    a seed."""
    from ..games.chess import Chess
    if n < 0 or max_pieces < 0 or max_pieces > 62:
        raise ValueError(f"n must be >= 0 and max_pieces in 0..62, not n={n}, max_pieces={max_pieces}")
    rng = np.random.default_rng(seed)
    out: List[str] = []
    seen: set = set()
    while len(out) < n:
        board = [""] * 64
        for king in "Kk":
            free = [i for i in range(64) if not board[i]]
            board[free[int(rng.integers(len(free)))]] = king
        for _ in range(int(rng.integers(max_pieces + 1))):
            kind = "qrbnp"[int(rng.integers(5))]
            free = [i for i in range(64) if not board[i] and (kind != "p" or 8 <= i < 56)]
            board[free[int(rng.integers(len(free)))]] = kind.upper() if rng.integers(2) else kind
        rows = []
        for r in range(7, -1, -1):
            row, empty = "", 0
            for c in range(8):
                pc = board[8 * r + c]
                if pc:
                    row += (str(empty) if empty else "") + pc
                    empty = 0
                else:
                    empty += 1
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + (" w" if rng.integers(2) else " b") + " - - 0 1"
        try:
            st = Chess(fen)
        except ValueError:
            continue
        if st.is_checkmate() or fen in seen:
            continue
        seen.add(fen)
        out.append(fen)
    return out


def ood_positions(game: str, out, n_games: int, exclude: Sequence[Any] = (), seed: int = 10_000,
                  random_opening: int = 0, board_size: int = 0, annotator_options: Optional[Dict] = None,
                  workers: int = 1, progress: bool = True) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Out-of-distribution test positions: games of uniformly random moves (epsilon 1), annotated by the
    same engine, written to ``out`` (reused when already there), minus every position that also occurs in
    the position sets ``exclude`` (directories or PositionStores, e.g. the training and validation sets).

    Random play reaches boards that the engines' (near-)best play of the training games rarely or never
    does: loose, scattered, often lost for one side long before the end. Returns (records, info) with
    info = {games, generated, in_excluded, positions, epsilon, random_opening, seed}."""
    root = Path(out)
    if not (root / "train" / MANIFEST).exists():
        generate_positions(game, root, n_games, seed=seed, epsilon=1.0, workers=workers, val_fraction=0.0,
                           board_size=board_size, random_opening=random_opening,
                           annotator_options=annotator_options, progress=progress)
    seen = set()
    for ex in exclude:
        store = ex if isinstance(ex, PositionStore) else PositionStore(ex)
        seen.update(r["state"] for r in store)
    recs = list(PositionStore(root / "train"))
    keep = [r for r in recs if r["state"] not in seen]
    info = {"games": n_games, "generated": len(recs), "in_excluded": len(recs) - len(keep),
            "positions": len(keep), "epsilon": 1.0, "random_opening": random_opening, "seed": seed}
    return keep, info


__all__ = ["random_chess_positions", "ood_positions"]
