"""MCTS.search's SearchResult built lazily from one C copy of the tree's root (MCTSTree.snapshot, issue 52): every
field read in any order, after the tree searched again, after the searched state or the MCTS moved on, through
copy and pickle, equals the field read from the tree right after the search (the eager result of before)."""
import copy
import dataclasses
import pickle

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.search.evaluators import StateOracle
from mavgame.search.mcts import MCTS
from mavgame.search.results import SearchResult

FIELDS = [f.name for f in dataclasses.fields(SearchResult)]


def _eager(m, state, timed_out=False):
    """The result as mcts.py built it before the lazy result: every field read from the tree now."""
    t = m.tree
    actions, visits, q, prior, values, hal = t.root_edges()
    best = t.best_edge()
    pv_actions, _, pv_moves = t.pv()
    if m.state_tracking:
        moves, pv, best_action = t.root_moves(), list(pv_moves), None
    else:
        moves = [state.action_to_str(int(a)) for a in actions]
        pv, c = [], state.copy()
        for a in pv_actions:
            pv.append(c.action_to_str(int(a)))
            c.push(int(a))
        best_action = int(actions[best]) if best >= 0 else None
    stats = dict(t.stats(), timed_out=timed_out)
    return SearchResult(moves[best] if best >= 0 else None, best_action, moves, actions, visits, q, prior, values,
                        hal, pv, pv_actions, t.root_value, t.root_visits, stats, t.root_u())


def _same(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype, name
            assert np.array_equal(x, y, equal_nan=True), name
        else:
            assert type(x) is type(y) and x == y, name


MAKERS = [lambda: mavgame.Chess("r3k2r/pppq1ppp/8/8/8/8/PPPQ1PPP/R3K2R w KQkq - 0 1"),
          lambda: mavgame.ConnectFour.from_moves("4453"), lambda: mavgame.Hex(5)]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("order", ["fields", "reversed", "none"])
def test_lazy_fields_equal_the_eager_ones_in_any_order(make, order):
    state = make()
    m = MCTS("playout", num_simulations=120, seed=5)
    r = m.search(state)
    want = _eager(m, state)
    assert type(r) is SearchResult and "_snapshot" in vars(r)
    names = FIELDS if order == "fields" else FIELDS[::-1] if order == "reversed" else []
    for name in names:
        getattr(r, name)
    # the tree searches on, the searched state and the MCTS move: the result keeps this search's values
    state.push(int(state.legal_actions()[0]))
    m.search(state)
    m.play(int(state.legal_actions()[0]))
    _same(r, want)
    assert repr(r) == repr(want)
    assert r.stats["timed_out"] is False and r.best_move in r.moves and r.pv[0] == r.best_move
    assert r.policy(0.0).sum() == 1.0 and np.allclose(r.policy(1.0), want.policy(1.0))


def test_copy_pickle_and_replace_hold_the_fields_not_the_c_copy():
    m = MCTS("playout", num_simulations=50, seed=1)
    s = mavgame.ConnectFour.from_moves("44")
    r = m.search(s)
    want = _eager(m, s)
    for other in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r)),
                  dataclasses.replace(r, best_move="1")):
        assert "_snapshot" not in vars(other) and set(vars(other)) == set(FIELDS)
        _same(dataclasses.replace(other, best_move=want.best_move), want)
    assert "_snapshot" in vars(r)   # the original is unchanged (copying built its fields)
    _same(r, want)
    assert dataclasses.asdict(r).keys() == set(FIELDS)


def test_a_field_set_before_it_is_read_is_kept():
    m = MCTS("playout", num_simulations=30, seed=2)
    r = m.search(mavgame.ConnectFour())
    mine = np.arange(3)
    r.actions = mine
    r.stats = {"mine": 1}
    assert r.actions is mine and r.stats == {"mine": 1}
    # the other edge fields still come from the search
    assert np.array_equal(r.visits, m.tree.root_edges()[1]) and len(r.q) == 7 and r.root_visits == 30
    assert r.moves == [str(c) for c in range(1, 8)]
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        r.nonexistent
    assert not hasattr(r, "nonexistent")


def test_a_result_made_by_hand_is_a_plain_dataclass():
    r = SearchResult(None, None, [], np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0),
                     np.zeros(0, bool), [], np.zeros(0), 0.0, 0)
    assert r.stats == {} and r.u.size == 0 and vars(r).keys() == set(FIELDS)
    del r.pv
    with pytest.raises(AttributeError, match="no attribute 'pv'"):
        r.pv


def test_state_tracking_result():
    from test_mcts import ttt_values
    s = mavgame.State("tictactoe", "x.o/.o./x.. x")
    m = MCTS(StateOracle("tictactoe", ttt_values), num_simulations=100, batch_size=2, state_tracking=True, seed=1)
    r = m.search(s)
    want = _eager(m, s)
    m.search(mavgame.State("tictactoe", "xxo/.o./x.. o"))
    _same(r, want)
    assert r.best_move == "a2" and r.best_action is None and r.pv[0] == "a2"


def test_snapshot_arguments():
    t = _core.MCTSTree("connect_four")
    t.set_root(mavgame.ConnectFour(), 0)
    t.search(_core.mcts_constant_evaluator(0.5), 20)
    snap = t.snapshot()
    assert type(snap) is _core.MCTSResult and snap.root is None and snap.timed_out is False
    assert snap.num_edges == 7 and snap.best_edge == t.best_edge() and snap.best_action == t.best_action()
    assert np.array_equal(snap.pv_actions(), t.pv()[0]) and snap.pv_list() == t.pv()[0].tolist()
    assert len(t.snapshot(max_pv=1).pv_actions()) == 1 and len(t.snapshot(max_pv=0).pv_actions()) == 0
    assert snap.stats() == t.stats() and snap.action_list() == list(range(7))
    assert snap.root_moves() is None and snap.pv_moves() is None
    for a, b in zip(snap.root_edges(), t.root_edges()):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    r = t.snapshot("root", True, 64, SearchResult)
    assert type(r) is SearchResult and r._snapshot.root == "root" and r.stats["timed_out"] is True
    with pytest.raises(TypeError, match="into must be a class"):
        t.snapshot(None, False, 64, 3)
    with pytest.raises(ValueError, match="max_pv"):
        t.snapshot(max_pv=-1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'pv'"):
        t.snapshot(pv=3)
