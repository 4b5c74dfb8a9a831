"""Connect Four: the Python class, its rules against a plain-Python reference, and the perfect
solver against brute-force minimax (no pruning, no table) and for self-consistency."""
import dataclasses
import math
import pickle
import random
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import scaled
from mavgame import _core
from mavgame.games import c4_book
from mavgame.games.connect_four import START_TEXT, ConnectFour, moves_to_end, solver


# ---- reference rules in plain Python -------------------------------------------------------

class Ref:
    """Columns as lists of 1 (first player) / 2 (second player), bottom first."""

    def __init__(self, moves=""):
        self.cols = [[] for _ in range(7)]
        self.n = 0
        self.won = False
        for m in moves:
            self.play(int(m) - 1)

    def four_at(self, c, r):
        who = self.cols[c][r]

        def at(cc, rr):
            return 0 <= cc < 7 and 0 <= rr < len(self.cols[cc]) and self.cols[cc][rr] == who

        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            k = 1
            for s in (1, -1):
                cc, rr = c + s * dc, r + s * dr
                while at(cc, rr):
                    k += 1
                    cc, rr = cc + s * dc, rr + s * dr
            if k >= 4:
                return True
        return False

    def play(self, c):
        self.cols[c].append(1 + self.n % 2)
        self.n += 1
        self.won = self.four_at(c, len(self.cols[c]) - 1)

    def undo(self, c, won_before):
        self.cols[c].pop()
        self.n -= 1
        self.won = won_before

    def legal(self):
        return [] if self.won else [c for c in range(7) if len(self.cols[c]) < 6]

    def text(self):
        rows = []
        for r in range(5, -1, -1):
            rows.append("".join(".xo"[self.cols[c][r]] if r < len(self.cols[c]) else "." for c in range(7)))
        return "/".join(rows) + (" o" if self.n % 2 else " x")

    def minimax(self):
        """Exact score for the side to move: a win on the move bringing the board to n stones scores
        (44 - n) // 2, a full board 0.  Plain minimax."""
        best = -100
        for c in range(7):
            if len(self.cols[c]) == 6:
                continue
            w = self.won
            self.play(c)
            if self.won:
                v = (44 - self.n) // 2
            elif self.n == 42:
                v = 0
            else:
                v = -self.minimax()
            self.undo(c, w)
            best = max(best, v)
        return best


def random_position(rng, stones):
    """A random game stopped after `stones` stones, avoiding moves that win; None if stuck."""
    ref = Ref()
    moves = ""
    for _ in range(stones):
        cand = []
        for c in ref.legal():
            ref.play(c)
            if not ref.won:
                cand.append(c)
            ref.undo(c, False)
        if not cand:
            return None
        c = rng.choice(cand)
        ref.play(c)
        moves += str(c + 1)
    return moves, ref


# ---- the class -------------------------------------------------------------------------------

def test_start_and_text():
    b = ConnectFour()
    assert b.text() == START_TEXT
    assert list(b.legal_moves) == ["1", "2", "3", "4", "5", "6", "7"]
    assert list(b.legal_actions()) == list(range(7))
    assert b.turn and b.to_move == 0 and not b.is_terminal() and b.outcome() is None
    assert b.game == "connect_four"
    assert repr(b) == f"ConnectFour({START_TEXT!r})"
    assert str(b).splitlines()[-1] == "1 2 3 4 5 6 7"


def test_from_moves_forms_agree():
    a = ConnectFour.from_moves("4453")
    b = ConnectFour(moves="4453")
    c = ConnectFour("4453")
    d = ConnectFour()
    for m in "4453":
        d.push(m)
    assert a.text() == b.text() == c.text() == d.text() == "......./......./......./......./...o.../..oxx.. x"
    assert a == b == c == d and a.hash == d.hash
    assert ConnectFour(a.text()) == a
    assert ConnectFour.from_moves("").text() == START_TEXT
    # a transposition: same position, same hash
    assert ConnectFour("4354").hash == a.hash and ConnectFour("4354") == a
    assert ConnectFour("4435").hash != a.hash
    with pytest.raises(ValueError):
        ConnectFour("4453", moves="4453")


def test_push_pop_and_errors():
    b = ConnectFour()
    assert b.push("4") == 3 and b.push(3) == 3
    assert b.move_stack == ["4", "4"] and b.peek() == "4"
    assert b.cell(3, 0) == "x" and b.cell(3, 1) == "o" and b.cell(3, 2) is None
    assert b.heights() == [0, 0, 0, 2, 0, 0, 0] and b.stones == 2
    before = b.text()
    for bad in ["8", "0", "44", "", "x", 7, -1, 100]:
        with pytest.raises(ValueError) as e:
            b.push(bad)
        assert str(bad) in str(e.value)
        assert b.text() == before
    for m in "4444":
        b.push(m)
    with pytest.raises(ValueError, match="full"):
        b.push("4")
    assert b.pop() == 3 and b.heights()[3] == 5
    with pytest.raises(ValueError, match="bad character '9'"):
        ConnectFour.from_moves("4459")
    with pytest.raises(ValueError, match="full column"):
        ConnectFour.from_moves("4444444")
    with pytest.raises(ValueError, match="after the game was won"):
        ConnectFour.from_moves("11223344")


@pytest.mark.parametrize("text, message", [
    ("......./......./......./......./......./...x... x", "side to move"),
    ("......./......./......./......./......./...xx.. o", "impossible counts"),
    ("......./......./......./......./...x.../....... o", "floating stone in column 4"),
    ("......./......./......./......./......./...q... o", "bad character 'q'"),
    ("......./......./......./......./......../....... x", "row 5 .from the top. has more than 7"),
    ("......./......./......./......./....../....... x", "row 5 .from the top. has 6 cells"),
    ("......./......./......./......./......./....... y", "side to move"),
    ("......./......./......./......./xxx..../oooo.xx o", "already has four"),
    ("......./......./x.....x/xoo...x/xoo...x/xoo.o.x o", "no single last move"),
])
def test_bad_text(text, message):
    with pytest.raises(ValueError, match=message):
        ConnectFour(text)


def test_finished_game():
    b = ConnectFour("1122334")
    o = b.outcome()
    assert o.termination == "connected" and o.winner is True and o.result() == "1-0"
    assert b.is_terminal() and b.is_game_over() and list(b.legal_moves) == [] and b.result() == "1-0"
    with pytest.raises(ValueError, match="game is over"):
        b.push("5")
    # a drawn full board
    rng = random.Random(5)
    for _ in range(200):
        g = ConnectFour()
        while not g.is_terminal():
            g.push(rng.choice(list(g.legal_moves)))
        if g.outcome().winner is None:
            assert g.outcome().termination == "board_full" and g.stones == 42 and g.result() == "1/2-1/2"
            break


def test_random_games_against_reference():
    rng = random.Random(7)
    for _ in range(scaled(150)):
        g, ref = ConnectFour(), Ref()
        while True:
            assert g.text() == ref.text()
            assert [int(a) for a in g.legal_actions()] == ref.legal()
            if not ref.legal():
                break
            c = rng.choice(ref.legal())
            g.push(str(c + 1))
            ref.play(c)
        o = g.outcome()
        if ref.won:
            assert o.winner == (ref.n % 2 == 1)
        else:
            assert o.winner is None and ref.n == 42
        assert ConnectFour(g.text()) == g


def test_perft():
    b = ConnectFour()
    assert [b.perft(d) for d in range(1, 7)] == [7 ** d for d in range(1, 7)]
    assert b.perft(7) == 7 ** 7 - 7      # the 7 one-column sequences have a full column at ply 7
    actions, counts = b.perft_divide(5)
    assert int(sum(counts)) == b.perft(5)


def test_copy_pickle_svg():
    b = ConnectFour.from_moves("44536")
    b.push("2")
    c = pickle.loads(pickle.dumps(b))
    assert type(c) is ConnectFour and c == b and c.move_stack == ["4", "4", "5", "3", "6", "2"]   # from_moves plays them
    d = b.copy()
    d.push("1")
    assert d != b and b.stones == 6
    svg = ConnectFour("1122334")._repr_svg_()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(f"{ns}circle")
    cells = [c for c in circles if "cell" in c.get("class", "")]
    assert len(cells) == 42
    assert sum("x" in c.get("class") for c in cells) == 4 and sum(" o" in c.get("class") for c in cells) == 3
    assert len([c for c in circles if c.get("class") == "win"]) == 4
    assert len([c for c in circles if c.get("class") == "last"]) == 0     # built from text: no history


# ---- solver ----------------------------------------------------------------------------------

def test_solver_against_brute_force():
    rng = random.Random(11)
    checked = 0
    sv = solver(16)
    for _ in range(scaled(60)):
        got = random_position(rng, 42 - rng.randint(3, 8))
        if got is None:
            continue
        moves, ref = got
        exact = ref.minimax()
        r = ConnectFour.from_moves(moves).solve(solver=sv)
        assert r.complete and r.score == exact, moves
        for c in range(7):
            if len(ref.cols[c]) == 6:
                assert str(c + 1) not in r.move_scores
                continue
            ref.play(c)
            v = (44 - ref.n) // 2 if ref.won else 0 if ref.n == 42 else -ref.minimax()
            ref.undo(c, False)
            assert r.move_scores[str(c + 1)] == v, (moves, c + 1)
        checked += 1
    assert checked >= scaled(60) // 2


def test_solver_consistency():
    rng = random.Random(3)
    a, b = solver(18), solver(18)
    for _ in range(scaled(20)):
        got = random_position(rng, rng.randint(18, 30))
        if got is None:
            continue
        moves, _ = got
        pos = ConnectFour.from_moves(moves)
        r = pos.solve(solver=a)
        assert r.complete and r.score == max(r.move_scores.values())
        for m, v in r.move_scores.items():
            child = pos.copy()
            child.push(m)
            if child.is_terminal():
                assert v == (44 - child.stones) // 2
            else:
                cr = child.solve(solver=b, moves=False)
                assert v == -cr.score
        assert pos.solve(solver=b, weak=True).score == (r.score > 0) - (r.score < 0)
        assert 1 <= moves_to_end(pos.stones, r.score) <= 42 - pos.stones


def test_solver_api_and_budget():
    r = ConnectFour("112233").solve(moves=False)
    assert r.score == 18 and r.move_scores == {} and r.outcome() == "win" and r.complete
    score, arr, nodes, complete = _core.c4_solve(ConnectFour("112233"), moves=False)
    assert score == 18 and isinstance(arr, np.ndarray) and arr.shape == (7,) and complete
    assert np.isnan(arr).all()
    full = ConnectFour("444444333333555555")     # three full columns, 18 stones
    s, arr, _, complete = _core.c4_solve(full)
    assert complete and [math.isnan(v) for v in arr] == [False, False, True, True, True, False, False]
    assert s == max(arr[~np.isnan(arr)])
    r = full.solve()
    assert r.best_moves() == [str(c + 1) for c in range(7) if arr[c] == s]
    # budgets: a hard early position stops with complete False (a solver without the opening book: with
    # the shipped one, every position of up to 7 stones is answered at once)
    bare = _core.C4Solver(20)
    r = ConnectFour("44").solve(max_nodes=20000, solver=bare)
    assert not r.complete and r.score is None and 20000 <= r.nodes < 20100 and r.outcome() is None
    r = ConnectFour("4").solve(max_seconds=0.05, solver=bare)
    assert not r.complete
    if c4_book.SHIPPED.exists():
        r = ConnectFour("44").solve(max_nodes=20000)
        assert r.complete and r.nodes < 100 and r.score == max(r.move_scores.values()) and len(r.move_scores) == 7
    # terminal positions
    assert ConnectFour("1122334").solve().score == -((44 - 7) // 2)
    with pytest.raises(TypeError, match="connect_four"):
        _core.c4_solve(_core.State("tictactoe"))
    with pytest.raises(TypeError):
        _core.c4_solve(ConnectFour(), solver=42)
    with pytest.raises(ValueError, match="max_seconds"):
        _core.c4_solve(ConnectFour(), max_seconds=-1.0)
    with pytest.raises(ValueError, match="2\\^5"):
        _core.C4Solver(5)
    sv = _core.C4Solver(12)
    assert sv.tt_bytes == 8 << 12
    sv.clear()


def test_solver_threads():
    """Solves run without the GIL; two threads on two solvers get the same answers as one."""
    rng = random.Random(21)
    positions = []
    while len(positions) < 4:
        got = random_position(rng, 16)
        if got is not None:
            positions.append(got[0])
    expect = [ConnectFour(p).solve(solver=solver(18)).score for p in positions]
    out = {}

    def work(i, sv):
        out[i] = ConnectFour(positions[i]).solve(solver=sv).score

    svs = [solver(18), solver(18)]
    threads = [threading.Thread(target=work, args=(i, svs[i % 2])) for i in range(len(positions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [out[i] for i in range(len(positions))] == expect


def test_random_playouts():
    n = 2000
    w0, w1, d, plies = _core.random_playouts(ConnectFour(), n, seed=1)
    assert w0 + w1 + d == n and w0 > w1 > 0
    assert 7 * n <= plies <= 42 * n
    assert _core.random_playouts(ConnectFour(), n, seed=1) == (w0, w1, d, plies)
    # the specialised bitboard playout: same outcome distribution (within 6 standard errors)
    m = 20000
    s0, s1, sd, splies = _core.random_playouts(ConnectFour(), m, seed=2, specialised=True)
    t0, t1, td, tplies = _core.random_playouts(ConnectFour(), m, seed=3)
    assert s0 + s1 + sd == m and t0 + t1 + td == m
    for a, b in ((s0, t0), (s1, t1)):
        p = (a + b) / (2 * m)
        assert abs(a - b) / m <= 6 * math.sqrt(2 * p * (1 - p) / m)
    assert abs(splies - tplies) / m < 0.5
    # from a won position every playout is that win, with no moves
    assert _core.random_playouts(ConnectFour("1122334"), 10) == (10, 0, 0, 0)


@pytest.mark.slow
def test_empty_board_centre_only_win():
    """The empty board is a first-player win and only the centre column wins (weak solve)."""
    r = ConnectFour().solve(weak=True, solver=solver(24))
    assert r.complete and r.score == 1
    assert r.best_moves() == ["4"]
    assert all(v <= 0 for m, v in r.move_scores.items() if m != "4")


def test_rules_against_openspiel():
    """Random games checked move by move against OpenSpiel's connect_four (same column actions)."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("connect_four")
    rng = random.Random(17)
    for _ in range(scaled(100)):
        ours, theirs = ConnectFour(), game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_terminal()
            assert [int(a) for a in ours.legal_actions()] == list(theirs.legal_actions())
            a = rng.choice(theirs.legal_actions())
            ours.push(a)
            theirs.apply_action(a)
        assert ours.is_terminal()
        r = theirs.returns()
        o = ours.outcome()
        assert o.winner == (True if r[0] > 0 else False if r[0] < 0 else None)


def test_central_best_tie_break():
    from mavgame.games.connect_four import central_best
    assert central_best({}) is None
    assert central_best({"1": 0, "7": 0}) == "1"                 # equal distance: the left one
    assert central_best({"3": 2, "5": 2, "4": -1}) == "3"
    assert central_best({"2": 1, "6": 1, "4": 1}) == "4"
    assert central_best({"7": 5, "4": 4}) == "7"                 # the score comes first


def test_perfect_agent_center_tie_break_and_annotator_agree():
    from mavgame.agents.basic import PerfectConnectFourAgent
    from mavgame.annotators.connect_four import connect_four_annotator
    ann = connect_four_annotator({"tt_log2": 16})
    agent = PerfectConnectFourAgent(tiebreak="center", tt_log2=16)
    s = ConnectFour()
    for m in "1417445771643672":  # the best moves of this position tie ("3" and "7"), solved in ms
        s.push(m)
    vals, best = ann(s)
    assert agent.act(s) == s.action_from_str(best)
    res = s.solve()
    top = max(res.move_scores.values())
    tied = [m for m, v in res.move_scores.items() if v == top]
    assert len(tied) > 1
    assert best == min(tied, key=lambda m: (abs(int(m) - 4), int(m)))   # independent rule: nearest centre, then left


def test_solve_result_fast_path_matches_c4_solve():
    """ConnectFour.solve builds its SolveResult in C (c4_solve_result): same fields as c4_solve's tuple, a
    real frozen SolveResult, budgets and argument conversions as before."""
    from mavgame.games.connect_four import SolveResult, central_best
    sv = _core.C4Solver(18)
    for moves in ("", "4453", "421457211673614572573664466354", "112233"):
        b = ConnectFour.from_moves(moves)
        for weak in (False, True):
            for with_moves in (True, False):
                budget = 0 if len(moves) > 20 else 50_000
                sv.clear()  # the same table state for both calls: a budgeted solve depends on it
                r = b.solve(max_nodes=budget, weak=weak, moves=with_moves, solver=sv)
                sv.clear()
                score, arr, nodes, complete = _core.c4_solve(b, max_nodes=budget, weak=weak,
                                                             moves=with_moves, solver=sv)
                assert type(r) is SolveResult
                assert (r.score, r.nodes, r.complete) == (score, nodes, complete)
                assert r.move_scores == {str(c + 1): int(v) for c, v in enumerate(arr) if not math.isnan(v)}
                assert r == SolveResult(r.score, dict(r.move_scores), r.nodes, r.complete, r.best)
                assert r.best == (central_best(r.move_scores) if with_moves and r.complete and r.move_scores else None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.score = 1
    r = ConnectFour.from_moves("44").solve(max_nodes=100.0, solver=sv)   # int(max_nodes) as before
    assert r.complete is False and r.score is None and r.nodes >= 100
    with pytest.raises(ValueError, match="max_nodes"):
        ConnectFour().solve(max_nodes=-1, solver=sv)
    with pytest.raises(TypeError, match="C4Solver"):
        ConnectFour().solve(solver="sv")
    with pytest.raises(TypeError, match="8 positional"):
        _core.c4_solve_result(SolveResult, ConnectFour())
