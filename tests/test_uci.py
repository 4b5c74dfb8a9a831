"""mavgame.engines.uci (the UCI client) and mavgame.engines.annotate, against a fake engine and Stockfish."""
import json
import math
import os
import time
from pathlib import Path

import pytest

from mavgame import _core
from mavgame.engines.uci import UCIEngine, find_engine, find_stockfish
from mavgame.engines.uci_protocol import (
    STARTPOS,
    EngineError,
    EngineProtocolError,
    EngineTerminatedError,
    EngineTimeoutError,
    Score,
    cp_to_win_prob,
    parse_info,
    parse_option,
)
from fake_uci import write_fake_engine

STOCKFISH = find_stockfish()
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Stockfish not installed (apt-get install stockfish)")


# ---- scores ------------------------------------------------------------------------------------


def test_win_prob_formula():
    assert cp_to_win_prob(0) == pytest.approx(0.5)
    for cp in (10, 100, 350, 1200):
        assert cp_to_win_prob(cp) + cp_to_win_prob(-cp) == pytest.approx(1.0)
        expected = (50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)) / 100
        assert cp_to_win_prob(cp) == pytest.approx(expected)
    assert cp_to_win_prob(-10**6) == 0.0
    assert 0.0 < cp_to_win_prob(-2000) < cp_to_win_prob(-1000) < 0.5


def test_win_prob_known_values():
    # lichess's accuracy page: +100 cp is about a 59.1% win chance, +300 about 75.1% (the formula at those points)
    assert cp_to_win_prob(100) == pytest.approx(0.5910259, abs=1e-7)
    assert cp_to_win_prob(-300) == pytest.approx(1 - 0.7511255, abs=1e-7)
    assert isinstance(cp_to_win_prob(37), float)


def test_score():
    assert Score(cp=35).win_prob() == pytest.approx(cp_to_win_prob(35))
    assert Score(mate=3).win_prob() == 1.0 and Score(mate=-2).win_prob() == 0.0 and Score(mate=0).win_prob() == 0.0
    assert -Score(cp=20) == Score(cp=-20) and -Score(mate=2) == Score(mate=-2)
    assert Score(mate=1).to_cp() > Score(mate=5).to_cp() > Score(cp=3000).to_cp() > Score(mate=-5).to_cp() > Score(mate=-1).to_cp()
    assert str(Score(cp=12)) == "+12" and str(Score(mate=-3)) == "#-3"
    with pytest.raises(ValueError):
        Score()


def test_parse_info():
    info = parse_info("info depth 12 seldepth 18 multipv 2 score cp -34 upperbound nodes 1234 nps 99 "
                      "hashfull 3 tbhits 0 time 15 pv e7e5 g1f3 b8c6")
    assert info.depth == 12 and info.multipv == 2 and info.score == Score(cp=-34) and info.bound == "upperbound"
    assert info.nodes == 1234 and info.time_ms == 15 and info.pv == ["e7e5", "g1f3", "b8c6"] and info.move == "e7e5"
    assert parse_info("info depth 3 score mate -2 wdl 0 10 990 pv a2a1q").wdl == (0, 10, 990)
    assert parse_info("info string NNUE evaluation enabled") is None
    assert parse_info("info depth 5 currmove e2e4 currmovenumber 1") is None
    for bad, what in [("info depth x score cp 1 pv e2e4", "depth"), ("info depth 1 score cp 1.5 pv e2e4", "cp score"),
                      ("info depth 1 score wins 3 pv e2e4", "unknown kind"), ("info score cp", "incomplete"),
                      ("info depth 1 score cp 3 pv e2e4 hello!", "malformed move"),
                      ("info depth 1 multipv 0 score cp 3 pv e2e4", "multipv 0")]:
        with pytest.raises(EngineProtocolError, match=what):
            parse_info(bad)


def test_parse_option():
    opt = parse_option("option name Skill Level type spin default 20 min -20 max 20")
    assert (opt.name, opt.type, opt.default, opt.min, opt.max) == ("Skill Level", "spin", "20", -20, 20)
    opt = parse_option("option name UCI_Variant type combo default chess var chess var gardner var 3check")
    assert opt.default == "chess" and opt.vars == ["chess", "gardner", "3check"]
    assert parse_option("option name Clear Hash type button").type == "button"
    with pytest.raises(EngineProtocolError, match="malformed option line"):
        parse_option("option Hash spin")
    with pytest.raises(EngineProtocolError, match="option 'Hash' has a non-integer max"):
        parse_option("option name Hash type spin default 16 min 1 max lots")


def test_find_engine_env_path_and_dirs(tmp_path, monkeypatch):
    """One lookup serves Stockfish and Fairy-Stockfish: $VAR, then PATH, then the install directories."""
    exe = tmp_path / "bin" / "someengine"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.delenv("MG_TEST_ENGINE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_engine("someengine", "MG_TEST_ENGINE", dirs=()) is None
    assert find_engine("someengine", "MG_TEST_ENGINE", dirs=(str(tmp_path), str(exe.parent))) == str(exe)
    monkeypatch.setenv("PATH", str(exe.parent))
    assert find_engine("someengine", "MG_TEST_ENGINE", dirs=()) == str(exe)
    monkeypatch.setenv("MG_TEST_ENGINE", str(tmp_path / "missing"))   # set but wrong: no fallback
    assert find_engine("someengine", "MG_TEST_ENGINE") is None
    monkeypatch.setenv("MG_TEST_ENGINE", str(exe))
    assert find_engine("other", "MG_TEST_ENGINE", dirs=()) == str(exe)
    from mavgame.engines.fairy import find_fairy_stockfish
    monkeypatch.setenv("MAVGAME_FAIRY_STOCKFISH", str(exe))
    monkeypatch.setenv("MAVGAME_STOCKFISH", str(exe))
    assert find_fairy_stockfish() == find_stockfish() == str(exe)


# ---- the fake engine -------------------------------------------------------------------------------


def test_fake_engine_round_trip(tmp_path):
    path = write_fake_engine(tmp_path, "chatter")
    with UCIEngine(path, options={"Skill Level": 3, "Style": "Risky", "UCI_Chess960": False}) as eng:
        assert eng.name == "FakeFish 1.0" and eng.id["author"] == "tests"
        assert eng.options["skill level"].min == 0 and eng.options["skill level"].max == 20
        assert eng.options["style"].vars == ["Solid", "Normal", "Risky"]
        assert eng.option_value("Skill Level") == "3"
        r = eng.go(moves=["e2e4"], multipv=3, nodes=10)
        legal = _core.State("chess")
        legal.push("e2e4")
        assert r.bestmove == list(legal.legal_moves)[0]
        assert [ln.multipv for ln in r.lines] == [1, 2, 3] and r.lines[1].score == Score(cp=-10)
        total, per_move = eng.perft(2, moves=["e2e4"])
        assert total == 600 and len(per_move) == 20 and sum(per_move.values()) == 600
        assert eng.play("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", depth=1) is None  # mated: no move
        eng.set_option("Clear Hash")
        eng.new_game()
    assert eng.closed


def test_option_errors(tmp_path):
    with UCIEngine(write_fake_engine(tmp_path)) as eng:
        with pytest.raises(ValueError, match=r"no option 'Contempt'.*Skill Level"):
            eng.set_option("Contempt", 10)
        with pytest.raises(ValueError, match=r"must lie in \[0, 20\], not 21"):
            eng.set_option("Skill Level", 21)
        with pytest.raises(ValueError, match="takes an integer"):
            eng.set_option("Hash", "lots")
        with pytest.raises(ValueError, match="one of"):
            eng.set_option("Style", "Wild")
        with pytest.raises(ValueError, match="true or false"):
            eng.set_option("UCI_Chess960", "maybe")
        with pytest.raises(ValueError, match="malformed UCI move"):
            eng.go(moves=["e2e4 quit"])
        with pytest.raises(ValueError, match="nodes must be positive"):
            eng.go(nodes=0)
        # the engine still works after rejected input
        assert eng.play(depth=1) is not None


@pytest.mark.parametrize("mode,exc,match", [
    ("no_move", EngineProtocolError, "'bestmove' without a move"),
    ("bad_move", EngineProtocolError, "malformed best move 'zz99'"),
    ("crash", EngineTerminatedError, r"exited with status 3 while searching.*simulated crash"),
])
def test_misbehaving_engine_gives_clear_errors(tmp_path, mode, exc, match):
    eng = UCIEngine(write_fake_engine(tmp_path, mode, trigger="e2e4"))
    assert eng.play(depth=1) is not None  # fine until triggered
    with pytest.raises(exc, match=match):
        eng.go(moves=["e2e4"], depth=1)
    assert eng.closed  # a broken engine is closed, not left half-alive
    with pytest.raises(EngineError, match="closed"):
        eng.play(depth=1)


def _gone(pid, timeout=5.0):
    """True once process pid has exited (gone, or a zombie waiting for its parent)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"):
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def test_malformed_info_lines_are_ignored_and_named(tmp_path, caplog):
    # strict about bestmove, tolerant about info (as python-chess): the search succeeds, what was ignored is said
    eng = UCIEngine(write_fake_engine(tmp_path, "bad_score", trigger="e2e4"))
    with caplog.at_level("WARNING", logger="mavgame.engines.uci"):
        r = eng.go(moves=["e2e4"], depth=1)
    s = _core.State("chess")
    s.push("e2e4")
    assert r.bestmove == list(s.legal_moves)[0] and not eng.closed
    assert len(r.ignored) == 1 and "non-integer cp score 'abc'" in r.ignored[0]
    assert "ignored a malformed info line" in caplog.text
    eng.close()
    with UCIEngine(write_fake_engine(tmp_path, "garbage")) as eng:
        r = eng.go(depth=1)
        assert r.bestmove == _core.State("chess").legal_moves[0] and r.score == Score(cp=0)
        assert len(r.ignored) == 3
        assert "non-integer depth 'x'" in r.ignored[0] and "unknown kind 'wins'" in r.ignored[2]
        assert eng.play(depth=1) is not None  # still usable


def test_engine_writing_without_newlines_is_bounded(tmp_path):
    import resource

    eng = UCIEngine(write_fake_engine(tmp_path, "no_newline"))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.monotonic()
    with pytest.raises(EngineProtocolError, match=r"wrote more than 1048576 bytes without a newline while searching"):
        eng.go(depth=1)
    assert time.monotonic() - t < 10
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert grown_mb < 100, grown_mb  # the engine writes 1.3 GB: none of it is kept
    assert eng.closed and _gone(eng._proc.pid)


def test_engine_ignoring_quit_and_sigterm_is_killed(tmp_path):
    eng = UCIEngine(write_fake_engine(tmp_path, "deaf"), timeout=1.0)
    pid = eng._proc.pid
    t = time.monotonic()
    with pytest.raises(EngineTimeoutError):
        eng.go(depth=1, timeout=0.3)
    eng.close()
    assert time.monotonic() - t < 8 and eng.closed and _gone(pid)
    eng = UCIEngine(write_fake_engine(tmp_path, "deaf", name="deaf2.py"))
    pid = eng._proc.pid
    t = time.monotonic()
    eng.close()  # 'quit' is ignored: killed after a second
    assert time.monotonic() - t < 4 and _gone(pid)


@pytest.mark.parametrize("mode", ["child_holds_stdout", "escaped_child"])
def test_engine_child_holding_stdout_cannot_hang_the_client(tmp_path, mode):
    import signal

    path = write_fake_engine(tmp_path, mode)
    eng = UCIEngine(path, timeout=1.0)
    t = time.monotonic()
    child = None
    try:
        with pytest.raises(EngineTimeoutError, match="did not answer in time"):
            eng.go(depth=1, timeout=0.5)
        child = int(Path(path + ".child").read_text())
        eng.close()
        assert eng.closed and time.monotonic() - t < 10  # the client used to hang here forever
        if mode == "child_holds_stdout":
            assert _gone(child)  # the engine's whole process group is killed
    finally:
        if child is not None and mode == "escaped_child":
            os.kill(child, signal.SIGKILL)


def test_engine_that_cannot_start(tmp_path):
    with pytest.raises(EngineTerminatedError, match=r"exited with status 4 while waiting for 'uciok'.*cannot start"):
        UCIEngine(write_fake_engine(tmp_path, "crash_at_start"))
    with pytest.raises(EngineTerminatedError, match="cannot start engine"):
        UCIEngine(str(tmp_path / "no-such-engine"))
    not_uci = tmp_path / "not_uci.sh"
    not_uci.write_text("#!/bin/sh\necho hello\nexit 0\n")
    not_uci.chmod(0o755)
    with pytest.raises(EngineTerminatedError, match="exited with status 0"):
        UCIEngine(str(not_uci))


def test_timeout(tmp_path):
    eng = UCIEngine(write_fake_engine(tmp_path, "hang"), timeout=1.0)
    t = time.monotonic()
    with pytest.raises(EngineTimeoutError, match="did not answer in time"):
        eng.go(depth=1, timeout=0.5)
    assert time.monotonic() - t < 5
    assert eng.closed  # it stayed silent after 'stop' too
    eng2 = UCIEngine(write_fake_engine(tmp_path, "hang", name="h2.py"), timeout=1.0)
    with pytest.raises(EngineTimeoutError):
        eng2.go(movetime=100)  # movetime + timeout
    eng2.close()


# ---- Stockfish -------------------------------------------------------------------------------------


@needs_stockfish
def test_stockfish_perft_matches_core():
    fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    with UCIEngine("stockfish") as sf:
        assert "Stockfish" in sf.name
        total, per_move = sf.perft(3, fen)
        s = _core.State("chess", fen)
        acts, counts = s.perft_divide(3)
        ours = {s.action_to_str(int(a)): int(c) for a, c in zip(acts, counts)}
        assert total == 97862 and per_move == ours


@needs_stockfish
def test_stockfish_search():
    with UCIEngine("stockfish", options={"Threads": 1, "Hash": 16, "Skill Level": 10}) as sf:
        r = sf.go(STARTPOS, ["e2e4"], multipv=4, nodes=20000)
        legal = _core.State("chess")
        legal.push("e2e4")
        assert len(r.lines) == 4 and len({ln.move for ln in r.lines}) == 4
        assert all(ln.move in legal.legal_moves for ln in r.lines)
        # mate in one for White: Ra8#
        r = sf.go("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", depth=5, multipv=1)
        assert r.bestmove == "a1a8" and r.score == Score(mate=1)
        t = time.monotonic()
        assert sf.play(movetime=50) in _core.State("chess").legal_moves
        assert time.monotonic() - t < 3


# ---- annotation ------------------------------------------------------------------------------------


@needs_stockfish
def test_annotator_values_every_move():
    from mavgame.engines.annotate import Annotator

    with Annotator(nodes=5000) as ann:
        a = ann.annotate(STARTPOS, ["e2e4"])
        s = _core.State("chess")
        s.push("e2e4")
        assert sorted(a.values) == sorted(s.legal_moves)
        assert a.best in a.values and a.order[0] == a.best
        assert all(0.0 <= v <= 1.0 for v in a.values.values())
        vals = [a.values[m] for m in a.order]
        assert vals == sorted(vals, reverse=True)
        for m, sc in a.scores.items():
            kind, num = sc.split()
            if kind == "cp":
                assert a.values[m] == pytest.approx(cp_to_win_prob(int(num)))
        m1 = ann.annotate("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
        assert m1.best == "a1a8" and m1.values["a1a8"] == 1.0 and m1.scores["a1a8"] == "mate 1"
        over = ann.annotate("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
        assert over.best is None and over.values == {}
        c960 = ann.annotate(_core.chess960_fen(0))  # KQkq castling field: detected as Chess960
        assert c960.game == "chess960"
        assert sorted(c960.values) == sorted(_core.State("chess960", _core.chess960_fen(0)).legal_moves)
        text = a.to_mav("%state %top_3 %best_action")
        assert text.startswith("<mav game=chess> %state %top_3 %best_action </mav>\n")
        assert f"[%best_action {a.best}]" in text and f"[%top_3 {a.order[0]}:" in text
        assert c960.to_mav().startswith("<mav game=chess960>")


def test_annotator_with_fake_engine_and_errors(tmp_path):
    from mavgame.engines.annotate import Annotator, annotate_many

    with Annotator(write_fake_engine(tmp_path), nodes=10) as ann:
        a = ann.annotate(STARTPOS)
        assert len(a.values) == 20 and a.best == _core.State("chess").legal_moves[0]
    bad = write_fake_engine(tmp_path, "bad_score", trigger="d2d4")
    out = []
    with pytest.raises(EngineError, match=r"position 1 .*gave no score .*malformed info lines.*non-integer cp score"):
        for x in annotate_many(["startpos", "startpos moves d2d4", "startpos moves c2c4"], engine=bad, nodes=10):
            out.append(x)
    assert len(out) == 1  # the position before the failure was annotated


@needs_stockfish
def test_annotate_parallel_matches_serial_and_resumes(tmp_path):
    from mavgame.engines.annotate import annotate_file, annotate_many

    positions = ["startpos", "startpos moves e2e4", "startpos moves d2d4 d7d5",
                 "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]
    serial = list(annotate_many(positions, workers=1, nodes=3000))
    par = list(annotate_many(positions, workers=2, nodes=3000))
    assert [a.to_dict() for a in serial] == [a.to_dict() for a in par]  # deterministic with a node limit
    src = tmp_path / "pos.txt"
    src.write_text("# test positions\n" + "\n".join(positions) + "\n")
    out = tmp_path / "out.jsonl"
    assert annotate_file(str(src), str(out), workers=1, progress=False, nodes=3000) == 4
    lines = out.read_text().splitlines()
    assert [json.loads(x)["best"] for x in lines] == [a.best for a in serial]
    # a killed run: two complete lines and a torn third one
    out.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[2][:25])
    assert annotate_file(str(src), str(out), workers=1, progress=False, nodes=3000) == 2
    assert out.read_text().splitlines() == lines


def test_engine_refuses_use_from_a_forked_process(tmp_path):
    import multiprocessing as mp

    eng = UCIEngine(write_fake_engine(tmp_path))

    def child(q):
        try:
            eng.play(depth=1)
            q.put("no error")
        except EngineError as e:
            q.put(str(e))
        eng.close()  # must leave the parent's engine alone

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    msg = q.get(timeout=30)
    p.join(30)
    assert "was started by process" in msg and "start a new engine in this process" in msg
    assert eng.play(depth=1) is not None  # still fine in the parent
    eng.close()


def test_engine_works_inside_a_running_event_loop(tmp_path):
    # as in Jupyter, whose event loop is always running: the client must not need asyncio
    import asyncio

    path = write_fake_engine(tmp_path)

    async def main():
        with UCIEngine(path) as eng:
            return eng.play(depth=1), eng.perft(1)[0]

    move, n = asyncio.run(main())
    assert move == _core.State("chess").legal_moves[0] and n == 20
