"""docs/cluster.md's example runs as written (needs Ray and Stockfish; slow: a local Ray instance starts)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_ray
from fake_uci import REPO
from mavgame.engines.uci import find_stockfish


def _example() -> str:
    text = (Path(REPO) / "docs" / "cluster.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.mark.slow
def test_cluster_example_runs(tmp_path):
    require_ray()
    sf = find_stockfish()
    if sf is None:
        pytest.skip("stockfish is not installed")
    env = dict(os.environ, PYTHONPATH=REPO, PATH=os.environ.get("PATH", "") + os.pathsep + os.path.dirname(sf),
               RAY_USAGE_STATS_ENABLED="0")
    p = subprocess.run([sys.executable, "-c", _example()], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "12 games" in p.stdout and "minimax" in p.stdout
    lines = [ln for ln in p.stdout.splitlines() if " best " in ln]
    assert len(lines) == 2 and lines[1].split(" best ")[0].endswith("e2e4 e7e5")
    assert (tmp_path / "league.sqlite").exists()


def test_annotate_ray_refuses_an_illegal_line_before_starting_ray():
    from mavgame.play.distributed import annotate_ray
    from mavgame import IllegalMoveError
    with pytest.raises(IllegalMoveError, match="position 1 .*e2e5"):
        next(annotate_ray(["startpos", "startpos moves e2e5"], address="never-reached"))
