"""Build script for mavgame's C core (mavgame._core) and, when nvcc is present, its CUDA kernels.

Environment switches:
  MAVGAME_WERROR=1     compile the C core with -Werror (CI does)
  MAVGAME_NATIVE=1     -march=native: tuned for the build machine only (a wheel built so can crash
                       with an illegal instruction elsewhere).  The default is portable: the
                       x86-64-v2 baseline, with the hottest searches also compiled for x86-64-v3
                       and picked at load time (csrc/multiversion.h)
  MAVGAME_PORTABLE=1   accepted for compatibility (portable is the default)
  MAVGAME_NO_CUDA=1    skip the CUDA kernels even if nvcc is found
  MAVGAME_SANITIZE=1   build with AddressSanitizer + UBSan (load with LD_PRELOAD=libasan)
"""
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def c_sources():
    srcs = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.c") if "tests" not in p.parts)
    return srcs


def env_flag(name):
    return os.environ.get(name, "") not in ("", "0", "false", "no")


def find_nvcc():
    if env_flag("MAVGAME_NO_CUDA"):
        return None
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
        cand = Path(cuda_home) / "bin" / "nvcc"
        nvcc = str(cand) if cand.exists() else None
    return nvcc


class BuildExt(build_ext):
    """Compiles kernels/*.cu with nvcc when present, then the C extension."""

    def build_extensions(self):
        cus = sorted((ROOT / "kernels").glob("*.cu"))
        nvcc = find_nvcc()
        ext = self.extensions[0]
        if not cus:
            print("mavgame: no CUDA kernels in kernels/ yet; building the CPU package", file=sys.stderr)
        elif nvcc is None:
            print("mavgame: nvcc not found; building the CPU-only package (CUDA kernels skipped)", file=sys.stderr)
        else:
            print(f"mavgame: building {len(cus)} CUDA kernel file(s) with {nvcc}", file=sys.stderr)
            objdir = Path(self.build_temp) / "kernels"
            objdir.mkdir(parents=True, exist_ok=True)
            for cu in cus:
                obj = objdir / (cu.stem + ".o")
                cmd = [nvcc, "-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-c", str(cu), "-o", str(obj),
                       "-I", str(ROOT / "csrc")]
                print(" ".join(cmd), file=sys.stderr)
                subprocess.check_call(cmd)
                ext.extra_objects.append(str(obj))
            cuda_lib = Path(nvcc).resolve().parent.parent / "lib64"
            ext.library_dirs.append(str(cuda_lib))
            ext.runtime_library_dirs.append(str(cuda_lib))
            ext.libraries.append("cudart")
            ext.define_macros.append(("MG_WITH_CUDA", "1"))
        super().build_extensions()


cflags = ["-std=c11", "-O3", "-Wall", "-Wextra", "-D_POSIX_C_SOURCE=200809L", "-fno-strict-aliasing"]
ldflags = []
if env_flag("MAVGAME_WERROR"):
    cflags.append("-Werror")
define_macros = []
if env_flag("MAVGAME_NATIVE"):
    cflags.append("-march=native")
    define_macros.append(("MG_NATIVE_BUILD", "1"))
elif platform.machine() in ("x86_64", "AMD64"):
    cflags.append("-march=x86-64-v2")  # popcnt for the bitboard games; v3 copies of the hot code are dispatched
if env_flag("MAVGAME_SANITIZE"):
    cflags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined", "-O1"]
    ldflags += ["-fsanitize=address,undefined"]

core = Extension(
    "mavgame._core",
    sources=c_sources(),
    include_dirs=[numpy.get_include(), "csrc"],
    extra_compile_args=cflags,
    extra_link_args=ldflags,
    define_macros=define_macros,
    libraries=["m", "pthread"],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})
