"""The chess policy network's input planes and 1968-move index (csrc/games/chess/chess_policy.c)."""
import random

import chess
import numpy as np
import pytest

import mavgame
from mavgame import _core

PIECES = "PNBRQK"


def test_index_is_a_bijection_on_the_uci_strings():
    moves = _core.policy_moves()
    assert len(moves) == _core.POLICY_MOVES == 1968
    assert len(set(moves)) == 1968
    for i, u in enumerate(moves):
        assert _core.policy_uci_index(u) == i
        assert _core.policy_uci(i) == u
        chess.Move.from_uci(u)  # python-chess reads every string
    # the full set: every queen/knight from-to pair and every promotion
    expected = set()
    for f in range(64):
        for t in range(64):
            df, dr = abs(f % 8 - t % 8), abs(f // 8 - t // 8)
            if f != t and (df == 0 or dr == 0 or df == dr or {df, dr} == {1, 2}):
                expected.add(chess.square_name(f) + chess.square_name(t))
    for fr, tr in ((6, 7), (1, 0)):
        for ff in range(8):
            for tf in (ff - 1, ff, ff + 1):
                if 0 <= tf < 8:
                    expected |= {chess.square_name(fr * 8 + ff) + chess.square_name(tr * 8 + tf) + p for p in "nbrq"}
    assert set(moves) == expected


@pytest.mark.parametrize("bad", ["a1c4", "e2e4q", "a1a1", "e7e8k", "i1a1", "e2e", 5])
def test_bad_uci_strings_are_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        _core.policy_uci_index(bad)
    with pytest.raises(ValueError, match="1967"):
        _core.policy_uci(1968)


def _random_games(n_games, seed, max_plies=120):
    rng = random.Random(seed)
    for _ in range(n_games):
        board = chess.Board()
        st = mavgame.State("chess")
        for _ in range(rng.randrange(max_plies)):
            if board.is_game_over():
                break
            mv = rng.choice(list(board.legal_moves))
            board.push(mv)
            st.push(st.action_from_str(mv.uci()))
        yield board, st


def test_every_legal_move_maps_into_the_index_and_back():
    positions = 0
    for board, st in _random_games(60, seed=1):
        mask = _core.policy_legal_mask([st])[0]
        legal = {m.uci() for m in board.legal_moves}
        assert {_core.policy_moves()[i] for i in np.flatnonzero(mask)} == legal
        for a in st.legal_actions():
            i = _core.policy_index(st, int(a))
            assert _core.policy_action(st, i) == a
        positions += 1
    assert positions == 60


def test_promotion_and_castling_positions():
    st = mavgame.State("chess", "r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1")
    board = chess.Board(st.text())
    mask = _core.policy_legal_mask([st])[0]
    assert {_core.policy_moves()[i] for i in np.flatnonzero(mask)} == {m.uci() for m in board.legal_moves}
    assert not mask[_core.policy_uci_index("e1g1")] and mask[_core.policy_uci_index("e1c1")] and mask[_core.policy_uci_index("b7a8n")]
    st960 = mavgame.State("chess960", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert _core.policy_moves()[_core.policy_index(st960, "e1h1")] == "e1h1"
    with pytest.raises(ValueError, match="not a legal move"):
        _core.policy_action(st, _core.policy_uci_index("a1h8"))


def _expected_planes(boards, white, fullmove):
    out = np.zeros((41, 8, 8), np.float32)
    for k, b in enumerate(boards):
        for sq in range(64):
            row, col = 7 - sq // 8, sq % 8
            p = b.piece_at(sq)
            plane = 12 if p is None else (0 if p.color else 6) + PIECES.index(p.symbol().upper())
            out[13 * k + plane, row, col] = 1
    out[39] = 1.0 if white else 0.0
    out[40] = fullmove / 100.0
    return out


def test_planes_of_known_positions():
    st = mavgame.State("chess")
    p = _core.policy_planes([st])[0]
    start = chess.Board()
    np.testing.assert_array_equal(p, _expected_planes([start] * 3, True, 1))
    assert p[5, 7, 4] == 1 and p[11, 0, 4] == 1 and p[12].sum() == 32   # Ke1, ke8, 32 empty squares
    boards = [chess.Board()]
    for u in ("e2e4", "c7c5", "g1f3"):
        st.push(st.action_from_str(u))
        boards.append(boards[-1].copy())
        boards[-1].push_uci(u)
    p = _core.policy_planes([st])[0]
    np.testing.assert_array_equal(p, _expected_planes([boards[3], boards[2], boards[1]], False, 2))
    # a batch equals its items; policy_game gives every position along the history
    st2 = mavgame.State("chess")
    both = _core.policy_planes([st, st2])
    np.testing.assert_array_equal(both[1], _core.policy_planes([st2])[0])
    planes, masks, moves = _core.policy_game(st)
    assert planes.shape == (4, 41, 8, 8) and masks.shape == (4, 1968) and moves.dtype == np.int16
    np.testing.assert_array_equal(planes[3], p)
    np.testing.assert_array_equal(planes[1], _expected_planes([boards[1], boards[0], boards[0]], False, 1))
    assert [_core.policy_uci(int(m)) for m in moves] == ["e2e4", "c7c5", "g1f3"]
    assert all(masks[i, m] for i, m in enumerate(moves))


def test_policy_game_matches_policy_planes_along_random_games():
    for board, st in _random_games(10, seed=7):
        planes, masks, moves = _core.policy_game(st)
        np.testing.assert_array_equal(planes[-1], _core.policy_planes([st])[0])
        np.testing.assert_array_equal(masks[-1], _core.policy_legal_mask([st])[0])
        assert len(moves) == st.ply


def test_non_chess_states_are_refused():
    with pytest.raises(TypeError, match="connect_four"):
        _core.policy_planes([mavgame.State("connect_four")])
    with pytest.raises(TypeError, match=r"states\[1\]"):
        _core.policy_legal_mask([mavgame.State("chess"), 3])
