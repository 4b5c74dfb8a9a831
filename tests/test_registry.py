"""The Python game registry (mavgame.games.registry): one descriptor per C game, read by generic code."""
import dataclasses
import re
import warnings
from pathlib import Path

import pytest

import mavgame
from mavgame import _core, cli
from mavgame.cli import options as cli_options
from mavgame.cli import play as cli_play
from mavgame.agents import AgentError, make_agent
from mavgame.agents.engines import UCIAgent
from mavgame.games import registry
from mavgame.games.tictactoe import TicTacToe

PKG = Path(mavgame.__file__).resolve().parent


def test_the_registry_covers_every_c_game_in_the_c_order():
    assert registry.names() == list(_core.games())
    assert [g.name for g in registry.infos()] == list(_core.games())
    for info in registry.infos():
        assert info.cls.GAME == info.name
        s = info.state()
        assert s.game == info.name
        board = info.wrap(s)
        assert isinstance(board, info.cls) and board.text() == s.text()
        assert info.display(s) == str(board)
        assert info.svg(s).lstrip().startswith("<svg")


def test_rule_flags_are_the_cores_flag_constants():
    core_flags = {getattr(_core, k) for k in dir(_core) if k.startswith("FLAG_")}
    seen = set()
    for info in registry.infos():
        for name, bit in info.flags.items():
            assert bit in core_flags, (info.name, name, bit)
            assert info.state(None, 0, bit).flags & bit   # the game accepts its own flag
            seen.add(bit)
    assert seen == core_flags   # every flag of the core belongs to a game
    assert registry.get("hex").flags["swap"] == _core.FLAG_HEX_SWAP
    from mavgame.games import gardner
    assert gardner.FLAG_BISHOP_PROMOTION == _core.FLAG_GARDNER_BISHOP


def test_descriptors_are_frozen():
    info = registry.get("hex")
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.max_board_size = 3
    with pytest.raises(TypeError):
        info.flags["swap"] = 0


@pytest.mark.parametrize("bad", ["go", "Chess", "", None])
def test_unknown_names_raise_naming_the_value_and_the_games(bad):
    with pytest.raises(ValueError) as e:
        registry.get(bad)
    assert isinstance(e.value, registry.UnknownGameError)
    assert repr(bad) in str(e.value)
    assert all(g in str(e.value) for g in _core.games())


def test_unknown_names_in_the_generic_code_name_the_value():
    from mavgame.datasets import make_annotator
    from mavgame.play.openings import openings_path
    for call in (lambda: make_annotator("go"), lambda: openings_path("go")):
        with pytest.raises(ValueError, match=r"unknown game 'go' \(games: tictactoe"):
            call()
    from mavgame import annotators
    annotators.annotated_games()   # every annotator module loaded
    monkeypatch_table = dict(annotators._ANNOTATORS)
    try:
        del annotators._ANNOTATORS["gardner"]
        with pytest.raises(ValueError, match="no annotator for game 'gardner'"):
            make_annotator("gardner")
    finally:
        annotators._ANNOTATORS.clear()
        annotators._ANNOTATORS.update(monkeypatch_table)
    with pytest.raises(SystemExit, match=r"--game go: unknown game 'go' \(games: "):
        cli.main(["perft", "--game", "go", "--depth", "1"])
    p = make_agent("perfect")
    with pytest.raises(AgentError, match="no perfect player for 'chess'"):
        p.setup("chess")
    with pytest.raises(AgentError, match="unknown game 'go'"):
        p.setup("go")


def test_a_c_game_without_a_descriptor_is_named(monkeypatch):
    registry._load()
    monkeypatch.delitem(registry._REGISTRY, "hex")
    with pytest.raises(registry.UnknownGameError, match="game 'hex' of the C core has no Python descriptor"):
        registry.get("hex")


def test_register_refuses_names_the_core_lacks_and_silent_replacement():
    fake = dataclasses.replace(registry.get("tictactoe"), name="tictactoe_4x4")
    with pytest.raises(ValueError, match="cannot register 'tictactoe_4x4': not a game of the C core"):
        registry.register(fake)
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.replace("tictactoe", family="other"))


def test_a_new_descriptor_is_picked_up_by_the_cli_agents_and_leagues(monkeypatch, capsys):
    """A game the core knows (here: a fake name added to _core.games()) with a registered descriptor is
    listed by `mavgame games`, accepted by --game, displayed by its class, played by UCI agents when it
    says so, and gets the perfect player it names."""
    names = list(_core.games()) + ["fake_tictactoe"]
    monkeypatch.setattr(_core, "games", lambda: names)
    shown = []

    def from_text(text, size, flags):
        shown.append(text)
        return TicTacToe(text)

    from mavgame.agents import basic
    fake = dataclasses.replace(registry.get("tictactoe"), name="fake_tictactoe", from_text=from_text, uci=True)
    monkeypatch.setitem(basic.PERFECT_PLAYERS, "fake_tictactoe", (basic.perfect_minimax, False))
    with pytest.raises(registry.UnknownGameError):
        registry.get("fake_tictactoe")
    with registry.override(fake):
        assert cli.main(["games"]) == 0
        assert capsys.readouterr().out.split() == names
        args = cli.build_parser().parse_args(["play", "--game", "fake_tictactoe"])
        cli_options.check_args(args)   # no SystemExit: a known game
        s = _core.State("tictactoe")
        shown_board = cli_play.with_coordinates(TicTacToe(s.text()).board_rows())
        assert cli_play._display(_FakeState(s, "fake_tictactoe")) == shown_board
        assert shown == [s.text()]
        assert "fake_tictactoe" in UCIAgent.games
        agent = make_agent("perfect")
        agent.setup("fake_tictactoe")
        assert type(agent._cur).__name__ == "MinimaxAgent"
    # override restores the registry: the core's game has no descriptor again
    with pytest.raises(registry.UnknownGameError, match="'fake_tictactoe' of the C core has no Python descriptor"):
        registry.get("fake_tictactoe")
    monkeypatch.undo()
    assert UCIAgent.games == ("chess", "chess960")


class _FakeState:
    """A core state that reports another game name (for the display lookup)."""

    def __init__(self, state, game):
        self._s, self.game = state, game

    def __getattr__(self, name):
        return getattr(self._s, name)


def test_perfect_players_register_themselves_in_the_agents_layer(monkeypatch):
    from mavgame.agents import basic
    monkeypatch.delitem(basic.PERFECT_PLAYERS, "tictactoe")
    with pytest.raises(AgentError, match="no perfect player for 'tictactoe'"):
        make_agent("perfect").setup("tictactoe")
    monkeypatch.undo()
    agent = make_agent("perfect:seed=3")
    agent.setup("connect_four")
    assert type(agent._cur).__name__ == "PerfectConnectFourAgent"
    agent.setup("hex")
    assert type(agent._cur).__name__ == "PerfectHexAgent"


def test_uci_games_adjudication_and_chess960_start_positions():
    from mavgame.play.league import League, random_start_positions
    assert UCIAgent.games == ("chess", "chess960")
    assert [g.name for g in registry.infos() if g.uci_chess960] == ["chess960"]
    ops = League.chess960(3, seed=5)
    assert ops == random_start_positions("chess960", 3, seed=5)
    for o in ops:
        assert o.name.startswith("960-") and o.text == _core.chess960_fen(int(o.name[4:]))
        assert registry.get("chess960").numbered_start(o.name) == o.text
    with pytest.raises(ValueError, match="'960-960'"):
        registry.get("chess960").numbered_start("960-960")
    with pytest.raises(ValueError, match="connect_four has no numbered start positions"):
        random_start_positions("connect_four", 2)
    with pytest.raises(ValueError, match=r"engine adjudication is for games that UCI engines play \(chess, "
                                         r"chess960\), not 'hex'"):
        League({"a": "random", "b": "random"}, "hex", adjudicate=300)


def test_openings_come_from_the_registry_and_annotator_options_from_the_annotators():
    from mavgame.annotators import DEFAULT_ANNOTATOR_OPTIONS
    from mavgame.annotators import hex as hex_annotate
    from mavgame.play.openings import openings_path
    assert openings_path("hex").name == "openings_hex_11.txt"
    assert openings_path("hex", 7).name == "openings_hex_7.txt"
    assert openings_path("connect_four").exists() and openings_path("tictactoe").exists()
    assert dict(DEFAULT_ANNOTATOR_OPTIONS["hex"]) == hex_annotate.DEFAULT_OPTIONS
    assert set(DEFAULT_ANNOTATOR_OPTIONS) == {"chess", "chess960", "gardner", "connect_four", "hex"}


def test_every_annotator_lives_in_the_annotators_package():
    import mavgame.annotators
    assert mavgame.annotators.annotated_games() == sorted(g.name for g in registry.infos())   # every game
    for factory, _ in mavgame.annotators._ANNOTATORS.values():
        assert factory.__module__.startswith("mavgame.annotators."), factory
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mavgame.annotators.make_annotator("tictactoe") is not None   # the supported path does not warn
        from mavgame import datasets
        assert datasets.make_annotator is mavgame.annotators.make_annotator     # nor the public re-exports


# Generic modules: no comparison, membership test or table keyed on a game's name (the registry holds
# what they used to switch on).
GENERIC = ["agents/base.py", "agents/spec.py", "cli/options.py", "cli/league.py", "cli/match.py", "cli/play.py", "cli/train.py", "play/league.py", "play/openings.py", "play/pgn.py", "play/results.py", "play/records.py",
           "search/evaluators.py",
           "datasets/__init__.py", "datasets/records.py", "datasets/store.py", "datasets/dataset.py",
           "datasets/positions.py", "datasets/ood.py", "datasets/pgn.py", "annotators/__init__.py"]
_NAMES = "|".join(map(re.escape, ["chess", "chess960", "gardner", "connect_four", "hex", "tictactoe"]))
_BRANCH = re.compile(rf'(?<!family )(==|!=|\bin|not in) \(?"({_NAMES})"|^\s+"({_NAMES})": |= \("({_NAMES})"', re.M)


@pytest.mark.parametrize("module", GENERIC)
def test_generic_modules_do_not_switch_on_game_names(module):
    text = (PKG / module).read_text()
    assert not [m.group(0) for m in _BRANCH.finditer(text)]


def test_the_games_layer_names_no_upper_layer():
    """Lower layers never name upper ones (issue 48): no module of mavgame/games imports, or names in a string,
    the annotators, agents, model, play, search or engines packages; their tools register themselves."""
    import re
    upper = re.compile(r"mavgame\.(annotators|agents|model|datasets|policy|analysis|play|search|engines|cli)\b|"
                       r"from \.\.(annotators|agents|model|datasets|policy|analysis|play|search|engines|cli)\b")
    for f in sorted((PKG / "games").glob("*.py")):
        code = "\n".join(ln for ln in f.read_text().splitlines() if not ln.lstrip().startswith("#"))
        hits = [m.group(0) for m in upper.finditer(code)]
        assert not hits, (f.name, hits)
