"""The mavgame command line: play, match, league, annotate, bench and their --help."""
import io
import json
import subprocess
import sys

import pytest

from mavgame import cli
from mavgame.cli import league as cli_league
from mavgame.engines.uci import find_stockfish

SUBCOMMANDS = ["games", "perft", "play", "match", "league", "annotate", "bench"]


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("cmd", SUBCOMMANDS)
def test_help_explains_every_option(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([cmd, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[cmd]
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{cmd} {action.option_strings} has no help"
            assert action.option_strings[-1] in out


def _stored(path):
    from mavgame.play.store import ResultStore
    with ResultStore(str(path), create=False) as st:
        return st.header(), [r.to_dict() for r in st.games()[0]]


def test_league_runs_prints_elo_and_resumes(tmp_path, capsys):
    out_file = tmp_path / "ttt.sqlite"
    pgn = tmp_path / "games.txt"
    plot = tmp_path / "elo.png"
    args = ["league", "--game", "tictactoe", "--agent", "random", "--agent", "mm=minimax",
            "--agent", "uct:sims=30", "--workers", "2", "--out", str(out_file), "--no-progress",
            "--games-out", str(pgn), "--anchor", "random=0", "--anchor", "mm=400"]
    pytest.importorskip("matplotlib")
    rc, out, err = run(capsys, *args, "--plot", str(plot), "--export", str(tmp_path / "g.csv"),
                       "--export", str(tmp_path / "g.jsonl"))
    assert rc == 0
    assert "18 games" in out and "W/D/L" in out and "ext. Elo" in out
    assert "mm" in out and "uct-30" in out
    assert plot.stat().st_size > 1000
    assert len(pgn.read_text().splitlines()) == 18
    assert len((tmp_path / "g.csv").read_text().splitlines()) == 19
    assert len((tmp_path / "g.jsonl").read_text().splitlines()) == 19
    _, games = _stored(out_file)
    assert len(games) == 18
    rc, out, err = run(capsys, *args)
    assert rc == 0 and "18 game(s) there already: resuming" in err
    assert _stored(out_file)[1] == games
    from mavgame.play.store import ResultStore
    with ResultStore(str(out_file)) as st:  # the printed table is stored with its origin, prior and anchors
        e = st.elo()
    assert e["origin"] is None and e["prior_draws"] == 1.0 and "mean 0, 1 virtual draw(s) per pair" in e["method"]
    assert e["calibration"]["anchors"] == {"random": 0.0, "mm": 400.0} and len(e["rows"]) == 3
    rc, out, err = run(capsys, *args, "--zero", "random", "--prior", "0.5")  # the paper's scale: one agent at 0
    assert rc == 0 and "random = 0, 0.5 virtual draw(s) per pair" in out
    with ResultStore(str(out_file)) as st:
        e = st.elo()
    assert e["origin"] == {"agent": "random", "rating": 0.0} and e["prior_draws"] == 0.5
    assert next(r for r in e["rows"] if r["agent"] == "random")["elo"] == 0.0
    row = next(ln.split() for ln in out.splitlines() if ln.split()[:1] != [] and ln.split()[0].isdigit()
               and ln.split()[1:2] == ["random"])
    assert row[2] == "0"
    with pytest.raises(SystemExit, match="'nobody' is not an agent of this league"):
        run(capsys, *args, "--zero", "nobody")


def test_league_jsonl_out_imports_an_old_results_file(tmp_path, capsys):
    # the results file of older versions: --out x.jsonl keeps the results in x.sqlite, importing x.jsonl once
    old = tmp_path / "ttt.jsonl"
    args = ["league", "--game", "tictactoe", "--agent", "random", "--agent", "mm=minimax", "--workers", "1",
            "--no-progress"]
    rc, out, err = run(capsys, *args, "--out", "-", "--max-games", "3")
    old.write_text(json.dumps({"type": "league", "game": "tictactoe", "agents": {"random": "random", "mm": "minimax"}})
                   + "\n" + out + "not json\n")
    rc, out, err = run(capsys, *args, "--out", str(old))
    assert rc == 0 and "6 games" in out
    assert "results now kept in" in err and "3 game(s) imported, 1 line(s) refused: line 5: not JSON" in err
    assert "(3 game(s) there already: resuming)" in err
    assert len(_stored(tmp_path / "ttt.sqlite")[1]) == 6
    with pytest.raises(SystemExit, match="--fresh with --out .*ttt.jsonl: that JSON-lines file would be imported"):
        cli.main([*args, "--out", str(old), "--fresh"])
    rc, out, err = run(capsys, *args, "--out", str(tmp_path / "ttt.sqlite"), "--fresh")
    assert rc == 0 and "resuming" not in err and len(_stored(tmp_path / "ttt.sqlite")[1]) == 6


def test_default_league_configuration(tmp_path, capsys, monkeypatch):
    # the README's main command: the embedded defaults must build; play a few of its games, resume
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "league", "--max-games", "4", "--workers", "1", "--no-progress")
    assert rc == 0
    assert "connect_four: 6 agents, 6 opening(s), 180 games; results in league-connect_four.sqlite" in err
    header, games = _stored(tmp_path / "league-connect_four.sqlite")
    assert list(header["agents"]) == ["random", "uct-100", "uct-400", "uct-1600", "solver-mcts-50", "perfect"]
    assert [o["name"] for o in header["openings"]] == cli_league.DEFAULT_LEAGUE["openings"].split(",")
    assert "4 games" in out and "Elo" in out and len(games) == 4
    rc, out, err = run(capsys, "league", "--max-games", "2", "--workers", "1", "--no-progress")
    assert rc == 0 and "(4 game(s) there already: resuming)" in err and "6 games" in out


def test_match_out_dash_writes_json_lines_to_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "match", "minimax", "random", "--game", "tictactoe", "--no-progress", "--workers", "1",
                       "--out", "-")
    assert rc == 0 and not (tmp_path / "-").exists() and list(tmp_path.iterdir()) == []
    recs = [json.loads(x) for x in out.splitlines()]
    assert len(recs) == 6 and all(r["type"] == "game" for r in recs)
    assert "W/D/L" in err and "Elo" in err


@pytest.mark.parametrize("argv,msg", [
    (["--max-plies", "0"], "argument --max-plies: must be >= 1, not 0"),
    (["--workers", "0"], "argument --workers: must be >= 1, not 0"),
    (["--workers", "-2"], "argument --workers: must be >= 1, not -2"),
    (["--matchups", "0"], "argument --matchups: must be >= 1, not 0"),
])
def test_league_numbers_must_be_positive(argv, msg, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "none", *argv])
    assert e.value.code == 2 and msg in capsys.readouterr().err


def test_bad_agent_and_anchor_refused_before_any_game(capsys):
    with pytest.raises(SystemExit, match="agent 'uct:sims=-5': sims must be a number of simulations >= 1, not -5"):
        cli.main(["league", "--game", "tictactoe", "--agent", "uct:sims=-5", "--agent", "random", "--out", "none"])
    with pytest.raises(SystemExit, match="--anchor nonexistent=...: 'nonexistent' is not an agent of this league "
                                         r"\(agents: random, minimax\)"):
        cli.main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "none",
                  "--anchor", "nonexistent=1500", "--no-progress"])
    assert "games" not in capsys.readouterr().err  # refused before the league started


def test_match(capsys):
    rc, out, err = run(capsys, "match", "minimax", "random", "--game", "tictactoe", "--rounds", "2", "--no-progress",
                       "--workers", "1")
    assert rc == 0 and "12 games" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("minimax "))
    assert row.split()[1].endswith("/0")  # W/D/L against random: minimax never loses


def test_bad_arguments_are_clear(capsys):
    with pytest.raises(SystemExit, match="unknown agent kind 'bogus'"):
        cli.main(["match", "bogus", "random", "--game", "tictactoe"])
    with pytest.raises(SystemExit, match="unknown opening"):
        cli.main(["match", "random", "random", "--openings", "nope"])
    with pytest.raises(SystemExit, match="give the agents of a chess league"):
        cli.main(["league", "--game", "chess"])
    with pytest.raises(SystemExit, match="--anchor takes NAME=RATING.*--zero oops"):
        cli.main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax", "--out", "-",
                  "--anchor", "oops", "--no-progress"])
    with pytest.raises(SystemExit, match="cannot play 'tictactoe'"):
        cli.main(["league", "--game", "tictactoe", "--agent", "random", "--agent", "stockfish", "--out", "-"])


def test_play_against_an_agent(monkeypatch, capsys):
    # human plays first: b2, then an illegal move, the move list, then corners until the game ends
    inp = "b2\nb2\nmoves\nhint\nundo\nb2\na1\nc3\na3\nc1\nquit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(inp))
    rc, out, err = run(capsys, "play", "--game", "tictactoe", "--agent", "minimax", "--hint", "minimax")
    assert rc == 0
    assert "you play first against minimax" in out
    assert "illegal move" in out
    assert "hint (minimax):" in out
    assert "minimax plays" in out
    assert out.count("you play first") == 1


def test_play_moves_take_san_and_uci_as_the_prompt_does(monkeypatch, capsys):
    """--moves reads the notation the prompt reads: SAN or UCI for chess, mixed (issue 49)."""
    from mavgame import Chess
    for moves in ("e4 e5", "e2e4 e7e5", "e4 e7e5"):
        monkeypatch.setattr(sys, "stdin", io.StringIO("moves\nquit\n"))
        rc, out, err = run(capsys, "play", "--game", "chess", "--agent", "random", "--moves", moves)
        assert rc == 0, err
        after = Chess()
        after.push_san("e4")
        after.push_san("e5")
        assert "> " + " ".join(after.legal_moves) + "\n" in out, out   # 'moves' lists the position after them
    monkeypatch.setattr(sys, "stdin", io.StringIO("Nf3\nquit\n"))   # and the prompt itself, after them
    rc, out, err = run(capsys, "play", "--game", "chess", "--agent", "random", "--moves", "e4 e5")
    assert rc == 0 and "illegal move" not in out and "random plays" in out
    with pytest.raises(SystemExit, match=r"--moves: move 3: illegal SAN 'Nf6'"):
        cli.main(["play", "--game", "chess", "--agent", "random", "--moves", "e4 e5 Nf6"])
    with pytest.raises(SystemExit, match=r"--moves: move 1: illegal move 'e2e5'"):
        cli.main(["play", "--game", "chess", "--agent", "random", "--moves", "e2e5"])
    with pytest.raises(SystemExit, match=r"--moves: move 2: .*'8'"):
        cli.main(["play", "--game", "connect_four", "--agent", "random", "--moves", "4 8"])


def test_play_second_and_end_of_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("4\n"))
    rc, out, err = run(capsys, "play", "--game", "connect_four", "--agent", "uct:sims=50", "--color", "second")
    assert rc == 0 and "uct-50 plays" in out and "end of input" in out
    assert "1 2 3 4 5 6 7" in out


def test_bench(capsys):
    rc, out, err = run(capsys, "bench", "--game", "tictactoe", "--game", "connect_four", "--seconds", "0.05",
                       "--no-progress")
    assert rc == 0
    assert "perft(" in out and "random playouts" in out and "playout UCT" in out and "MAV-MCTS" in out
    assert len([ln for ln in out.splitlines() if ln.startswith("connect_four")]) == 4


@pytest.mark.skipif(find_stockfish() is None, reason="Stockfish not installed")
def test_annotate(tmp_path, capsys):
    src = tmp_path / "pos.txt"
    src.write_text("startpos\nstartpos moves e2e4 e7e5\n6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\n")
    out = tmp_path / "ann.jsonl"
    rc, o, err = run(capsys, "annotate", str(src), "-o", str(out), "--nodes", "3000", "--workers", "2",
                     "--no-progress", "--mav", "%state %top_all %best_action")
    assert rc == 0 and "3 position(s) annotated" in err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows[0]["values"]) == 20 and rows[2]["best"] == "a1a8"
    assert rows[2]["mav"].startswith("<mav game=chess> %state %top_all %best_action </mav>")
    assert "[%best_action a1a8]" in rows[2]["mav"]
    rc, o, err = run(capsys, "annotate", str(src), "-o", str(out), "--nodes", "3000", "--no-progress")
    assert "0 position(s) annotated" in err  # resumed: nothing left


def test_entry_point_runs():
    r = subprocess.run([sys.executable, "-m", "mavgame", "league", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "Elo" in r.stdout


@pytest.mark.skipif(find_stockfish() is None, reason="Stockfish not installed")
def test_chess_match_calibrated_by_uci_elo(tmp_path, capsys):
    rc, out, err = run(capsys, "match", "weak=random", "sf=stockfish:elo=1400,movetime=10",
                       "--game", "chess", "--openings", "1", "--max-plies", "300", "--anchor-uci-elo",
                       "--no-progress", "--workers", "2", "--pgn", str(tmp_path / "g.pgn"))
    assert rc == 0 and "2 games" in out
    rows = {ln.split()[1]: ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()}
    assert rows["sf"][5] == "1400" and rows["sf"][8] == "1400"  # the anchor keeps its rating
    assert float(rows["weak"][5]) < 1400
    assert (tmp_path / "g.pgn").read_text().count("[Event ") == 2
    # two anchors with equal internal ratings cannot fix a slope: the table is printed uncalibrated
    rc, out, err = run(capsys, "match", "a=stockfish:elo=1400,nodes=50", "b=stockfish:elo=1500,nodes=50",
                       "--game", "chess", "--openings", "1", "--max-plies", "2", "--anchor-uci-elo",
                       "--no-progress", "--workers", "1")
    assert rc == 0 and "no calibration" in err and "equal internal ratings" in err and "Elo" in out


def test_train_generate_only_needs_no_out_dir(tmp_path):
    """`mavgame train --generate-only` writes a position set without a run directory; training needs --out."""
    from mavgame.cli import main

    data = tmp_path / "ttt"
    assert main(["train", "--game", "tictactoe", "--data", str(data), "--games", "3", "--generate-only",
                 "--no-progress"]) == 0
    assert any(data.rglob("*"))
    with pytest.raises(SystemExit, match="--out"):
        main(["train", "--data", str(data), "--no-progress"])


def test_league_gauntlet_plays_every_agent_against_one_reference(tmp_path, capsys):
    out_file = tmp_path / "g.sqlite"
    args = ["league", "--game", "tictactoe", "--agent", "ref=minimax", "--agent", "random", "--agent", "uct:sims=20",
            "--openings", "random:2:3", "--seed", "5", "--workers", "1", "--no-progress", "--out", str(out_file),
            "--gauntlet", "ref"]
    rc, out, err = run(capsys, *args)
    assert rc == 0 and "12 games" in out                    # 2 challengers x 3 openings x 2 colours
    assert "ref = 0" in out                                  # the reference anchors the scale
    _, games = _stored(out_file)
    pairs = {frozenset((g["first"], g["second"])) for g in games}
    assert pairs == {frozenset(("ref", "random")), frozenset(("ref", "uct-20"))}
    rc, out, err = run(capsys, *args, "--zero", "random")   # another anchor on request
    assert rc == 0 and "random = 0" in out and "12 game(s) there already: resuming" in err
    with pytest.raises(SystemExit, match="--gauntlet nobody: 'nobody' is not an agent of this league"):
        run(capsys, *args, "--gauntlet", "nobody")
