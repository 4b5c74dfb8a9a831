"""The CUDA side of the build as seen from Python: _core.WITH_CUDA, _core.cuda_status(), and the
clear refusal of MAVModel.load(..., backend="native", device="cuda") where it cannot run (no CUDA
build, no device), the CPU fallback of device="auto", and with a GPU the CUDA engine's answers against
the CPU engine's.  The kernels and the CUDA forward pass itself are checked on the CPU harness in
test_kernels.py (forward.cu's driver)."""
import shutil

import pytest

from mavgame import _core


def test_cuda_status_agrees_with_the_build():
    n, why = _core.cuda_status()
    assert isinstance(n, int) and n >= 0 and isinstance(why, str) and why
    assert _core.WITH_CUDA in (0, 1)
    if not _core.WITH_CUDA:
        assert n == 0 and "without its CUDA kernels" in why
    elif n == 0:
        assert "no usable CUDA device" in why
    else:
        assert "CUDA device" in why


def test_built_with_cuda_when_nvcc_is_found():
    """setup.py builds the kernels when it finds nvcc (unless told not to); a failed CUDA build only
    warns, so this test is what notices it.  CI names the PyPI wheel's nvcc in MAVGAME_NVCC (.ci/run)."""
    import os
    if os.environ.get("MAVGAME_NO_CUDA", "") not in ("", "0"):
        pytest.skip("MAVGAME_NO_CUDA set: a CPU-only build is expected")
    nvcc = os.environ.get("MAVGAME_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc (MAVGAME_NVCC or on PATH): a CPU-only build is expected")
    assert _core.WITH_CUDA == 1, f"nvcc ({nvcc}) is here but the extension was built without the CUDA kernels"


def test_cpu_only_install_pulls_no_cuda_packages():
    """The CUDA parts stay optional: neither the package's dependencies nor any of its extras name a CUDA
    wheel (nvcc is CI's build tool, installed beside the package by .ci/run, never by pip install mavgame)."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    project = text.split("[project]", 1)[1].split("\n[tool.", 1)[0]
    project = "\n".join(line.split("#", 1)[0] for line in project.splitlines())   # the comments mention CUDA
    assert "dependencies" in project and "numpy" in project
    assert not re.search(r"nvidia-|cuda|cupy", project, re.I), "a CUDA package in the package's requirements"


def test_native_backend_on_cuda_runs_or_says_why_not():
    """device="cuda" runs the engine's CUDA forward pass where the build has the kernels and a GPU is usable;
    elsewhere it is a ValueError naming what is missing (the build, or the device) and the CPU alternative."""
    pytest.importorskip("numpy")
    from mavgame.model.inference import MAVModel, native_available, shipped_model_path
    if not native_available():
        pytest.skip("no native engine in this build")
    n, why = _core.cuda_status()
    if n == 0:
        with pytest.raises(ValueError) as e:
            MAVModel.load(backend="native", device="cuda")
        msg = str(e.value)
        assert "device='cuda'" in msg and why in msg and "device='cpu'" in msg
        # the C engine itself refuses with the reason too
        with pytest.raises(ValueError, match="no CUDA engine: no usable CUDA device|without its CUDA kernels"):
            _core.MavEngine(str(shipped_model_path("connect_four")), device="cuda")
    else:
        import numpy as np
        gpu = MAVModel.load(backend="native", device="cuda")
        assert gpu.backend.engine.device == "cuda" and gpu.backend.engine.kernel == "cuda"
        path = str(shipped_model_path("connect_four"))
        cpu_e, gpu_e = _core.MavEngine(path, simd=False), gpu.backend.engine
        tok = gpu.tokenizer
        rng = np.random.default_rng(0)
        prompts = [[tok.bos_id] + rng.integers(3, tok.size, size=int(k)).tolist() for k in (5, 17, 40)]
        np.testing.assert_allclose(gpu_e.logits(prompts[2]), cpu_e.logits(prompts[2]), rtol=1e-3, atol=1e-3)
        buckets = [int(b) for b in tok.bucket_ids]
        a = gpu_e.generate(prompts, 12, [tok.eos_id], bucket_ids=buckets)
        b = cpu_e.generate(prompts, 12, [tok.eos_id], bucket_ids=buckets)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x[0], y[0])
            np.testing.assert_allclose(x[2], y[2], atol=1e-4)
    with pytest.raises(ValueError, match="not on 'tpu'"):
        MAVModel.load(backend="native", device="tpu")
    with pytest.raises(ValueError, match="not on 'cuda:1'"):
        MAVModel.load(backend="native", device="cuda:1")
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:0'"):
        _core.MavEngine(str(shipped_model_path("connect_four")), device="gpu")


def test_auto_device_falls_back_to_the_cpu_with_one_line(capfd):
    """device="auto": the GPU when usable, else the CPU, with a one-line note when the build has the CUDA
    kernels but no device is usable (what a CUDA build imported on a machine without a GPU does)."""
    pytest.importorskip("numpy")
    from mavgame.model import inference
    if not inference.native_available():
        pytest.skip("no native engine in this build")
    n, why = _core.cuda_status()
    inference.backends._note_once.cache_clear()
    m = inference.MAVModel.load(backend="native", device="auto")
    err = capfd.readouterr().err
    assert m.backend.device == ("cuda" if n else "cpu") == m.backend.engine.device
    if n == 0 and _core.WITH_CUDA:
        lines = [ln for ln in err.splitlines() if "native engine on the CPU" in ln]
        assert lines == [f"mavgame: native engine on the CPU ({why})"], err
        inference.MAVModel.load(backend="native", device="auto")
        assert "native engine on the CPU" not in capfd.readouterr().err   # once per process
    elif n == 0:
        assert "native engine on the CPU" not in err   # a CPU-only build: nothing to say
    m2 = inference.MAVModel.load(device="auto")   # backend auto: the native engine wherever it can run
    assert isinstance(m2.backend, inference.NativeBackend)
