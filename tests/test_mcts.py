"""MAV-guided MCTS from Python: playout baseline, Python evaluators (structured and MAV text),
asynchronous batches with timeouts, state tracking with a hallucinating model, tree reuse,
Stockfish and the Connect Four oracle.  Tree invariants are checked after every search."""
import math
import os
import random
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.search.evaluators import StateOracle, ThreadPoolEvaluator
from mavgame.search.evaluator_io import EvaluatorError, Request
from mavgame.search.mcts import MCTS
from mavgame.search.results import SearchError

from conftest import REPO, scaled

HAS_C4 = "connect_four" in _core.games()


# ---- a perfect tic-tac-toe oracle ------------------------------------------------------------

def negamax(s) -> int:
    """+1 / 0 / -1 for the player to move."""
    res = s.result()
    if res != "*":
        if res == "1/2-1/2":
            return 0
        return 1 if (res == "1-0") == (s.to_move == 0) else -1
    best = -2
    for a in s.legal_actions():
        s.push(int(a))
        best = max(best, -negamax(s))
        s.pop()
    return best


def move_value(s, a) -> int:
    s.push(int(a))
    v = -negamax(s)
    s.pop()
    return v


_DISCOUNTED = {}


def discounted(s) -> float:
    """Negamax with a discount per ply, so that faster wins (and slower losses) score higher."""
    key = s.text()
    if key not in _DISCOUNTED:
        _DISCOUNTED[key] = _discounted(s)
    return _DISCOUNTED[key]


def _discounted(s) -> float:
    res = s.result()
    if res != "*":
        return 0.0 if res == "1/2-1/2" else -1.0  # the side to move has lost
    best = -2.0
    for a in s.legal_actions():
        s.push(int(a))
        best = max(best, -0.9 * discounted(s))
        s.pop()
    return best


def ttt_values(s):
    """Win probabilities of the legal moves for the player to move (perfect play, faster wins higher)."""
    out = {}
    for a in s.legal_actions():
        mv = s.action_to_str(int(a))
        s.push(int(a))
        out[mv] = 0.5 + 0.5 * (-0.9 * discounted(s))
        s.pop()
    return out


FORCED = [
    "xx./oo./... x",   # win at once
    "x.o/.o./x.. x",   # win at a2
    "x../.../..o x",   # a forced win through a fork
    "oo./xx./x.. o",   # o wins at c3
    "x../.o./..x o",   # o must avoid losing lines
]


def search_checked(m, s, n=None):
    r = m.search(s, n)
    m.check()
    assert int(r.visits.sum()) + 1 == r.root_visits or r.stats["depth_cutoffs"] > 0 or r.root_visits == 0
    # Q in [-1, 1], NaN unvisited, or -inf: the paper's minus infinity of a hallucinated move (invalid="exclude")
    assert np.all(np.isnan(r.q) | ((r.q >= -1) & (r.q <= 1)) | ((r.q == -np.inf) & r.hallucinated.astype(bool)))
    assert abs(float(r.prior.sum()) - 1.0) < 1e-4 or r.prior.size == 0
    return r


@pytest.mark.parametrize("text", FORCED)
@pytest.mark.parametrize("vc,batch", [("dynamic", 1), ("dynamic", 8), ("static", 8), ("none", 4)])
def test_playout_finds_forced_results(text, vc, batch):
    s = mavgame.State("tictactoe", text)
    best = negamax(s)
    m = MCTS("playout", num_simulations=3000, batch_size=batch, virtual_count=vc, c_puct=2.0, playouts=4,
             seed=7)
    r = search_checked(m, s)
    assert r.best_move is not None
    assert move_value(s, s.action_from_str(r.best_move)) == best
    assert r.stats["simulations"] == 3000


def test_python_evaluator_batches_and_prompts():
    s = mavgame.State("tictactoe")
    seen = []

    def ev(reqs):
        seen.append(len(reqs))
        for r in reqs:
            assert isinstance(r, Request)
            assert r.prompt.startswith("<mav game=tictactoe> %state %top_all %best_action </mav>\n[%state ")
            assert r.state.text() == r.text
            assert list(r.legal_moves) == [r.state.action_to_str(int(a)) for a in r.legal_actions]
        return [{"values": ttt_values(r.state)} for r in reqs]

    m = MCTS(ev, num_simulations=60, batch_size=6, seed=3)
    r = search_checked(m, s)
    assert max(seen) <= 6 and seen[0] == 1  # the root alone first
    assert len(seen) < 30  # batched
    # values reported are the evaluator's; with all values tied every action is in the top k
    assert np.allclose(r.values, [0.5] * 9)
    assert np.allclose(r.prior, 1 / 9, atol=1e-6)


def test_mav_text_outputs_are_parsed():
    s = mavgame.State("tictactoe", "x.o/.o./x.. x")

    def ev(reqs):
        out = []
        for r in reqs:
            vals = ttt_values(r.state)
            top = " ".join(f"{mv}:<ctrl{min(63, int(v * 64))}>" for mv, v in vals.items())
            out.append(f"[%top_all {top}]\n[%best_action {max(vals, key=vals.get)}]\n")
        return out

    m = MCTS(ev, num_simulations=100, seed=1)
    r = search_checked(m, s)
    assert r.best_move == "a2"
    want = ttt_values(s)["a2"]
    assert r.values[r.moves.index("a2")] == pytest.approx((min(63, int(want * 64)) + 0.5) / 64)
    assert r.stats["invalid"] == 0


def test_garbage_text_in_engine_mode_marks_nodes_invalid():
    s = mavgame.State("tictactoe")
    rng = random.Random(5)

    def ev(reqs):
        out = []
        for r in reqs:
            c = rng.random()
            if c < 0.3:
                out.append("<mav game=chess> nonsense")
            elif c < 0.5:
                out.append("[%top_all zz:<ctrl3> b9:<ctrlX>]\n")
            elif c < 0.6:
                out.append("[%top_all a1:<ctrl99> b2]\n")
            else:
                out.append({"values": ttt_values(r.state)})
        return out

    m = MCTS(ev, num_simulations=300, batch_size=4, seed=2)
    r = search_checked(m, s)
    assert r.stats["invalid"] > 0
    assert r.best_move is not None


@pytest.mark.parametrize("invalid", ["loss", "exclude"])
def test_invalid_answer_loss_or_paper_minus_infinity(invalid):
    """Every answer for a child of the root reached by the center move b2 is unusable: it is never
    selected again; "loss" backs up one visit valued -1 for the root player, "exclude" (the paper's
    minus infinity) backs up nothing and reports Q = -inf."""
    s = mavgame.State("tictactoe")

    def ev(reqs):
        return [False if len(r.path) >= 1 and r.state is not None and r.legal_actions is not None
                and int(r.path[0]) == s.action_from_str("b2") else {"values": ttt_values(r.state)}
                for r in reqs]

    m = MCTS(ev, num_simulations=200, batch_size=1, seed=3, invalid=invalid)
    r = m.search(s)
    m.check()
    i = r.moves.index("b2")
    assert r.hallucinated[i]
    assert r.stats["invalid"] == 1  # never selected again
    assert r.best_move != "b2"
    if invalid == "loss":
        assert r.visits[i] == 1 and r.q[i] == -1.0
        assert int(r.visits.sum()) + 1 == r.root_visits
    else:
        assert r.visits[i] == 0 and r.q[i] == -math.inf
        assert int(r.visits.sum()) + 1 == r.root_visits
        assert r.stats["dropped"] >= 1
    with pytest.raises(ValueError, match="invalid"):
        MCTS("playout", invalid="minus_infinity")


def test_timeout_drops_late_results():
    s = mavgame.State("tictactoe")

    def slow(req):
        if req.depth >= 2 and req.index % 2 == 1:
            time.sleep(0.2)  # late: dropped
        return {"values": ttt_values(req.state)}

    with ThreadPoolEvaluator(slow, max_workers=4) as pool:
        m = MCTS(pool, num_simulations=60, batch_size=4, timeout=0.05, seed=1)
        r = search_checked(m, s)
    st = r.stats
    assert st["dropped"] > 0
    assert st["completed"] + st["dropped"] == st["simulations"]
    assert r.root_visits == st["completed"]


def test_arrival_order_and_iterator_outputs():
    s = mavgame.State("tictactoe")

    def ev(reqs):
        for i in reversed(range(len(reqs))):
            yield i, {"values": ttt_values(reqs[i].state)}

    m = MCTS(ev, num_simulations=50, batch_size=5, seed=4)
    search_checked(m, s)


def test_evaluator_exception_propagates_and_tree_stays_consistent():
    s = mavgame.State("tictactoe")
    calls = []

    def ev(reqs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("model server down")
        return [{"values": ttt_values(r.state)} for r in reqs]

    m = MCTS(ev, num_simulations=100, batch_size=3)
    with pytest.raises(RuntimeError, match="model server down"):
        m.search(s)
    m.check()

    def wrong_len(reqs):
        return []

    with pytest.raises(ValueError, match="0 outputs"):
        MCTS(wrong_len, num_simulations=5).search(s)


def test_reentrant_call_is_refused():
    s = mavgame.State("tictactoe")
    holder = {}

    def ev(reqs):
        holder["m"].tree.check()
        return [0.5 for _ in reqs]

    holder["m"] = m = MCTS(ev, num_simulations=3)
    with pytest.raises(RuntimeError, match="searching"):
        m.search(s)


def test_capsule_search_releases_the_gil_and_is_not_shared():
    game = "connect_four" if HAS_C4 else "tictactoe"
    ev = _core.mcts_playout_evaluator(1, 0, 1)
    tree, other = _core.MCTSTree(game), _core.MCTSTree(game)
    tree.set_root(mavgame.State(game))
    other.set_root(mavgame.State(game))
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        tree.search(ev, 200000)
        done.set()

    th = threading.Thread(target=work)
    th.start()
    started.wait()
    ticks, refused = 0, 0
    while not done.is_set():  # runs only if the search has let go of the GIL
        ticks += 1
        if ticks % 1000 == 0 and not refused:
            try:
                other.search(ev, 5)  # the same evaluator (its generator) in a second search
            except RuntimeError as e:
                assert "in use" in str(e)
                refused = 1
    th.join()
    assert tree.stats()["simulations"] == 200000
    assert ticks > 1000 and refused
    other.search(ev, 5)  # free again
    other.check()
    tree.check()


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="virtual_count"):
        MCTS(virtual_count="sometimes")
    with pytest.raises(ValueError, match="eps"):
        MCTS(eps=2.0)
    with pytest.raises(ValueError, match="batch_size"):
        MCTS(batch_size=0)
    with pytest.raises(ValueError, match="n_min"):
        MCTS(n_max=2, n_min=3)
    with pytest.raises(ValueError, match="tau"):
        MCTS(tau=[(0, 0.1), (0, 0.2)])
    with pytest.raises(ValueError, match="unknown evaluator"):
        MCTS("oracle").search(mavgame.State("tictactoe"))


def test_tau_schedule_and_policy_prior():
    s = mavgame.State("tictactoe")
    vals = {"a1": 0.9, "b2": 0.8}

    def ev(reqs):
        return [{"values": {m: v for m, v in vals.items() if m in r.legal_moves},
                 "policy": {m: 1.0 for m in ["c3"] if m in r.legal_moves}} for r in reqs]

    r = MCTS(ev, num_simulations=1, k=2, eps=0.2, tau=[(0, 0.1), (4, 0.5)]).search(s)
    z = math.exp(9) + math.exp(8)
    i = r.moves.index("a1")
    assert r.prior[i] == pytest.approx(0.2 / 9 + 0.8 * math.exp(9) / z, rel=1e-5)
    late = mavgame.State("tictactoe", "xox/o../... x")  # a1 and b2 free, five legal moves
    r = MCTS(ev, num_simulations=1, k=2, eps=0.2, tau=[(0, 0.1), (4, 0.5)]).search(late, ply=4)
    z = math.exp(1.8) + math.exp(1.6)
    assert r.prior[r.moves.index("a1")] == pytest.approx(0.2 / 5 + 0.8 * math.exp(1.8) / z, rel=1e-5)
    assert r.prior[r.moves.index("b2")] == pytest.approx(0.2 / 5 + 0.8 * math.exp(1.6) / z, rel=1e-5)
    r = MCTS(ev, num_simulations=1, prior="policy", eps=0.1).search(s)
    assert r.prior[r.moves.index("c3")] == pytest.approx(0.9 + 0.1 / 9, rel=1e-5)


def test_reproducible_with_seed():
    s = mavgame.State("tictactoe")
    a = MCTS("playout", num_simulations=500, batch_size=3, seed=9).search(s)
    b = MCTS("playout", num_simulations=500, batch_size=3, seed=9).search(s)
    assert np.array_equal(a.visits, b.visits)


def test_tree_reuse_keeps_the_subtree():
    s = mavgame.State("tictactoe")
    m = MCTS("playout", num_simulations=400, seed=1)
    r = search_checked(m, s)
    a = r.best_action
    kept = int(r.visits[list(r.actions).index(a)])
    s.push(a)
    m.search(s, 0)  # no new simulations: just the re-rooted tree
    assert m.tree.root_visits == kept
    assert m.tree.stats()["reused_nodes"] > 1
    opp = int(s.legal_actions()[0])
    s.push(opp)
    r2 = search_checked(m, s, 100)
    assert r2.root_visits >= 100
    # an unrelated position starts afresh
    r3 = search_checked(m, mavgame.State("tictactoe", "x../.../... o"), 10)
    assert r3.root_visits == 10


# ---- state tracking ---------------------------------------------------------------------------

def test_state_tracking_with_an_exact_model_finds_the_win():
    s = mavgame.State("tictactoe", "x.o/.o./x.. x")
    m = MCTS(StateOracle("tictactoe", ttt_values), num_simulations=200, batch_size=2, state_tracking=True,
             seed=1)
    r = search_checked(m, s)
    assert r.best_move == "a2"
    assert r.pv[0] == "a2"
    assert m.tree.state_tracking


def test_state_tracking_mav_text_model():
    s = mavgame.State("tictactoe", "x.o/.o./x.. x")

    def model(reqs):
        out = []
        for r in reqs:
            assert r.prompt.startswith("<mav game=tictactoe>")
            if r.parent_text is None:  # the root: state form, the state is an input
                st = mavgame.State("tictactoe", r.text)
                head = ""
            else:  # transition form: the model writes the new state first
                assert "[%prev_action " + r.move + "]" in r.prompt
                st = mavgame.State("tictactoe", r.parent_text)
                st.push(r.move)
                head = _state_line(st)
            if st.result() != "*":
                tail = f'[%top_all invalid : "{st.result()}"]\n[%best_action invalid]\n'
            else:
                vals = ttt_values(st)
                tail = "[%top_all " + " ".join(f"{mv}:<ctrl{min(63, int(v * 64))}>" for mv, v in vals.items())
                tail += f"]\n[%best_action {max(vals, key=vals.get)}]\n"
            out.append(head + tail)
        return out

    m = MCTS(model, num_simulations=150, state_tracking=True, seed=2)
    r = search_checked(m, s)
    assert r.best_move == "a2"
    assert r.stats["invalid"] == 0


def _state_line(st):
    """The MAV [%state ...] line of a tic-tac-toe state: side to move, then cells a1..c3."""
    rows = st.text().split()[0].split("/")  # rank 3 first
    cells = "".join(rows[2 - r][c] for r in range(3) for c in range(3))
    return f"[%state {st.text().split()[1]} {cells}]\n"


def test_state_tracking_root_keeps_the_real_text_and_play_keeps_the_subtree():
    s = mavgame.State("tictactoe", "x.o/.o./x.. x")
    oracle = StateOracle("tictactoe", ttt_values)
    parents = set()

    def model(reqs):
        out = oracle(reqs)
        for r, o in zip(reqs, out):
            if r.parent_text is None:
                o["state"] = "ooo/.../... x"  # a well-formed but wrong state for the root
            elif r.depth == 1:
                parents.add(r.parent_text)
        return out

    m = MCTS(model, num_simulations=200, state_tracking=True, seed=1)
    r = search_checked(m, s)
    assert parents == {s.text()} and m.tree.root_text == s.text()
    assert r.best_move == "a2"
    # play() re-roots; a search from the same position continues with that subtree
    mv = max((x for x in r.moves if x != "a2"), key=lambda x: r.visits[r.moves.index(x)])
    s2 = mavgame.State("tictactoe", "x.o/.o./x.. x")
    s2.push(mv)  # not the winning move, so the game goes on
    kept = int(r.visits[r.moves.index(mv)])
    m.play(mv)
    assert m.tree.root_visits == kept and kept > 0
    r2 = search_checked(m, s2, 20)
    assert r2.root_visits == kept + 20


def test_state_line_helper_matches_the_prompt_writer():
    st = mavgame.State("tictactoe", "xx./oo./... x")
    got = {}

    def ev(reqs):
        got["p"] = reqs[0].prompt
        return [0.5]

    MCTS(ev, num_simulations=1).search(st)
    assert got["p"].split("\n", 1)[1] == _state_line(st)


@pytest.mark.parametrize("seed", range(6))
def test_state_tracking_survives_garbage(seed):
    rng = random.Random(seed)
    s = mavgame.State("tictactoe")
    oracle = StateOracle("tictactoe", ttt_values)

    def model(reqs):
        good = oracle(reqs)
        out = []
        for r, g in zip(reqs, good):
            c = rng.random()
            if c < 0.08:
                out.append("".join(chr(rng.randrange(0, 0x250)) for _ in range(rng.randrange(0, 80))))
            elif c < 0.14:
                out.append({"state": "xxx/ooo/xxx x", "values": {"a1": 0.5}})   # wrong state, illegal move
            elif c < 0.2:
                out.append({"state": "x" * 5000, "values": {"a1": 0.5}})        # too long
            elif c < 0.26:
                out.append({"state": "...", "moves": ["a1", "a1", "q" * 40], "values": [0.1, 0.2, 0.3]})
            elif c < 0.3:
                out.append({"state": "x\x00y", "values": {"b2": 0.5}})
            elif c < 0.34:
                out.append({"state": ".../.../... x", "values": {"a1": 0.7}})     # a wrong state
            elif c < 0.38:
                out.append({"state": ".../.../... x", "result": "2-0"})
            elif c < 0.42:
                out.append(None)
            elif c < 0.46:
                out.append("[%top_all a1:<ctrl99>]")
            elif c < 0.5 and isinstance(g, dict) and "values" in g:
                bad = dict(g["values"])
                bad["z9"] = 0.99                                                     # a hallucinated move
                out.append({**g, "values": bad})
            else:
                out.append(g)
        return out

    m = MCTS(model, num_simulations=scaled(300), batch_size=1 + seed % 4, state_tracking=True, seed=seed,
             virtual_count=["dynamic", "static", "none"][seed % 3])
    try:
        r = search_checked(m, s)
    except SearchError as e:   # garbage for the root: never a result without a move
        assert e.stats["invalid"] > 0 and "found no move" in str(e)
        best = None
    else:
        assert r.stats["invalid"] > 0
        # the hallucinated move may be in the tree, but it is never preferred over what the model values
        assert isinstance(r.best_move, str)
        best = r.best_move
    s.push(best or "b2")
    try:
        search_checked(m, s, 50)
    except SearchError as e:
        assert e.stats["invalid"] > 0


# ---- Connect Four ------------------------------------------------------------------------------

@pytest.mark.skipif(not HAS_C4, reason="connect_four not built")
def test_playout_connect_four_immediate_win_and_block():
    s = mavgame.State("connect_four", "445566")
    r = search_checked(MCTS("playout", num_simulations=2000, c_puct=2.0, seed=1), s)
    assert r.best_move in ("3", "7")
    # o to move must block: x has 4 5 6 on the bottom row, o already holds 7, so only 3 saves o
    s = mavgame.State("connect_four", "47516")
    assert s.to_move == 1
    r = search_checked(MCTS("playout", num_simulations=3000, c_puct=2.0, seed=2), s)
    assert r.best_move == "3"


@pytest.mark.skipif(not hasattr(_core, "mcts_c4_solver_evaluator"), reason="Connect Four solver evaluator not built")
@pytest.mark.parametrize("batch", [1, 4])
def test_c4_oracle_plays_solver_optimal_moves(batch):
    solver = _core.C4Solver(20)
    rng = random.Random(3 + batch)
    played = 0
    while played < scaled(8):
        s = mavgame.State("connect_four")
        for _ in range(rng.randrange(14, 26)):  # mid-game: each solve is fast
            s.push(int(rng.choice(list(s.legal_actions()))))
            if s.is_terminal():
                break
        if s.is_terminal():
            continue
        played += 1
        r = search_checked(MCTS("c4_solver", num_simulations=100, batch_size=batch, seed=1), s)
        scores = solver.solve(s)[1]
        legal = [int(a) for a in s.legal_actions()]
        best = max(scores[a] for a in legal)
        assert scores[r.best_action] == best, (s.text(), r.best_move, scores)
        # the oracle's values order the moves like the solver's scores
        for a, v in zip(r.actions, r.values):
            assert (v > 0.5) == (scores[a] > 0) and (v < 0.5) == (scores[a] < 0)


# ---- chess with Stockfish --------------------------------------------------------------------

@pytest.mark.skipif("chess" not in _core.games(), reason="chess not built")
def test_stockfish_evaluator_finds_mate_in_one():
    from mavgame.engines import uci
    from mavgame.search.evaluators import UCIEvaluator

    if uci.find_stockfish() is None:
        pytest.skip("stockfish not installed")
    s = mavgame.State("chess", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    with UCIEvaluator(nodes=500) as ev:
        r = search_checked(MCTS(ev, num_simulations=20, seed=1), s)
        assert r.best_move == "d1d8"
        r = search_checked(MCTS(ev, num_simulations=20, state_tracking=True, seed=1), s)
        assert r.best_move == "d1d8"


@pytest.mark.skipif("chess" not in _core.games(), reason="chess not built")
def test_stockfish_evaluator_values_every_legal_move():
    from mavgame.engines import uci
    from mavgame.search.evaluators import UCIEvaluator

    if uci.find_stockfish() is None:
        pytest.skip("stockfish not installed")
    rng = random.Random(3)
    # a small node limit: one MultiPV search stops before it has a line for every move
    with UCIEvaluator(nodes=100) as ev:
        s = mavgame.State("chess")
        for ply in range(40):
            if ply % 8 == 7:
                vals = ev.values(s)
                assert set(vals) == set(s.legal_moves), ply
                assert all(0.0 <= v <= 1.0 for v in vals.values())
            s.push(rng.choice(list(s.legal_moves)))
        # finished games after a move: mate 1, stalemate 0.5
        s = mavgame.State("chess", "7k/8/6Q1/8/8/8/8/K5R1 w - - 0 1")
        vals = ev.values(s)
        assert set(vals) == set(s.legal_moves)
        assert vals["g1h1"] == 1.0 or vals["g6g7"] == 1.0
        r = search_checked(MCTS(ev, num_simulations=30, seed=1), s)
        assert np.all(~np.isnan(r.values))  # the search got a value for every root move


# ---- evaluator output no evaluator could mean: an error naming the request and the value (issue 21) ------

BAD_OUTPUTS = [
    (1.5, r"value 1\.5 is outside \[0, 1\].*value_range=\(-1, 1\)"),
    (-0.25, r"value -0\.25 is outside"),
    (float("nan"), r"value nan is NaN"),
    ({"values": {"a1": float("nan")}}, r"values\['a1'\] nan is NaN"),
    ({"values": {"a1": 2.0}}, r"values\['a1'\] 2\.0 is outside"),
    ({"value": "high"}, r"'value' 'high' is not a number"),
    ({"values": {"e2e4": 0.5}}, r"names 'e2e4', which is not a legal move"),
    ({"values": {99: 0.5}}, r"names 99, which is not a legal move"),
    ({"values": [0.5, 0.5]}, r"'values' has 2 entries for 9 legal moves"),
    ({"policy": {"a1": -1.0}}, r"policy\['a1'\] -1\.0 is not a finite weight"),
    ([0.5, 0.5], r"list \[0\.5, 0\.5\] is not an output"),
    (True, r"value True is not a number"),
]


@pytest.mark.parametrize("out,msg", BAD_OUTPUTS, ids=[repr(o)[:30] for o, _ in BAD_OUTPUTS])
def test_meaningless_evaluator_output_is_refused(out, msg):
    s = mavgame.State("tictactoe")
    with pytest.raises(EvaluatorError, match=msg) as e:
        MCTS(lambda reqs: [out] * len(reqs), num_simulations=8).search(s)
    assert "Request(index=0, depth=0, .../.../... x)" in str(e.value)   # names the request
    assert isinstance(e.value, ValueError)


def test_value_range_minus_one_one_is_opt_in():
    """OpenSpiel's [-1, 1] values through value_range=(-1, 1): the same search as the [0, 1] values."""
    s = mavgame.State("tictactoe", "xx./oo./... x")

    def ev01(reqs):
        return [{"values": ttt_values(r.state)} for r in reqs]

    def ev11(reqs):
        return [{"values": {m: 2 * v - 1 for m, v in ttt_values(r.state).items()}} for r in reqs]

    a = MCTS(ev01, num_simulations=200, seed=3).search(s)
    b = MCTS(ev11, num_simulations=200, seed=3, value_range=(-1, 1)).search(s)
    assert a.best_move == b.best_move == "c3"
    assert np.array_equal(a.visits, b.visits) and np.allclose(a.values, b.values, atol=1e-6)
    with pytest.raises(EvaluatorError, match="outside"):
        MCTS(ev11, num_simulations=200, seed=3).search(s)
    with pytest.raises(ValueError, match="value_range"):
        MCTS(ev01, value_range=(1, -1))


def test_zero_dimensional_arrays_and_tensors_are_numbers():
    s = mavgame.State("tictactoe", "xx./oo./... x")
    outs = [np.float32(0.5), np.array(0.5)]
    try:
        import torch
        outs.append(torch.tensor(0.5))
    except ImportError:
        pass
    for o in outs:
        r = MCTS(lambda reqs: [o] * len(reqs), num_simulations=20).search(s)
        assert r.best_move is not None and r.stats["invalid"] == 0, type(o)


def test_a_search_without_a_move_raises():
    s = mavgame.State("tictactoe")
    with pytest.raises(SearchError, match=r"from '\.\.\./\.\.\./\.\.\. x' found no move.*4 dropped") as e:
        MCTS(lambda reqs: [None] * len(reqs), num_simulations=4).search(s)
    assert e.value.stats["dropped"] == 4
    from mavgame.agents import AgentError
    from mavgame.agents.mcts import MCTSAgent
    with pytest.raises(AgentError, match="found no move"):
        MCTSAgent(lambda reqs: ["junk"] * len(reqs), 4).act(s)
    # zero simulations asked of one search (it re-roots the tree): no move, and no error
    assert MCTS("playout", num_simulations=1).search(s, 0).best_move is None


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc/self/status")
def test_huge_batch_size_allocates_for_the_simulations_only():
    # batch buffers are sized by min(batch_size, num_simulations): a batch size of 65536 for a
    # 100-simulation search used to take about 800 MB
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        import mavgame
        m = mavgame.MCTS("playout", num_simulations=100, batch_size=int(sys.argv[1]))
        assert m.best_move(mavgame.ConnectFour.from_moves("4455")) is not None
        peak = [int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmPeak")][0]
        print(peak // 1024)
        """)
    peak = {b: int(subprocess.run([sys.executable, "-c", code, str(b)], capture_output=True, text=True,
                                  check=True).stdout) for b in (1, 65536)}
    assert peak[65536] - peak[1] < 64, peak  # MB
    # the same batch size with more simulations still works, growing the buffers as needed
    m = MCTS("playout", num_simulations=300, batch_size=65536)
    assert m.best_move(mavgame.ConnectFour.from_moves("4455")) is not None


def test_signature_defaults_are_the_cores():
    import inspect
    d = _core.mcts_defaults()
    sig = inspect.signature(MCTS).parameters
    names = {"virtual_count": "dynamic", "prior": "mav", "invalid": "exclude"}   # the paper's minus infinity
    assert all(sig[k].default == names.get(k, v) for k, v in d.items())
    assert (d["c_base"], d["c_init"], d["k"], d["n_max"], d["n_min"], d["virtual_count"], d["prior"], d["invalid"]) == \
           (19652.0, 1.25, 5, 8, 2, 0, 0, 1)
    with pytest.raises(ValueError, match="k 0 must be >= 1"):      # the core validates, naming the value
        MCTS(k=0)


def test_playout_evaluator_generic_playout():
    """specialised=False runs the generic move-by-move playout (what bench/mcts.py compares with OpenSpiel):
    a valid search, reproducible for a seed, and for Connect Four (which has a specialised playout) a different
    random stream than the default."""
    game = "connect_four" if HAS_C4 else "tictactoe"

    def visits(**kw):
        tree = _core.MCTSTree(game)
        tree.set_root(mavgame.State(game))
        tree.search(_core.mcts_playout_evaluator(1, 0, 7, **kw), 300)
        tree.check()
        return tree.root_edges()[1].tolist()

    generic = visits(specialised=False)
    assert sum(generic) >= 290 and generic == visits(specialised=False)
    if HAS_C4:
        assert generic != visits(specialised=True)
    with pytest.raises(TypeError):
        _core.mcts_playout_evaluator(1, 0, 7, specialised="x", bogus=1)
