"""The Gardner mate prover (mavgame.games.gardner_prover, csrc/games/gardner/gardner_prover.c)."""
import threading
import time

import pytest

from mavgame import _core
from mavgame.engines.fairy import find_fairy_stockfish
from mavgame.games.gardner import Gardner
from mavgame.games.gardner_prover import Prover, Status

# (FEN, mating side, moves): Fairy-Stockfish (go depth 14) reports exactly these mate distances
MATES = [
    ("1rbk1/Q3p/BppP1/P1P1P/R2QK w - - 0 8", "white", 1),
    ("r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 3 12", "white", 2),
    ("rq2k/1p1bp/N3p/PpPB1/R3K b - - 0 11", "black", 3),
    ("1r1k1/Pppbp/B1P2/P1P1K/RN3 w - - 1 8", "white", 4),
    ("3kb/1p2N/rP1P1/PpP1K/5 b - - 2 20", "black", 5),
]
# positions where the side to move is mated ("mate -N" for Fairy-Stockfish)
LOST = [
    ("2B1k/2P1p/3PP/p2QK/5 b - - 0 14", 2),
    ("r1bk1/p1pPp/Pp2P/4K/RNBQ1 b - - 0 7", 3),
    ("rq2k/3pp/1Pb1P/1P1Pn/2BK1 w - - 2 10", 4),
]


@pytest.fixture(scope="module")
def prover():
    return Prover(18)


def _mates(fen, line, winner):
    b = Gardner(fen)
    for m in line:
        b.push(m)
    res, why = _core.State.outcome(b)
    return why == "checkmate" and res == (1 if winner == "white" else 2)


@pytest.mark.parametrize("fen,side,moves", MATES)
def test_known_mates(prover, fen, side, moves):
    b = Gardner(fen)
    r = prover.mates_in(b, moves)
    assert r.status is Status.PROVEN and r.proven and r.stop == "done"
    assert r.mate_plies == 2 * moves - 1 and len(r.line) == r.mate_plies
    assert _mates(fen, r.line, side)
    assert b.fen() == fen and b.ply == 0   # the board is not changed
    if moves > 1:
        r2 = prover.mates_in(fen, moves - 1, side=side)
        assert r2.refuted and r2.line == [] and r2.mate_plies is None and r2.depth_done == 2 * moves - 3
    other = "black" if side == "white" else "white"
    assert prover.mates_in(fen, 1, side=other).refuted
    assert prover.cannot_lose(fen, 2 * moves - 2, side=other).proven
    r3 = prover.cannot_lose(fen, 2 * moves - 1, side=other)
    assert r3.refuted and r3.mate_plies == 2 * moves - 1 and _mates(fen, r3.line, side)


@pytest.mark.parametrize("fen,moves", LOST)
def test_side_to_move_is_lost(prover, fen, moves):
    r = prover.cannot_lose(fen, 2 * moves)
    assert r.refuted and r.mate_plies == 2 * moves
    loser = Gardner(fen).turn
    assert _mates(fen, r.line, "black" if loser else "white")
    assert prover.cannot_lose(fen, 2 * moves - 1).proven
    assert prover.mates_in(fen, moves, side=not loser).proven


def test_start_position_and_text(prover):
    r = prover.mates_in(Gardner(), 4)
    assert r.refuted and r.depth_done == 7 and "White mates in at most 4 moves: refuted" in str(r)
    assert prover.cannot_lose(Gardner(), 8, side="black").proven
    assert prover.cannot_lose(Gardner(), 8, side=False).proven   # python-chess BLACK


def test_bishop_promotion_game_is_searched_with_its_rules(prover):
    # a pawn on the 4th rank: the promotions differ, the mate does not
    fen = "k4/2P2/1K3/5/5 w - - 0 1"
    for bishop in (False, True):
        r = prover.mates_in(Gardner(fen, bishop_promotion=bishop), 2)
        assert r.proven and r.line[0] in ("c4c5q", "c4c5r")


def test_budgets_leave_the_answer_unknown():
    p = Prover(16)
    r = p.mates_in(Gardner(), 8, max_nodes=1000)
    assert r.unknown and r.stop == "node limit" and r.nodes <= 1001 and r.line == []
    t = time.perf_counter()
    r = p.mates_in(Gardner(), 30, max_seconds=0.05)
    assert r.unknown and r.stop == "time limit" and time.perf_counter() - t < 2.0
    assert "stopped by the time limit" in str(r)
    # a warm table answers again with far fewer nodes
    p.clear()
    cold = p.mates_in(Gardner(), 4).nodes
    assert p.mates_in(Gardner(), 4).nodes < cold / 10


def test_search_releases_the_gil():
    p = Prover(16)
    done = []
    th = threading.Thread(target=lambda: done.append(p.mates_in(Gardner(), 30, max_seconds=0.5)))
    th.start()
    ticks = 0
    t0 = time.perf_counter()
    while th.is_alive() and time.perf_counter() - t0 < 5:
        ticks += 1
        time.sleep(0.001)
    th.join()
    assert done[0].unknown and ticks > 50


def test_bad_input():
    p = Prover(12)
    with pytest.raises(TypeError, match="Gardner"):
        p.mates_in(_core.State("chess"), 2)
    with pytest.raises(TypeError, match="gardner state"):
        p._p.prove(_core.State("chess"), 0, 0, 2)
    with pytest.raises(ValueError, match="side"):
        p.mates_in(Gardner(), 2, side="red")
    with pytest.raises(ValueError, match="not 0"):
        p.mates_in(Gardner(), 0)
    with pytest.raises(ValueError, match="not 61"):
        p.mates_in(Gardner(), 61)
    with pytest.raises(ValueError, match="plies"):
        p.cannot_lose(Gardner(), -1)
    with pytest.raises(ValueError, match="max_nodes"):
        p.mates_in(Gardner(), 2, max_nodes=-5)
    with pytest.raises(ValueError, match="max_seconds"):
        p.mates_in(Gardner(), 2, max_seconds=-1.0)
    with pytest.raises(ValueError, match="unknown goal 7"):
        p._p.prove(Gardner(), 7, 0, 2)
    with pytest.raises(ValueError, match="2\\^5"):
        Prover(5)
    with pytest.raises(ValueError, match="FEN"):
        p.mates_in("rnbqk/ppppp/5/PPPPP/RNBQ w - - 0 1", 2)


@pytest.mark.skipif(find_fairy_stockfish() is None, reason="fairy-stockfish not installed")
def test_agrees_with_fairy_stockfish_mate_scores(prover):
    from mavgame.engines.fairy import open_engine
    with open_engine() as eng:
        for fen, side, moves in MATES:
            sc = eng.go(fen, depth=14).score
            assert sc is not None and sc.mate == moves
            # and the engine sees the prover's final position as checkmate
            r = prover.mates_in(fen, moves)
            total, _ = eng.perft(1, fen, r.line)
            assert total == 0
        for fen, moves in LOST:
            sc = eng.go(fen, depth=14).score
            assert sc is not None and sc.mate is not None and sc.mate < 0
            # the engine's mate distance is an upper bound; the prover's is exact
            r = prover.cannot_lose(fen, 2 * -sc.mate)
            assert r.refuted and r.mate_plies <= 2 * -sc.mate


def test_cli_gardner_prove():
    import subprocess
    import sys
    run = lambda *a: subprocess.run([sys.executable, "-m", "mavgame", "gardner-prove", *a],  # noqa: E731
                                    capture_output=True, text=True)
    r = run("r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 3 12", "--mate", "2")
    assert r.returncode == 0 and "White mates in at most 2 moves: proven" in r.stdout
    assert "mate in 3 plies: c4a3 d5d4 b3c4" in r.stdout
    r = run("startpos", "--no-loss", "6", "--side", "black")
    assert r.returncode == 0 and "Black cannot lose within 6 plies: proven" in r.stdout
    r = run("startpos", "--mate", "20", "--max-nodes", "1000")
    assert r.returncode == 3 and "unknown" in r.stdout and "node limit" in r.stdout
    r = run("rnbqk/ppppp/5/PPPPP/RNBQ w - - 0 1", "--mate", "2")
    assert r.returncode != 0 and "FEN" in r.stderr


# ---- depth-bounded proof-number search (method="pns", csrc/games/gardner/gardner_pns.c) ----

@pytest.fixture(scope="module")
def pns():
    return Prover(18, method="pns")


@pytest.mark.parametrize("fen,side,moves", MATES)
def test_pns_agrees_with_the_exhaustive_prover(prover, pns, fen, side, moves):
    exact = prover.mates_in(fen, moves, side=side)
    r = pns.mates_in(fen, moves, side=side)
    assert r.proven and r.mate_plies == exact.mate_plies == 2 * moves - 1
    assert len(r.line) == r.mate_plies and _mates(fen, r.line, side)
    # a looser bound: proven, with a proof tree no shallower than the exact distance
    r = pns.mates_in(fen, moves + 3, side=side)
    assert r.proven and exact.mate_plies <= r.mate_plies <= 2 * (moves + 3) - 1 and _mates(fen, r.line, side)
    if moves > 1:
        r = pns.mates_in(fen, moves - 1, side=side)
        assert r.refuted and prover.mates_in(fen, moves - 1, side=side).refuted
        assert r.depth_done == 2 * moves - 3 and r.line == []


@pytest.mark.parametrize("fen,moves", LOST)
def test_pns_cannot_lose_agrees(prover, pns, fen, moves):
    assert pns.cannot_lose(fen, 2 * moves - 1).proven
    r = pns.cannot_lose(fen, 2 * moves)
    assert r.refuted and r.mate_plies == 2 * moves and prover.cannot_lose(fen, 2 * moves).refuted


def test_pns_deep_oracle_leaf(pns):
    # the paper's White oracle [1|1.7], "#8": the exhaustive prover needs ~150 M nodes (70 s) for it;
    # PNS proves it with ~1 M, and the line it returns is a legal mate within the bound
    fen = "rn1qk/pPppp/1pP2/1P1PP/RNBQK b - - 0 3"
    r = pns.mates_in(fen, 8, side="white", max_nodes=20_000_000)
    assert r.proven and r.mate_plies <= 16 and len(r.line) == r.mate_plies and _mates(fen, r.line, "white")
    # [3|5] "#8": refuted (no mate within 15 plies, as the exhaustive prover finds), but #10 holds
    fen = "rnb1k/p2pp/PqpP1/2P1P/RNBQK w - - 1 4"
    r = pns.mates_in(fen, 10, max_nodes=20_000_000)
    assert r.proven and r.mate_plies <= 19 and _mates(fen, r.line, "white")


def test_pns_budgets_and_input():
    p = Prover(12, method="pns")
    assert p.method == "pns" and p.tt_bytes == 24 << 12
    r = p.mates_in(Gardner(), 30, max_nodes=1000)
    assert r.unknown and r.stop == "node limit" and r.line == [] and r.mate_plies is None
    with pytest.raises(ValueError, match="method"):
        Prover(12, method="dfpn")
    with pytest.raises(ValueError, match="not 61"):
        p.mates_in(Gardner(), 61)


def test_cli_gardner_prove_pns():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "mavgame", "gardner-prove", "r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 3 12",
                        "--mate", "2", "--method", "pns"], capture_output=True, text=True)
    assert r.returncode == 0 and "White mates in at most 2 moves: proven" in r.stdout
    assert "mate within (proof tree depth) 3 plies: c4a3 d5d4 b3c4" in r.stdout
