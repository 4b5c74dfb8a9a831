"""The IDP report's alpha-beta searches in C (csrc/games/chess/chess_alphabeta.c) through mavgame._core."""
import random
import threading

import chess
import numpy as np
import pytest

import mavgame
from mavgame import _core

MATE1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
MATE2 = "r1bq2r1/b4pk1/p1pp1p2/1p2pP2/1P2P1PB/3P4/1PPQ2P1/R3K2R w - - 0 1"
FORK = "6k1/3q4/8/8/4N3/8/P7/4K3 w - - 0 1"
MATE = 30000


def test_baseline_finds_mates_and_a_fork():
    r = _core.alphabeta(mavgame.State("chess", MATE1), 4)
    assert r.move == "a1a8" and r.score == MATE - 1 and r.complete and r.stop == ""
    r = _core.alphabeta(mavgame.State("chess", MATE2), 4)
    assert r.move == "d2h6" and r.score == MATE - 3 and len(r.pv) == 3
    assert chess.Board(MATE2).is_checkmate() is False
    b = chess.Board(MATE2)
    for u in r.pv:
        b.push_uci(u)
    assert b.is_checkmate()
    r = _core.alphabeta(mavgame.State("chess", FORK), 4)
    assert r.move == "e4f6" and r.score > 300 and r.iterations == 4


def test_guided_search_with_each_kind_of_policy():
    st = mavgame.State("chess", MATE2)
    for pol in (None, np.ones(1968, np.float32), lambda planes, mask: mask.astype(np.float32)):
        r = _core.guided_alphabeta(st, pol, threshold=0.001, max_depth=8)
        assert r.move == "d2h6" and r.score == MATE - 3 and r.complete
    # a policy that gives the mating move no probability makes it a leaf: the mate is not seen,
    # and only the favoured line is expanded (far fewer nodes)
    uniform = _core.guided_alphabeta(st, threshold=0.001)
    w = np.zeros(1968, np.float32)
    w[_core.policy_uci_index("a1a2")] = 1.0
    r = _core.guided_alphabeta(st, w, threshold=0.001)
    assert r.complete and r.score < MATE - 100 and r.nodes < uniform.nodes / 2


def test_guided_uniform_full_width_equals_baseline_and_tt_changes_nothing():
    rng = random.Random(3)
    for _ in range(8):
        st = mavgame.State("chess")
        for _ in range(rng.randrange(4, 30)):
            moves = st.legal_actions()
            if len(moves) == 0 or st.is_terminal():
                break
            st.push(int(rng.choice(list(moves))))
        if st.is_terminal():
            continue
        a = _core.alphabeta(st, 3, tt=False)
        b = _core.alphabeta(st, 3, tt=True)
        c = _core.guided_alphabeta(st, threshold=1e-12, max_depth=3)
        assert a.score == b.score == c.score
        assert b.nodes <= a.nodes * 1.5


def test_callable_policy_gets_planes_masks_and_fens_in_batches():
    st = mavgame.State("chess")
    for u in ("e2e4", "e7e5"):
        st.push(st.action_from_str(u))
    seen = []

    def pol(planes, mask, fens):
        assert planes.shape == (len(fens), 41, 8, 8) and mask.shape == (len(fens), 1968)
        if not seen:   # the root first, with its own history
            np.testing.assert_array_equal(planes[0], _core.policy_planes([st])[0])
            assert fens == [st.text()]
        for p, m, f in zip(planes, mask, fens):
            s = mavgame.State("chess", f)
            np.testing.assert_array_equal(m, _core.policy_legal_mask([s])[0])
            np.testing.assert_array_equal(p[:13], _core.policy_planes([s])[0][:13])
        seen.append(len(fens))
        return np.where(mask, 1.0, 0.0)

    r = _core.guided_alphabeta(st, pol, threshold=0.01, max_depth=4, batch=8, fens=True)
    assert r.complete and r.policy_calls == len(seen) > 1 and r.policy_positions == sum(seen)
    assert max(seen) <= 8 and r.policy_seconds > 0


def test_budgets_and_errors():
    st = mavgame.State("chess", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    r = _core.alphabeta(st, 8, max_nodes=3000)
    assert r.stop == "nodes" and not r.complete and st.is_legal(r.best_move) and r.nodes <= 3001
    r = _core.alphabeta(st, 12, max_seconds=0.2)
    assert r.stop == "time" and not r.complete and st.is_legal(r.best_move) and r.seconds < 2.0
    with pytest.raises(ValueError, match="depth"):
        _core.alphabeta(st, 0)
    with pytest.raises(ValueError, match="threshold"):
        _core.guided_alphabeta(st, threshold=0)
    with pytest.raises(ValueError, match="batch"):
        _core.guided_alphabeta(st, batch=0)
    with pytest.raises(ValueError, match="1968"):
        _core.guided_alphabeta(st, np.ones(10))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        _core.guided_alphabeta(st, lambda p, m: np.ones(3))
    with pytest.raises(ZeroDivisionError):
        _core.guided_alphabeta(st, lambda p, m: 1 / 0)
    with pytest.raises(TypeError, match="connect_four"):
        _core.alphabeta(mavgame.State("connect_four"))
    with pytest.raises(ValueError, match="max_nodes"):
        _core.alphabeta(st, max_nodes=-1)
    mated = mavgame.State("chess", "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1")
    r = _core.alphabeta(mated, 2)
    assert r.best_move == -1 and r.move is None and r.score == -MATE


def test_search_releases_the_gil():
    st = mavgame.State("chess", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.005)

    t = threading.Thread(target=count)
    t.start()
    try:
        _core.alphabeta(st, 12, max_seconds=0.3)
    finally:
        done.set()
        t.join()
    assert len(ticks) > 10


def test_pst_eval_is_the_sum_of_the_tables():
    t = _core.pst_tables()
    assert t.shape == (7, 64) and (t[0] == 0).all() and t[1, 8 + 3] == 100 - 20 and t[6, 6] == 20030
    rng = random.Random(5)
    board = chess.Board()
    st = mavgame.State("chess")
    for _ in range(40):
        if board.is_game_over():
            break
        mv = rng.choice(list(board.legal_moves))
        board.push(mv)
        st.push(st.action_from_str(mv.uci()))
        white = sum((1 if p.color else -1) * int(t[p.piece_type][sq if p.color else sq ^ 56])
                    for sq, p in board.piece_map().items())
        assert _core.pst_eval(st) == (white if board.turn else -white)
