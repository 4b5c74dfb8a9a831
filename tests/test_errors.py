"""python-chess style typed move errors and the Termination enum (issue 11, "Python API details").

Every game's move entry points raise InvalidMoveError (not a move in the notation), IllegalMoveError
(well-formed but not legal here) or AmbiguousMoveError (SAN matching several moves), all ValueError
subclasses, and leave the state unchanged.
"""
import json

import pytest

import mavgame
from mavgame import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, Termination

CASES = [
    # (state factory, move, error type, words the message must contain)
    (lambda: mavgame.Chess(), "e2e5", IllegalMoveError, "illegal move 'e2e5'"),
    (lambda: mavgame.Chess(), "e2", InvalidMoveError, "invalid UCI move 'e2'"),
    (lambda: mavgame.Chess(), 99999, IllegalMoveError, "illegal chess action 99999"),
    (lambda: mavgame.Chess960(), "e9e4", InvalidMoveError, "invalid"),
    (lambda: mavgame.Gardner(), "a2a4", IllegalMoveError, "illegal Gardner move 'a2a4'"),
    (lambda: mavgame.Gardner(), "a9", InvalidMoveError, "invalid Gardner move 'a9'"),
    (lambda: mavgame.ConnectFour(), "8", InvalidMoveError, "invalid Connect Four move '8'"),
    (lambda: mavgame.ConnectFour.from_moves("111111"), "1", IllegalMoveError, "illegal Connect Four move '1'"),
    (lambda: mavgame.ConnectFour(), "4\x00", InvalidMoveError, "NUL"),
    (lambda: mavgame.Hex(5), "f1", InvalidMoveError, "outside the 5x5 board"),
    (lambda: mavgame.Hex.from_moves("a1", size=5), "a1", IllegalMoveError, "the cell is occupied"),
    (lambda: mavgame.TicTacToe(), "d4", InvalidMoveError, "invalid tic-tac-toe move 'd4'"),
    (lambda: mavgame.TicTacToe(".../.../x.. o"), "a1", IllegalMoveError, "the cell is occupied"),
    (lambda: mavgame.State("tictactoe"), "a4", InvalidMoveError, "invalid"),   # the raw core State too
    (lambda: mavgame.State("tictactoe"), -1, IllegalMoveError, "illegal tictactoe action -1"),
]


@pytest.mark.parametrize("make,move,err,words", CASES, ids=[f"{i}-{c[1]!r}" for i, c in enumerate(CASES)])
def test_push_raises_the_typed_error(make, move, err, words):
    s = make()
    before = s.text()
    others = {InvalidMoveError, IllegalMoveError, AmbiguousMoveError} - {err}
    for call in (s.push,) + ((s.action_from_str,) if isinstance(move, str) else ()):
        with pytest.raises(err, match=words.replace("(", r"\(")) as e:
            call(move)
        assert isinstance(e.value, ValueError) and not isinstance(e.value, tuple(others))
        # the chess family names the position by its FEN; the others list the legal moves, not their board string
        fen = s.game in ("chess", "chess960", "gardner")
        assert (s.text() in str(e.value)) == fen and "; legal moves: " in str(e.value), str(e.value)
    assert s.text() == before


def test_san_and_uci_entry_points():
    b = mavgame.Chess()
    with pytest.raises(IllegalMoveError, match="illegal SAN 'Ke2'"):
        b.push_san("Ke2")
    with pytest.raises(IllegalMoveError, match="illegal SAN 'Nf4'"):
        b.parse_san("Nf4")
    with pytest.raises(InvalidMoveError, match="invalid SAN 'Qx'"):
        b.push_san("Qx")
    with pytest.raises(IllegalMoveError, match="illegal move 'e2e5'"):
        b.push_uci("e2e5")
    with pytest.raises(InvalidMoveError, match="invalid UCI move 'e9e4'"):
        b.parse_uci("e9e4")
    with pytest.raises(TypeError):
        b.push_uci(12)
    assert b.ply == 0
    rooks = mavgame.Chess("4k3/8/8/8/8/8/4K3/R6R w - - 0 1")
    with pytest.raises(AmbiguousMoveError, match="ambiguous SAN 'Rd1'"):
        rooks.push_san("Rd1")
    rooks.push_san("Rad1")
    assert rooks.peek() == "a1d1"
    a = b.parse_uci("e2e4")
    assert b.ply == 0 and b.push_uci("e2e4") == a and b.peek() == "e2e4"
    g = mavgame.Gardner()
    with pytest.raises(IllegalMoveError):
        g.push_san("Ke3")


def test_errors_are_exported_and_caught_as_value_error():
    for cls in (IllegalMoveError, InvalidMoveError, AmbiguousMoveError):
        assert issubclass(cls, ValueError) and cls.__module__ == "mavgame.errors"
        assert getattr(mavgame, cls.__name__) is cls
    try:
        mavgame.ConnectFour().push("0")
    except ValueError as e:          # code written against plain ValueError keeps working
        assert type(e) is InvalidMoveError


def test_termination_is_a_str_enum():
    mate = mavgame.Chess()
    for m in ("f2f3", "e7e5", "g2g4", "d8h4"):
        mate.push(m)
    o = mate.outcome()
    assert o.termination is Termination.CHECKMATE and o.winner is False
    assert o.termination == "checkmate" and str(o.termination) == "checkmate" and f"{o.termination}" == "checkmate"
    assert json.dumps(o.termination) == '"checkmate"'
    c4 = mavgame.ConnectFour.from_moves("1212121")
    assert c4.outcome().termination is Termination.CONNECTED
    full = mavgame.TicTacToe("xox/xox/oxo o")
    assert full.outcome().termination is Termination.BOARD_FULL and full.outcome().result() == "1/2-1/2"
    assert {t.value for t in Termination} == set(mavgame._core.terminations()) - {"none"}
    assert mavgame.Chess().outcome() is None


def test_push_str_is_gone_push_takes_the_move_string():
    s = mavgame.ConnectFour()
    assert not hasattr(s, "push_str")      # the deprecated alias of push() is removed (issue 49)
    assert s.push("4") == 3 and s.move_stack == ["4"]
