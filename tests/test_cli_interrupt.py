"""Ctrl-C stops ``mavgame perft`` (issue 49): the command exits 130 with one line saying what stopped, for every
game with a deep tree; and a Connect Four perft deeper than the game can last answers 0 at once (it used to
walk every game to its end without ever reaching the cancellation checks, so Ctrl-C did nothing).

Each case runs the real command line in a child process.  The child's SIGINT is reset to the default before
``exec`` (preexec_fn): a shell without job control starts background commands with SIGINT ignored, and a Python
started that way keeps ignoring it, which would make the test depend on how pytest itself was started.
"""
import os
import select
import signal
import subprocess
import sys
import time

import pytest

import mavgame

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cli(args, **kw):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "mavgame", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


@pytest.mark.parametrize("args", [
    ["--game", "connect_four", "--depth", "40"],
    ["--game", "connect_four", "--depth", "42", "--divide"],
    ["--game", "chess", "--depth", "12"],
    ["--game", "hex", "--depth", "30"],
], ids=["connect_four", "connect_four-divide", "chess", "hex"])
def test_ctrl_c_stops_a_deep_perft_with_exit_130_and_one_line(args):
    p = _cli(["perft", *args])
    try:
        # the warning of a long perft comes 0.5 s into the count: the interrupt then lands in the C loop
        # (not in the interpreter's start-up, however slow a loaded machine makes it)
        ready, _, _ = select.select([p.stderr], [], [], 60)
        assert ready, f"perft {args}: no warning within 60 s"
        first = p.stderr.readline()
        assert "may take" in first and "Ctrl-C stops it" in first, first
        time.sleep(0.5)
        assert p.poll() is None, f"perft {args} finished before the interrupt: {p.communicate()}"
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        out, err = p.communicate(timeout=3)
        took = time.monotonic() - t0
    except subprocess.TimeoutExpired:
        pytest.fail(f"perft {args}: still running 3 s after SIGINT")
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, (p.returncode, err)
    assert took < 3
    assert f"mavgame: interrupted: perft {args[3]} stopped after" in err, err
    assert "Traceback" not in err and out == "", (out, err)


def test_connect_four_perft_deeper_than_the_game_lasts_is_zero_at_once():
    p = _cli(["perft", "--game", "connect_four", "--depth", "50"])
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("perft 50 of Connect Four (at most 42 plies) did not answer within 30 s")
    assert p.returncode == 0, err
    assert out.strip() == "perft(50) = 0"
    assert "may take" not in err, err     # no warning for a count that comes at once


def _perft_by_moves(s, depth):
    if depth == 0:
        return 1
    total = 0
    for a in s.legal_actions():
        s.push(a)
        total += _perft_by_moves(s, depth - 1)
        s.pop()
    return total


@pytest.mark.parametrize("moves", ["4125166471521345675467154146577722", "51642713771171647635371266632224323",
                                   "4211246127725627666331655732133177543"])
def test_connect_four_perft_near_a_full_board_matches_the_move_tree(moves):
    s = mavgame.ConnectFour.from_moves(moves)
    empty = 42 - len(moves)
    for d in range(max(0, empty - 2), empty + 3):
        assert s.perft(d) == _perft_by_moves(s, d), (moves, d)
    assert s.perft(empty + 1) == 0 and s.perft(64) == 0
