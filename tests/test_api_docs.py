"""The API reference (docs/api: Sphinx autodoc + autosummary over the package) builds with warnings as errors,
as CI builds it (issue 48), with one page per public module and none for a private one."""
import pathlib
import pkgutil
import subprocess
import sys

import pytest

import mavgame

pytest.importorskip("sphinx", reason="the API reference needs Sphinx (pip install -e '.[docs]')")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _public_modules():
    names = ["mavgame"] + [m.name for m in pkgutil.walk_packages(mavgame.__path__, "mavgame.")]
    return [n for n in names if not any(part.startswith("_") for part in n.split(".")[1:])]


@pytest.mark.slow   # about 40 s on two cores: it imports and documents every module
def test_api_reference_builds_with_warnings_as_errors(tmp_path):
    out = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        "-d", str(tmp_path / "doctrees"), str(ROOT / "docs" / "api"), str(out)],
                       capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    pages = {p.stem for p in (out / "generated").glob("*.html")}
    skipped = {line.split()[3] for line in r.stdout.splitlines() if line.startswith("mavgame API reference: ")}
    assert set(_public_modules()) - skipped <= pages, sorted(set(_public_modules()) - skipped - pages)
    assert not [p for p in pages if "._" in p], sorted(p for p in pages if "._" in p)
    top = (out / "generated" / "mavgame.html").read_text(encoding="utf-8")
    assert 'id="mavgame.State"' in top and 'id="mavgame.State.push"' in top   # the C core's State, re-exported
    c4 = (out / "generated" / "mavgame.games.connect_four.html").read_text(encoding="utf-8")
    assert 'id="mavgame.games.connect_four.ConnectFour.solve"' in c4
