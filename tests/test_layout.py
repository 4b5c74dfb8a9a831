"""The package layout: the old flat module paths of issue 11 are gone, no alias is shipped (issue 48), and the
public API is re-exported from ``mavgame``."""
import importlib
import pickle

import pytest

import mavgame

MOVED = {
    "league": "mavgame.play.league", "elo": "mavgame.play.elo",
    "records": "mavgame.play.records", "results": "mavgame.play.results", "store": "mavgame.play.store",
    "pgn": "mavgame.play.pgn", "openings": "mavgame.play.openings", "distributed": "mavgame.play.distributed",
    "mcts": "mavgame.search.mcts", "evaluators": "mavgame.search.evaluators", "uci": "mavgame.engines.uci",
    "stockfish_levels": "mavgame.engines.stockfish_levels", "annotate": "mavgame.engines.annotate",
    "mav_search": "mavgame.mav.search_trace", "c4_book": "mavgame.games.c4_book",
    "negamax": "mavgame.games.negamax",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_flat_paths_are_gone(old):
    """Version 0.1.0 has no outside users: a moved module leaves no alias behind (issue 48)."""
    importlib.import_module(MOVED[old])
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"mavgame.{old}")


# the agent modules of issue 48, now the families of the mavgame.agents package
AGENTS_MOVED = {"mavgame.play.agents": "mavgame.agents.base", "mavgame.play.policy_agents": "mavgame.agents.policy",
                "mavgame.model.agents": "mavgame.agents.mav", "mavgame.az.agent": "mavgame.agents.alphazero"}


@pytest.mark.parametrize("old", sorted(AGENTS_MOVED))
def test_old_agent_modules_are_gone(old):
    importlib.import_module(AGENTS_MOVED[old])
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_no_alias_modules_remain():
    """No module of the package is a shim that re-exports another (sys.modules swaps, star re-exports)."""
    import pathlib
    root = pathlib.Path(mavgame.__file__).parent
    for f in root.rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        assert "sys.modules[" not in text, f
        assert "_moved" not in text, f


def test_public_api_is_re_exported():
    for name in mavgame.__all__:
        assert getattr(mavgame, name) is not None, name
    from mavgame.agents import Agent, AgentError, make_agent, register_agent
    from mavgame.play.league import League
    assert mavgame.League is League and mavgame.make_agent is make_agent
    assert (mavgame.Agent, mavgame.AgentError, mavgame.register_agent) == (Agent, AgentError, register_agent)
    assert mavgame.mav.parse is importlib.import_module("mavgame.mav.parse").parse


def test_worker_functions_pickle_by_their_new_module():
    # what a spawned or forkserver worker receives: functions are pickled by reference and must resolve
    from mavgame.play import executors
    for f in (executors._pool_init, executors._pool_run, executors._run_task):
        data = pickle.dumps(f)
        assert b"mavgame.play.executors" in data
        assert pickle.loads(data) is f
