"""docs/compat.md's three examples run as written (each skipped without its library) and print what they say."""
import contextlib
import importlib.util
import io
import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "compat.md"
NEEDS = {"OpenSpiel": "pyspiel", "PettingZoo": "pettingzoo", "Gymnasium": "gymnasium"}


def _example(section):
    text = DOC.read_text()
    part = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    block, = re.findall(r"```python\n(.*?)```", part, re.S)
    return block


@pytest.mark.parametrize("section", sorted(NEEDS))
def test_compat_doc_example_runs(section):
    if importlib.util.find_spec(NEEDS[section]) is None:
        pytest.skip(f"{NEEDS[section]} is not installed")
    code = _example(section)
    assert len(code.strip().splitlines()) <= 12
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, f"docs/compat.md ({section})", "exec"), {"__name__": "__main__"})
    printed = out.getvalue()
    if section == "OpenSpiel":
        assert "[1.0, -1.0]" in printed
    elif section == "PettingZoo":
        final = dict(line.split() for line in printed.splitlines() if line.startswith("player_"))
        assert sorted(final) == ["player_0", "player_1"] and sorted(map(int, final.values())) in ([-1, 1], [0, 0])
    else:
        reward, reply = printed.split()[-2:]
        assert float(reward) in (-1.0, 0.0, 1.0)
