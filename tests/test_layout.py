"""The package layout of issue 11: the old flat module paths warn once and alias the moved modules (same
objects, private names and pickling included); the public API is re-exported from ``mavgame``."""
import importlib
import pickle
import subprocess
import sys
import warnings

import pytest

import mavgame

MOVED = {
    "agents": "mavgame.play.agents", "league": "mavgame.play.league", "elo": "mavgame.play.elo",
    "records": "mavgame.play.records", "results": "mavgame.play.results", "store": "mavgame.play.store",
    "pgn": "mavgame.play.pgn", "openings": "mavgame.play.openings", "distributed": "mavgame.play.distributed",
    "mcts": "mavgame.search.mcts", "evaluators": "mavgame.search.evaluators", "uci": "mavgame.engines.uci",
    "stockfish_levels": "mavgame.engines.stockfish_levels", "annotate": "mavgame.engines.annotate",
    "mav_search": "mavgame.mav.search_trace", "c4_book": "mavgame.games.c4_book",
    "negamax": "mavgame.games.negamax",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_warns_and_aliases_the_new_module(old):
    # in a fresh interpreter: this one may have imported the old path already (the warning comes once)
    code = (f"import warnings, importlib\n"
            f"warnings.simplefilter('error')\n"
            f"import {MOVED[old]} as new\n"
            f"try:\n"
            f"    importlib.import_module('mavgame.{old}')\n"
            f"except DeprecationWarning as e:\n"
            f"    assert '{MOVED[old]}' in str(e), e\n"
            f"else:\n"
            f"    raise SystemExit('no DeprecationWarning')\n"
            f"warnings.simplefilter('ignore')\n"
            f"old = importlib.import_module('mavgame.{old}')\n"
            f"assert old is new, (old, new)\n"
            f"from mavgame import {old} as via_from\n"
            f"assert via_from is new\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def test_old_paths_give_the_same_objects_and_private_names():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old_league = importlib.import_module("mavgame.league")
        old_agents = importlib.import_module("mavgame.agents")
        old_mcts = importlib.import_module("mavgame.mcts")
    from mavgame.play import agents, league
    from mavgame.search import mcts
    assert old_league.League is league.League and old_league._Task is league._Task
    assert old_agents.make_agent is agents.make_agent and old_agents._mix is agents._mix
    assert old_mcts.MCTS is mcts.MCTS is mavgame.MCTS


def test_pickles_of_moved_objects_resolve_under_both_paths():
    from mavgame.play.records import Opening
    op = Opening("start")
    data = pickle.dumps(op, protocol=0)   # text opcodes: the module name can be edited below
    assert b"mavgame.play.records" in data
    assert pickle.loads(data) == op
    # a pickle written before the move names the old module: it loads through the alias
    old = data.replace(b"mavgame.play.records", b"mavgame.records")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert pickle.loads(old) == op


def test_public_api_is_re_exported():
    for name in mavgame.__all__:
        assert getattr(mavgame, name) is not None, name
    from mavgame.play.agents import make_agent
    from mavgame.play.league import League
    assert mavgame.League is League and mavgame.make_agent is make_agent
    assert mavgame.mav.parse is importlib.import_module("mavgame.mav.parse").parse


def test_registry_references_name_the_new_modules():
    from mavgame.games import registry
    for info in registry.infos():
        for ref in (info.annotator, info.perfect_player):
            if isinstance(ref, str):
                module = ref.split(":")[0]
                assert module.split(".")[1] not in MOVED, ref


def test_worker_functions_pickle_by_their_new_module():
    # what a spawned or forkserver worker receives: functions are pickled by reference and must resolve
    from mavgame.play import executors
    for f in (executors._pool_init, executors._pool_run, executors._run_task):
        data = pickle.dumps(f)
        assert b"mavgame.play.executors" in data
        assert pickle.loads(data) is f
