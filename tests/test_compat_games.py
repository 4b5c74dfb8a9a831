"""The games table the adapters of mavgame.compat share (no optional library needed): every game of the core is
in it, and what it declares (action space, game-length bound, parameters) holds on mavgame's own games."""
import random

import pytest

from mavgame import _core
from mavgame.compat import _games


def test_every_core_game_is_offered():
    """A game added to the C core fails here until mavgame/compat/_games.py describes it."""
    assert _games.names() == list(_core.games()) and set(_games.GAMES) == set(_core.games())


@pytest.mark.parametrize("name, params", [("tictactoe", {}), ("connect_four", {}), ("hex", {}),
                                          ("hex", {"board_size": 3, "swap": True}), ("hex", {"board_size": 1}),
                                          ("gardner", {}), ("gardner", {"bishop_promotion": True}),
                                          ("chess", {}), ("chess960", {"position": 0})])
def test_declared_action_space_and_length_hold(name, params):
    g = _games.get(name)
    p = g.params(params)
    n, bound = g.actions(p), g.max_length(p)
    rng = random.Random(name)
    for _ in range(2 if name.startswith("chess") or name == "gardner" else 20):
        s = g.state(p)
        assert s.game == name
        while not s.is_terminal():
            legal = s.legal_actions()
            assert legal.size and int(legal.max()) < n and not s.legal_actions_mask()[n:].any()
            s.push(int(rng.choice(legal)))
        assert s.ply <= bound
    if name == "hex":
        assert n == p["board_size"] ** 2 + p["swap"] and s.observation_shape == (4, p["board_size"], p["board_size"])
    else:
        assert n == s.num_actions


def test_parameters_are_checked():
    assert _games.get("hex").params() == {"board_size": 11, "swap": False}
    assert _games.get("hex").params({"board_size": "7"}, swap="true") == {"board_size": 7, "swap": True}
    assert _games.get("chess960").state({"position": 518}).text() == _core.State("chess").text()
    for name, bad, msg in [("hex", {"board_size": 0}, r"board_size=0 is out of range \(1\.\.19\)"),
                           ("hex", {"swap": "maybe"}, "not a bool"), ("chess960", {"position": -1}, "out of range"),
                           ("connect_four", {"rows": 7}, r"no parameter rows \(parameters: none\)"),
                           ("hex", {"size": 7}, r"no parameter size \(parameters: board_size, swap\)")]:
        with pytest.raises(ValueError, match=msg):
            _games.get(name).params(bad)
    with pytest.raises(ValueError, match="unknown game 'go'"):
        _games.get("go")
