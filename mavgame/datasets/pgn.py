"""Chess and Chess960 positions of PGN games, annotated by the engine, into a position store."""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _core
from ..annotators import DEFAULT_ANNOTATOR_OPTIONS
from .positions import _WORKER, _run_jobs
from .store import PositionWriter

_PGN_RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}


def read_pgn(text: str) -> Iterator[Tuple[Dict[str, str], List[str]]]:
    """(headers, SAN moves of the main line) for every game of a PGN text.

    Comments (``{...}`` and ``;`` to the end of the line), variations (nested parentheses), NAGs
    (``$n``), move numbers and results are skipped."""
    headers: Dict[str, str] = {}
    moves: List[str] = []
    in_moves = False
    i, n = 0, len(text)
    depth = 0
    while i < n:
        c = text[i]
        if c == "{":
            j = text.find("}", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "(":
            depth += 1
            i += 1
            continue
        if c == ")":
            depth = max(0, depth - 1)
            i += 1
            continue
        if depth:
            i += 1
            continue
        if c == "[":   # a tag pair: a new game starts if moves were read without a result token
            if in_moves:
                yield headers, moves
                headers, moves, in_moves = {}, [], False
            j = text.find("]", i)
            if j < 0:
                break
            tag = text[i + 1:j].strip()
            k = tag.find(" ")
            if k > 0:
                headers[tag[:k]] = tag[k:].strip().strip('"')
            i = j + 1
            continue
        if c.isspace():
            i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] not in "{}();[":
            j += 1
        tok = text[i:j]
        i = j
        in_moves = True
        if tok in _PGN_RESULTS:
            yield headers, moves
            headers, moves, in_moves = {}, [], False
            continue
        if tok.startswith("$"):
            continue
        tok = {"0-0": "O-O", "0-0-0": "O-O-O"}.get(tok.rstrip("+#"), tok)
        tok = tok.lstrip("0123456789").lstrip(".")
        if tok:
            moves.append(tok.rstrip("!?"))
    if moves or headers:
        yield headers, moves


def _pgn_game_records(headers: Dict[str, str], sans: List[str], annotate, every: int, skip_plies: int,
                      cache: Dict[str, Any]):
    from ..games.chess import Chess, Chess960
    variant = headers.get("Variant", "").lower()
    fen = headers.get("FEN")
    st = Chess960(fen=fen) if "960" in variant or "fischer" in variant else Chess(fen)
    recs: List[Dict[str, Any]] = []
    prev: Optional[Tuple[str, str]] = None
    for ply in range(len(sans) + 1):
        if ply >= skip_plies and (ply - skip_plies) % every == 0:
            text = st.text()
            rec: Dict[str, Any] = {"state": text, "prev_state": prev[0] if prev else None,
                                   "prev_action": prev[1] if prev else None, "ply": ply}
            if st.is_terminal():
                rec.update(values={}, best=None, result=_core.State.result(st))   # the search's rule, as is_terminal
                recs.append(rec)
                break
            ann = cache.get(text)
            if ann is None:
                ann = cache[text] = annotate(st)
            if ann is not None:
                rec.update(values=ann[0], best=ann[1], result="*")
                recs.append(rec)
        if ply == len(sans) or st.is_terminal():
            break
        text = st.text()
        try:
            a = st.push_san(sans[ply])
        except ValueError:
            recs.append({"skipped": True, "ply": ply, "pgn_error": True})
            break
        st.pop()
        mv = st.action_to_str(a)
        st.push(a)
        prev = (text, mv)
    return st.game, recs


def _pgn_job(job):
    games, every, skip_plies = job
    ann = _WORKER["annotate"]
    return [_pgn_game_records(h, s, ann, every, skip_plies, _WORKER["cache"]) for h, s in games]


def positions_from_pgn(pgn_paths: Sequence[str], out, every: int = 1, skip_plies: int = 0, max_games: int = 0,
                       workers: int = 1, val_fraction: float = 0.02, shard_size: int = 100_000,
                       annotator_options: Optional[Dict[str, Any]] = None, progress: bool = True,
                       chunk: int = 8) -> Dict[str, Any]:
    """Chess (and Chess960, by the ``Variant`` tag) positions of PGN games, annotated by Stockfish, into a
    position set like :func:`generate_positions`'s: every ``every``-th position from ply ``skip_plies`` of
    each main line, each distinct position once. A move that does not parse ends its game (counted)."""
    import time
    games: List[Tuple[Dict[str, str], List[str]]] = []
    for p in pgn_paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            for g in read_pgn(f.read()):
                games.append(g)
                if max_games and len(games) >= max_games:
                    break
        if max_games and len(games) >= max_games:
            break
    if not games:
        raise ValueError(f"no games in {', '.join(map(str, pgn_paths))}")
    variants = {("chess960" if "960" in h.get("Variant", "").lower() or "fischer" in h.get("Variant", "").lower()
                 else "chess") for h, _ in games}
    game = "chess960" if variants == {"chess960"} else "chess"
    if len(variants) > 1:
        raise ValueError("PGN files mix chess and Chess960 games: write them to separate position sets")
    opts = dict(annotator_options or DEFAULT_ANNOTATOR_OPTIONS[game])
    jobs = [(games[s:s + chunk], every, skip_plies) for s in range(0, len(games), chunk)]
    writer = PositionWriter(out, game, shard_size=shard_size, val_fraction=val_fraction)
    seen = set()
    stats: Dict[str, Any] = {"game": game, "source": [str(p) for p in pgn_paths], "games": len(games),
                             "every": every, "skip_plies": skip_plies, "annotator": opts, "pgn_errors": 0,
                             "positions_seen": 0, "unannotated": 0, "terminal": 0, "moves_annotated": 0}
    counts = {"train": 0, "val": 0}
    t0 = time.perf_counter()
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=len(games), desc="pgn games", unit="game", dynamic_ncols=True)

    def consume(results):
        for _, recs in results:
            for r in recs:
                stats["positions_seen"] += 1
                if r.get("skipped"):
                    stats["pgn_errors" if r.get("pgn_error") else "unannotated"] += 1
                    continue
                if r["state"] in seen:
                    continue
                seen.add(r["state"])
                stats["terminal"] += int(not r["values"])
                stats["moves_annotated"] += len(r["values"])
                counts[writer.add(r)] += 1
            if bar is not None:
                bar.update(1)

    try:
        _run_jobs(game, opts, jobs, workers, _pgn_job, consume)
    finally:
        if bar is not None:
            bar.close()
    stats.update(positions_unique=len(seen), train=counts["train"], val=counts["val"],
                 seconds=round(time.perf_counter() - t0, 1))
    writer.info = {"stats": stats}
    writer.close()
    return stats


__all__ = ["read_pgn", "positions_from_pgn"]
