"""mavgame's games as OpenSpiel games (mavgame.compat.openspiel, issue 49): OpenSpiel's own consistency checks,
its algorithms on them, and the adapter against mavgame's rules."""
import pickle
import random

import numpy as np
import pytest

from conftest import scaled

pyspiel = pytest.importorskip("pyspiel")

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from mavgame.compat import _games  # noqa: E402
from mavgame.compat import openspiel as mo  # noqa: E402

NAMES = ["mavgame_tictactoe", "mavgame_gardner", "mavgame_chess", "mavgame_chess960", "mavgame_connect_four",
         "mavgame_hex"]

# (game string, random games): OpenSpiel's random-simulation test, serialization included
SIMS = [("mavgame_tictactoe", 20), ("mavgame_connect_four", 20), ("mavgame_hex(board_size=5,swap=True)", 10),
        ("mavgame_hex(board_size=2,swap=False)", 10), ("mavgame_hex", 3), ("mavgame_gardner", 3),
        ("mavgame_gardner(bishop_promotion=True)", 2), ("mavgame_chess", 2), ("mavgame_chess960(position=0)", 2)]


def test_import_registers_every_game_and_register_is_idempotent():
    assert mo.game_names() == NAMES
    assert set(NAMES) <= set(pyspiel.registered_names())
    assert mo.register() == NAMES and mo.register() == NAMES      # again: nothing to do, no error
    for name in NAMES:
        game = pyspiel.load_game(name)
        assert isinstance(game, mo.MavgameGame) and game.mavgame_name == name[len(mo.PREFIX):]
        t = game.get_type()
        assert t.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
        assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
        assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
        assert (game.num_players(), game.min_utility(), game.max_utility(), game.utility_sum()) == (2, -1, 1, 0)


@pytest.mark.parametrize("name, sims", SIMS)
def test_openspiel_random_sim_test(name, sims):
    """OpenSpiel's own API-conformance test (the one its games run): random games with every state's legal
    actions, masks, strings, observations, clones, undo-free replays and serialization round trips."""
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=scaled(sims), serialize=True, verbose=False)


def _core_state(game):
    return _games.get(game.mavgame_name).state(game.get_parameters())


@pytest.mark.parametrize("name", ["mavgame_tictactoe", "mavgame_connect_four", "mavgame_hex(board_size=4,swap=True)",
                                  "mavgame_hex(board_size=7)", "mavgame_gardner", "mavgame_chess",
                                  "mavgame_chess960(position=77)"])
def test_same_game_as_mavgame_move_by_move(name):
    """Random games played by the same action ids in both: the same legal actions (sorted, as OpenSpiel's
    contract asks), player to move, move strings, observation planes, end and returns."""
    game = pyspiel.load_game(name)
    rng = random.Random(name)
    games = {"mavgame_chess": 2, "mavgame_chess960(position=77)": 2, "mavgame_gardner": 3}.get(name, 20)
    for _ in range(scaled(games)):
        st, ref = game.new_initial_state(), _core_state(game)
        obs = np.empty(game.observation_tensor_size(), np.float32)
        while True:
            assert st.is_terminal() == ref.is_terminal()
            assert str(st) == ref.text() == st.observation_string(0) == st.observation_string(1)
            np.copyto(obs, st.observation_tensor(0))
            np.testing.assert_array_equal(obs.reshape(ref.observation_shape), ref.observation_tensor())
            if ref.is_terminal():
                break
            legal = sorted(int(a) for a in ref.legal_actions())
            assert st.legal_actions() == legal and st.current_player() == ref.to_move
            assert st.legal_actions(1 - ref.to_move) == []
            mask = np.asarray(st.legal_actions_mask())
            assert mask.shape == (game.num_distinct_actions(),) and np.flatnonzero(mask).tolist() == legal
            a = rng.choice(legal)
            assert st.action_to_string(st.current_player(), a) == ref.action_to_str(a)
            st.apply_action(a)
            ref.push(a)
        assert st.current_player() == pyspiel.PlayerId.TERMINAL and st.legal_actions() == []
        res = _core.State.outcome(ref)[0]
        assert st.returns() == {1: [1.0, -1.0], 2: [-1.0, 1.0], 3: [0.0, 0.0]}[res]
        assert st.history() == ref.history().tolist() and st.mavgame_state() == ref
        assert len(st.history()) <= game.max_game_length()


def test_action_spaces_are_mavgame_s():
    """num_distinct_actions covers exactly mavgame's ids (Hex: the cells and, with the swap rule, "swap")."""
    for name in NAMES:
        game = pyspiel.load_game(name)
        if name != "mavgame_hex":
            assert game.num_distinct_actions() == _core_state(game).num_actions
    assert pyspiel.load_game("mavgame_hex(board_size=5)").num_distinct_actions() == 25
    swap = pyspiel.load_game("mavgame_hex(board_size=5,swap=True)")
    s = swap.new_initial_state()
    s.apply_action(12)
    assert swap.num_distinct_actions() == 26 and s.legal_actions()[-1] == 25 and s.action_to_string(1, 25) == "swap"
    # chess: from + 64 * to + 4096 * promotion, squares a1 = 0 .. h8 = 63, castling onto the rook's square
    chess = pyspiel.load_game("mavgame_chess")
    s = chess.new_initial_state()
    e4 = 12 + 64 * 28
    assert e4 in s.legal_actions() and s.action_to_string(0, e4) == "e2e4"
    prom = chess.state_from("8/P7/8/8/8/8/8/k6K w - - 0 1")
    assert prom.action_to_string(0, 48 + 64 * 56 + 4096 * 4) == "a7a8q"
    castle = chess.state_from("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert {castle.action_to_string(0, a) for a in (4 + 64 * 7, 4 + 64 * 0)} == {"e1g1", "e1c1"}
    assert {4 + 64 * 7, 4 + 64 * 0} <= set(castle.legal_actions())


def test_connect_four_and_hex_play_as_openspiel_s_own_games():
    """Where OpenSpiel numbers actions as mavgame does (Connect Four, Hex), its own game and ours play the
    same games action for action."""
    rng = random.Random(3)
    for ours, theirs in [("mavgame_connect_four", "connect_four"),
                         ("mavgame_hex(board_size=5,swap=True)", "hex(board_size=5,swap=True)")]:
        a_game, b_game = pyspiel.load_game(ours), pyspiel.load_game(theirs)
        for _ in range(scaled(20)):
            a, b = a_game.new_initial_state(), b_game.new_initial_state()
            while not b.is_terminal():
                assert a.legal_actions() == b.legal_actions() and a.current_player() == b.current_player()
                act = rng.choice(b.legal_actions())
                a.apply_action(act)
                b.apply_action(act)
            assert a.is_terminal() and a.returns() == b.returns()


def test_tictactoe_numbering_is_openspiel_s_mirrored():
    """The documented difference: mavgame's tic-tac-toe action is rank * 3 + file from a1 (bottom left),
    OpenSpiel's row-major from the top left; mapping one to the other replays every game of it."""
    def to_os(a):
        return (2 - a // 3) * 3 + a % 3
    from open_spiel.python.algorithms.get_all_states import get_all_states
    ours = get_all_states(pyspiel.load_game("mavgame_tictactoe"), to_string=str)
    theirs = get_all_states(pyspiel.load_game("tic_tac_toe"), to_string=str)
    assert len(ours) == len(theirs) == 5478
    os_game = pyspiel.load_game("tic_tac_toe")
    rng = random.Random(1)
    for st in rng.sample(sorted(ours.values(), key=str), 300):
        ref = os_game.new_initial_state()
        for a in st.history():
            ref.apply_action(to_os(a))
        assert sorted(map(to_os, st.legal_actions())) == ref.legal_actions()
        assert st.is_terminal() == ref.is_terminal() and st.returns() == ref.returns()


def test_openspiel_mcts_bot_beats_a_random_bot():
    """OpenSpiel's MCTSBot (open_spiel.python.algorithms.mcts) against its uniform random bot through
    evaluate_bots, both colours."""
    from open_spiel.python.algorithms import evaluate_bots, mcts
    from open_spiel.python.bots import uniform_random
    for name, sims in (("mavgame_connect_four", 100), ("mavgame_tictactoe", 100)):
        game = pyspiel.load_game(name)
        scores = []
        for i in range(4):
            me = i % 2
            bot = mcts.MCTSBot(game, 2.0, sims, mcts.RandomRolloutEvaluator(1, np.random.RandomState(i)),
                               solve=True, random_state=np.random.RandomState(i))
            rnd = uniform_random.UniformRandomBot(1 - me, np.random.RandomState(100 + i))
            returns = evaluate_bots.evaluate_bots(game.new_initial_state(), [bot, rnd] if me == 0 else [rnd, bot],
                                                  np.random.RandomState(i))
            assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
            scores.append(returns[me])
        assert min(scores) >= 0 and sum(scores) >= 3, (name, scores)   # MCTS never loses, and wins most


def test_openspiel_minimax_solves_tictactoe():
    from open_spiel.python.algorithms import minimax
    value, _ = minimax.alpha_beta_search(pyspiel.load_game("mavgame_tictactoe"))
    assert value == 0.0


def test_observer_api_gives_the_c_planes():
    from open_spiel.python.observation import make_observation
    game = pyspiel.load_game("mavgame_connect_four")
    assert game.observation_tensor_shape() == [4, 6, 7]
    s = game.new_initial_state()
    for a in (3, 3, 4):
        s.apply_action(a)
    obs = make_observation(game)
    obs.set_from(s, 1)
    planes = mavgame.ConnectFour.from_moves("445").observation_tensor()
    np.testing.assert_array_equal(obs.dict["observation"], planes)
    np.testing.assert_array_equal(obs.tensor, planes.ravel())
    assert obs.string_from(s, 0) == s.mavgame_state().text()
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    assert info.string_from(s, 0) == s.information_state_string(0) == "3, 3, 4"


def test_illegal_action_names_it_and_leaves_the_state():
    s = pyspiel.load_game("mavgame_connect_four").new_initial_state()
    for _ in range(6):
        s.apply_action(0)
    with pytest.raises(mavgame.IllegalMoveError, match=r"action 0 .*'1'"):
        s.apply_action(0)
    with pytest.raises(ValueError, match="action 9"):
        s.apply_action(9)
    assert s.history() == [0] * 6 and s.current_player() == 0 and 0 not in s.legal_actions()


def test_parameters_and_errors():
    h = mo.load_game("hex", board_size=7, swap=True)
    assert str(h) == "mavgame_hex(board_size=7,swap=True)" and h.observation_tensor_shape() == [4, 7, 7]
    assert mo.load_game("mavgame_hex").get_parameters() == {"board_size": 11, "swap": False}
    c = pyspiel.load_game("mavgame_chess960(position=0)")
    assert str(c.new_initial_state()) == mavgame.Chess960(0).fen()
    assert str(pyspiel.load_game("mavgame_chess960").new_initial_state()) == mavgame.Chess().fen()
    with pytest.raises(ValueError, match=r"board_size=30 is out of range \(1\.\.19\)"):
        mo.load_game("hex", board_size=30)
    with pytest.raises(ValueError, match=r"position=960"):
        pyspiel.load_game("mavgame_chess960(position=960)")
    with pytest.raises(pyspiel.SpielError, match="size"):
        mo.load_game("hex", size=3)
    with pytest.raises(ValueError, match="unknown game 'go'"):
        mo.load_game("go")


def test_pickle_clone_and_positions():
    game = pyspiel.load_game("mavgame_hex(board_size=5)")
    s = game.new_initial_state()
    for a in (12, 0, 6):
        s.apply_action(a)
    c = s.clone()
    c.apply_action(1)
    assert s.history() == [12, 0, 6] and c.history() == [12, 0, 6, 1]
    g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, s))
    assert str(g2) == str(game) and str(s2) == str(s) and s2.history() == s.history()
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    p = pickle.loads(pickle.dumps(s))
    assert str(p) == str(s) and p.legal_actions() == s.legal_actions()
    # a state at a mavgame position
    c4 = pyspiel.load_game("mavgame_connect_four")
    pos = mavgame.ConnectFour.from_moves("4455")
    st = c4.state_from(pos)
    assert str(st) == pos.text() and st.history() == [] and st.current_player() == 0
    with pytest.raises(ValueError):
        c4.state_from(mavgame.TicTacToe())
