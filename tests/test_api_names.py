"""Public API names: renamed names leave no alias behind, and the Termination enum in game records."""
import pytest


@pytest.mark.parametrize("module, old", [("mavgame.engines.annotate", "Annotation"),
                                         ("mavgame.engines.annotate", "chess_annotator"),
                                         ("mavgame.engines.uci", "SearchResult"),
                                         ("mavgame.games.hex", "MCTSResult"),
                                         ("mavgame.datasets", "ANNOTATORS"),
                                         ("mavgame.datasets", "hex_annotator")])
def test_old_names_are_gone(module, old):
    """0.1.0 has no outside users: a renamed name leaves no alias (issue 48)."""
    import importlib
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), old)


def test_hex_is_searched_by_playout_uct_not_a_method():
    from mavgame import Hex
    from mavgame.agents.mcts import UCTAgent
    from mavgame.search.uct import UCTResult, playout_uct
    b = Hex.from_moves("a1", size=4)
    assert not hasattr(b, "mcts")
    new = playout_uct(b, 500, seed=2)
    assert isinstance(new, UCTResult) and new == playout_uct(b, 500, seed=2)   # reproducible by seed
    assert b.action_to_str(new.best_action) == new.best and sum(new.visits.values()) == 500
    assert UCTAgent(300, seed=1).act(b) in b.legal_actions().tolist()
    assert playout_uct(b, 300, seed=4) == playout_uct(b, 300, seed=4, c=2 ** 0.5)   # the core's default c
    assert playout_uct(b, 300, seed=4) != playout_uct(b, 300, seed=4, c=0.1)


def test_game_records_use_the_termination_enum():
    import json
    from mavgame import Termination
    from mavgame.agents.basic import MinimaxAgent, RandomAgent
    from mavgame.play.league import play_game
    from mavgame.play.records import GameRecord
    rec = play_game(MinimaxAgent(seed=1), RandomAgent(2), "tictactoe", seed=1)
    assert rec.reason is Termination.CONNECTED and rec.reason == "connected"
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["reason"] == "connected" and GameRecord(**{k: v for k, v in d.items() if k != "type"}).reason is Termination.CONNECTED
    capped = play_game(RandomAgent(1), RandomAgent(2), "tictactoe", seed=1, max_plies=2)
    assert capped.reason == "max plies" and type(capped.reason) is str   # not a rule of the game
