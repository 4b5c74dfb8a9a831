"""``import mavgame`` and ``mavgame --help`` stay light (issue 48): the Connect Four opening book is read, and
``c4_solve``'s default solver made, by the first solve that needs them; the command line's help imports no
PyTorch and no other optional heavy package."""
import subprocess
import sys

from mavgame.games import c4_book


def _run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_import_reads_no_book_and_makes_no_solver():
    """An audit hook sees every file opened: importing the package opens no book; the first default solve
    opens the shipped book (when the package has one) and attaches it to the default solver it makes."""
    out = _run(
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda ev, a: opened.append(str(a[0])) if ev == 'open' and a and 'c4_book' in str(a[0])"
        " else None)\n"
        "import mavgame\n"
        "from mavgame import _core\n"
        "assert not [p for p in opened if p.endswith('.bin')], opened\n"
        "assert '_c4_default_solver' not in vars(_core), 'the default solver was made at import'\n"
        "assert 'mavgame.games.c4_book' not in sys.modules, 'c4_book was imported'\n"
        "score = _core.c4_solve(mavgame.ConnectFour('4444'), moves=False)[0]\n"
        "sv = vars(_core)['_c4_default_solver']\n"
        "assert _core._c4_default_solver is sv and _core.c4_solve(mavgame.ConnectFour('44'))[0] is not None\n"
        "books = [p for p in opened if p.endswith('.bin')]\n"
        "print(score, len(books), sv.book is not None)\n"
    )
    score, books, has_book = out.split()
    assert int(score) == 1   # after 4444 the side to move still wins the game
    shipped = c4_book.SHIPPED.exists()
    assert (int(books), has_book) == ((1, "True") if shipped else (0, "False"))


def test_core_getattr_still_refuses_unknown_names():
    from mavgame import _core
    try:
        _core.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")


def test_top_level_help_imports_only_the_command_line():
    """``mavgame --help`` imports nothing beyond ``import mavgame`` but the command line's own modules and the
    standard library (argparse): no command module, no third-party package."""
    out = _run(
        "import contextlib, io, sys\n"
        "import mavgame\n"
        "before = set(sys.modules)\n"
        "from mavgame.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 0, e.code\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print(' '.join(new))\n"
    )
    new = out.split()
    assert "mavgame.cli.main" in new, new
    others = [m for m in new if m.split(".")[0] not in sys.stdlib_module_names
              and m not in ("mavgame.cli", "mavgame.cli.main", "mavgame.cli.options")]
    assert not others, others


def test_help_imports_no_torch():
    """``mavgame --help`` and every ``mavgame COMMAND --help``: no PyTorch, matplotlib, Ray, python-chess,
    OpenSpiel, Gymnasium or PettingZoo in sys.modules afterwards, and no book read."""
    out = _run(
        "import contextlib, io, sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda ev, a: opened.append(str(a[0])) if ev == 'open' and a and 'c4_book' in str(a[0])"
        " else None)\n"
        "from mavgame.cli.main import COMMANDS, main\n"
        "heavy = ('torch', 'matplotlib', 'ray', 'chess', 'pyspiel', 'gymnasium', 'pettingzoo', 'safetensors')\n"
        "for argv in [['--help'], *[[c, '--help'] for c in COMMANDS]]:\n"
        "    buf = io.StringIO()\n"
        "    with contextlib.redirect_stdout(buf):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit as e:\n"
        "            assert e.code == 0, (argv, e.code)\n"
        "    assert 'usage: mavgame' in buf.getvalue(), argv\n"
        "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "    assert not loaded, (argv, loaded)\n"
        "assert not [p for p in opened if p.endswith('.bin')], opened\n"
        "print(len(COMMANDS))\n"
    )
    assert int(out) >= 10
