"""Many MCTS searches together (mavgame.search.multi.search_many over csrc/search/mcts_multi.c): each search gives
exactly its sequential MCTS.search with the same seed (constant, playout and native-model
evaluators, engine mode and state tracking), one evaluator call per round for the searches sharing a capsule;
refused inputs; the time budget and tree reuse."""
import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.search.mcts import MCTS
from mavgame.search.multi import search_many
from mavgame.model.inference import MAVModel, native_available, shipped_model_path


def positions(k, game="connect_four"):
    out = []
    for i in range(k):
        s = mavgame.State(game)
        for p in range(i % 5):
            s.push(s.legal_moves[(i * 3 + p * 2) % len(s.legal_moves)])
        out.append(s)
    return out


def same_result(a, b):
    assert a.best_move == b.best_move
    assert a.moves == b.moves
    np.testing.assert_array_equal(a.visits, b.visits)
    np.testing.assert_array_equal(a.q, b.q)      # NaN where unvisited, on both sides
    np.testing.assert_array_equal(a.prior, b.prior)
    assert a.root_visits == b.root_visits and a.root_value == b.root_value
    assert a.stats["simulations"] == b.stats["simulations"] and a.stats["batches"] == b.stats["batches"]


def check_equivalent(make_ev, k=6, sims=(24, 40, 7, 64, 1, 33), batches=(1, 4, 8, 16, 2, 5), game="connect_four",
                     **kw):
    sts = positions(k, game)
    seq = [MCTS(make_ev(), num_simulations=sims[i], batch_size=batches[i], seed=10 + i, **kw) for i in range(k)]
    shared = make_ev()
    mul = [MCTS(shared, num_simulations=sims[i], batch_size=batches[i], seed=10 + i, **kw) for i in range(k)]
    for rep in range(2):            # the second search reuses each tree (one move played in between)
        a = [m.search(s) for m, s in zip(seq, sts)]
        info = {}
        b = search_many(mul, sts, info=info)
        for x, y in zip(a, b):
            same_result(x, y)
        assert info["requests"] == sum(r.stats["evaluations"] for r in b)
        if isinstance(shared, str):  # each search made its own evaluator: one call per search per round
            assert info["calls"] >= info["rounds"]
        else:
            assert info["calls"] == info["rounds"] and info["max_call"] > max(batches)
        for m in mul + seq:
            m.check()
        sts = [s.copy() for s in sts]
        for s, r in zip(sts, a):
            if r.best_action is not None and not s.is_terminal():
                s.push(r.best_action)
    return b


def test_constant_equals_sequential():
    check_equivalent(lambda: _core.mcts_constant_evaluator(0.5))


def test_playout_by_name_equals_sequential():
    # "playout" resolves to one evaluator (one generator) per MCTS: each search draws as it would alone
    check_equivalent(lambda: "playout", game="tictactoe")


def test_different_evaluators_in_one_call_round():
    sts = positions(4)
    c1, c2 = _core.mcts_constant_evaluator(0.5), _core.mcts_constant_evaluator(0.5)
    mul = [MCTS(c1 if i % 2 else c2, num_simulations=20, batch_size=4, seed=i) for i in range(4)]
    info = {}
    res = search_many(mul, sts, info=info)
    assert info["calls"] == 2 * info["rounds"]
    for i, r in enumerate(res):
        same_result(MCTS(_core.mcts_constant_evaluator(0.5), num_simulations=20, batch_size=4, seed=i).search(sts[i]),
                    r)


@pytest.fixture(scope="module")
def model():
    if not native_available():
        pytest.skip("extension built without the native engine")
    try:
        return MAVModel.load(shipped_model_path("connect_four"), backend="native")
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped")


def test_native_model_equals_sequential(model):
    from mavgame.agents.mav import NativeMAVEvaluator
    # the shared evaluator generates up to 128 leaves at once, the sequential ones 8: the answers are the same
    wide = NativeMAVEvaluator(model, batch_size=8, cache_size=0)
    wide.widen(128)
    b = check_equivalent(lambda: NativeMAVEvaluator(model, batch_size=8, cache_size=0) if wide is None else wide,
                         k=4, sims=(16, 24, 9, 16), batches=(8, 8, 4, 16))
    assert wide.stats()["calls"] > 0 and all(r.best_move for r in b)


def test_native_state_tracking_equals_sequential(model):
    from mavgame.agents.mav import NativeMAVEvaluator
    sts = positions(3)
    evs = [NativeMAVEvaluator(model, batch_size=8, state_tracking=True) for _ in range(2)]
    kw = dict(num_simulations=12, batch_size=4, state_tracking=True, game="connect_four")
    a = [MCTS(evs[0], seed=i, **kw).search(s) for i, s in enumerate(sts)]
    b = search_many([MCTS(evs[1], seed=i, **kw) for i in range(3)], sts)
    for x, y in zip(a, b):
        same_result(x, y)


def test_refused_inputs():
    ev = _core.mcts_constant_evaluator(0.5)
    s = mavgame.State("connect_four")
    m1, m2 = MCTS(ev, num_simulations=4), MCTS(ev, num_simulations=4)
    with pytest.raises(ValueError, match="2 searches but 1 states"):
        search_many([m1, m2], [s])
    with pytest.raises(ValueError, match=r"searches\[0\] and searches\[1\] are the same MCTS"):
        search_many([m1, m1], [s, s])
    with pytest.raises(TypeError, match=r"searches\[1\] is str"):
        search_many([m1, "mcts"], [s, s])
    with pytest.raises(TypeError, match=r"searches\[1\] has a Python evaluator"):
        search_many([m1, MCTS(lambda reqs: [0.5] * len(reqs))], [s, s])
    with pytest.raises(ValueError, match="3 simulation counts for 2 searches"):
        search_many([m1, m2], [s, s], [1, 2, 3])
    with pytest.raises(ValueError, match="max_seconds"):
        search_many([m1, m2], [s, s], max_seconds=-1)
    with pytest.raises(ValueError, match="num_simulations"):
        search_many([m1, m2], [s, s], [1, -2])
    assert search_many([], []) == []
    # the binding's own checks
    t = [_core.MCTSTree("connect_four") for _ in range(2)]
    for x in t:
        x.set_root(s)
    with pytest.raises(ValueError, match="2 trees, 1 evaluators"):
        _core.mcts_search_many(t, [ev], [1, 1])
    with pytest.raises(TypeError, match=r"evaluators\[1\] is function"):
        _core.mcts_search_many(t, [ev, lambda b, to: None], [1, 1])
    with pytest.raises(ValueError, match=r"trees\[0\] and trees\[1\] are the same"):
        _core.mcts_search_many([t[0], t[0]], [ev, ev], [1, 1])
    with pytest.raises(TypeError, match=r"trees\[1\] must be an MCTSTree"):
        _core.mcts_search_many([t[0], 3], [ev, ev], [1, 1])
    with pytest.raises(ValueError, match="no root"):
        _core.mcts_search_many([t[0], _core.MCTSTree("connect_four")], [ev, ev], [1, 1])
    t[0].check()    # released after every refusal: usable again
    assert _core.mcts_search_many(t, [ev, ev], [3, 5])[0] is False


def test_time_budget_stops_every_search_and_trees_go_on():
    sts = positions(3, "tictactoe")
    ms = [MCTS("playout", num_simulations=2_000_000, batch_size=4, seed=i, playouts=20) for i in range(3)]
    res = search_many(ms, sts, max_seconds=0.05)
    for r in res:
        assert r.stats["timed_out"] and 0 < r.stats["simulations"] < 2_000_000
    more = search_many(ms, sts, 10)
    for r0, r1 in zip(res, more):
        assert not r1.stats["timed_out"] and r1.root_visits == r0.root_visits + 10
