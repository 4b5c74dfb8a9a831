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


#: What the reference data is and where it comes from (the skip reason and the header say it).
SHARED_DATA_WHAT = ("the reference data (perft tables perft/tricky.perft and perft/chess960.perft, from "
                    "chessprogramming.org's Perft_Results pages)")


def shared_data_missing() -> str:
    """Why the reference data is not here, and how to give it; "" when it is."""
    env = os.environ.get("MG_SHARED_DATA")
    d = shared_data_dir()
    if d.is_dir():
        return ""
    if env:
        return f"{SHARED_DATA_WHAT} is missing: MG_SHARED_DATA={env} is not a folder"
    return f"{SHARED_DATA_WHAT} is missing: set MG_SHARED_DATA to the folder that holds it"


def require_ray():
    """Ray, or a skip: without Ray, or in the sanitizer pass.  There the ASan runtime is preloaded (LD_PRELOAD) into
    every process the tests start, Ray's own C++ servers (GCS, raylet) included, and a local Ray has hung at start
    in CI that way; the plain pass runs every Ray test, and the sanitizer pass runs the same C code in-process."""
    ray = pytest.importorskip("ray")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("Ray is not started under a preloaded ASan runtime (its servers would inherit it); "
                    "the plain test pass runs this test")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    return ray


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray instance with two CPUs (skipped without Ray); yields its address, for other drivers to join."""
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    why = shared_data_missing()
    if why:
        pytest.skip(why)
    return shared_data_dir()


@pytest.fixture(scope="session")
def scale() -> float:
    return test_scale()


def scaled(n: int) -> int:
    """n scaled by MAVGAME_TEST_SCALE (at least 1)."""
    return max(1, int(n * test_scale()))


# Every optional thing whose absence skips tests, with what needs it and how to get it: the report header names
# each one missing (test_rough_edges checks that every module a test importorskip()s is listed here).
OPTIONAL_MODULES = [
    ("torch", "the MAV model, policy and AlphaZero tests", "pip install torch"),
    ("chess", "the python-chess comparisons", "pip install chess"),
    ("safetensors", "model export tests", "pip install safetensors"),
    ("pyspiel", "the OpenSpiel comparisons", "pip install open_spiel"),
    ("gymnasium", "the Gymnasium adapter", "pip install gymnasium"),
    ("pettingzoo", "the PettingZoo adapter", "pip install pettingzoo"),
    ("hypothesis", "the property tests", "pip install hypothesis"),
    ("matplotlib", "Elo plots", "pip install matplotlib"),
    ("ray", "Ray executors", "pip install ray"),
    ("sphinx", "the API reference build", "pip install -e '.[docs]'"),
    ("transformers", "the Hugging Face export", "pip install -e '.[hf]'"),
    ("tokenizers", "the Hugging Face tokenizer", "pip install -e '.[hf]'"),
    ("peft", "the LoRA fine-tuning round trip of the Hugging Face export", "pip install peft"),
]


def _engine(name: str, env_var: str) -> bool:
    try:
        from mavgame.engines.uci import find_engine
    except ImportError:
        return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/games") is not None
    return find_engine(name, env_var) is not None


def _nvcc() -> bool:
    forced = os.environ.get("MAVGAME_NVCC")
    if forced:
        return os.path.isfile(forced) and os.access(forced, os.X_OK)
    return shutil.which("nvcc") is not None


def _cuda_device() -> str:
    """"" when a CUDA device is usable, else the core's reason (said once)."""
    try:
        from mavgame import _core
    except ImportError as e:
        return f"the extension does not import ({e})"
    n, why = _core.cuda_status()
    return "" if n > 0 else why


def _native_engine() -> bool:
    try:
        from mavgame.model.inference import native_available
    except ImportError:
        return False
    return bool(native_available())


def _c4_test_sets() -> bool:
    d = shared_data_dir() / "connect_four"
    return d.is_dir() and any(d.glob("Test_L*"))


# (name, present() -- True; False, or a string saying why not, when missing --, what needs it, how to get it)
OPTIONAL_OTHERS = [
    ("stockfish", lambda: _engine("stockfish", "MAVGAME_STOCKFISH"), "engine and chess annotation tests",
     "apt-get install stockfish, or MAVGAME_STOCKFISH=PATH"),
    ("fairy-stockfish", lambda: _engine("fairy-stockfish", "MAVGAME_FAIRY_STOCKFISH"),
     "the Gardner rules oracle and its agent", "fairy-stockfish on PATH, or MAVGAME_FAIRY_STOCKFISH=PATH"),
    ("nvcc", _nvcc, "the CUDA build check and ptxas's kernel reports", "the CUDA toolkit, or MAVGAME_NVCC=PATH"),
    ("CUDA GPU", lambda: _cuda_device() or True, "the GPU engine tests", "a CUDA build and a usable NVIDIA GPU"),
    ("native engine", _native_engine, "the native model engine tests", "build the extension (setup.py build_ext)"),
    ("objdump", lambda: shutil.which("objdump") is not None, "the portable build check", "binutils"),
    ("git", lambda: shutil.which("git") is not None, "the source distribution checks", "git and a git checkout"),
    ("C/C++ compilers", lambda: all(shutil.which(os.environ.get(v, d)) for v, d in (("CXX", "g++"), ("CC", "gcc"))),
     "the CUDA kernels' CPU harness", "g++ and gcc, or CXX and CC naming others"),
    ("reference data", lambda: not shared_data_missing(), "perft against published tables",
     "MG_SHARED_DATA=folder with perft/tricky.perft and perft/chess960.perft"),
    ("the papers' texts", lambda: (REPO.parent / "shared" / "papers").is_dir(), "the paper data set checks",
     "kept beside the project's own development checkout only"),
    ("Connect Four test sets", _c4_test_sets, "solver scores against the published test sets",
     "connect_four/Test_L* inside the MG_SHARED_DATA folder"),
]


def _optional_tools():
    """(found names, missing (name, what needs it, how to get it or why not))."""
    found, missing = [], []
    for mod, used, get in OPTIONAL_MODULES:
        if importlib.util.find_spec(mod) is not None:
            found.append(mod)
        else:
            missing.append((mod, used, get))
    for name, present, used, get in OPTIONAL_OTHERS:
        ok = present()
        if ok is True:
            found.append(name)
        else:
            missing.append((name, used, ok if isinstance(ok, str) else get))
    return found, missing


def pytest_report_header(config):
    found, missing = _optional_tools()
    lines = ["mavgame optional tools found: " + (", ".join(found) or "none")]
    if missing:
        lines.append("missing (their tests are skipped; the summary lists each skip):")
        lines += [f"  {n}: {used}; {get}" for n, used, get in missing]
    return lines
