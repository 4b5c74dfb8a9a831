"""The State constructor's checks (rule flags, NUL bytes, budgets) and the OpenSpiel names."""
import io
import sys

import numpy as np
import pytest

from mavgame import Chess, ConnectFour, Gardner, Hex, State, TicTacToe, _core, cli
from mavgame.search.uct import playout_uct


# ---- rule flags ---------------------------------------------------------------------------------

def test_flag_constants_are_exported():
    assert (_core.FLAG_CHESS960, _core.FLAG_GARDNER_BISHOP, _core.FLAG_HEX_SWAP) == (1, 2, 4)
    assert Hex(5, swap=True).flags == _core.FLAG_HEX_SWAP
    assert Gardner(bishop_promotion=True).flags == _core.FLAG_GARDNER_BISHOP


@pytest.mark.parametrize("game,flags", [
    ("hex", -1), ("hex", 1), ("hex", 8), ("hex", 1 << 31), ("hex", 2 ** 32), ("chess", _core.FLAG_HEX_SWAP),
    ("connect_four", 1), ("tictactoe", _core.FLAG_CHESS960), ("gardner", _core.FLAG_CHESS960),
])
def test_unknown_flags_are_refused_naming_the_value(game, flags):
    with pytest.raises(ValueError, match=f"{game}: unknown rule flags {flags}"):
        State(game, None, 5 if game == "hex" else 0, flags)


# ---- board sizes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("game,size", [
    ("chess", 8), ("chess", 7), ("chess960", 8), ("gardner", 5), ("connect_four", 7), ("connect_four", -1),
    ("tictactoe", 3), ("tictactoe", 2 ** 31 - 1),
])
def test_board_size_of_a_fixed_board_game_is_refused(game, size):
    """Games with one board refuse any board_size but 0 (mg_config_check), naming game and value,
    wherever a game is configured: State, the MCTS tree, the MAV readers, the CLI."""
    msg = f"{game}: board_size {size} is meaningless"
    with pytest.raises(ValueError, match=msg):
        State(game, None, size)
    with pytest.raises(ValueError, match=msg):
        _core.MCTSTree(game, board_size=size)
    if game != "chess960":
        with pytest.raises(ValueError, match=msg):
            _core.mav_parse(game, "", None, size)
    assert State(game, None, 0).board_size == 0


@pytest.mark.parametrize("size", [-1, 20, 1000])
def test_hex_board_size_out_of_range_is_refused(size):
    with pytest.raises(ValueError, match=f"hex: board_size {size} is out of range"):
        State("hex", None, size)
    with pytest.raises(ValueError, match=f"hex: board_size {size} is out of range"):
        _core.MCTSTree("hex", board_size=size)
    assert State("hex", None, 19).board_size == 19


def test_known_flags_are_accepted():
    assert State("hex", None, 5, _core.FLAG_HEX_SWAP).flags == _core.FLAG_HEX_SWAP
    assert State("chess", None, 0, _core.FLAG_CHESS960).flags == _core.FLAG_CHESS960
    assert State("chess960", None, 0, _core.FLAG_CHESS960).flags == _core.FLAG_CHESS960
    assert State("gardner", None, 0, _core.FLAG_GARDNER_BISHOP).flags == _core.FLAG_GARDNER_BISHOP


def test_cli_play_hex_swap_enables_the_swap_rule(monkeypatch, capsys):
    # second player: after the agent's first stone the legal moves include the swap
    monkeypatch.setattr(sys, "stdin", io.StringIO("moves\nswap\n"))
    rc = cli.main(["play", "--game", "hex", "--board-size", "3", "--swap", "--agent", "random", "--color", "second"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "swap" in out.split()                   # listed by 'moves'
    assert "illegal move" not in out               # and played


# ---- NUL bytes and budgets ----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: ConnectFour.from_moves("4\x004"),
    lambda: ConnectFour(moves="44\x00"),
    lambda: _core.c4_from_moves("4\x00"),
    lambda: _core.C4Solver(10).solve_sequences(["44", "4\x004"]),
    lambda: ConnectFour("\x00"),
    lambda: ConnectFour().push("4\x00"),
])
def test_text_with_nul_is_refused(call):
    with pytest.raises(ValueError, match="NUL"):
        call()


@pytest.mark.parametrize("call,what", [
    (lambda: State("chess\x00x"), "game"),
    (lambda: State("tictactoe\x00"), "game"),
    (lambda: _core.mav_move_tokens("chess\x00"), "game"),
    (lambda: _core.mav_spec("chess\x00", "%state %top_all"), "game"),
    (lambda: _core.mav_spec("chess", "%state\x00 %top_all"), "commands"),
    (lambda: _core.mav_prompts([Chess()], "%state\x00"), "commands"),
    (lambda: _core.mav_write(Chess(), "%state", "all\x00"), "part"),
    (lambda: _core.mav_score(np.zeros((1, 64)), "max\x00"), "method"),
    (lambda: _core.parse_san(Chess(), "e4\x00"), "san"),
    (lambda: _core.MCTSTree("chess\x00"), "game"),
    (lambda: _core.MCTSTree("tictactoe", state_tracking=True).set_root_text("xx./oo./...\x00 x", 0), "text"),
    (lambda: _core.MCTSTree("tictactoe").search(_core.mcts_playout_evaluator(), 1, "%state\x00"), "spec"),
    (lambda: _core._rebuild_state(State, "chess\x00", 0, 0, "", []), "game"),
])
def test_every_text_argument_refuses_nul_naming_it(call, what):
    """Every str argument of the bindings (csrc/bind/*.c) goes through mg_py_text_arg: a NUL byte is
    refused with the argument's name, never cut off silently at the NUL."""
    with pytest.raises(ValueError, match=f"^{what} .* contains a NUL character"):
        call()


@pytest.mark.parametrize("kw", [{"max_nodes": -1}, {"max_nodes": -(2 ** 40)}, {"max_seconds": -1.0},
                                {"max_seconds": float("nan")}])
def test_c4_solve_refuses_negative_budgets(kw):
    name = next(iter(kw))
    with pytest.raises(ValueError, match=name):
        ConnectFour().solve(**kw)
    with pytest.raises(ValueError, match=name):
        _core.C4Solver(10).solve(ConnectFour(), **kw)


def test_other_budgets_are_checked():
    with pytest.raises(ValueError, match="max_nodes"):
        Hex(3).solve(max_nodes=-1)
    with pytest.raises(ValueError, match="depth"):
        Chess().perft(-1)
    with pytest.raises(ValueError, match="simulations"):
        playout_uct(Hex(3), simulations=-5)
    with pytest.raises(OverflowError):
        ConnectFour().solve(max_nodes=2 ** 64)


# ---- OpenSpiel names: the adapter (mavgame.compat.openspiel), not State aliases ---------------------------------

@pytest.mark.parametrize("make", [Chess, Gardner, ConnectFour, lambda: Hex(4), TicTacToe])
def test_state_has_one_name_per_method_and_returns(make):
    """The OpenSpiel spellings of the main API (current_player, apply_action, clone, action_to_string,
    string_to_action) and push_str are gone from State (issue 49); returns(), which has no other spelling, stays.
    OpenSpiel users use mavgame.compat.openspiel."""
    s = make()
    for alias in ("current_player", "apply_action", "clone", "action_to_string", "string_to_action", "push_str"):
        assert not hasattr(s, alias), alias
    assert s.to_move == 0 and s.returns() == [0.0, 0.0]
    a = int(s.legal_actions()[0])
    assert s.action_from_str(s.action_to_str(a)) == a
    c = s.copy()
    assert s.push(a) == a and s.ply == 1 and c.ply == 0 and c != s and s.to_move == 1


def test_returns_and_terminal_player():
    s = ConnectFour.from_moves("1212121")              # x completes four in column 1
    assert s.is_terminal()
    assert s.returns() == [1.0, -1.0]
    t = TicTacToe("xx./oo./x.. o")
    t.push("c2")                                           # o completes the middle row
    assert t.returns() == [-1.0, 1.0] and t.is_terminal()
    d = TicTacToe("xox/xox/oxo o")
    assert d.is_terminal() and d.returns() == [0.0, 0.0]


def test_connect_four_actions_are_columns_from_0_and_move_strings_from_1():
    # The decision: action = column index 0..6 (OpenSpiel, policy vectors), move text "1".."7"
    # (the solver test sets).  The two forms name the same column, and an int out of range says so.
    for col in range(7):
        a, b = ConnectFour(), ConnectFour()
        assert a.push(col) == col and b.push(str(col + 1)) == col
        assert a == b and a.action_to_str(col) == str(col + 1) and a.parse_move(str(col + 1)) == col
        assert list(a.legal_moves)[col] == str(col + 1)
    with pytest.raises(ValueError, match=r"action 7 \(not in 0..6; the move string '7' is action 6\)"):
        ConnectFour().push(7)
    with pytest.raises(ValueError, match=r"not in 0..6\)"):
        ConnectFour().push(9)
    assert np.array_equal(ConnectFour().legal_actions(), np.arange(7))
