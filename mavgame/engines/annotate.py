"""Label chess positions with engine values for every legal move and a best move.

Each position is searched once with MultiPV set to the number of legal moves, so every legal move
gets a score; moves the engine did not report (an engine with a smaller MultiPV limit) are searched
again with ``searchmoves``.  Scores become win probabilities for the side to move with the MAV
format's formula (:func:`mavgame.engines.uci_protocol.cp_to_win_prob`; mates are 1 or 0).

    >>> from mavgame.engines.annotate import Annotator, annotate_many
    >>> with Annotator(nodes=20000) as ann:
    ...     a = ann.annotate("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    >>> a.best, a.values[a.best]
    >>> for a in annotate_many(fens, workers=2, nodes=20000): ...   # parallel over processes

Positions are FENs (chess or Chess960; Chess960 is detected from the castling field or set
with ``chess960=True``), optionally followed by ``moves m1 m2 ...`` in UCI.

``game="gardner"`` annotates Gardner 5x5 minichess positions (5x5 FENs) with Fairy-Stockfish
(``UCI_Variant`` = ``gardner``, see :mod:`mavgame.engines.fairy`); the moves valued are mavgame's legal moves
(the engine's bishop promotions, which the paper's rules forbid, are left out of the search).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .uci import UCIEngine
from .uci_protocol import STARTPOS, EngineError, Score

__all__ = ["EngineAnnotation", "Annotator", "annotate_many", "annotate_file", "parse_position", "read_positions",
           "check_line", "check_positions"]


@dataclass
class EngineAnnotation:
    """Engine labels for one position (``mavgame.mav.Annotation`` is the MAV format's action-id form).

    ``values`` maps every legal move (UCI) to the win probability of the side to move after
    playing it; ``scores`` holds the raw engine scores ("cp 34", "mate -2"); ``best`` is the
    engine's best move (None when the game is over).  ``order`` lists the moves best first."""

    fen: str
    moves: List[str] = field(default_factory=list)  # moves applied to fen before annotating
    best: Optional[str] = None
    values: Dict[str, float] = field(default_factory=dict)
    scores: Dict[str, str] = field(default_factory=dict)
    order: List[str] = field(default_factory=list)
    depth: Optional[int] = None
    nodes: Optional[int] = None
    game: str = "chess"  # "chess960" when annotated with Chess960 castling

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "EngineAnnotation":
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})

    def state(self):
        """The annotated position as a game state."""
        from .. import _core
        s = _core.State(self.game, self.fen)
        for m in self.moves:
            s.push(m)
        return s

    def to_mav(self, commands: str = "%state %top_all %best_action") -> str:
        """The position and its labels as a MAV text (prompt and target; see :mod:`mavgame.mav`)."""
        from .. import mav
        p, t = mav.example(self.state(), self, commands)
        return p + t

    def top(self, k: int) -> List[Tuple[str, float]]:
        """The k best moves with their values."""
        return [(m, self.values[m]) for m in self.order[:k]]


def _score_text(s: Score) -> str:
    return f"mate {s.mate}" if s.mate is not None else f"cp {s.cp}"


def parse_position(line: str) -> Tuple[str, List[str]]:
    """``"<fen> [moves m1 m2 ...]"`` -> (fen, moves); "startpos" names the start position."""
    text = line.strip()
    if not text:
        raise ValueError("empty position line")
    if " moves " in f" {text} ":
        head, _, tail = f" {text} ".partition(" moves ")
        fen, moves = head.strip(), tail.split()
    else:
        fen, moves = text, []
    if fen in ("", "startpos"):
        fen = STARTPOS
    if len(fen.split()) < 4:
        raise ValueError(f"malformed FEN (fewer than 4 fields): {fen!r}")
    return fen, moves


def check_line(fen: str, moves: Sequence[str] = (), chess960: bool = False, game: Optional[str] = None) -> str:
    """The game ("chess" or "chess960") of a position line, after checking with the C core that the FEN is
    valid and every move is legal in turn; ValueError (an InvalidMoveError or IllegalMoveError for a
    move) naming the move and its number otherwise.  Engines skip an illegal move of ``position ...
    moves`` silently and would annotate the wrong position."""
    from .. import _core
    if game not in (None, "chess", "chess960", "gardner"):
        raise ValueError(f"cannot annotate game {game!r} with a UCI engine (chess, chess960, gardner)")
    if game != "gardner":
        game = "chess960" if chess960 or game == "chess960" or _is_chess960_fen(fen) else "chess"
    s = _core.State(game, fen)
    for i, m in enumerate(moves):
        try:
            s.push(m)
        except ValueError as e:
            raise type(e)(f"move {i + 1} {m!r} of the line: {e}") from None
    return game


def _is_chess960_fen(fen: str) -> bool:
    """Chess960 if the castling field names rook files (Shredder/X-FEN), or if the position is not
    a valid chess position but a valid Chess960 one (castling rights with the king or rooks off
    their standard squares, as in ``KQkq`` Chess960 start positions)."""
    from .. import _core
    parts = fen.split()
    castling = parts[2] if len(parts) > 2 else "-"
    if any(c not in "KQkq-" for c in castling):
        return True
    try:
        _core.State("chess", fen)
        return False
    except ValueError:
        pass
    try:
        _core.State("chess960", fen)
        return True
    except ValueError:
        return False


class Annotator:
    """Annotates positions with one engine.

    Parameters
    ----------
    engine:
        Engine binary (default Stockfish, found on PATH or in /usr/games).
    nodes, movetime, depth:
        The search limit per position (nodes default 100000 when none is given).
        The budget is shared by all legal moves (one MultiPV search).
    threads, hash_mb:
        Engine threads and hash size (1 thread per process when annotating in parallel).
    chess960:
        Force Chess960 castling rules (otherwise detected from the FEN's castling field).
    game:
        "gardner" for Gardner minichess (engine: Fairy-Stockfish unless ``engine`` names another
        binary; the engine's UCI_Variant is set to gardner); None or "chess" for chess/Chess960.
    """

    def __init__(self, engine: str = "stockfish", *, nodes: Optional[int] = None, movetime: Optional[int] = None,
                 depth: Optional[int] = None, threads: int = 1, hash_mb: int = 16, chess960: bool = False,
                 options: Optional[Dict[str, object]] = None, timeout: float = 10.0, game: Optional[str] = None):
        if nodes is None and movetime is None and depth is None:
            nodes = 100_000
        self.limits = {k: v for k, v in (("nodes", nodes), ("movetime", movetime), ("depth", depth)) if v is not None}
        self.engine_path = engine
        self.chess960 = chess960
        if game not in (None, "chess", "chess960", "gardner"):
            raise ValueError(f"cannot annotate game {game!r} with a UCI engine (chess, chess960, gardner)")
        self.game = game
        opts: Dict[str, object] = {}
        if game == "gardner":
            from .fairy import open_engine
            self._engine = open_engine(None if engine == "stockfish" else engine, timeout=timeout)
        else:
            self._engine = UCIEngine(engine, timeout=timeout)
        for name, v in (("Threads", threads), ("Hash", hash_mb)):
            if name.lower() in self._engine.options:
                opts[name] = v
        if options:
            opts.update(options)
        if opts:
            self._engine.configure(opts)
        self._960 = None if "uci_chess960" not in self._engine.options else False
        self._max_multipv = self._engine.options["multipv"].max if "multipv" in self._engine.options else 1

    @property
    def engine(self) -> UCIEngine:
        return self._engine

    def _set_960(self, on: bool) -> None:
        if self._960 is None:
            if on:
                raise EngineError(f"engine {self._engine.name!r} has no UCI_Chess960 option")
            return
        if self._960 != on:
            self._engine.set_option("UCI_Chess960", on)
            self._960 = on

    def legal_moves(self, fen: str, moves: Sequence[str] = ()) -> List[str]:
        """Legal moves via the engine's ``go perft 1`` (checks the position at the same time)."""
        _, per_move = self._engine.perft(1, fen, moves)
        return list(per_move)

    def _gardner_moves(self, fen: str, moves: Sequence[str], engine_legal: List[str]):
        """mavgame's legal moves of a Gardner position (the paper's rules: no bishop promotion), and the
        ``searchmoves`` restriction (None when the engine's moves are the same); EngineError if the
        engine's moves differ by more than its bishop promotions (a rules mismatch)."""
        from .. import _core
        s = _core.State("gardner", fen)
        for m in moves:
            s.push(m)
        ours = [str(m) for m in s.legal_moves]
        extra = set(engine_legal) - set(ours)
        if set(ours) - set(engine_legal) or any(not (len(m) == 5 and m[4] == "b") for m in extra):
            raise EngineError(f"engine {self._engine.name!r} disagrees with mavgame's Gardner rules in {s.text()!r}: "
                              f"only mavgame has {sorted(set(ours) - set(engine_legal))}, only the engine has "
                              f"{sorted(extra)}")
        return ours, (ours if extra else None)

    def annotate(self, fen: str, moves: Sequence[str] = ()) -> EngineAnnotation:
        """Values for every legal move of ``fen`` after ``moves`` and the engine's best move."""
        fen = fen.strip()
        game = check_line(fen, moves, self.chess960, self.game)
        c960 = game == "chess960"
        self._set_960(c960)
        legal = self.legal_moves(fen, moves)
        restrict = None
        if game == "gardner":
            legal, restrict = self._gardner_moves(fen, moves, legal)
        ann = EngineAnnotation(fen=fen, moves=list(moves), game=game)
        if not legal:
            return ann
        self._engine.new_game()
        res = self._engine.go(fen, moves, multipv=min(len(legal), self._max_multipv or 1), searchmoves=restrict,
                              **self.limits)
        got: Dict[str, Score] = {}
        order: List[str] = []
        legal_set = set(legal)
        for ln in res.lines:
            if ln.move is None or ln.score is None:
                continue
            if ln.move not in legal_set:
                raise EngineError(f"engine {self._engine.name!r} reported the illegal move {ln.move!r} "
                                  f"in position {fen!r} (moves {' '.join(moves) or '-'})")
            if ln.move not in got:
                got[ln.move] = ln.score
                order.append(ln.move)
        missing = [m for m in legal if m not in got]
        while missing:  # an engine whose MultiPV cannot cover all moves: search the rest
            chunk = missing[: max(1, self._max_multipv or 1)]
            r2 = self._engine.go(fen, moves, multipv=len(chunk), searchmoves=chunk, **self.limits)
            found = False
            for ln in r2.lines:
                if ln.move in chunk and ln.move not in got and ln.score is not None:
                    got[ln.move] = ln.score
                    found = True
            if not found:
                why = f" (it sent malformed info lines: {'; '.join(r2.ignored[:2])})" if r2.ignored else ""
                raise EngineError(f"engine {self._engine.name!r} gave no score for moves {chunk} in {fen!r}{why}")
            missing = [m for m in legal if m not in got]
        best = res.bestmove
        if best is None or best not in legal_set:
            raise EngineError(f"engine {self._engine.name!r} returned best move {best!r}, not one of the "
                              f"legal moves of {fen!r}")
        order = sorted(got, key=lambda m: -got[m].to_cp())
        # the engine's choice first among equals
        if best in order and got[best].to_cp() == got[order[0]].to_cp():
            order.remove(best)
            order.insert(0, best)
        ann.best = best
        ann.order = order
        ann.values = {m: got[m].win_prob() for m in order}
        ann.scores = {m: _score_text(got[m]) for m in order}
        if res.lines:
            ann.depth = res.lines[0].depth
            ann.nodes = res.lines[0].nodes
        return ann

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> "Annotator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# parallel annotation

_WORKER: Optional[Annotator] = None  # one per worker process (process-local, set by the initializer)
_WORKER_ERROR: Optional[str] = None  # why the worker's engine did not start (reported by every task)


def _worker_init(kwargs: dict) -> None:
    # An initializer that raises makes multiprocessing.Pool start a new worker, forever: report instead.
    global _WORKER, _WORKER_ERROR
    try:
        _WORKER = Annotator(**kwargs)
    except (EngineError, OSError, ValueError) as e:
        _WORKER_ERROR = f"{type(e).__name__}: {e}"
        return
    from ..workers import close_at_exit
    close_at_exit(_WORKER)


def _worker_annotate(item: Tuple[int, str, List[str]]) -> Tuple[int, Optional[dict], Optional[str]]:
    idx, fen, moves = item
    if _WORKER is None:
        return idx, None, _WORKER_ERROR or "the worker's engine did not start"
    try:
        return idx, _WORKER.annotate(fen, moves).to_dict(), None
    except (EngineError, ValueError) as e:
        return idx, None, f"{type(e).__name__}: {e}"


def annotate_many(positions: Iterable[Union[str, Tuple[str, Sequence[str]]]], *, workers: int = 1,
                  progress: bool = False, engine: str = "stockfish", **kwargs) -> Iterator[EngineAnnotation]:
    """Annotate positions (FEN strings, "FEN moves ..." lines or (fen, moves) pairs), in order.

    ``workers`` processes each run one engine (1 thread each); other keyword arguments go to
    :class:`Annotator`.  An engine error stops the run with an :class:`EngineError` naming the
    position; annotations yielded before it are complete."""
    items = []
    for i, p in enumerate(positions):
        if isinstance(p, str):
            fen, mv = parse_position(p)
        else:
            fen, mv = p[0], list(p[1])
        try:
            check_line(fen, mv, bool(kwargs.get("chess960")), kwargs.get("game"))
        except ValueError as e:
            raise type(e)(f"position {i} ({fen!r} moves {' '.join(mv) or '-'}): {e}") from None
        items.append((i, fen, list(mv)))
    kwargs = dict(kwargs, engine=engine)
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=len(items), desc="annotate", unit="pos")
    workers = min(int(workers), len(items))   # never more processes than positions
    try:
        if workers <= 1:
            with Annotator(**kwargs) as ann:
                for i, fen, mv in items:
                    try:
                        a = ann.annotate(fen, mv)
                    except EngineError as e:
                        raise type(e)(f"position {i} ({fen!r}): {e}") from None
                    if bar:
                        bar.update(1)
                    yield a
            return
        from ..workers import pool as worker_pool
        Annotator(**kwargs).close()   # an engine that does not start fails here, once, before any worker
        with worker_pool(workers, _worker_init, (kwargs,)) as pool:
            for idx, d, err in pool.imap(_worker_annotate, items, chunksize=1):
                if err is not None:
                    pool.terminate()
                    raise EngineError(f"position {idx} ({items[idx][1]!r}): {err}")
                if bar:
                    bar.update(1)
                yield EngineAnnotation.from_dict(d)  # type: ignore[arg-type]
    finally:
        if bar:
            bar.close()


def _numbered_positions(path: str) -> List[Tuple[int, str]]:
    """(line number, text) of the position lines of a UTF-8 text file (blank and '#' lines skipped);
    ValueError naming the file and line for text that is not UTF-8."""
    out = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}, line {n}: not UTF-8 text (byte {raw[e.start:e.start + 1]!r} at "
                                 f"column {e.start + 1})") from None
            s = line.strip()
            if s and not s.startswith("#"):
                out.append((n, s))
    return out


def read_positions(path: str) -> List[str]:
    """Position lines of a UTF-8 text file (blank lines and lines starting with '#' skipped)."""
    return [s for _, s in _numbered_positions(path)]


def check_positions(path: str, chess960: bool = False, game: Optional[str] = None) -> List[str]:
    """The position lines of ``path``, each checked with the C core (a valid FEN, legal moves); ValueError
    naming the file, the line number and the offending move otherwise."""
    out = []
    for n, text in _numbered_positions(path):
        try:
            fen, moves = parse_position(text)
            check_line(fen, moves, chess960, game)
        except ValueError as e:
            raise type(e)(f"{path}, line {n} ({text!r}): {e}") from None
        out.append(text)
    return out


def _count_done(out_path: str) -> int:
    """Complete JSON lines at the start of an output file (a torn last line is cut off)."""
    if not os.path.exists(out_path):
        return 0
    n = 0
    good_bytes = 0
    with open(out_path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break
            try:
                json.loads(raw)
            except ValueError:
                break
            n += 1
            good_bytes += len(raw)
    if good_bytes != os.path.getsize(out_path):
        with open(out_path, "rb+") as f:
            f.truncate(good_bytes)
    return n


def annotate_file(in_path: str, out_path: str, *, workers: int = 1, progress: bool = True,
                  resume: bool = True, mav_commands: Optional[str] = None, **kwargs) -> int:
    """Annotate the positions of ``in_path`` (one per line) into JSON lines at ``out_path``.

    Written line by line, so an interrupted run resumes where it stopped (``resume=True``).
    ``mav_commands`` (e.g. "%state %top_all %best_action") adds each position's MAV text as the
    field "mav".  Returns the number of positions annotated by this call."""
    positions = check_positions(in_path, bool(kwargs.get("chess960")), kwargs.get("game"))
    done = _count_done(out_path) if resume else 0
    if done > len(positions):
        raise ValueError(f"{out_path} has {done} annotations but {in_path} only {len(positions)} positions")
    mode = "a" if resume else "w"
    n = 0
    with open(out_path, mode) as out:
        for a in annotate_many(positions[done:], workers=workers, progress=progress, **kwargs):
            d = a.to_dict()
            if mav_commands:
                d["mav"] = a.to_mav(mav_commands)
            out.write(json.dumps(d) + "\n")
            out.flush()
            n += 1
    return n
