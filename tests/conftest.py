"""Shared fixtures for mavgame's tests.

- ``shared_data``: the reference data directory (env MG_SHARED_DATA, else ``../shared/data`` next to
  the repository); tests that need it skip cleanly when it is absent.
- ``scale``: a multiplier for randomized test sizes (env MAVGAME_TEST_SCALE, default 1.0); the
  sanitizer run in CI uses a small scale.
"""
import os
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
