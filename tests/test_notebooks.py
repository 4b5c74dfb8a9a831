"""Every notebook in notebooks/ runs top to bottom (code cells executed in one namespace).

No Jupyter kernel is needed: cells are compiled and executed in order; a failing cell fails the test
with the cell number. Notebooks that need optional packages declare them in a first-line comment
``# requires: torch matplotlib`` and are skipped when those are missing.
"""
import importlib.util
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    nb = json.loads(path.read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert cells, f"{path.name} has no code cells"
    first = "".join(cells[0]["source"]).splitlines()
    if first and first[0].startswith("# requires:"):
        for mod in first[0].split(":", 1)[1].split():
            if importlib.util.find_spec(mod) is None:
                pytest.skip(f"{path.name} needs {mod}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns = {"__name__": "__main__"}
    for i, cell in enumerate(cells):
        src = "".join(cell["source"])
        # IPython magics and shell escapes are not Python; notebooks here avoid them
        assert not any(line.lstrip().startswith(("%", "!")) for line in src.splitlines()), (
            f"{path.name} cell {i}: magics are not supported by the notebook test")
        try:
            exec(compile(src, f"{path.name}[cell {i}]", "exec"), ns)
        except Exception as e:  # pragma: no cover - the message is the point
            raise AssertionError(f"{path.name} cell {i} failed: {e!r}") from e
