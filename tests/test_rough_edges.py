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
