"""Bad command lines (issue 21): each ends in one ``mavgame: ...`` line on stderr that names the offending
argument, with a non-zero exit status, never a traceback, and before any game or engine work starts."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mavgame import cli
from mavgame.cli import play as cli_play
from fake_uci import REPO, write_fake_engine


def run_cli(capsys, argv, monkeypatch=None):
    try:
        rc = cli.main(list(argv))
    except SystemExit as e:   # what the interpreter does with SystemExit at the top
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            rc = 1
        else:
            rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "ok.txt").write_text("startpos\nstartpos moves e2e4\n")
    (d / "illegal.txt").write_text("# a comment\nstartpos\nstartpos moves e2e4 e7e5 e1e3\n")
    (d / "latin1.txt").write_bytes("startpos\n# caf\xe9\n".encode("latin-1"))
    (d / "bad_fen.txt").write_text("8/8/8 w - - 0 1\n")
    return d


def bad_lines(d: Path):
    ok, out = str(d / "ok.txt"), str(d / "out.jsonl")
    true = "/bin/true"
    return [
        # (argv, words the last line must contain)
        (["perft", "--depth", "-1"], ["argument --depth", "-1"]),
        (["perft", "--depth", "100"], ["--depth 100", "0..64"]),
        (["perft", "--depth", "x"], ["argument --depth", "'x'"]),
        (["perft", "--game", "hex", "--board-size", "100000", "--depth", "1"], ["--board-size 100000"]),
        (["perft", "--game", "hex", "--board-size", "-3"], ["--board-size -3"]),
        (["perft", "--game", "nope"], ["--game nope", "connect_four"]),
        (["perft", "--fen", "garbage"], ["--fen 'garbage'"]),
        (["play", "--agent", "nonsense"], ["--agent nonsense", "unknown agent kind"]),
        (["play", "--hint", "uct:sims=x=1"], ["--hint uct:sims=x=1"]),
        (["play", "--seed", "-3"], ["--seed -3"]),
        (["play", "--game", "chess", "--agent", "uci:path=/nonexistent"], ["uci:path=/nonexistent"]),
        (["match", "random", "random", "--seed", "-1"], ["--seed -1"]),
        (["match", "uci:path=/bin/cat,timeout=0.5", "random", "--game", "chess"],
         ["uci:path=/bin/cat", "did not answer"]),
        (["match", f"uci:path={true}", "random", "--game", "chess"], [f"uci:path={true}", "exited"]),
        (["match", "random", "random", "--out", "/nonexistent/x.jsonl"], ["--out /nonexistent/x.jsonl"]),
        (["league", "--agent", "random", "--agent", "uct", "--games-out", "/nonexistent/g.txt"], ["--games-out"]),
        (["league", "--agent", "random", "--agent", "uct", "--out", str(d)], ["--out", "is a folder"]),
        (["league", "--agent", "uct:sims=abc", "--agent", "random"], ["uct:sims=abc"]),
        (["annotate", str(d / "missing.txt"), "--engine", true], ["missing.txt", "not found"]),
        (["annotate", ok, "-o", out, "--engine", "/nonexistent"], ["--engine /nonexistent", "no such executable"]),
        (["annotate", ok, "-o", out, "--engine", true, "--workers", "2"], ["--engine /bin/true", "exited"]),
        (["annotate", str(d / "illegal.txt"), "-o", out, "--engine", true], ["line 3", "move 3 'e1e3'", "illegal"]),
        (["annotate", str(d / "latin1.txt"), "-o", out, "--engine", true], ["line 2", "not UTF-8"]),
        (["annotate", str(d / "bad_fen.txt"), "-o", out, "--engine", true], ["line 1", "8/8/8"]),
        (["annotate", ok, "-o", out, "--nodes", "-5"], ["argument --nodes", "-5"]),
        (["annotate", ok, "-o", out, "--workers", "0"], ["argument --workers", "0"]),
        (["annotate", ok, "-o", "/nonexistent/x.jsonl", "--engine", true], ["--output /nonexistent/x.jsonl"]),
        (["bench", "--seconds", "-1"], ["argument --seconds"]),
        (["bench", "--game", "nope"], ["--game nope"]),
        (["nosuchcommand"], ["argument COMMAND", "nosuchcommand"]),
    ]


def test_every_bad_command_line_ends_in_one_line_naming_the_argument(files, capsys):
    for argv, words in bad_lines(files):
        rc, out, err = run_cli(capsys, argv)
        lines = err.strip().splitlines()
        assert rc not in (0, None), (argv, rc, err)
        assert lines and lines[-1].startswith("mavgame: "), (argv, err)
        assert "Traceback" not in err and "Traceback" not in out, (argv, err)
        for w in words:
            assert w in lines[-1], (argv, w, lines[-1])
        assert len([ln for ln in lines if ln.startswith("mavgame: ")]) == 1, (argv, err)
    assert not (files / "out.jsonl").exists()   # nothing was annotated


def test_plot_without_matplotlib_is_refused_before_any_game(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib -> ImportError
    out = tmp_path / "l.jsonl"
    rc, _, err = run_cli(capsys, ["league", "--game", "tictactoe", "--agent", "random", "--agent", "minimax",
                                  "--out", str(out), "--plot", str(tmp_path / "p.png"), "--no-progress"])
    assert rc == 1 and err.strip().splitlines()[-1].startswith("mavgame: --plot") and "matplotlib" in err
    assert not out.exists()   # no game was played


def test_annotate_with_a_failing_engine_and_workers_fails_once(tmp_path):
    """Through the API too (no respawn loop of pool workers): one EngineError, at once."""
    import time

    from mavgame.engines.annotate import _worker_annotate, _worker_init, annotate_many
    from mavgame.engines.uci_protocol import EngineError
    dead = write_fake_engine(tmp_path, "crash_at_start")
    for engine in ("/nonexistent", "/bin/true", str(dead)):
        t = time.monotonic()
        with pytest.raises(EngineError):
            list(annotate_many(["startpos", "startpos moves e2e4"] * 4, workers=2, engine=engine))
        assert time.monotonic() - t < 10
    # a worker whose engine does not start reports it with every task instead of raising in the initializer
    _worker_init({"engine": "/nonexistent"})
    idx, d, err = _worker_annotate((3, "startpos", []))
    assert idx == 3 and d is None and "cannot start engine '/nonexistent'" in err


def test_annotate_refuses_a_line_with_an_illegal_move(tmp_path):
    from mavgame import IllegalMoveError
    from mavgame.engines.annotate import Annotator, annotate_many
    engine = write_fake_engine(tmp_path, "ok")
    with pytest.raises(IllegalMoveError, match=r"position 1 .*move 1 'e2e5'"):
        list(annotate_many(["startpos", "startpos moves e2e5"], engine=str(engine)))
    with Annotator(str(engine)) as ann:
        with pytest.raises(IllegalMoveError, match="e2e5"):
            ann.annotate("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ["e2e5"])
        a = ann.annotate("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ["e2e4"])
        assert a.moves == ["e2e4"] and a.best is not None


def _mavgame(*argv, stdin=b"", env=None):
    e = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "mavgame", *argv], input=stdin, capture_output=True,
                          timeout=60, env=e, cwd=REPO)


def test_bare_command_help_version_and_agent_kinds():
    p = _mavgame()
    assert p.returncode == 0 and b"usage: mavgame" in p.stdout and b"perft" in p.stdout
    p = _mavgame("--version")
    assert p.returncode == 0 and p.stdout.decode().startswith("mavgame 0.")
    for cmd in ("match", "league", "play"):
        out = _mavgame(cmd, "--help").stdout.decode()
        for kind in ("mav_mcts", "mav ", "model", "uct", "solver_mcts", "stockfish", "uci", "python"):
            assert kind in out, (cmd, kind)


def test_non_utf8_standard_input_is_one_line(tmp_path):
    p = _mavgame("annotate", "-", "-o", str(tmp_path / "o.jsonl"), "--engine", "/bin/true",
                 stdin=b"startpos\n\xff\xfe\n")
    err = p.stderr.decode()
    assert p.returncode == 1 and "Traceback" not in err
    assert err.strip().splitlines() == ["mavgame: standard input, line 2: not UTF-8 text (byte b'\\xff' at column 1)"]


def test_play_shows_that_a_slow_agent_is_thinking(tmp_path, capsys, monkeypatch):
    """The perfect player can solve for minutes in the opening: `mavgame play` says so while it thinks."""
    (tmp_path / "slow_agent_mod.py").write_text(
        "import time\n"
        "def slow(state):\n"
        "    time.sleep(0.8)\n"
        "    return list(state.legal_moves)[0]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli_play, "THINKING_DELAY", 0.2)
    answers = iter(["4", "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    rc, out, err = run_cli(capsys, ["play", "--agent", "python:fn=slow_agent_mod:slow", "--color", "second"])
    assert rc == 0 and "slow plays 1" in out
    assert "slow is thinking... 0 s" in err
    assert "perfect player" in cli_play._thinking_hint("perfect", "connect_four")
    assert cli_play._thinking_hint("uct:sims=10", "connect_four") == ""
