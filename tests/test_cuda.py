"""The CUDA side of the build as seen from Python: _core.WITH_CUDA, _core.cuda_status(), and the
clear refusal of MAVModel.load(..., backend="native", device="cuda") where it cannot run (no CUDA
build, no device; with a device: the engine does not call the kernels yet).  The kernels themselves
are checked on the CPU harness in test_kernels.py."""
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
    warns, so this test is what notices it."""
    import os
    if os.environ.get("MAVGAME_NO_CUDA", "") not in ("", "0") or shutil.which("nvcc") is None:
        pytest.skip("no nvcc on PATH (or MAVGAME_NO_CUDA set): a CPU-only build is expected")
    assert _core.WITH_CUDA == 1, "nvcc is on PATH but the extension was built without the CUDA kernels"


def test_native_backend_on_cuda_says_why_not():
    pytest.importorskip("numpy")
    from mavgame.model.inference import MAVModel, native_available
    if not native_available():
        pytest.skip("no native engine in this build")
    n, why = _core.cuda_status()
    with pytest.raises(ValueError) as e:
        MAVModel.load(backend="native", device="cuda")
    msg = str(e.value)
    assert "device='cuda'" in msg and why in msg
    assert ("device='cpu'" in msg) if n == 0 else ("does not use the CUDA kernels yet" in msg)
    with pytest.raises(ValueError, match="not on 'tpu'"):
        MAVModel.load(backend="native", device="tpu")
