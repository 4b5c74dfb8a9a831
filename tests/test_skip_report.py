"""The test run says what it skipped and why (issue 21: the model tests were skipped silently without torch)."""
import os
import subprocess
import sys

from fake_uci import REPO


def test_the_summary_lists_skips_with_their_reasons(tmp_path):
    (tmp_path / "test_needs_it.py").write_text(
        "import pytest\n"
        "pytest.importorskip('no_such_module_for_mavgame_tests')\n"
        "def test_x():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO + "/tests", REPO]))
    p = subprocess.run([sys.executable, "-m", "pytest", "-c", f"{REPO}/pyproject.toml", "--rootdir", str(tmp_path),
                        "-p", "no:cacheprovider", "-p", "conftest", str(tmp_path)], capture_output=True, text=True,
                       timeout=120, env=env)
    out = p.stdout + p.stderr
    assert "SKIPPED [1]" in out and "could not import 'no_such_module_for_mavgame_tests'" in out, out
    assert "mavgame optional tools found:" in out, out
