"""MAV-MCTS entirely in C (NativeMAVEvaluator, search/mcts_eval_model.c) against MAV-MCTS with the Python
evaluator (MAVEvaluator) over the same shipped model: the same values at the root, the same visit counts and
the same moves from fixed seeds."""
import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.search.mcts import MCTS
from mavgame.agents.mav import MAVEvaluator, NativeMAVEvaluator, mav_mcts_agent
from mavgame.model.inference import MAVModel, native_available, shipped_model_path

pytestmark = pytest.mark.skipif(not native_available(), reason="extension built without the native engine")


@pytest.fixture(scope="module")
def model():
    try:
        return MAVModel.load(shipped_model_path("connect_four"), backend="native")
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped")


def positions():
    out = []
    for moves in ("", "4433", "1234567"):
        s = mavgame.State("connect_four")
        for m in moves:
            s.push(m)
        out.append(s)
    return out


@pytest.mark.parametrize("scoring", ["mean", "max"])
def test_native_search_equals_python_evaluator_search(model, scoring):
    for i, s in enumerate(positions()):
        res = []
        for ev in (MAVEvaluator(model, scoring=scoring, cache_size=0),
                   NativeMAVEvaluator(model, scoring=scoring, batch_size=8)):
            m = MCTS(ev, num_simulations=32, batch_size=8, seed=100 + i)
            res.append(m.search(s))
        a, b = res
        assert a.moves == b.moves
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.visits, b.visits)
        assert a.best_move == b.best_move


@pytest.mark.parametrize("scoring", ["mean", "max"])
def test_native_state_tracking_search_equals_python_evaluator_search(model, scoring):
    for i, s in enumerate(positions()):
        res = []
        for ev in (MAVEvaluator(model, scoring=scoring, cache_size=0),
                   NativeMAVEvaluator(model, scoring=scoring, batch_size=8, state_tracking=True)):
            m = MCTS(ev, num_simulations=32, batch_size=8, seed=200 + i, state_tracking=True, game="connect_four")
            res.append(m.search(s))
        a, b = res
        assert a.moves == b.moves
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.visits, b.visits)
        np.testing.assert_array_equal(a.hallucinated, b.hallucinated)
        assert a.best_move == b.best_move and a.pv == b.pv


def test_native_cache_changes_no_search(model):
    s = positions()[1]
    ev = NativeMAVEvaluator(model, batch_size=8)
    a = MCTS(ev, num_simulations=32, batch_size=8, seed=9).search(s)
    first = ev.stats()
    b = MCTS(ev, num_simulations=32, batch_size=8, seed=9).search(s)
    second = ev.stats()
    assert second["cache_hits"] - first["cache_hits"] == second["requests"] - first["requests"] > 0
    assert second["generated"] == first["generated"]                  # nothing generated the second time
    np.testing.assert_array_equal(a.visits, b.visits)
    np.testing.assert_array_equal(a.values, b.values)
    off = NativeMAVEvaluator(model, batch_size=8, cache_size=0)
    c = MCTS(off, num_simulations=32, batch_size=8, seed=9).search(s)
    np.testing.assert_array_equal(a.visits, c.visits)
    assert off.stats()["cache_hits"] == 0
    with pytest.raises(ValueError, match="cache_size"):
        NativeMAVEvaluator(model, cache_size=-1)


@pytest.mark.slow
def test_native_agent_plays_the_python_agents_moves(model):
    nat = mav_mcts_agent(model, sims=32, batch_size=8, seed=5)
    py = mav_mcts_agent(model, sims=32, batch_size=8, seed=5, native=False)
    assert isinstance(nat.evaluator, NativeMAVEvaluator)
    assert isinstance(py.evaluator, MAVEvaluator)
    s = mavgame.State("connect_four")
    for p in (nat, py):
        p.setup("connect_four", seed=3)
    for _ in range(8):
        a, b = nat.act(s), py.act(s)
        assert a == b
        s.push(a)
        if s.is_terminal():
            break
    st = nat.evaluator.stats()
    assert st["requests"] > 0 and st["shared_saved"] > 0 and st["invalid"] == 0


def test_native_evaluator_errors(model):
    ev = NativeMAVEvaluator(model)
    with pytest.raises(ValueError, match="scoring"):
        NativeMAVEvaluator(model, scoring="median")
    with pytest.raises(ValueError, match="unknown game"):
        _core.mcts_mav_evaluator(model.backend.engine, "go")
    with pytest.raises(ValueError, match="engine mode prompts give the current state"):
        _core.mcts_mav_evaluator(model.backend.engine, "connect_four", spec="%prev_state %prev_action %state")
    with pytest.raises(ValueError, match="max_batch"):
        _core.mcts_mav_evaluator(model.backend.engine, "connect_four", max_batch=0)
    import pickle
    ev2 = pickle.loads(pickle.dumps(ev))
    assert ev2.capsule() is not None


def test_prefix_cache_changes_no_search(model):
    """The engine's cross-batch prefix cache (state tracking re-expands %prev_state prefixes across batches):
    the same search, with prompt tokens copied from it."""
    s = positions()[1]
    res, stats = [], []
    for prefix_cache in (0, 4096, 64):
        ev = NativeMAVEvaluator(model, batch_size=8, state_tracking=True, cache_size=0, prefix_cache=prefix_cache)
        res.append(MCTS(ev, num_simulations=48, batch_size=8, seed=7, state_tracking=True,
                        game="connect_four").search(s))
        stats.append(ev.stats())
    for r in res[1:]:
        assert r.moves == res[0].moves and r.best_move == res[0].best_move
        np.testing.assert_array_equal(r.values, res[0].values)
        np.testing.assert_array_equal(r.visits, res[0].visits)
    assert stats[0]["cache_saved"] == 0 and stats[1]["cache_saved"] > 0
    assert stats[1]["shared_saved"] > stats[0]["shared_saved"]
    with pytest.raises(ValueError, match="prefix_cache"):
        NativeMAVEvaluator(model, prefix_cache=-5)


def test_native_timeout_drops_late_batches(model):
    """The search's timeout reaches the native evaluator (it was ignored): a batch generated after the deadline
    is dropped (its virtual counts removed, counted in stats['dropped']), never backed up."""
    from mavgame.search.results import SearchError
    s = positions()[1]
    ev = NativeMAVEvaluator(model, batch_size=4, cache_size=0)
    m = MCTS(ev, num_simulations=12, batch_size=4, timeout=1e-9, seed=3)
    with pytest.raises(SearchError, match="dropped") as e:
        m.search(s)
    st = e.value.stats
    assert st["simulations"] == st["dropped"] == 12 and st["invalid"] == 0
    assert ev.stats()["requests"] > 0                  # generated, then dropped as late
    assert ev.stats()["late"] == 12                   # the evaluator counts every dropped request as late
    m.check()                                          # no virtual count left behind
    # a timeout no batch reaches changes nothing
    a = MCTS(NativeMAVEvaluator(model, batch_size=4, cache_size=0), num_simulations=24, batch_size=4,
             seed=3).search(s)
    b = MCTS(NativeMAVEvaluator(model, batch_size=4, cache_size=0), num_simulations=24, batch_size=4,
             seed=3, timeout=600.0).search(s)
    np.testing.assert_array_equal(a.visits, b.visits)
    assert b.stats["dropped"] == 0


def test_native_timeout_skips_chunks_after_the_deadline_and_caches_late_answers(model):
    """A search batch larger than the evaluator's max_batch is generated in chunks: once the deadline has
    passed the remaining chunks are not generated; late answers are cached, so a later batch that selects the
    same leaf gets them at once (a cache hit is never late)."""
    s = positions()[1]
    ev = NativeMAVEvaluator(model, batch_size=2, cache_size=4096)
    MCTS(ev, num_simulations=1, seed=4).search(s)     # the root's answer cached
    before = ev.stats()
    # a uniform prior and a large exploration constant: the second batch takes 6 distinct root children
    kw = dict(num_simulations=7, batch_size=6, timeout=1e-9, seed=4, reuse_tree=False, eps=1.0, c_puct=100.0)
    r = MCTS(ev, **kw).search(s)
    after = ev.stats()
    st = r.stats
    assert r.best_move is not None                     # the root: a cache hit, in time
    assert st["batches"] == 2 and st["evaluations"] == 7
    # the second batch (6 leaves, 3 chunks): the first chunk generated, late; the other two never generated
    assert after["requests"] - before["requests"] == 1 + 2
    assert after["cache_hits"] - before["cache_hits"] == 1
    assert st["dropped"] == 6 and int(np.sum(r.visits)) == 0
    assert after["late"] - before["late"] == 6        # 2 generated late and 4 never generated
    # the late chunk's answers were kept: the same search again gets them from the cache, in time
    r2 = MCTS(ev, **kw).search(s)
    assert ev.stats()["cache_hits"] - after["cache_hits"] >= 3
    assert r2.stats["dropped"] < 6 and int(np.sum(r2.visits)) >= 2
