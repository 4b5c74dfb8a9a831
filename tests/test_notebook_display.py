"""Jupyter: progress bars without warnings, the Connect Four picture marks the last move (issue 21)."""
import re
import subprocess
import sys
import textwrap

import mavgame
from fake_uci import REPO

# A Jupyter kernel as tqdm.auto detects one (ipykernel's shell loaded, get_ipython() a ZMQ shell), with
# ipywidgets missing: tqdm.auto then warns "IProgress not found" at import.
NOTEBOOK = textwrap.dedent(f"""
    import sys, types, warnings
    sys.path.insert(0, {REPO!r})
    warnings.simplefilter("always")
    sys.modules["ipywidgets"] = None
    sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")
    class ZMQInteractiveShell: pass
    ipy = types.ModuleType("IPython"); ipy.get_ipython = lambda: ZMQInteractiveShell()
    sys.modules["IPython"] = ipy
    disp = types.ModuleType("IPython.display"); disp.display = print
    sys.modules["IPython.display"] = disp; ipy.display = disp
""")


def _run(code):
    return subprocess.run([sys.executable, "-c", NOTEBOOK + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_the_simulated_notebook_makes_tqdm_auto_warn():
    p = _run("import tqdm.auto\n")
    assert p.returncode == 0 and "IProgress not found" in p.stderr     # what the package must avoid


def test_progress_bars_in_a_notebook_without_ipywidgets_give_no_warning():
    p = _run("""
        from mavgame.play.league import League
        lg = League(["random", "minimax"], "tictactoe", openings=1)
        res = lg.run(progress=True)
        print("games", len(res))
    """)
    assert p.returncode == 0, p.stderr
    assert "games 2" in p.stdout and "Warning" not in p.stderr


def test_progress_comes_from_one_place():
    from pathlib import Path
    pkg = Path(REPO) / "mavgame"
    bad = [str(f.relative_to(pkg)) for f in pkg.rglob("*.py")
           if f.name != "_progress.py" and re.search(r"^\s*(from tqdm|import tqdm)", f.read_text(), re.M)]
    assert not bad, bad


def test_connect_four_picture_rings_the_last_move():
    c = mavgame.ConnectFour.from_moves("4453")
    assert c.move_stack == ["4", "4", "5", "3"] and c.peek() == "3"
    svg = c._repr_svg_()
    rings = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"[^>]*class="last"', svg)
    cell = 350 / 7
    assert rings == [(f"{2.5 * cell:.2f}", f"{5.5 * cell:.2f}")]      # column 3, bottom row
    assert 'class="last"' not in mavgame.ConnectFour()._repr_svg_()
    # a position given as text has no moves to ring; the same position played move by move has
    assert 'class="last"' not in mavgame.ConnectFour(c.text())._repr_svg_()
