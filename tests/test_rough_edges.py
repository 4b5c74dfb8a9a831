"""Rough edges a new user hit (issue 49): each refused up front with a message naming it, or fixed."""
import json

import pytest

import mavgame
from mavgame.cli import main


def _fails(argv, capsys, pattern):
    import re
    try:
        rc = main(argv)
    except SystemExit as e:
        msg = str(e.code)
    else:
        assert rc != 0
        msg = capsys.readouterr().err
    assert re.search(pattern, msg), msg
    return msg


def test_an_agent_that_cannot_play_the_game_is_refused_before_any_game(capsys, tmp_path):
    msg = _fails(["match", "perfect", "random", "--game", "chess", "--out", "none", "--no-progress"], capsys,
                 r"agent 'perfect'.*no perfect player for 'chess'")
    assert "error in game" not in msg and msg.count("no perfect player") == 1


def test_a_search_too_large_for_its_tree_is_refused_when_the_agent_is_made():
    from mavgame.agents import make_agent
    with pytest.raises(ValueError, match=r"sims must be <= 50,000,000.*200,000,000"):
        make_agent("uct:sims=200000000")


def test_more_openings_than_shipped_are_refused(capsys):
    _fails(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--openings", "1000",
            "--out", "none", "--no-progress"], capsys, r"1000 openings asked, but tictactoe ships \d+")


def test_pgn_is_for_chess_and_txt_gives_move_lists(capsys, tmp_path):
    _fails(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "none",
            "--export", str(tmp_path / "g.pgn"), "--no-progress"], capsys, r"PGN is a chess format")
    out = tmp_path / "g.txt"
    assert main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "none",
                 "--openings", "1", "--export", str(out), "--no-progress"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and all(" - " in ln and ":" in ln for ln in lines)


def test_bench_perft_stops_where_the_game_tree_ends(capsys):
    assert main(["bench", "--game", "tictactoe", "--seconds", "0.05", "--no-progress"]) == 0
    row = [ln for ln in capsys.readouterr().out.splitlines() if "perft(" in ln][0]
    import re
    depth, nodes = re.search(r"perft\((\d+)\)\s+(\d+)", row).groups()
    assert 1 <= int(depth) <= 9 and int(nodes) > 0, row    # never past the game's 9 plies with 0 nodes


def test_an_interrupted_league_exits_130_like_every_command(monkeypatch, capsys):
    from mavgame.play import league
    def interrupted(self, *a, **k):
        raise league.LeagueInterrupted("league interrupted after 0 new game(s); finished games are saved")
    monkeypatch.setattr(league.League, "run", interrupted)
    rc = main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "none",
               "--no-progress"])
    assert rc == 130 and "interrupted" in capsys.readouterr().err


def test_help_shows_only_defaults_that_say_something(capsys):
    for cmd in (["train"], ["policy", "train"]):
        with pytest.raises(SystemExit):
            main([*cmd, "--help"])
        text = capsys.readouterr().out
        assert "(default: None)" not in text and "(default: [])" not in text, cmd
        assert "(default" in text    # the others still say theirs


def test_results_api_from_the_play_package(tmp_path):
    from mavgame.play import League, ResultStore, StoredElo, load_results
    path = str(tmp_path / "s.sqlite")
    League({"r": "random", "m": "minimax"}, "tictactoe", 1, path=path).run(progress=False)
    assert main(["league", "--game", "tictactoe", "--agent", "r=random", "--agent", "m=minimax", "--openings", "1",
                 "--out", path, "--no-progress"]) == 0
    with ResultStore(path, create=False) as st:
        elo = st.elo()
    assert isinstance(elo, StoredElo) and "<table>" in elo._repr_html_() and {r["agent"] for r in elo.rows()} == {"r", "m"}
    res = load_results(path)
    assert len(res) == 2 and json.loads(json.dumps(res.elo().to_dict()))


def test_gitignore_covers_the_readme_league_store():
    import pathlib
    ignore = (pathlib.Path(mavgame.__file__).parents[1] / ".gitignore")
    if not ignore.exists():
        pytest.skip("not a source checkout")
    assert "/league-*.sqlite" in ignore.read_text().split()


# ---- issue 49, the rest ------------------------------------------------------------------------------------

def test_an_unknown_evaluator_and_no_simulations_are_refused_when_the_search_is_made():
    from mavgame.search.mcts import MCTS
    with pytest.raises(ValueError, match=r"unknown evaluator 'nonsense': expected 'playout', 'constant', 'c4_solver'"):
        MCTS("nonsense")
    with pytest.raises(TypeError, match=r"evaluator must be 'playout'.*not int 3"):
        MCTS(3)
    for n in (0, -5):
        with pytest.raises(ValueError, match=rf"num_simulations must be an integer in \[1, .*not {n}"):
            MCTS("playout", num_simulations=n)
    if hasattr(mavgame._core, "mcts_c4_solver_evaluator"):
        with pytest.raises(ValueError, match="solver evaluator cannot evaluate 'chess'"):
            MCTS("c4_solver", state_tracking=True, game="chess")
    assert MCTS("playout", num_simulations=1).best_move(mavgame.State("tictactoe")) is not None


def test_search_modules_stay_small_and_split_by_concern():
    import importlib
    from pathlib import Path
    root = Path(mavgame.__file__).parent / "search"
    for f in root.glob("*.py"):
        assert len(f.read_text().splitlines()) < 600, f
    for mod, names in {"mcts": ["MCTS"], "config": ["DEFAULTS", "check_params"],
                       "evaluator_io": ["Request", "EvaluatorError", "OutputReader"],
                       "results": ["SearchResult", "SearchError"], "uct": ["playout_uct", "UCTResult"]}.items():
        m = importlib.import_module(f"mavgame.search.{mod}")
        assert sorted(m.__all__) == sorted(set(m.__all__)) and all(n in m.__all__ for n in names), mod
    mcts = importlib.import_module("mavgame.search.mcts")
    assert mcts.__all__ == ["MCTS"]     # no re-exported names from the split (no aliases)
    assert mavgame.SearchResult.__module__ == "mavgame.search.results"
    assert mavgame.playout_uct.__module__ == "mavgame.search.uct"


def test_train_threads_default_to_one_as_the_docs_advise(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    import re
    text = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert re.search(r"--threads THREADS torch CPU threads; 0: every core.*\(default: 1\)", text), text
    from mavgame.cli.main import build_parser
    args = build_parser("train").parse_args(["train", "--data", "x"])
    assert args.threads == 1
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "model.md").read_text()
    assert "`--threads` defaults to 1" in doc


def _pytest_child(args, **env):
    import os
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    e = dict(os.environ, **env)
    e.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
                          capture_output=True, text=True, cwd=repo, env=e, timeout=300)


def test_skip_reasons_say_what_is_missing_and_how_to_get_it(tmp_path):
    missing = tmp_path / "no-such-dir"
    p = _pytest_child(["tests/test_chess.py", "tests/test_gpu_engine.py", "-k",
                       "tricky or chess960_perft_depth4 or test_gpu_engine"],
                      MG_SHARED_DATA=str(missing), MAVGAME_STOCKFISH=str(missing / "sf"),
                      MAVGAME_FAIRY_STOCKFISH=str(missing / "fsf"))
    out = p.stdout
    assert p.returncode == 0, out[-3000:]
    header = out.split("collected", 1)[0]
    for name in ("stockfish:", "fairy-stockfish:", "reference data:", "MG_SHARED_DATA"):
        assert name in header, (name, header)
    skips = [ln for ln in out.splitlines() if ln.startswith("SKIPPED")]
    data = [ln for ln in skips if "test_chess.py" in ln]
    assert data and all("reference data" in ln and f"MG_SHARED_DATA={missing} is not a folder" in ln
                        and "shared/data" not in ln for ln in data), data
    import mavgame._core as core
    if core.cuda_status()[0] == 0:
        gpu = [ln for ln in skips if "test_gpu_engine.py" in ln]
        assert gpu and all(ln.count("no usable CUDA device") <= 1 for ln in gpu), gpu
        assert "CUDA GPU:" in header


def test_the_header_lists_every_module_a_test_skips_without():
    import re
    from pathlib import Path
    import conftest
    listed = {m for m, _, _ in conftest.OPTIONAL_MODULES}
    needed = set()
    for f in Path(__file__).resolve().parent.glob("test_*.py"):
        needed |= {m.split(".")[0] for m in re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", f.read_text())}
    # a dependency, the standard library of Python 3.11+, and test_skip_report's module that no one has
    needed -= {"numpy", "tomllib", "no_such_module_for_mavgame_tests"}
    assert needed <= listed, f"optional modules the report header does not name: {sorted(needed - listed)}"


def test_mav_agents_are_named_by_their_kind_as_the_other_kinds_are():
    from mavgame.agents import make_agent
    for spec in ("random", "perfect", "minimax"):
        assert make_agent(spec).name == spec
    try:
        names = {spec: make_agent(spec).name for spec in ("mav", "mav:scoring=max", "mav:mirror=1",
                                                          "mav:scoring=max,mirror=1")}
    except (FileNotFoundError, ImportError) as e:
        pytest.skip(f"no shipped Connect Four MAV to make the agents with ({e})")
    assert names == {"mav": "mav", "mav:scoring=max": "mav-max", "mav:mirror=1": "mav-mirror",
                     "mav:scoring=max,mirror=1": "mav-max-mirror"}


@pytest.mark.parametrize("game,files,ranks", [("chess", "abcdefgh", 8), ("gardner", "abcde", 5),
                                              ("tictactoe", "abc", 3)])
def test_play_prints_the_board_with_the_coordinates_the_prompt_takes(game, files, ranks):
    from mavgame.cli.play import _display
    lines = _display(mavgame.State(game)).splitlines()
    assert len(lines) == ranks + 1
    assert [ln.split()[0] for ln in lines[:-1]] == [str(r) for r in range(ranks, 0, -1)]
    assert lines[-1].split() == list(files)
    if game == "chess":
        assert lines[0].split()[1:] == list("rnbqkbnr") and lines[7].split()[1:] == list("RNBQKBNR")


def test_play_numbers_connect_four_columns_and_labels_hex_as_the_prompt_takes():
    from mavgame.cli.play import _display
    c4 = _display(mavgame.State("connect_four")).splitlines()
    assert c4[-1].split() == [str(c) for c in range(1, 8)]
    s = mavgame.State("connect_four")
    assert all(s.is_legal(c) for c in c4[-1].split())       # the labels are the moves the prompt takes
    hexb = _display(mavgame.State("hex", None, 5)).splitlines()
    assert hexb[0].split() == list("abcde") and [ln.split()[0] for ln in hexb[1:]] == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("moves,move,why", [
    ("", "9", "the column is out of range"), ("", "0", "the column is out of range"),
    ("", "x", "not a column number"), ("", "", "not a column number"), ("444444", "4", "the column is full")])
def test_a_bad_connect_four_move_says_why_and_lists_the_legal_moves(moves, move, why):
    s = mavgame.ConnectFour.from_moves(moves)
    with pytest.raises(ValueError) as e:
        s.push(move)
    msg = str(e.value)
    legal = ", ".join(s.legal_moves)
    assert f"'{move}'" in msg and why in msg and msg.endswith(f"; legal moves: {legal}"), msg
    assert s.text() not in msg and "......." not in msg, msg        # no board string


@pytest.mark.parametrize("game,bad", [("hex", "z9"), ("tictactoe", "d4"), ("connect_four", 9),
                                      ("chess", "e2e5"), ("gardner", "a2a4")])
def test_every_games_bad_move_lists_the_legal_moves_and_only_fen_names_the_position(game, bad):
    s = mavgame.State(game, None, 5 if game == "hex" else 0)
    with pytest.raises(ValueError) as e:
        s.push(bad)
    msg = str(e.value)
    assert str(bad) in msg and "; legal moves: " in msg
    assert (s.text() in msg) == (game in ("chess", "gardner")), msg


def test_the_shipped_connect_four_model_refuses_a_chess_prompt():
    from mavgame import mav
    from mavgame.model.inference import MAVModel
    try:
        model = MAVModel.load(backend="auto")
    except (FileNotFoundError, ImportError) as e:
        pytest.skip(f"no shipped Connect Four MAV ({e})")
    assert model.game == "connect_four"
    chess = mav.prompt(mavgame.Chess(), "%state %top_all %best_action")
    with pytest.raises(ValueError, match=r"a 'chess' prompt for model .*trained on 'connect_four' only"):
        model.generate([chess])
    with pytest.raises(ValueError, match="'chess' prompt"):
        model.analyse([mavgame.Chess()])
    c4 = mav.prompt(mavgame.ConnectFour(), "%state %top_all %best_action")
    assert model.generate([c4], max_new_tokens=8)[0].ids
