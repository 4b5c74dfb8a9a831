"""The cheap paths of tiny calls (issue 52, experiments/2026-12-02-call-overhead): the move string cache of
State.legal_moves / action_to_str, the cached Move objects of the chess family, the vectorcall argument parsing
of MCTSTree's hot methods, the Connect Four SolveResult built in C, MCTSTree.stats() from a dict template and the
MCTS wrapper's result.  Each test checks the cheap path against an independent computation of the same thing."""
import dataclasses
import math
import random

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.games.chess import Move, _GardnerMove
from mavgame.search.mcts import MCTS
from mavgame.search.results import SearchResult

_move_strings = _core.State.legal_moves.__get__


def _random_positions(make, n, plies, seed):
    """Every position of `n` random games of at most `plies` plies."""
    rng = random.Random(seed)
    for _ in range(n):
        s = make()
        yield s
        for _ in range(plies):
            acts = s.legal_actions()
            if len(acts) == 0 or s.is_terminal():
                break
            s.push(int(rng.choice(list(acts))))
            yield s


GAMES = {
    "chess": mavgame.Chess,
    "chess960": lambda: mavgame.Chess960(217),
    "gardner": mavgame.Gardner,
    "connect_four": mavgame.ConnectFour,
    "tictactoe": mavgame.TicTacToe,
    "hex5": lambda: mavgame.Hex(5),
    "hex11": lambda: mavgame.Hex(11),
    "hex5swap": lambda: mavgame.Hex(5, swap=True),
}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_legal_moves_are_the_cached_strs_of_action_to_str(name):
    """State.legal_moves: plain strs, equal to the text of each legal action written in the position, the same
    objects on every call (the cache), in every position of random games."""
    seen = 0
    for s in _random_positions(GAMES[name], 6, 40, seed=sum(map(ord, name))):
        first = _move_strings(s)
        again = _move_strings(s)
        acts = [int(a) for a in s.legal_actions()]
        assert [type(m) for m in first] == [str] * len(acts)
        # an independent text for each action: the rules' own move parser must map the text back to the action
        assert [s.parse_move(m) for m in first] == acts
        assert first == again and all(a is b for a, b in zip(first, again))
        assert [s.action_to_str(a) for a in acts] == first
        assert all(s.action_to_str(a) is m for a, m in zip(acts, first))
        seen += len(acts)
    assert seen > 0


def test_hex_sizes_do_not_share_move_strings():
    """The same action id is another cell on another board size: each size has its own cache."""
    small, big = mavgame.Hex(5), mavgame.Hex(11)
    for _ in range(3):   # interleaved, so that a shared cache would hand one size's text to the other
        assert small.action_to_str(11) == "b3" and big.action_to_str(11) == "a2"
        assert _move_strings(small)[11] == "b3" and _move_strings(big)[11] == "a2"


def test_castling_text_depends_on_the_position_not_only_the_action():
    """Standard chess writes the king-takes-rook action e1h1 as 'e1g1' when it castles, while the same action id
    is 'e1h1' for a rook on e1: the cache must give each position its own text, whichever came first."""
    castle = mavgame.Chess("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    rook = mavgame.Chess("k7/8/8/8/8/8/K7/4R3 w - - 0 1")
    a = 4 | 7 << 6   # from e1 to h1
    assert castle.parse_move("e1g1") == a and rook.parse_move("e1h1") == a
    for order in ((castle, rook), (rook, castle), (castle, rook)):
        for b in order:
            want = "e1g1" if b is castle else "e1h1"
            assert b.action_to_str(a) == want
            assert want in _move_strings(b)
            assert b is rook or "e1h1" not in _move_strings(b)   # castling is written e1g1 only
            assert want in [m for m in b.legal_moves]
    # Chess960 writes castling as king-takes-rook
    c960 = mavgame.Chess960(fen="r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert c960.action_to_str(a) == "e1h1" and "e1h1" in _move_strings(c960)


def test_chess_moves_are_cached_move_objects():
    """list(board.legal_moves): Move objects (the Gardner ones with 5 files), the same objects on every call,
    with python-chess's attributes computed from the text."""
    b = mavgame.Chess()
    first, again = list(b.legal_moves), list(b.legal_moves)
    assert [type(m) for m in first] == [Move] * 20
    assert all(x is y for x, y in zip(first, again))
    assert first == _move_strings(b)
    e4 = next(m for m in first if m == "e2e4")
    assert (e4.from_square, e4.to_square, e4.promotion, e4.uci()) == (12, 28, None, "e2e4")
    g = mavgame.Gardner()
    gm = list(g.legal_moves)
    assert gm and all(type(m) is _GardnerMove for m in gm)
    a2a3 = next(m for m in gm if m == "a2a3")
    assert (a2a3.from_square, a2a3.to_square) == (5, 10)   # file + 5 * rank
    # promotions keep their piece
    p = mavgame.Chess("8/4P3/8/8/8/8/k7/4K3 w - - 0 1")
    promos = sorted((m, m.promotion) for m in p.legal_moves if m.startswith("e7"))
    assert promos == [("e7e8b", 3), ("e7e8n", 2), ("e7e8q", 5), ("e7e8r", 4)]
    # pushing a cached Move plays it; the same Move object stays valid
    b.push(e4)
    assert b.move_stack == ["e2e4"] and b.pop() == b.parse_move("e2e4") and e4 == "e2e4"


def test_legal_move_objects_refusals():
    b = mavgame.Chess()
    with pytest.raises(TypeError, match="2 arguments"):
        _core.legal_move_objects(b)
    with pytest.raises(TypeError, match="cache must be a dict"):
        _core.legal_move_objects(b, [])
    with pytest.raises(TypeError, match="game state"):
        _core.legal_move_objects("e2e4", {})
    with pytest.raises(KeyError):   # a plain dict without the text: cache[text] raises
        _core.legal_move_objects(b, {})
    made = _core.legal_move_objects(b, {m: i for i, m in enumerate(_move_strings(b))})
    assert made == list(range(20))


# ---- MCTSTree: METH_FASTCALL | METH_KEYWORDS parsing ------------------------------------------------------------

@pytest.fixture
def tree():
    t = _core.MCTSTree("connect_four")
    t.set_root(mavgame.ConnectFour(), 0)
    return t


EV = _core.mcts_constant_evaluator(0.5)


def test_tree_methods_take_positions_and_keywords(tree):
    assert tree.search(EV, 3) is False and tree.root_visits == 3
    assert tree.search(evaluator=EV, num_simulations=2, spec=None, max_seconds=5) is False
    assert tree.search(EV, num_simulations=1, max_seconds=0.0) is False and tree.root_visits == 6
    tree.set_root(state=mavgame.ConnectFour.from_moves("44"), ply=2)
    assert tree.root_visits == 0
    tree.set_root(mavgame.ConnectFour.from_moves("44"), ply=None)   # None: the state's history length
    tree.search(EV, 20)
    a, e, moves = tree.pv(max_len=1)
    assert len(a) == 1 and moves is None
    assert len(tree.pv(0)[0]) == 0 and len(tree.pv()[0]) >= 1
    st = _core.MCTSTree(state_tracking=True)
    st.set_root_text(text=mavgame.ConnectFour().text(), to_move=0, ply=0)
    assert st.root_to_move == 0


@pytest.mark.parametrize("call, match", [
    (lambda t: t.search(EV, 1, foo=2), r"search\(\) got an unexpected keyword argument 'foo'"),
    (lambda t: t.search(EV, 1, evaluator=EV), r"search\(\) got multiple values for argument 'evaluator'"),
    (lambda t: t.search(EV), r"search\(\) missing required argument 'num_simulations' \(pos 2\)"),
    (lambda t: t.search(num_simulations=1), r"search\(\) missing required argument 'evaluator' \(pos 1\)"),
    (lambda t: t.search(EV, 1, None, 0.0, 5), r"search\(\) takes at most 4 arguments \(5 given\)"),
    (lambda t: t.search(EV, "1"), r"num_simulations must be an integer, not str"),
    (lambda t: t.search(EV, 1.0), r"num_simulations must be an integer, not float"),
    (lambda t: t.search(EV, 1, max_seconds="x"), r"search\(\): max_seconds must be a real number, not str"),
    (lambda t: t.search(EV, 1, max_seconds=None), r"max_seconds must be a real number, not NoneType"),
    (lambda t: t.search(EV, 1, max_seconds=1j), r"max_seconds must be a real number, not complex"),
    (lambda t: t.search(EV, 1, spec=3), r"spec must be a str, not int"),
    (lambda t: t.search("nope", 1), r"evaluator must be an evaluator capsule or a callable, not str"),
    (lambda t: t.set_root(), r"set_root\(\) missing required argument 'state' \(pos 1\)"),
    (lambda t: t.set_root(mavgame.ConnectFour(), 0, 1), r"set_root\(\) takes at most 2 arguments \(3 given\)"),
    (lambda t: t.set_root(mavgame.ConnectFour(), plies=0), r"unexpected keyword argument 'plies'"),
    (lambda t: t.set_root(mavgame.ConnectFour(), "0"), r"ply must be an integer, not str"),
    (lambda t: t.set_root("x"), r"state must be a mavgame game state, not str"),
    (lambda t: t.pv(max_len="2"), r"max_len must be an integer, not str"),
    (lambda t: t.pv(length=2), r"pv\(\) got an unexpected keyword argument 'length'"),
    (lambda t: t.pv(1, 2), r"pv\(\) takes at most 1 argument \(2 given\)"),
    (lambda t: t.set_root_text("x"), r"set_root_text\(\) missing required argument 'to_move' \(pos 2\)"),
    (lambda t: t.set_root_text(text="x", to_move="0"), r"to_move must be an integer, not str"),
])
def test_tree_argument_errors_name_the_argument(tree, call, match):
    with pytest.raises(TypeError, match=match):
        call(tree)
    assert tree.search(EV, 1) is False   # the tree is still usable


def test_tree_argument_values_are_range_checked(tree):
    with pytest.raises(ValueError, match=r"num_simulations must be in \[0, 2147483647\], got -1"):
        tree.search(EV, -1)
    with pytest.raises(OverflowError, match="num_simulations"):
        tree.search(EV, 2**40)
    with pytest.raises(ValueError, match="max_seconds must be finite and >= 0"):
        tree.search(EV, 1, max_seconds=-0.5)
    with pytest.raises(ValueError, match="max_seconds must be finite and >= 0"):
        tree.search(EV, 1, max_seconds=float("nan"))
    with pytest.raises(ValueError, match=r"max_len must be in \[0, 4096\], got 5000"):
        tree.pv(max_len=5000)
    with pytest.raises(ValueError, match=r"ply must be in \[0, 2147483647\], got -1"):
        tree.set_root(mavgame.ConnectFour(), -1)
    # ints of other types go through __index__ (NumPy ints, bools), floats with __float__ for max_seconds
    assert tree.search(EV, np.int64(2), max_seconds=np.float32(2.5)) is False
    tree.set_root(mavgame.ConnectFour(), np.int32(0))
    assert tree.search(EV, True, max_seconds=1) is False and tree.root_visits == 1


def test_stats_dict_is_new_and_complete(tree):
    """MCTSTree.stats() comes from a template dict: every call a new dict, with the keys in their order."""
    tree.search(EV, 5)
    s1, s2 = tree.stats(), tree.stats()
    assert s1 == s2 and s1 is not s2
    assert list(s1) == ["simulations", "evaluations", "completed", "terminal_visits", "dropped", "invalid",
                        "collisions", "batches", "depth_cutoffs", "max_depth", "nodes", "edges", "reused_nodes",
                        "elapsed", "eval_seconds"]
    assert s1["simulations"] == 5 and s1["nodes"] >= 1 and s1["edges"] == 7 * s1["nodes"]
    assert all(type(s1[k]) is int for k in list(s1)[:13]) and type(s1["elapsed"]) is float
    s1["timed_out"] = True   # a caller's change stays in its own dict
    s1["simulations"] = -1
    assert "timed_out" not in tree.stats() and tree.stats()["simulations"] == 5


# ---- Connect Four: the SolveResult built in C -------------------------------------------------------------------

def test_solve_result_repr_and_default_solver():
    from mavgame.games.connect_four import SolveResult
    b = mavgame.ConnectFour.from_moves("4453")
    r = b.solve()   # the module's default solver (the _core attribute)
    assert type(r) is SolveResult and r.complete
    same = SolveResult(r.score, dict(r.move_scores), r.nodes, r.complete, r.best)
    assert repr(r) == repr(same) and r == same and hash(repr(r))
    assert list(vars(r)) == [f.name for f in dataclasses.fields(SolveResult)]
    assert isinstance(vars(mavgame._core)["_c4_default_solver"], _core.C4Solver)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.best = "1"
    r0 = b.solve(moves=False)
    assert r0.move_scores == {} and r0.best is None and r0.score == r.score


# ---- MCTS: the wrapper's result ----------------------------------------------------------------------------------

def test_search_result_fields_follow_the_dataclass_order():
    """_result builds SearchResult positionally: its fields must be in this order."""
    assert [f.name for f in dataclasses.fields(SearchResult)] == [
        "best_move", "best_action", "moves", "actions", "visits", "q", "prior", "values", "hallucinated", "pv",
        "pv_actions", "root_value", "root_visits", "stats", "u"]


@pytest.mark.parametrize("make", [lambda: mavgame.Chess("r3k2r/pppq1ppp/8/8/8/8/PPPQ1PPP/R3K2R w KQkq - 0 1"),
                                  lambda: mavgame.ConnectFour.from_moves("4453")])
def test_search_result_matches_the_tree(make):
    """Every field of MCTS.search's result against the tree read directly, the moves and the principal variation
    written by replaying the actions on a copy (the castling moves in their position's notation)."""
    state = make()
    m = MCTS("playout", num_simulations=200, seed=3)
    r = m.search(state)
    t = m.tree
    actions, visits, q, prior, values, hal = t.root_edges()
    assert np.array_equal(r.actions, actions) and np.array_equal(r.visits, visits)
    assert np.array_equal(r.q, q, equal_nan=True) and np.array_equal(r.prior, prior)
    assert np.array_equal(r.values, values, equal_nan=True) and np.array_equal(r.hallucinated, hal)
    assert r.moves == [state.action_to_str(int(a)) for a in actions]
    assert r.best_action == int(actions[t.best_edge()]) and r.best_move == r.moves[t.best_edge()]
    pv_actions = t.pv()[0]
    assert np.array_equal(r.pv_actions, pv_actions) and len(pv_actions) >= 2
    c = state.copy()
    want = []
    for a in pv_actions:
        want.append(c.action_to_str(int(a)))
        c.push(int(a))
    assert r.pv == want
    assert (r.root_value, r.root_visits) == (t.root_value, t.root_visits) and r.root_visits == 200
    assert np.array_equal(r.u, t.root_u())
    stats = t.stats()
    assert {k: v for k, v in r.stats.items() if k not in ("timed_out",)} == stats and r.stats["timed_out"] is False
    # the same search again gives the same result (the wrapper's fixed cost changed, not the search)
    r2 = MCTS("playout", num_simulations=200, seed=3).search(make())
    assert (r2.moves, r2.pv, r2.best_move) == (r.moves, r.pv, r.best_move)
    assert np.array_equal(r2.visits, r.visits)


def test_tree_reuse_follows_the_game_and_only_it():
    """The cheap order of the reuse test (history prefix, then the start position): a continued game keeps the
    subtree, another game from another start (with a matching history prefix) does not."""
    m = MCTS("playout", num_simulations=100, seed=1)
    g = mavgame.ConnectFour.from_moves("44")
    m.search(g)
    g.push("3")
    r = m.search(g)
    assert r.stats["reused_nodes"] > 0
    other = mavgame.ConnectFour("......./......./......./......./......./x...... o")   # not the empty board
    for col in "443":
        other.push(col)
    assert other.history().tolist() == g.history().tolist()   # the same moves as the searched game
    r = m.search(other)
    assert r.stats["reused_nodes"] == 0 and r.root_visits == 100
    # a fresh game from the same start as `other`, continuing it: reused
    more = other.copy()
    more.push("5")
    assert m.search(more).stats["reused_nodes"] > 0


def test_search_result_scores_are_finite_for_a_proven_root():
    m = MCTS("c4_solver", num_simulations=50, seed=0, reuse_tree=False)
    r = m.search(mavgame.ConnectFour.from_moves("445566"))
    assert r.best_move in ("3", "7") and all(math.isfinite(v) for v in r.q[r.visits > 0])
