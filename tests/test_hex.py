"""Hex: the Python class, its rules against a plain-Python reference and against OpenSpiel, the
text format, and the exact solver against brute-force minimax written here."""
import math
import pickle
import random
import threading
import xml.etree.ElementTree as ET
from functools import lru_cache

import numpy as np
import pytest

from conftest import scaled
from mavgame import _core
from mavgame.games.hex import FLAG_SWAP, Hex

NB = ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0))


# ---- reference rules in plain Python -----------------------------------------------------------

def ref_connected(n, cells, mark):
    """cells: tuple of n*n 'x' / 'o' / '.'; 'x' connects rows 0 and n-1, 'o' columns 0 and n-1."""
    if mark == "x":
        stack = [c for c in range(n) if cells[c] == "x"]
    else:
        stack = [r * n for r in range(n) if cells[r * n] == "o"]
    seen = set(stack)
    while stack:
        a = stack.pop()
        r, c = divmod(a, n)
        if (r if mark == "x" else c) == n - 1:
            return True
        for dr, dc in NB:
            rr, cc = r + dr, c + dc
            b = rr * n + cc
            if 0 <= rr < n and 0 <= cc < n and b not in seen and cells[b] == mark:
                seen.add(b)
                stack.append(b)
    return False


class Ref:
    """Hex in plain Python: cells in action order, side to move, swap state."""

    def __init__(self, n, swap=False):
        self.n, self.swap = n, swap
        self.cells = ["."] * (n * n)
        self.to_move = 0
        self.moves = 0
        self.swapped = False

    def winner(self):
        for mark in "xo":
            if ref_connected(self.n, self.cells, mark):
                return mark
        return None

    def legal(self):
        if self.winner():
            return []
        out = [a for a in range(self.n * self.n) if self.cells[a] == "."]
        if self.swap and self.moves == 1 and not self.swapped:
            out.append(self.n * self.n)
        return out

    def play(self, a):
        n = self.n
        if a == n * n:
            (x,) = [i for i in range(n * n) if self.cells[i] == "x"]
            r, c = divmod(x, n)
            self.cells[x] = "."
            self.cells[c * n + r] = "o"
            self.swapped = True
        else:
            self.cells[a] = "xo"[self.to_move]
        self.to_move ^= 1
        self.moves += 1

    def text(self):
        n = self.n
        rows = ["".join(self.cells[r * n:(r + 1) * n]) for r in range(n)]
        return "/".join(rows) + " " + "xo"[self.to_move]


def cell_name(n, a):
    return "swap" if a == n * n else f"{'abcdefghijklmnopqrs'[a % n]}{a // n + 1}"


# ---- rules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,swap", [(1, False), (2, True), (3, False), (3, True), (5, True), (8, False),
                                    (11, False), (11, True), (19, False)])
def test_random_games_against_reference(n, swap):
    rng = random.Random(n * 7 + swap)
    for _ in range(scaled(40 if n <= 5 else 8)):
        b, ref = Hex(n, swap=swap), Ref(n, swap)
        while True:
            assert b.text() == ref.text()
            legal = ref.legal()
            assert b.legal_actions().tolist() == legal
            assert list(b.legal_moves) == [cell_name(n, a) for a in legal]
            w = ref.winner()
            assert b.is_terminal() == (w is not None)
            o = b.outcome()
            if w is None:
                assert o is None and b.result() == "*"
                assert legal
                break_now = False
            else:
                assert o.termination == "connected" and o.winner == (w == "x")
                assert b.result() == ("1-0" if w == "x" else "0-1")
                assert set(b.winning_path()) and all(b.cells()[a] == w for a in b.winning_path())
                break_now = True
            assert b.turn == (ref.to_move == 0)
            if break_now:
                break
            a = rng.choice(legal)
            if swap and n * n in legal and rng.random() < 0.5:
                a = n * n
            if rng.random() < 0.5:
                assert b.push(cell_name(n, a)) == a
            else:
                assert b.push(a) == a
            ref.play(a)
        # pop back to the start
        hashes = set()
        while b.ply:
            hashes.add(b.hash)
            b.pop()
        assert b == Hex(n, swap=swap)


def test_rules_against_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    rng = random.Random(5)
    for n in (2, 3, 4, 7, 11):
        for swap in (False, True):
            game = pyspiel.load_game("hex", {"board_size": n, "swap": swap})
            for _ in range(scaled(15)):
                st, b = game.new_initial_state(), Hex(n, swap=swap)
                while not st.is_terminal():
                    legal = list(st.legal_actions())
                    assert b.legal_actions().tolist() == legal
                    assert not b.is_terminal()
                    for a in legal:
                        assert b.action_to_str(a) == st.action_to_string(st.current_player(), a)
                    assert b.to_move == st.current_player()
                    # cells: OpenSpiel prints the rows as space-separated 'x' / 'o' / '.'
                    rows = [line.split() for line in str(st).strip("\n").split("\n")]
                    assert ["".join(r) for r in rows] == b.board_rows()
                    a = rng.choice(legal)
                    st.apply_action(a)
                    b.push(a)
                assert b.is_terminal()
                returns = st.returns()
                assert b.outcome().winner == (returns[0] > 0)


def test_names_actions_and_cells():
    b = Hex(4)
    assert b.size == 4 and not b.swap and b.game == "hex" and b.num_actions == 19 * 19 + 1
    assert [b.push(m) for m in ("a1", "b1", "a2", "D4")] == [0, 1, 4, 15]
    assert b.cell("a1") == "x" and b.cell("b1") == "o" and b.cell((1, 0)) == "x" and b.cell(15) == "o"
    assert b.cell("c3") is None
    assert b.cell_index("d4") == 15 and b.cell_name(6) == "c2"
    assert b.move_stack == ["a1", "b1", "a2", "d4"] and b.peek() == "d4"
    for bad in ("e1", "a5", "a0", "a01", "", "b", "1a", "swap", "a1x"):
        with pytest.raises(ValueError):
            b.push(bad)
    with pytest.raises(ValueError, match="occupied"):
        b.push("a1")
    with pytest.raises(ValueError):
        b.push(16)          # swap id without the rule
    with pytest.raises(ValueError):
        b.push(-1)
    with pytest.raises(ValueError):
        b.cell("e1")
    assert b.ply == 4
    assert str(b).splitlines()[0].split() == list("abcd")
    assert str(b).splitlines()[1].split() == ["1", "x", "o", ".", "."]


def test_swap_rule():
    b = Hex(5, swap=True)
    assert b.swap and b.swap_action == 25
    assert 25 not in b.legal_actions()
    b.push("d1")                                  # row 0, column 3
    assert b.legal_actions()[-1] == 25 and list(b.legal_moves)[-1] == "swap"
    assert b.push("swap") == 25
    assert b.text() == "...../...../...../o..../..... x"   # white on row 3, column 0 = a4
    assert b.turn and 25 not in b.legal_actions()
    c = Hex(text=b.text(), swap=True)
    assert c == b and c.hash == b.hash
    with pytest.raises(ValueError, match="swap"):
        Hex(text=b.text())                        # only possible with the rule
    b.pop()
    assert b.text() == "...x./...../...../...../..... o"
    b.push("b2")
    with pytest.raises(ValueError, match="swap"):
        b.push("swap")


def test_text():
    for text in (".../.../... x", "x../.o./... x", "x o", ". x", "xo/.. x", "x.../oo../x.x./...o x"):
        b = Hex(text=text)
        assert b.text() == text and b.size == text.count("/") + 1
        assert eval(repr(b), {"Hex": Hex}) == b
    assert Hex().text() == "/".join(["." * 11] * 11) + " x"
    assert Hex(7).text() == "/".join(["." * 7] * 7) + " x"
    assert Hex(3, text="x../.../... o").size == 3
    bad = [("", "side"), (".../.../...", "side"), (".../.../... y", "side"), ("../.../... x", "row 1"),
           ("..../.../... x", "row 1"), (".../.../..# x", "row 3"), (".../.../... o", "swap"),
           ("xx./.../... o", "counts"), ("xo./xo./xo. x", "impossible"), ("xoox/xoox/xoox/xo.x o", "impossible"),
           ("/".join(["x"] * 20) + " x", "20 rows")]
    for text, msg in bad:
        with pytest.raises(ValueError, match=msg):
            Hex(text=text)
    with pytest.raises(ValueError, match="board size is 4"):
        Hex(4, text=".../.../... x")
    for size in (0, 20, -3):
        with pytest.raises(ValueError, match="out of range"):
            Hex(size)
    with pytest.raises(TypeError):
        Hex("5")
    with pytest.raises(TypeError):
        Hex(text=5)


def test_state_api():
    b = Hex.from_moves("c3 b2 d2", size=5)
    c = b.copy()
    assert c == b and c.hash == b.hash and c.move_stack == ["c3", "b2", "d2"] and isinstance(c, Hex)
    c.push("a1")
    assert c != b and c.hash != b.hash
    p = pickle.loads(pickle.dumps(b))
    assert isinstance(p, Hex) and p == b and p.move_stack == b.move_stack
    # hashes: equal positions by different move orders hash equally, different sizes differ
    d = Hex.from_moves("d2 b2 c3", size=5)
    assert d == b and d.hash == b.hash
    assert Hex(5).hash != Hex(6).hash != Hex(6, swap=True).hash
    assert b.perft(2) == 22 * 21
    assert Hex(3).perft(3) == 9 * 8 * 7


def test_svg():
    b = Hex.from_moves("a1 b1 a2 b2 a3", size=3)
    svg = b._repr_svg_()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polygon")) == 9
    classes = [e.get("class") for e in root.iter()]
    assert classes.count("stone x") == 3 and classes.count("stone o") == 2
    assert classes.count("win") == 3 and classes.count("last") == 1
    assert {"edge top", "edge bottom", "edge left", "edge right"} <= set(classes)
    assert len(ET.fromstring(Hex(11).svg()).findall(f"{ns}polygon")) == 121


# ---- solver against brute force ------------------------------------------------------------------

def brute_values(n, swap):
    """value(text) for every position reachable from the empty board (+1 mover wins), computed by
    plain minimax over the reference rules."""

    @lru_cache(maxsize=None)
    def value(cells, to_move, moves, swapped):
        if ref_connected(n, cells, "xo"[to_move ^ 1]):
            return -1
        empties = [a for a in range(n * n) if cells[a] == "."]
        children = [tuple(c if i != a else "xo"[to_move] for i, c in enumerate(cells)) for a in empties]
        results = [-value(ch, to_move ^ 1, moves + 1, swapped) for ch in children]
        if swap and moves == 1 and not swapped:
            (x,) = [i for i in range(n * n) if cells[i] == "x"]
            r, c = divmod(x, n)
            sw = ["."] * (n * n)
            sw[c * n + r] = "o"
            results.append(-value(tuple(sw), to_move ^ 1, moves + 1, True))
        return max(results)

    return value


@pytest.mark.parametrize("n,swap", [(1, False), (2, False), (2, True), (3, False), (3, True)])
def test_solver_against_brute_force(n, swap):
    value = brute_values(n, swap)
    rng = random.Random(n + 10 * swap)
    seen = set()
    for _ in range(scaled(60)):
        ref, b = Ref(n, swap), Hex(n, swap=swap)
        while True:
            key = (tuple(ref.cells), ref.to_move, ref.moves, ref.swapped)
            if key not in seen:
                seen.add(key)
                v, arr, complete = _core.hex_solve(b)
                assert complete and arr.dtype == np.int8 and len(arr) == n * n + swap
                if b.is_terminal():
                    assert v == -1 and not arr.any()
                else:
                    assert v == value(*key)
                    for a in range(len(arr)):
                        if a in ref.legal():
                            c = Ref(n, swap)
                            c.cells, c.to_move, c.moves, c.swapped = list(ref.cells), ref.to_move, ref.moves, ref.swapped
                            c.play(a)
                            assert arr[a] == -value(tuple(c.cells), c.to_move, c.moves, c.swapped)
                        else:
                            assert arr[a] == 0
            legal = ref.legal()
            if not legal:
                break
            a = rng.choice(legal)
            ref.play(a)
            b.push(a)


def test_solver_known_facts():
    # The first player wins every n x n board (strategy stealing); brute force on 2x2 / 3x3 gives the
    # winning openings; on 4x4 they are exactly the short diagonal d1, c2, b3, a4.
    for n in (2, 3):
        value = brute_values(n, False)
        empty = tuple("." * (n * n))
        wins = {a for a in range(n * n)
                if -value(tuple("x" if i == a else "." for i in range(n * n)), 1, 1, False) == 1}
        assert value(empty, 0, 0, False) == 1
        r = Hex(n).solve()
        assert r.value == 1 and r.complete
        assert set(r.winning_moves()) == {cell_name(n, a) for a in wins}
    r = Hex(4).solve()
    assert r.value == 1 and sorted(r.winning_moves()) == ["a4", "b3", "c2", "d1"]
    assert len(r.move_values) == 16
    # with the swap rule the first player loses, and swapping answers exactly the winning openings
    r = Hex(4, swap=True).solve()
    assert r.value == -1 and r.complete and not r.winning_moves()
    b = Hex.from_moves("c2", size=4, swap=True)
    assert b.solve().move_values["swap"] == 1
    b = Hex.from_moves("a1", size=4, swap=True)
    assert b.solve().move_values["swap"] == -1


def test_solver_budget_and_errors():
    full = Hex(4).solve()
    part = Hex(4).solve(max_nodes=30)
    assert not part.complete
    for m, v in part.move_values.items():
        assert full.move_values[m] == v
    with pytest.raises(ValueError, match="too large"):
        Hex(8).solve()
    with pytest.raises(ValueError, match="hex state"):
        _core.hex_solve(_core.State("tictactoe"))
    with pytest.raises(TypeError):
        _core.hex_solve("x o")
    with pytest.raises(ValueError):
        _core.hex_solve(Hex(3), max_nodes=-1)
    done = Hex.from_moves("a1 b1 a2 b2 a3", size=3)
    assert done.solve().value == -1 and done.solve().move_values == {}


def test_solver_in_threads():
    positions = [Hex.from_moves(m, size=4) for m in ("", "b2", "b2 c2", "a1 d4 b3")]
    expected = [p.solve() for p in positions]
    results = [None] * len(positions)

    def work(i):
        results[i] = positions[i].solve()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(positions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected


# ---- random playouts -----------------------------------------------------------------------------

def test_fill_playouts_match_random_play():
    """hex_random_playouts (board filling) and random_playouts (move by move) estimate the same
    first-player win rate, which on 3x3 is known exactly by enumeration (2/3)."""

    @lru_cache(maxsize=None)
    def p_first(cells, to_move):
        if ref_connected(3, cells, "x"):
            return 1.0
        if ref_connected(3, cells, "o"):
            return 0.0
        e = [a for a in range(9) if cells[a] == "."]
        return sum(p_first(tuple("xo"[to_move] if i == a else c for i, c in enumerate(cells)), to_move ^ 1)
                   for a in e) / len(e)

    exact = p_first(tuple("." * 9), 0)
    assert abs(exact - 2 / 3) < 1e-12
    N = scaled(100000)
    tol = 4.5 * math.sqrt(exact * (1 - exact) / N)
    fw, sw, dr, plies = _core.hex_random_playouts(Hex(3), N, seed=1)
    assert fw + sw == N and dr == 0 and plies == 9 * N
    mw, ms, md, mplies = _core.random_playouts(Hex(3), N, seed=2)
    assert md == 0 and mplies < 9 * N
    assert abs(fw / N - exact) < tol and abs(mw / N - exact) < tol
    # 11x11: the two estimates agree with each other
    N = scaled(20000)
    fw, _, _, _ = _core.hex_random_playouts(Hex(11), N, seed=3)
    mw, _, _, _ = _core.random_playouts(Hex(11), N, seed=4)
    assert abs(fw - mw) / N < 4.5 * math.sqrt(0.5 / N)
    with pytest.raises(ValueError):
        _core.hex_random_playouts(_core.State("tictactoe"), 10)
    with pytest.raises(ValueError):
        _core.hex_random_playouts(Hex(3), -1)


def test_flag_constant_matches_core():
    s = _core.State("hex", None, 3, FLAG_SWAP)
    s.push("a1")
    assert "swap" in s.legal_moves
