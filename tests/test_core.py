"""The generic binding (mavgame._core.State) and the game registry, on every registered game."""
import copy
import pickle
import threading

import numpy as np
import pytest

import mavgame
from mavgame import _core
from conftest import scaled


def all_games():
    return _core.games()


def test_registry_lists_games():
    names = all_games()
    assert "tictactoe" in names
    assert len(names) == len(set(names))


def test_unknown_game_is_value_error():
    with pytest.raises(ValueError, match="unknown game 'nope'"):
        _core.State("nope")


def test_tictactoe_basics():
    s = _core.State("tictactoe")
    assert s.text() == ".../.../... x"
    assert list(s.legal_moves) == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    assert s.legal_actions().dtype == np.int32
    for m in ["b2", "a1", "c3", "a3", "c1", "b1", "c2"]:
        s.push(m)
    assert s.is_terminal()
    assert s.outcome() == (1, "connected")
    assert s.result() == "1-0"
    assert s.legal_actions().size == 0
    assert s.perft(1) == 0


def test_perft_and_divide_agree():
    s = _core.State("tictactoe")
    assert [s.perft(d) for d in range(1, 5)] == [9, 72, 504, 3024]
    acts, counts = s.perft_divide(4)
    assert counts.sum() == s.perft(4)
    assert sorted(acts.tolist()) == sorted(s.legal_actions().tolist())
    with pytest.raises(ValueError, match="depth"):
        s.perft(-1)
    with pytest.raises(ValueError):
        s.perft_divide(0)


@pytest.mark.parametrize("name", all_games())
def test_random_play_push_pop_roundtrip(name):
    """Random games on every registered game: pop restores text and hash; pickle and copy replay."""
    rng = np.random.default_rng(1234)
    for _ in range(scaled(20)):
        s = _core.State(name)
        texts, hashes = [s.text()], [s.hash]
        while not s.is_terminal() and s.ply < 200:
            acts = s.legal_actions()
            assert acts.size > 0
            mask = s.legal_actions_mask()
            assert mask.sum() == acts.size and mask[acts].all()
            a = int(rng.choice(acts))
            assert s.is_legal(a)
            assert s.parse_move(s.action_to_str(a)) == a
            s.push(a)
            texts.append(s.text())
            hashes.append(s.hash)
        # the text round-trips through the constructor
        t = _core.State(name, s.text(), board_size=s.board_size, flags=s.flags)
        assert t.text() == s.text()
        # pickling replays the history
        p = pickle.loads(pickle.dumps(s))
        assert p == s and p.history().tolist() == s.history().tolist()
        c = copy.deepcopy(s)
        assert c == s
        while s.ply:
            s.pop()
            assert s.text() == texts[s.ply] and s.hash == hashes[s.ply]
        assert c != s or c.ply == 0


def test_bad_input_leaves_object_usable():
    s = _core.State("tictactoe")
    s.push("b2")
    before = s.text()
    for bad in ["b2", "z9", "", "a1a1", "a1\x00", 99, -1, 2**70]:
        with pytest.raises(ValueError):
            s.push(bad)
    for bad in [1.5, None, b"a1"]:
        with pytest.raises(TypeError):
            s.push(bad)
    assert s.text() == before and s.ply == 1
    with pytest.raises(ValueError):
        s.__init__("tictactoe", "xxx/xxx/xxx o")
    assert s.text() == before  # a failed re-init changes nothing
    with pytest.raises(IndexError):
        _core.State("tictactoe").pop()
    with pytest.raises(TypeError):
        _core.State("tictactoe", 5)
    with pytest.raises(ValueError):
        _core.State("tictactoe", "x" * 5000)
    with pytest.raises(ValueError, match="NUL"):
        _core.State("tictactoe", ".../.../... x\x00junk")
    assert not _core.State("tictactoe").is_legal("a1\x00")


@pytest.mark.parametrize("name", all_games())
def test_move_errors_name_the_move_and_the_position(name):
    """Every game's illegal or malformed move, as a string or an int action, raises a ValueError
    naming the move and ending with the legal moves, in the same form for every game; the chess family's
    also name the position by its FEN (once), the other games' board strings are left out (issue 49)."""
    s = _core.State(name)
    while s.ply < 2 or s.legal_actions().size == s.num_actions:  # until some action is illegal
        s.push(int(s.legal_actions()[0]))
    assert not s.is_terminal()
    moves = [s.action_to_str(int(a)) for a in s.legal_actions()]
    where = "; legal moves: " + ", ".join(moves[:40]) + (f", ... ({len(moves)} in all)" if len(moves) > 40 else "")
    chess_family = bool(mavgame.games.registry.get(name).san)
    if chess_family:
        where = f" in position '{s.text()}'" + where
    before = (s.text(), s.ply)

    def message(move):
        with pytest.raises(ValueError) as e:
            s.push(move)
        assert (s.text(), s.ply) == before
        return str(e.value)

    # well-formed move strings of actions that are not legal here
    legal = set(s.legal_actions().tolist())
    tried = 0
    for a in range(s.num_actions):
        if a in legal:
            continue
        try:
            move = s.action_to_str(a)
        except ValueError:
            continue
        if s.is_legal(move):
            continue
        msg = message(move)
        assert f"'{move}'" in msg and msg.endswith(where), msg
        assert msg.count(s.text()) == chess_family, msg  # FEN once (chess's own text included it), else never
        msg = message(a)
        assert f"action {a} " in msg and f"'{move}'" in msg and msg.endswith(where), msg
        tried += 1
        if tried == 3:
            break
    assert tried >= 1
    # malformed strings, out-of-range actions
    for bad in ["zz99!", "", "a1\x00", "q" * 70]:
        msg = message(bad)
        assert msg.endswith(where) and bad[:20].replace("\x00", "") in msg, msg
    for bad in [s.num_actions, -1, 2**70]:
        msg = message(bad)
        assert str(bad) in msg and msg.endswith(where), msg


def test_uninitialised_state_raises():
    s = _core.State.__new__(_core.State)
    with pytest.raises(ValueError, match="not initialised"):
        s.legal_actions()
    assert "uninitialised" in repr(s)


def test_state_is_unhashable_but_has_key():
    s = _core.State("tictactoe")
    with pytest.raises(TypeError):
        hash(s)
    assert isinstance(s.hash, int)


class T(_core.State):
    def __init__(self, text=None):
        super().__init__("tictactoe", text)
        self.tag = "mine"


def test_subclass_copy_keeps_type_and_attributes():
    t = T()
    t.push("a1")
    c = t.copy()
    assert type(c) is T and c.tag == "mine" and c == t
    assert t.copy(stack=False).ply == 0
    p = pickle.loads(pickle.dumps(t))
    assert type(p) is T and p.tag == "mine" and p.history().tolist() == [0]


def test_perft_releases_the_gil():
    """Two threads can run perft at once (the GIL is released around the C work)."""
    results = []
    s = _core.State("tictactoe")

    def work():
        results.append(s.perft(7))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [s.perft(7)] * 2


def test_module_version():
    assert mavgame.__version__
    assert _core.WITH_CUDA in (0, 1)
