"""docs/model.md's DataLoader recipe (section "The training stream") runs as written and gives what it says."""
import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "model.md"


def test_dataloader_recipe_runs():
    pytest.importorskip("torch")
    part = DOC.read_text().split("\n### The training stream\n", 1)[1].split("\n## ", 1)[0]
    code, = re.findall(r"```python\n(.*?)```", part, re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(code, "docs/model.md (DataLoader recipe)", "exec"), {"__name__": "__main__"})
    rows = [line.split(maxsplit=1) for line in out.getvalue().splitlines()]
    # two workers, round robin: batches 0..3 in order, each of 8 examples with some target tokens
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3]
    for _, rest in rows:
        shape, n_target = rest.rsplit(maxsplit=1)
        assert shape.startswith("(8, ") and int(n_target) > 0
