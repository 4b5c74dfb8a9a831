"""The Connect Four solver's opening book: exact scores of every position up to a fixed ply.

``mavgame book build --ply N --out FILE`` (or :func:`build_book`) solves every non-terminal position
with N stones (a position and its mirror image once), then every shallower one, which the solver
answers at once with the deeper positions in hand, and writes them sorted into a compact file
(format in ``csrc/search/c4_book.h`` and docs/format.md: 8 bytes a position).  It resumes: solved
positions are appended to ``FILE.partial`` as they finish, and a run that is stopped (Ctrl-C, kill)
picks up there (an entry torn by a kill is cut off the file before anything is appended after it; the
finished book is written to a temporary file, fsynced and renamed before the partial files are removed).
A deeper book is a new build (the deepest ply costs nearly everything; shallower plies follow in seconds).
``--root MOVES`` builds the book of the positions below one opening only.
``--shard I/N`` splits the deepest ply between N processes (one per core): shard I solves the blocks of
64 consecutive positions (depth-first order) whose index is I modulo N and appends to
``FILE.partial.I``; every run reads all the partial files, and a run without ``--shard`` finishes the
book (whatever the shards left, then the shallower plies) and removes them.

A solver uses a book with ``C4Solver.set_book(data)`` (:func:`attach`); the shipped book
(``mavgame/data/c4_book.bin``, when the package has one) is attached to the module's default
solver, made by the first solve that needs it (not at import:
:func:`mavgame.games.connect_four.install_lazy_default_solver`), so ``c4_solve``, the perfect player,
the annotator and the opening generator use it, and :func:`mavgame.games.connect_four.solver` attaches
it to the solvers it makes.
"""
from __future__ import annotations

import glob
import os
import struct
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np

from .. import _core
from .._atomic import fsync_dir, write_bytes_atomic

__all__ = ["SHIPPED", "build_book", "positions_at", "attach", "shipped_book", "default_solver", "install_shipped_book",
           "read_book"]

SHIPPED = Path(__file__).resolve().parent.parent / "data" / "c4_book.bin"
# The package's own book file, for c4_solve's default solver: SHIPPED pointed elsewhere after this module is
# imported (as tests do) changes what solver() and install_shipped_book() attach, not the default solver, as
# when that solver was made at import.
_PACKAGE_BOOK = SHIPPED
MAGIC = b"MGC4BOOK"
VERSION = 1
_HEADER = struct.Struct("<8sIHHQ")
_KEY_LIMIT = 1 << 49            # position keys (csrc/games/connect_four/c4_book.c)
_MIN_SCORE, _MAX_SCORE = -18, 18  # MG_C4_MIN_SCORE, MG_C4_MAX_SCORE (csrc/games/connect_four/c4_solver.h)


def _header(min_ply: int, max_ply: int, count: int) -> bytes:
    return _HEADER.pack(MAGIC, VERSION, min_ply, max_ply, count)


def _root(moves: str) -> "_core.State":
    s = _core.State("connect_four")
    for ch in moves:
        if ch not in "1234567":
            raise ValueError(f"book root {moves!r}: {ch!r} is not a column 1..7")
        a = s.action_from_str(ch)
        if s.is_terminal() or not s.is_legal(a):
            raise ValueError(f"book root {moves!r}: column {ch} cannot be played there")
        s.push(a)
    if s.is_terminal():
        raise ValueError(f"book root {moves!r}: the game is over")
    return s


def positions_at(root: "_core.State", ply: int) -> Iterator[Tuple[int, "_core.State"]]:
    """(canonical key, state) of every non-terminal position with ``ply`` stones below ``root``, each
    mirror pair once, in depth-first order (neighbours share subtrees: good for the solver's table)."""
    seen: set = set()
    s = root.copy()
    depth = ply - len(s.history())

    def rec(d: int):
        if d == 0:
            k = _core.c4_book_key(s)
            if k not in seen:
                seen.add(k)
                yield k, s.copy()
            return
        for a in s.legal_actions():
            s.push(int(a))
            if not s.is_terminal():
                yield from rec(d - 1)
            s.pop()

    if depth < 0:
        raise ValueError(f"ply {ply} is before the root's {len(s.history())} stones")
    yield from rec(depth)


def _read_partial(path: Path, min_ply: int, max_ply: int) -> Dict[int, int]:
    data = path.read_bytes()
    if len(data) < _HEADER.size and data == _header(min_ply, max_ply, 0)[:len(data)]:
        return {}  # a header torn by a kill (builds before issue 53's fix wrote it in place): nothing solved yet
    if len(data) < _HEADER.size:
        raise ValueError(f"{path}: {len(data)} bytes, not a partial book (remove it to start again)")
    magic, version, lo, hi, _ = _HEADER.unpack_from(data)
    if magic != MAGIC or version != VERSION:
        raise ValueError(f"{path}: not a partial book of this version (remove it to start again)")
    if (lo, hi) != (min_ply, max_ply):
        raise ValueError(f"{path} is a partial book of plies {lo}..{hi}, not {min_ply}..{max_ply}: "
                         "give the same --ply/--root, or remove it")
    n = (len(data) - _HEADER.size) // 8  # a torn last entry (killed mid-write) is dropped (_open_partial cuts it)
    v = np.frombuffer(data, dtype="<u8", count=n, offset=_HEADER.size)
    keys, scores = v >> np.uint64(8), (v & np.uint64(0xFF)).astype(np.int64) - 64
    bad = np.flatnonzero((keys >= np.uint64(_KEY_LIMIT)) | (scores < _MIN_SCORE) | (scores > _MAX_SCORE))
    if bad.size:  # e.g. entries appended after a torn one by a build before the fix of issue 53
        i = int(bad[0])
        raise ValueError(f"{path}: entry {i} (key {int(keys[i]):#x}, score {int(scores[i])}) is not a solved "
                         f"position (scores lie in [{_MIN_SCORE}, {_MAX_SCORE}]): the file is damaged, remove it "
                         "to start again")
    return dict(zip(keys.tolist(), scores.tolist()))


def _open_partial(part: Path, min_ply: int, max_ply: int):
    """``part`` opened for appending: created (header written durably) when missing, else cut back to its last
    whole entry, so that a torn entry left by a kill is not followed by entries misaligned by its bytes."""
    if not part.exists() or part.stat().st_size < _HEADER.size:  # (a torn header: _read_partial checked it)
        write_bytes_atomic(part, _header(min_ply, max_ply, 0))  # a kill leaves no file or a whole header
    f = open(part, "r+b")
    try:
        size = f.seek(0, os.SEEK_END)
        whole = _HEADER.size + (size - _HEADER.size) // 8 * 8
        if whole != size:
            f.truncate(whole)
            f.flush()
            os.fsync(f.fileno())
            f.seek(whole)
    except BaseException:
        f.close()
        raise
    return f


FLUSH_SECONDS = 2.0  # the longest a solved position waits in memory before it is appended
SHARD_BLOCK = 64  # consecutive positions (depth-first order) a shard takes at a time: they share subtrees


def parse_shard(text: str) -> Tuple[int, int]:
    """``"I/N"`` -> (I, N), 0 <= I < N (ValueError naming the text otherwise)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"shard {text!r}: expected I/N, e.g. 0/2") from None
    if not (n >= 1 and 0 <= i < n):
        raise ValueError(f"shard {text!r}: need 0 <= I < N")
    return i, n


def _partial_files(out_p: Path) -> List[Path]:
    main = Path(str(out_p) + ".partial")
    shards = sorted(Path(p) for p in glob.glob(glob.escape(str(main)) + ".*") if p.rsplit(".", 1)[-1].isdigit())
    return ([main] if main.exists() else []) + shards


def build_book(ply: int, out: str, *, root: str = "", tt_log2: int = 24, progress: bool = True,
               max_seconds: Optional[float] = None, shard: Optional[Tuple[int, int]] = None) -> dict:
    """Build (or resume) the book of every position from the root's stones up to ``ply`` stones.

    Returns statistics: positions per ply, seconds per ply (this run), whether it finished.  With
    ``max_seconds`` it stops after about that long (resumable, ``finished`` False).  With
    ``shard=(i, n)`` it solves only its share of the deepest ply (see the module's docstring) and
    returns with ``finished`` False; a run without ``shard`` completes the book."""
    r = _root(root)
    lo = len(r.history())
    if not lo <= ply <= 41:
        raise ValueError(f"ply must lie in {lo}..41 (the root has {lo} stones), not {ply}")
    if shard is not None and not (shard[1] >= 1 and 0 <= shard[0] < shard[1]):
        raise ValueError(f"shard {shard[0]}/{shard[1]}: need 0 <= I < N")
    out_p = Path(out)
    done: Dict[int, int] = {}
    for f in _partial_files(out_p):
        done.update(_read_partial(f, lo, ply))
    part = Path(str(out_p) + ".partial" + (f".{shard[0]}" if shard is not None else ""))
    sv = _core.C4Solver(tt_log2)
    stats: dict = {"ply": ply, "root": root, "resumed_positions": len(done), "per_ply": {}, "finished": False}
    t_start = time.time()
    bar = None
    deeper: List[int] = []  # the keys of the plies below p, solved (a resumed partial also holds shallower ones)
    with _open_partial(part, lo, ply) as f:
        for p in range(ply, lo - 1, -1):
            if p < ply:  # the deeper plies answer these: attach them (only them: the header says p+1..ply)
                sv.set_book(_book_bytes({k: done[k] for k in deeper}, p + 1, ply))
            everything = list(positions_at(r, p))
            todo = [(k, s) for j, (k, s) in enumerate(everything) if k not in done
                    and (shard is None or (j // SHARD_BLOCK) % shard[1] == shard[0])]
            t0 = time.time()
            if progress and todo:
                from .._progress import tqdm
                bar = tqdm(total=len(todo), desc=f"book ply {p}", unit="pos", dynamic_ncols=True)
            buf = bytearray()
            t_flush = time.time()
            try:
                for i, (k, s) in enumerate(todo):
                    score, _, _, complete = sv.solve(s, moves=False)
                    if not complete:
                        raise RuntimeError(f"book: the solve of {s.history()} did not complete")
                    done[k] = int(score)
                    buf += struct.pack("<Q", k << 8 | (int(score) + 64))
                    # written every 256 entries or 2 s, so that a killed build loses at most that much (the
                    # rest, at the end or on an exception, by the finally below)
                    if len(buf) >= 8 * 256 or time.time() - t_flush > FLUSH_SECONDS:
                        f.write(buf)
                        f.flush()
                        buf.clear()
                        t_flush = time.time()
                    if bar is not None:
                        bar.update(1)
                    if max_seconds is not None and time.time() - t_start > max_seconds:
                        if bar is not None:
                            bar.close()
                        stats["per_ply"][p] = {"solved": i + 1, "seconds": time.time() - t0}
                        return stats
            finally:  # Ctrl-C or an error: keep what is solved (a kill loses at most FLUSH_SECONDS)
                f.write(buf)
                f.flush()
            if bar is not None:
                bar.close()
                bar = None
            stats["per_ply"][p] = {"positions": len(everything), "solved": len(todo),
                                   "seconds": round(time.time() - t0, 3)}
            deeper.extend(k for k, _ in everything)
            if shard is not None:  # a shard's share is the deepest ply only
                stats["shard_done"] = True
                return stats
    data = _book_bytes(done, lo, ply)
    write_bytes_atomic(out_p, data)  # fsynced and renamed (directory fsynced) before the partials go
    for f in _partial_files(out_p):
        f.unlink()
    fsync_dir(out_p)
    stats.update(finished=True, entries=len(done), bytes=len(data), seconds=round(time.time() - t_start, 3))
    return stats


def _book_bytes(entries: Dict[int, int], min_ply: int, max_ply: int) -> bytes:
    keys = np.fromiter(entries.keys(), dtype=np.uint64, count=len(entries))
    scores = np.fromiter(entries.values(), dtype=np.int64, count=len(entries))
    v = (keys << np.uint64(8)) | (scores + 64).astype(np.uint64)
    v.sort()
    return _header(min_ply, max_ply, len(v)) + v.astype("<u8").tobytes()


def read_book(path: str) -> bytes:
    """The bytes of a book file, checked (ValueError naming the file and the defect)."""
    data = Path(path).read_bytes()
    try:
        _core.c4_book_info(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return data


def attach(solver: "_core.C4Solver", path: Optional[str] = None) -> None:
    """Give ``solver`` the book at ``path`` (default: the shipped one; nothing if there is none)."""
    p = Path(path) if path else SHIPPED
    if path or p.exists():
        solver.set_book(read_book(str(p)))


def shipped_book() -> Optional[bytes]:
    """The shipped book's bytes, or None when the package has none."""
    return read_book(str(SHIPPED)) if SHIPPED.exists() else None


def default_solver() -> "_core.C4Solver":
    """A new solver as ``c4_solve``'s default one (``solver=None``): a table of 2^23 entries and the package's
    book when it has one (:func:`mavgame.games.connect_four.install_lazy_default_solver` makes it on first use)."""
    sv = _core.C4Solver()
    if _PACKAGE_BOOK.exists():
        attach(sv, str(_PACKAGE_BOOK))
    return sv


def install_shipped_book() -> bool:
    """Attach the shipped book (if any) to the module's default solver (``c4_solve(solver=None)``)."""
    if not SHIPPED.exists():
        return False
    sv = vars(_core).get("_c4_default_solver") or _core.C4Solver()  # (not made by _core's lazy __getattr__)
    attach(sv)
    _core._c4_default_solver = sv
    return True


def book_positions(path: str) -> List[Tuple[int, int]]:
    """(key, score) of every entry of a book file (for inspection and tests)."""
    data = read_book(path)
    v = np.frombuffer(data, dtype="<u8", offset=_HEADER.size)
    return [(int(e >> np.uint64(8)), int(e & np.uint64(0xFF)) - 64) for e in v]
