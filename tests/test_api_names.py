"""Public API names: old names kept for one release with a DeprecationWarning naming the new one, and the
Termination enum in game records."""
import pytest


def test_engine_annotation_old_name():
    from mavgame.engines import annotate
    from mavgame import mav
    with pytest.warns(DeprecationWarning, match="EngineAnnotation"):
        old = annotate.Annotation
    assert old is annotate.EngineAnnotation and old is not mav.Annotation
    with pytest.warns(DeprecationWarning):
        from mavgame.engines.annotate import Annotation  # noqa: F401
    with pytest.raises(AttributeError):
        annotate.NoSuchThing


def test_uci_go_result_old_name():
    from mavgame.search import mcts
    from mavgame.engines import uci
    with pytest.warns(DeprecationWarning, match="GoResult"):
        old = uci.SearchResult
    assert old is uci.GoResult and old is not mcts.SearchResult
    with pytest.raises(AttributeError):
        uci.NoSuchThing


def test_hex_mcts_wraps_playout_uct():
    from mavgame import Hex
    from mavgame.play.agents import UCTAgent
    from mavgame.search.mcts import UCTResult, playout_uct
    b = Hex.from_moves("a1", size=4)
    with pytest.warns(DeprecationWarning, match="playout_uct"):
        old = b.mcts(500, seed=2)
    new = playout_uct(b, 500, seed=2)
    assert isinstance(old, UCTResult) and old == new                  # the same search, reproducible by seed
    assert b.action_to_str(new.best_action) == new.best and sum(new.visits.values()) == 500
    assert UCTAgent(300, seed=1).act(b) in b.legal_actions().tolist()
    assert playout_uct(b, 300, seed=4) == playout_uct(b, 300, seed=4, c=2 ** 0.5)   # the core's default c
    assert playout_uct(b, 300, seed=4) != playout_uct(b, 300, seed=4, c=0.1)


def test_game_records_use_the_termination_enum():
    import json
    from mavgame import Termination
    from mavgame.play.agents import MinimaxAgent, RandomAgent
    from mavgame.play.league import play_game
    from mavgame.play.records import GameRecord
    rec = play_game(MinimaxAgent(seed=1), RandomAgent(2), "tictactoe", seed=1)
    assert rec.reason is Termination.CONNECTED and rec.reason == "connected"
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["reason"] == "connected" and GameRecord(**{k: v for k, v in d.items() if k != "type"}).reason is Termination.CONNECTED
    capped = play_game(RandomAgent(1), RandomAgent(2), "tictactoe", seed=1, max_plies=2)
    assert capped.reason == "max plies" and type(capped.reason) is str   # not a rule of the game
