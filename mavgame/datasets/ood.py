"""Out-of-distribution test positions: random-play games (any game) and, for chess, the MAV paper's random
piece placements (annotated by Stockfish into a position set: the Table-2 metrics on them through
``mavgame train --ood-games N`` or :func:`random_chess_position_set`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .positions import generate_positions
from .records import MANIFEST, _new_state
from .store import PositionStore, PositionWriter


def random_chess_positions(n: int, seed: int = 0, max_pieces: int = 30) -> List[str]:
    """The MAV paper's out-of-distribution chess positions: random placements, not positions of games.

    Each position has both kings and a uniformly random number (0..``max_pieces``) of other pieces, each of
    a uniformly random kind (queen, rook, bishop, knight, pawn) and colour on a random empty square (pawns
    off the first and last ranks; a piece instead when those ranks are full), and a random side to move; no
    castling or en passant rights.  Kept when the chess reader accepts it (the side not to move is not in
    check, so never both kings: any number and kind of pieces is playable, ``MG_CHESS_MAX_MOVES`` bounds
    the moves of every placement) and the side to move is not checkmated.  Returns ``n`` distinct FENs, the same for
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
            if not free:  # the second to seventh ranks are full: a piece instead of a pawn
                kind = "qrbn"[int(rng.integers(4))]
                free = [i for i in range(64) if not board[i]]
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


STOCKFISH_MAX_PIECES = 30
"""Other pieces (besides the kings) of the placements that Stockfish annotates: its NNUE takes at most 32
active features, one a piece (Stockfish 15's ``MaxActiveDimensions``)."""


def _annotate_fens(job) -> List[Optional[Dict[str, Any]]]:
    """Worker job of :func:`random_chess_position_set`: a record per FEN (None where the engine gave none)."""
    from .positions import _WORKER
    ann = _WORKER["annotate"]
    out: List[Optional[Dict[str, Any]]] = []
    for fen in job:
        st = _new_state("chess", 0, fen)
        res = ann(st)
        if res is None:
            out.append(None)
            continue
        values, best = res
        out.append({"state": st.text(), "prev_state": None, "prev_action": None, "ply": 0,
                    "values": values, "best": best, "result": "*"})
    return out


def random_chess_position_set(out, n: int, seed: int = 10_000, max_pieces: int = STOCKFISH_MAX_PIECES,
                              annotator_options: Optional[Dict] = None, workers: int = 1,
                              progress: bool = True) -> Dict[str, Any]:
    """The paper's out-of-distribution chess set as a position set: ``n`` placements of
    :func:`random_chess_positions` (``seed``, ``max_pieces``; at most :data:`STOCKFISH_MAX_PIECES`, which
    Stockfish can evaluate), each annotated by the chess annotator (Stockfish, ``annotator_options``, default
    20,000 nodes), written to ``out/train`` (no validation split).  Returns the statistics stored in its
    manifest: positions, pieces (min / mean / max), positions with more than 16 pieces a side, moves."""
    from .positions import _run_jobs
    from ..annotators import DEFAULT_ANNOTATOR_OPTIONS
    if max_pieces > STOCKFISH_MAX_PIECES:
        raise ValueError(f"max_pieces {max_pieces}: Stockfish evaluates at most {STOCKFISH_MAX_PIECES + 2} "
                         "pieces (NNUE), so at most 30 besides the kings")
    fens = random_chess_positions(n, seed=seed, max_pieces=max_pieces)
    opts = dict(annotator_options or DEFAULT_ANNOTATOR_OPTIONS.get("chess", {}))
    chunk = 16
    jobs = [fens[i:i + chunk] for i in range(0, len(fens), chunk)]
    pieces: List[int] = []
    stats: Dict[str, Any] = {"kind": "random chess placements (the MAV paper's out-of-distribution set)",
                             "seed": seed, "max_pieces": max_pieces, "annotator": opts, "placements": n,
                             "positions": 0, "unannotated": 0, "over_16_a_side": 0, "moves_annotated": 0}
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=n, desc="chess ood placements", unit="pos", dynamic_ncols=True)
    writer = PositionWriter(out, "chess", val_fraction=0.0)

    def consume(recs):
        for r in recs:
            if bar is not None:
                bar.update(1)
            if r is None:
                stats["unannotated"] += 1
                continue
            board = r["state"].split()[0]
            counts = [sum(ch.isupper() for ch in board), sum(ch.islower() for ch in board)]
            pieces.append(sum(counts))
            stats["over_16_a_side"] += max(counts) > 16
            stats["moves_annotated"] += len(r["values"])
            stats["positions"] += 1
            writer.add(r)

    try:
        _run_jobs("chess", opts, jobs, workers, _annotate_fens, consume)
    finally:
        if bar is not None:
            bar.close()
    if pieces:
        stats["pieces"] = {"min": min(pieces), "mean": round(sum(pieces) / len(pieces), 2), "max": max(pieces)}
    writer.info = {"stats": stats}
    writer.close()
    return stats


def ood_positions(game: str, out, n_games: int, exclude: Sequence[Any] = (), seed: int = 10_000,
                  random_opening: int = 0, board_size: int = 0, annotator_options: Optional[Dict] = None,
                  workers: int = 1, progress: bool = True,
                  placements: Optional[bool] = None) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Out-of-distribution test positions: games of uniformly random moves (epsilon 1), annotated by the
    same engine, written to ``out`` (reused when already there), minus every position that also occurs in
    the position sets ``exclude`` (directories or PositionStores, e.g. the training and validation sets).

    Random play reaches boards that the engines' (near-)best play of the training games rarely or never
    does: loose, scattered, often lost for one side long before the end. Returns (records, info) with
    info = {games, generated, in_excluded, positions, epsilon, random_opening, seed}.

    For a game with random placements (:data:`OOD_PLACEMENTS`; ``placements``, default True there) the
    set is those instead: for chess the paper's, ``n_games`` random piece placements
    (:func:`random_chess_position_set`), info = {placements, generated, in_excluded, positions, seed, kind}."""
    root = Path(out)
    maker = OOD_PLACEMENTS.get(game)
    if placements is None:
        placements = maker is not None
    if placements:
        if maker is None:
            raise ValueError(f"{game!r} has no random-placement out-of-distribution set (games with one: "
                             f"{', '.join(sorted(OOD_PLACEMENTS))})")
        if not (root / "train" / MANIFEST).exists():
            maker(root, n_games, seed=seed, annotator_options=annotator_options, workers=workers,
                  progress=progress)
    elif not (root / "train" / MANIFEST).exists():
        generate_positions(game, root, n_games, seed=seed, epsilon=1.0, workers=workers, val_fraction=0.0,
                           board_size=board_size, random_opening=random_opening,
                           annotator_options=annotator_options, progress=progress)
    seen = set()
    for ex in exclude:
        store = ex if isinstance(ex, PositionStore) else PositionStore(ex)
        seen.update(r["state"] for r in store)
    recs = list(PositionStore(root / "train"))
    keep = [r for r in recs if r["state"] not in seen]
    if placements:
        return keep, {"placements": n_games, "generated": len(recs), "in_excluded": len(recs) - len(keep),
                      "positions": len(keep), "seed": seed, "kind": "random placements"}
    info = {"games": n_games, "generated": len(recs), "in_excluded": len(recs) - len(keep),
            "positions": len(keep), "epsilon": 1.0, "random_opening": random_opening, "seed": seed}
    return keep, info


# game -> function(out, n, seed=..., annotator_options=..., workers=..., progress=...) writing an annotated set
# of n random placements: the game's out-of-distribution set instead of random-play games (chess: the paper's)
OOD_PLACEMENTS: Dict[str, Callable[..., Any]] = {"chess": random_chess_position_set}

__all__ = ["random_chess_positions", "random_chess_position_set", "ood_positions", "OOD_PLACEMENTS",
           "STOCKFISH_MAX_PIECES"]
