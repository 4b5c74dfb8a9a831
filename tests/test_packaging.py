"""Packaging: the sdist carries everything a build reads, the extras never pull a CUDA build of PyTorch on the
project machines, and cibuildwheel's configuration builds the Pythons the package claims.

The wheel itself (build from the sdist, auditwheel repair, install in a fresh venv, tests/packaging_smoke.py
from outside the tree) is .ci/run's "sdist and wheel" step: it compiles the extension once more, too slow here.
"""
import fnmatch
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")   # Python 3.11+; the checks read pyproject.toml only
from packaging.requirements import Requirement   # noqa: E402  (pytest's own dependency)
from packaging.specifiers import SpecifierSet    # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
CIBW = PYPROJECT["tool"]["cibuildwheel"]


def claimed_versions():
    """The 3.x minor versions the classifiers name, as (3, minor)."""
    pat = re.compile(r"^Programming Language :: Python :: 3\.(\d+)$")
    return sorted((3, int(m.group(1))) for c in PROJECT["classifiers"] if (m := pat.match(c)))


def test_the_extras_never_resolve_to_a_cuda_torch():
    extras = PROJECT["optional-dependencies"]
    assert {"torch", "ray", "openspiel", "test"} <= set(extras)
    for name, reqs in extras.items():
        for r in map(Requirement, reqs):
            if r.name != "torch":
                continue
            assert name == "torch", f"extra {name!r} names torch: only the torch extra may"
            # the project machines hold 2.13.0+cpu on disk; anything newer that a range admits is a CUDA build
            assert r.specifier.contains("2.13.0+cpu"), r
            assert not r.specifier.contains("2.13.1") and not r.specifier.contains("2.14.1"), r
    assert not any(Requirement(r).name == "torch" for r in PROJECT["dependencies"])
    # the README's test command keeps working: `pip install -e ".[test]"`
    assert 'pip install -e ".[test]"' in (ROOT / "README.md").read_text()
    assert {"pytest", "chess", "safetensors", "matplotlib", "hypothesis"} <= {Requirement(r).name for r in extras["test"]}


def test_cibuildwheel_builds_the_claimed_pythons_portably_and_tests_outside_the_tree():
    versions = claimed_versions()
    assert versions, "no Programming Language :: Python :: 3.N classifiers"
    requires = SpecifierSet(PROJECT["requires-python"])
    lo = versions[0]
    assert f"{lo[0]}.{lo[1]}" in requires and f"{lo[0]}.{lo[1] - 1}" not in requires, \
        "requires-python and the lowest classifier disagree"
    assert all(f"3.{m}" in requires for _, m in versions)
    assert CIBW["build"].split() == [f"cp3{m}-*" for _, m in versions], "cibuildwheel builds other Pythons than claimed"
    assert "*-musllinux_*" in CIBW["skip"].split()
    assert CIBW["environment"].get("MAVGAME_PORTABLE") == "1" and CIBW["environment"].get("MAVGAME_NO_CUDA") == "1"
    assert "MAVGAME_NATIVE" not in CIBW["environment"]
    cmd = CIBW["test-command"]
    assert "{project}/tests/packaging_smoke.py" in cmd and (ROOT / "tests" / "packaging_smoke.py").exists()
    # the smoke test is a script, not collected here: pytest's default file patterns do not match it
    patterns = PYPROJECT["tool"]["pytest"]["ini_options"].get("python_files", "test_*.py *_test.py").split()
    assert not any(fnmatch.fnmatch("packaging_smoke.py", p) for p in patterns)


def git_files(*args):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", *args], capture_output=True)
    if out.returncode != 0 or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (its tracked files are what the sdist is checked against)")
    return [f for f in out.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


def test_the_sdist_carries_every_file_the_build_reads(tmp_path):
    """An sdist made from the tracked files holds every tracked file of csrc/ (sources, headers, the C tests'
    Makefile), kernels/ (the .cu files and their CPU harness), mavgame/ (code and data) and tests/, and no
    build output.  Building a wheel from it is CI's part (.ci/run)."""
    files = git_files()   # the tracked files: what a clone has
    src = tmp_path / "src"
    for f in files + git_files("--others", "--exclude-standard"):   # with new ones not yet added (MANIFEST.in)
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    for stray in ("csrc/stray.o", "kernels/stray.o", "tests/__pycache__/stray.cpython-311.pyc", "mavgame/stray.so"):
        (src / stray).parent.mkdir(parents=True, exist_ok=True)   # build outputs in the tree stay out of the sdist
        (src / stray).write_bytes(b"")
    dist = tmp_path / "dist"
    dist.mkdir()
    res = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                          "print(b.build_sdist(sys.argv[1]))", str(dist)], cwd=src, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    name = res.stdout.strip().splitlines()[-1]
    version = PROJECT["version"]
    assert name == f"{PROJECT['name']}-{version}.tar.gz"
    with tarfile.open(dist / name) as tar:
        prefix = f"{PROJECT['name']}-{version}/"
        members = {m.name[len(prefix):] for m in tar.getmembers() if m.isfile()}
    need = [f for f in files if f.startswith(("csrc/", "kernels/", "mavgame/", "tests/"))]
    need += ["setup.py", "pyproject.toml", "README.md", "MANIFEST.in"]
    missing = sorted(set(need) - members)
    assert not missing, f"{len(missing)} files the build or the tests read are not in the sdist: {missing[:10]}"
    assert any(f.startswith("mavgame/data/") and f.endswith(".safetensors") for f in members)
    assert not [f for f in members if f.endswith((".o", ".so", ".a", ".pyc"))]
