"""Time budgets for long searches (issue 21): MCTS (C and Python evaluators), the playout UCT, the Hex
solver and the MCTS agents' ``movetime`` stop through the core's cancellation poll (csrc/cancel.h,
csrc/bind/interrupt.c) and return the work done so far, flagged as stopped on time."""
import time

import numpy as np
import pytest

from mavgame import Chess, Hex, MCTS, _core
from mavgame.agents import make_agent
from mavgame.agents.mcts import MCTSAgent, UCTAgent
from mavgame.search.uct import playout_uct

SLACK = 1.5  # seconds on top of the budget (a shared, loaded test machine)


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t0


def test_mcts_c_evaluator_stops_on_time_with_a_move():
    m = MCTS("playout", num_simulations=10 ** 7, seed=1)
    b = Chess()
    res, dt = timed(lambda: m.search(b, max_seconds=0.2))
    assert dt < 0.2 + SLACK
    assert res.stats["timed_out"] is True
    assert 0 < res.stats["simulations"] < 10 ** 7
    assert res.best_move in b.legal_moves
    assert 0 < int(res.visits.sum()) <= res.root_visits
    m.check()  # the tree is consistent: no virtual counts left behind
    # a search within its budget says so, and the tree goes on growing
    res2 = m.search(b, num_simulations=50)
    assert res2.stats["timed_out"] is False and res2.stats["simulations"] == 50


def test_mcts_constructor_budget_and_best_move():
    m = MCTS("playout", num_simulations=10 ** 7, seed=2, max_seconds=0.15)
    mv, dt = timed(lambda: m.best_move(Chess()))
    assert dt < 0.15 + SLACK and mv in Chess().legal_moves
    assert m.last_result.stats["timed_out"]
    # a per-search budget overrides the constructor's
    mv, dt = timed(lambda: m.best_move(Chess(), 200, max_seconds=30))
    assert m.last_result.stats["timed_out"] is False and m.last_result.stats["simulations"] == 200


def test_mcts_python_evaluator_stops_on_time():
    calls = []

    def slow(requests):
        calls.append(len(requests))
        time.sleep(0.02)
        return [0.5 for _ in requests]

    m = MCTS(slow, num_simulations=10 ** 6, batch_size=4, seed=3)
    res, dt = timed(lambda: m.search(Chess(), max_seconds=0.25))
    assert dt < 0.25 + SLACK
    assert res.stats["timed_out"] and 0 < res.stats["simulations"] < 10 ** 6
    assert res.best_move is not None and len(calls) >= 2


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "1", True])
def test_bad_budgets_are_refused(bad):
    with pytest.raises(ValueError, match="max_seconds"):
        MCTS("playout", max_seconds=bad)
    m = MCTS("playout", num_simulations=10)
    with pytest.raises(ValueError, match="max_seconds"):
        m.search(Chess(), max_seconds=bad)
    if not isinstance(bad, (str, bool)):
        with pytest.raises(ValueError, match="max_seconds"):
            _core.playout_mcts(Chess(), 10, max_seconds=bad)
        with pytest.raises(ValueError, match="max_seconds"):
            _core.hex_solve(Hex(3), max_seconds=bad)


def test_playout_uct_stops_on_time_with_partial_statistics():
    r, dt = timed(lambda: playout_uct(Hex(11), simulations=5_000_000, seed=1, max_seconds=0.2))
    assert dt < 0.2 + SLACK
    assert r.timed_out and 0 < r.simulations < 5_000_000
    assert sum(r.visits.values()) == r.simulations
    assert 0.0 <= r.value <= 1.0 and r.best in r.visits
    full = playout_uct(Hex(3), simulations=300, seed=1, max_seconds=30)
    assert not full.timed_out and full.simulations == 300
    raw = _core.playout_mcts(Chess(), 200_000, seed=1, max_seconds=0.1)
    assert raw["timed_out"] and raw["simulations"] == int(np.sum(raw["visits"]))


def test_hex_solve_budget_reads_like_a_spent_node_budget():
    r, dt = timed(lambda: Hex(7).solve(max_seconds=0.2))
    assert dt < 0.2 + SLACK
    assert r.complete is False
    assert all(v in (-1, 1) for v in r.move_values.values())
    assert Hex(3).solve(max_seconds=30).complete  # a budget that is not spent changes nothing


def test_agent_movetime():
    b = Chess()
    for spec, name in [("uct:movetime=100", "uct-100ms"), ("mcts:movetime=100", "mcts-playout-100ms"),
                       ("mcts:sims=300,movetime=100", "mcts-playout-300-100ms")]:
        a = make_agent(spec)
        assert a.name == name
        a.setup("chess", seed=1)
        mv, dt = timed(lambda: a.act(b))
        assert dt < 0.1 + SLACK
        b.copy().push(mv)  # legal
    # the cap still holds: a large budget with few sims ends at the sims
    a = MCTSAgent("playout", 40, movetime=60_000)
    a.setup("tictactoe", seed=1)
    from mavgame import State
    a.act(State("tictactoe"))
    assert a._mcts.last_result.stats["simulations"] == 40 and not a._mcts.last_result.stats["timed_out"]


@pytest.mark.parametrize("spec", ["uct:movetime=0", "uct:movetime=-5", "mcts:movetime=-1", "solver_mcts:movetime=0",
                                  "mcts:movetime=fast"])
def test_agent_movetime_refused(spec):
    with pytest.raises(ValueError, match="movetime"):
        make_agent(spec)


def test_sims_none_needs_a_budget():
    with pytest.raises(ValueError, match="time budget|movetime"):
        MCTSAgent("playout", None)
    with pytest.raises(ValueError, match="movetime"):
        UCTAgent(None)
    assert UCTAgent(None, movetime=50).sims > 0
