"""The Connect Four solver's opening book: build, resume, exact scores, solver use, and the reader's checks."""
import struct

import numpy as np
import pytest

from mavgame import _core
from mavgame.games import c4_book
from mavgame.cli import main

ROOT = "444444333333"   # 12 stones; the book of plies 12..15 below it builds in a fraction of a second


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "b.bin"
    stats = c4_book.build_book(15, str(path), root=ROOT, progress=False)
    return path, stats


def test_book_scores_are_exact_and_complete(book):
    path, stats = book
    assert stats["finished"] and stats["entries"] == sum(v["positions"] for v in stats["per_ply"].values())
    assert _core.c4_book_info(path.read_bytes()) == (12, 15, stats["entries"])
    entries = dict(c4_book.book_positions(str(path)))
    plain = _core.C4Solver(18)
    root = c4_book._root(ROOT)
    n = 0
    for ply in range(12, 16):
        for key, s in c4_book.positions_at(root, ply):
            mirror = _core.State("connect_four")
            for a in s.history():
                mirror.push(6 - int(a))
            assert _core.c4_book_key(mirror) == key  # a position and its mirror share the entry
            assert entries[key] == plain.solve(s, moves=False)[0], s.history()
            n += 1
    assert n == len(entries)


def test_solver_with_book_agrees_and_searches_less(book):
    path, _ = book
    with_book, plain = _core.C4Solver(18), _core.C4Solver(18)
    c4_book.attach(with_book, str(path))
    assert with_book.book == (12, 15, len(c4_book.book_positions(str(path))))
    root = c4_book._root(ROOT)
    a, b = with_book.solve(root), plain.solve(root)
    assert a[0] == b[0] and np.array_equal(a[1], b[1], equal_nan=True)
    assert a[2] < b[2]                                            # nodes
    for key, s in c4_book.positions_at(root, 17):                 # below the book: unchanged answers
        assert with_book.solve(s)[0] == plain.solve(s)[0]
    with_book.set_book(None)
    assert with_book.book is None


def test_build_resumes_to_the_same_file(tmp_path, book):
    path, _ = book
    out = tmp_path / "r.bin"
    st = c4_book.build_book(15, str(out), root=ROOT, progress=False, max_seconds=0)
    assert not st["finished"] and not out.exists() and (tmp_path / "r.bin.partial").exists()
    with open(tmp_path / "r.bin.partial", "ab") as f:
        f.write(b"\x01\x02\x03")                                   # a torn entry (killed mid-write)
    st = c4_book.build_book(15, str(out), root=ROOT, progress=False)
    assert st["finished"] and st["resumed_positions"] == 1
    assert out.read_bytes() == path.read_bytes() and not (tmp_path / "r.bin.partial").exists()
    (tmp_path / "x.bin.partial").write_bytes(c4_book._header(12, 14, 0))
    with pytest.raises(ValueError, match="partial book of plies 12..14, not 12..15"):
        c4_book.build_book(15, str(tmp_path / "x.bin"), root=ROOT, progress=False)
    with pytest.raises(ValueError, match="'8' is not a column"):
        c4_book.build_book(15, str(tmp_path / "y.bin"), root="48", progress=False)


def test_shards_split_the_deepest_ply_and_a_plain_run_finishes(tmp_path, book):
    path, stats = book
    out = tmp_path / "s.bin"
    deepest = stats["per_ply"][15]["positions"]
    solved = 0
    for i in range(3):
        st = c4_book.build_book(15, str(out), root=ROOT, progress=False, shard=(i, 3))
        assert st["shard_done"] and not st["finished"] and not out.exists()
        assert (tmp_path / f"s.bin.partial.{i}").exists()
        solved += st["per_ply"][15]["solved"]
        assert 15 not in st["per_ply"] or list(st["per_ply"]) == [15]   # shards do the deepest ply only
    assert solved == deepest                                         # the shares cover it exactly once
    st = c4_book.build_book(15, str(out), root=ROOT, progress=False)
    assert st["finished"] and st["resumed_positions"] == deepest and st["per_ply"][15]["solved"] == 0
    assert out.read_bytes() == path.read_bytes()
    assert not list(tmp_path.glob("s.bin.partial*"))
    for bad in ("3/3", "x", "1/0"):
        with pytest.raises(ValueError, match="shard"):
            c4_book.parse_shard(bad)


def test_reader_names_every_defect(book):
    path, _ = book
    good = path.read_bytes()
    e = np.frombuffer(good, dtype="<u8", offset=24).copy()

    def with_entries(v, count=None):
        return c4_book._header(12, 15, len(v) if count is None else count) + v.astype("<u8").tobytes()

    bad_score = e.copy()
    bad_score[0] = (bad_score[0] & ~np.uint64(0xFF)) | np.uint64(64 + 19)
    unsorted = e.copy()
    unsorted[[0, 1]] = unsorted[[1, 0]]
    dup = e.copy()
    dup[1] = (dup[0] & ~np.uint64(0xFF)) | np.uint64(64 + 18)
    big = e.copy()
    big[-1] = np.uint64(1 << 49) << np.uint64(8)
    cases = [(good[:10], "shorter than the 24-byte header"),
             (b"XXXXXXXX" + good[8:], "bad magic"),
             (good[:8] + struct.pack("<I", 2) + good[12:], "version 2"),
             (c4_book._header(15, 12, 0), "plies 15..12"),
             (good[:-3], "need"),
             (with_entries(e, count=len(e) + 1), "need"),
             (with_entries(bad_score), "score 19, outside"),
             (with_entries(unsorted), "entry 1 is not after entry 0"),
             (with_entries(dup), "appears twice"),
             (with_entries(big), "not a position key")]
    for data, msg in cases:
        with pytest.raises(ValueError, match=msg):
            _core.c4_book_info(data)
        with pytest.raises(ValueError, match=msg):
            _core.C4Solver(10).set_book(data)
    with pytest.raises(TypeError, match="bytes"):
        _core.C4Solver(10).set_book("book")


def test_book_command_line(tmp_path, capsys):
    out = tmp_path / "c.bin"
    assert main(["book", "build", "--ply", "14", "--root", ROOT, "--out", str(out), "--no-progress"]) == 0
    assert _core.c4_book_info(out.read_bytes())[:2] == (12, 14)
    assert '"finished": true' in capsys.readouterr().out
    assert main(["book", "info", str(out)]) == 0
    assert "plies 12..14" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="ply must lie in 12..41"):
        main(["book", "build", "--ply", "5", "--root", ROOT, "--out", str(tmp_path / "d.bin"), "--no-progress"])


def test_shipped_book_reaches_the_solvers(book, monkeypatch):
    """With a shipped book, solver() (the annotator's), the perfect player and c4_solve's default use it."""
    import mavgame
    from mavgame.games.connect_four import solver
    path, _ = book
    assert solver().book is None or c4_book.SHIPPED.exists()
    monkeypatch.setattr(c4_book, "SHIPPED", path)
    n = len(c4_book.book_positions(str(path)))
    assert solver().book == (12, 15, n) and solver(book=False).book is None
    monkeypatch.setattr(_core, "_c4_default_solver", _core.C4Solver(16), raising=False)
    assert c4_book.install_shipped_book() and _core._c4_default_solver.book == (12, 15, n)
    from mavgame.agents.basic import PerfectConnectFourAgent
    agent = PerfectConnectFourAgent()
    agent.setup("connect_four", seed=0)
    agent.act(mavgame.State("connect_four", c4_book._root(ROOT).text()))
    assert agent._solver.book == (12, 15, n)


def test_weak_exact_best_with_the_book_agrees(book):
    """ConnectFour.solve(weak=True, exact_best=True) on positions the book holds (whose score bounds every
    column's: no search in a lost one, one test a column in a drawn one) gives what an exact solve
    without the book gives: win/draw/loss columns, the exact score and perfect play's column."""
    from mavgame.games.connect_four import ConnectFour, central_best
    path, _ = book
    with_book, plain = _core.C4Solver(18), _core.C4Solver(18)
    c4_book.attach(with_book, str(path))
    root = c4_book._root(ROOT)
    kinds = {}
    for ply in (13, 15):
        for _, s in c4_book.positions_at(root, ply):
            b = ConnectFour(s.text())
            e = b.solve(solver=plain)
            w = b.solve(weak=True, exact_best=True, solver=with_book)
            assert w.move_scores == {m: (v > 0) - (v < 0) for m, v in e.move_scores.items()}, b
            assert (w.score, w.best) == (e.score, central_best(e.move_scores)), b
            kinds[(e.score > 0) - (e.score < 0)] = kinds.get((e.score > 0) - (e.score < 0), 0) + 1
    assert all(kinds.get(k, 0) >= 3 for k in (-1, 0, 1)), kinds
