"""Tic-tac-toe: the Python class over the C game, checked exhaustively against plain Python rules."""
import pickle
import xml.etree.ElementTree as ET

import pytest

from mavgame.games.tictactoe import LINES, START_TEXT, TicTacToe


def ref_winner(cells):
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return None


def test_start():
    b = TicTacToe()
    assert b.text() == START_TEXT and repr(b) == f"TicTacToe({START_TEXT!r})"
    assert list(b.legal_moves) == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    assert list(b.legal_actions()) == list(range(9))
    assert b.turn and b.outcome() is None and not b.is_game_over() and b.game == "tictactoe"
    assert str(b) == ". . .\n. . .\n. . ."


def test_exhaustive_against_reference():
    """Every game: legal moves, outcome, text and hash against plain-Python rules; counts of all
    games (255168) and X wins (131184), and 5478 distinct positions."""
    games = x_wins = 0
    seen = {}

    def walk(b, cells):
        nonlocal games, x_wins
        text = b.text()
        if text in seen:
            assert seen[text] == b.hash
        else:
            seen[text] = b.hash
            assert TicTacToe(text) == b and b.cells() == cells
        w = ref_winner(cells)
        full = all(cells)
        o = b.outcome()
        if w or full:
            games += 1
            x_wins += w == "x"
            assert o is not None and list(b.legal_moves) == []
            assert o.winner == ({"x": True, "o": False}[w] if w else None)
            assert o.termination == ("connected" if w else "board_full")
            return
        assert o is None
        assert [int(a) for a in b.legal_actions()] == [i for i in range(9) if not cells[i]]
        mark = "x" if b.turn else "o"
        for a in b.legal_actions():
            b.push(int(a))
            cells[a] = mark
            walk(b, cells)
            cells[a] = None
            assert b.pop() == a

    walk(TicTacToe(), [None] * 9)
    assert games == 255168 and x_wins == 131184
    assert len(seen) == 5478
    assert len(set(seen.values())) == len(seen)


def test_push_names_and_errors():
    b = TicTacToe()
    assert b.push("b2") == 4 and b.push(0) == 0
    assert b.text() == ".../.x./o.. x"
    assert b.move_stack == ["b2", "a1"] and b.peek() == "a1"
    assert b.piece_at("b2") == "x" and b.piece_at(0) == "o" and b.piece_at("c3") is None
    before = b.text()
    for bad in ["b2", "d4", "a", "", 9, -1, 4]:
        with pytest.raises(ValueError):
            b.push(bad)
        assert b.text() == before
    with pytest.raises(ValueError, match="d4"):
        b.piece_at("d4")
    for bad_text in ["xxx/ooo/... x", "x.o/.x./..q x", "xxx/oo./... x", "x.o/.x./..o"]:
        with pytest.raises(ValueError):
            TicTacToe(bad_text)


def test_finished_copy_pickle_svg():
    b = TicTacToe()
    for m in ["a1", "a2", "b1", "b2", "c1"]:
        b.push(m)
    o = b.outcome()
    assert o.winner is True and o.termination == "connected" and o.result() == "1-0" and b.result() == "1-0"
    with pytest.raises(ValueError):
        b.push("c3")
    c = pickle.loads(pickle.dumps(b))
    assert type(c) is TicTacToe and c == b and c.move_stack == b.move_stack
    d = b.copy()
    assert d == b and d is not b
    root = ET.fromstring(b._repr_svg_())
    ns = "{http://www.w3.org/2000/svg}"
    marks = [e for e in root.iter() if "mark" in e.get("class", "")]
    assert sum(e.get("class") == "mark x" for e in marks) == 3
    assert sum(e.get("class") == "mark o" for e in marks) == 2
    assert len([e for e in root.findall(f"{ns}line") if e.get("class") == "win"]) == 1
    assert len([e for e in root.findall(f"{ns}rect") if e.get("class") == "last"]) == 1
