"""Observation tensors (OpenSpiel ObservationTensor style, filled in C): shapes, planes against the
board text, the side to move, the chess extras, and the batched form."""
import random

import numpy as np
import pytest

from mavgame import Chess, Chess960, ChessFamily, ConnectFour, Gardner, Hex, TicTacToe, _core

PIECES = "PNBRQKpnbrqk"


def random_states(make, n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = make()
        for _ in range(rng.randrange(0, 40)):
            if s.is_terminal():
                break
            s.push(int(rng.choice(list(s.legal_actions()))))
        out.append(s)
    return out


def expected_planes(s):
    """The board planes and the side-to-move plane, from board_rows() (top row first)."""
    rows = s.board_rows()
    h, w = len(rows), len(rows[0])
    symbols = PIECES if isinstance(s, ChessFamily) else "xo"
    planes = [np.array([[1.0 if ch == sym else 0.0 for ch in row] for row in rows]) for sym in symbols]
    if symbols == "xo":
        planes.append(np.array([[1.0 if ch == "." else 0.0 for ch in row] for row in rows]))
    planes.append(np.full((h, w), float(s.to_move)))
    return np.stack(planes)


GAMES = {
    "chess": (Chess, (18, 8, 8)),
    "chess960": (lambda: Chess960(7), (18, 8, 8)),
    "gardner": (Gardner, (13, 5, 5)),
    "connect_four": (ConnectFour, (4, 6, 7)),
    "hex7": (lambda: Hex(7), (4, 7, 7)),
    "hex11": (Hex, (4, 11, 11)),
    "tictactoe": (TicTacToe, (4, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_planes_match_the_board(name):
    make, shape = GAMES[name]
    states = random_states(make, 30, seed=hash(name) % 1000)
    for s in states:
        o = s.observation_tensor()
        assert o.dtype == np.float32 and o.shape == shape == s.observation_shape
        exp = expected_planes(s)
        k = exp.shape[0]
        assert np.array_equal(o[:k], exp), (name, s.text())
    batch = _core.observation_tensors(states)
    assert batch.shape == (len(states),) + shape and batch.dtype == np.float32
    assert np.array_equal(batch, np.stack([s.observation_tensor() for s in states]))


def test_chess_castling_and_en_passant_planes():
    s = Chess("r3k2r/8/8/3pP3/8/8/8/R3K2R w Kq d6 0 1")
    o = s.observation_tensor()
    assert [o[13 + i].min() == o[13 + i].max() == v for i, v in enumerate((1, 0, 0, 1))] == [True] * 4
    ep = np.argwhere(o[17] == 1.0)
    assert ep.tolist() == [[2, 3]]          # d6: row 8 - 6 = 2, file d = 3
    assert o[12].max() == 0.0               # White to move
    s.push("e5d6")
    o = s.observation_tensor()
    assert o[17].max() == 0.0 and o[12].min() == 1.0


def test_connect_four_rows_are_top_first():
    o = ConnectFour.from_moves("4").observation_tensor()
    assert o[0, 5, 3] == 1.0 and o[0].sum() == 1.0 and o[2].sum() == 41.0 and o[3].min() == 1.0


def test_batches_refuse_mixed_games_and_sizes():
    with pytest.raises(ValueError, match=r"states\[1\] is a hex state .* \(4, 6, 6\)"):
        _core.observation_tensors([Hex(5), Hex(6)])
    with pytest.raises(ValueError, match="states\\[1\\] is a chess state"):
        _core.observation_tensors([ConnectFour(), Chess()])
    with pytest.raises(TypeError, match=r"states\[0\] must be a mavgame game state"):
        _core.observation_tensors(["4453"])
    with pytest.raises(ValueError, match="at least one state"):
        _core.observation_tensors([])
