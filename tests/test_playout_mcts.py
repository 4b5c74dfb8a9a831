"""The generic random-playout UCT (``_core.playout_mcts``): bookkeeping on every game, tactics in
tic-tac-toe and Connect Four checked against minimax written here, Hex against the exact solver."""
import math
import threading
from functools import lru_cache

import numpy as np
import pytest

from mavgame import _core
from mavgame.games.hex import Hex
from mavgame.search.uct import playout_uct

TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def check_result(state, sims, r):
    assert set(r) >= {"actions", "visits", "q", "value", "best_action", "nodes", "playout_plies"}
    assert r["actions"].dtype == np.int32 and r["visits"].dtype == np.int64 and r["q"].dtype == np.float64
    assert r["actions"].tolist() == state.legal_actions().tolist()
    assert r["visits"].sum() == sims
    visited = r["visits"] > 0
    assert np.all(np.isnan(r["q"][~visited]))
    assert np.all((r["q"][visited] >= 0) & (r["q"][visited] <= 1))
    assert math.isclose(float((r["q"][visited] * r["visits"][visited]).sum()) / sims, r["value"], abs_tol=1e-9)
    best = int(np.argmax(r["visits"]))
    assert r["visits"][r["actions"].tolist().index(r["best_action"])] == r["visits"][best]
    assert 1 <= r["nodes"] <= sims + 1


@pytest.mark.parametrize("game", _core.games())
def test_every_game(game):
    s = _core.State(game)
    before = s.text()
    r = _core.playout_mcts(s, 80, seed=5, max_playout_plies=300)
    assert s.text() == before
    check_result(s, 80, r)
    r2 = _core.playout_mcts(s, 80, seed=5, max_playout_plies=300)
    assert r2["visits"].tolist() == r["visits"].tolist() and r2["value"] == r["value"]


def test_errors():
    s = _core.State("tictactoe")
    with pytest.raises(ValueError, match="simulations"):
        _core.playout_mcts(s, 0)
    with pytest.raises(ValueError, match="exploration"):
        _core.playout_mcts(s, 10, c=-1.0)
    with pytest.raises(ValueError, match="exploration"):
        _core.playout_mcts(s, 10, c=float("nan"))
    with pytest.raises(ValueError, match="max_playout_plies"):
        _core.playout_mcts(s, 10, max_playout_plies=-2)
    with pytest.raises(ValueError, match="over"):
        _core.playout_mcts(_core.State("tictactoe", "xxx/oo./... o"), 10)
    with pytest.raises(TypeError):
        _core.playout_mcts("tictactoe", 10)


# ---- tic-tac-toe against exhaustive minimax ---------------------------------------------------

def ttt_cells(text):
    rows = text.split()[0].split("/")          # row 3 first
    return tuple(rows[2 - a // 3][a % 3] for a in range(9)), text.split()[1]


@lru_cache(maxsize=None)
def ttt_value(cells, side):
    """+1 / 0 / -1 for the side to move ('x' or 'o')."""
    for a, b, c in TTT_LINES:
        if cells[a] != "." and cells[a] == cells[b] == cells[c]:
            return -1
    empty = [i for i in range(9) if cells[i] == "."]
    if not empty:
        return 0
    other = "o" if side == "x" else "x"
    return max(-ttt_value(tuple(side if i == a else c for i, c in enumerate(cells)), other) for a in empty)


@pytest.mark.parametrize("text", ["xx./oo./... x", "xx./o../... o", "o../.x./x.o x", "x../.o./... x",
                                  "x.o/.../... x", ".../.x./... o", "xo./.../... x"])
def test_tictactoe_best_move_keeps_the_value(text):
    s = _core.State("tictactoe", text)
    r = _core.playout_mcts(s, 20000, seed=1)
    check_result(s, 20000, r)
    cells, side = ttt_cells(text)
    other = "o" if side == "x" else "x"
    a = r["best_action"]
    after = tuple(side if i == a else c for i, c in enumerate(cells))
    assert -ttt_value(after, other) == ttt_value(cells, side)


def test_tictactoe_win_and_block():
    r = _core.playout_mcts(_core.State("tictactoe", "xx./oo./... x"), 2000)
    assert r["best_action"] == 8
    assert r["q"][r["actions"].tolist().index(8)] == 1.0
    r = _core.playout_mcts(_core.State("tictactoe", "xx./o../... o"), 2000)
    assert r["best_action"] == 8


def test_connect_four_takes_the_win():
    s = _core.State("connect_four")          # x: columns 1 2 3 on the bottom row, o above; x to move
    for col in ("1", "1", "2", "2", "3", "3"):
        s.push(col)
    r = _core.playout_mcts(s, 3000, seed=2)
    check_result(s, 3000, r)
    assert r["best_action"] == 3          # column 4 completes x's bottom row


# ---- Hex against the exact solver --------------------------------------------------------------

@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("moves,size,sims", [("", 3, 3000), ("", 4, 20000), ("a1 b2", 4, 20000),
                                             ("c3 d4", 5, 40000)])
def test_hex_against_solver(moves, size, sims, fast):
    b = Hex.from_moves(moves, size=size)
    solved = b.solve()
    assert solved.complete and solved.value == 1
    r = playout_uct(b, sims, seed=3, fast_playout=fast)
    assert solved.move_values[r.best] == 1
    win = [r.q[m] for m, v in solved.move_values.items() if v == 1]
    loss = [r.q[m] for m, v in solved.move_values.items() if v == -1]
    assert sum(win) / len(win) > sum(loss) / len(loss)
    assert sum(r.visits.values()) == sims
    assert r.order()[0] == r.best


def test_hex_mcts_reproducible_and_threads():
    b = Hex(7)
    r1 = _core.playout_mcts(b, 3000, seed=9)
    r2 = _core.playout_mcts(b, 3000, seed=9)
    assert r1["visits"].tolist() == r2["visits"].tolist()
    r3 = _core.playout_mcts(b, 3000, seed=10)
    assert r1["visits"].tolist() != r3["visits"].tolist()
    out = [None, None]

    def work(i):
        out[i] = _core.playout_mcts(b, 3000, seed=9)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out:
        assert o["visits"].tolist() == r1["visits"].tolist() and o["value"] == r1["value"]
