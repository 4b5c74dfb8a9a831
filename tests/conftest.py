"""Shared fixtures for mavgame's tests.

- ``shared_data``: the reference data directory (env MG_SHARED_DATA, else ``../shared/data`` next to
  the repository); tests that need it skip cleanly when it is absent.
- ``scale``: a multiplier for randomized test sizes (env MAVGAME_TEST_SCALE, default 1.0); the
  sanitizer run in CI uses a small scale.

The report header names the optional tools the run found (tests that need a missing one are skipped,
and ``-rs`` in pyproject.toml lists each skip with its reason in the summary).
"""
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    env = os.environ.get("MG_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def test_scale() -> float:
    try:
        return max(0.01, float(os.environ.get("MAVGAME_TEST_SCALE", "1")))
    except ValueError:
        return 1.0


test_scale.__test__ = False  # not a test


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = shared_data_dir()
    if not d.is_dir():
        pytest.skip(f"reference data not found at {d}")
    return d


@pytest.fixture(scope="session")
def scale() -> float:
    return test_scale()


def scaled(n: int) -> int:
    """n scaled by MAVGAME_TEST_SCALE (at least 1)."""
    return max(1, int(n * test_scale()))


OPTIONAL_MODULES = [("torch", "the MAV model tests"), ("chess", "the python-chess tests"),
                    ("safetensors", "model export tests"), ("pyspiel", "the OpenSpiel comparisons"),
                    ("matplotlib", "Elo plots"), ("ray", "Ray executors")]
OPTIONAL_PROGRAMS = [("stockfish", "engine and chess annotation tests")]


def _optional_tools():
    found, missing = [], []
    for mod, used in OPTIONAL_MODULES:
        (found if importlib.util.find_spec(mod) is not None else missing).append((mod, used))
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/games"
    for prog, used in OPTIONAL_PROGRAMS:
        (found if shutil.which(prog, path=path) else missing).append((prog, used))
    return found, missing


def pytest_report_header(config):
    found, missing = _optional_tools()
    lines = ["mavgame optional tools found: " + (", ".join(n for n, _ in found) or "none")]
    if missing:
        lines.append("missing (their tests are skipped, see the summary): "
                     + "; ".join(f"{n} ({used})" for n, used in missing))
    return lines
