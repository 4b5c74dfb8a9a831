"""Build script for mavgame's C core (mavgame._core) and, when nvcc is present, its CUDA kernels.

Environment switches:
  MAVGAME_WERROR=1     compile the C core with -Werror (CI does)
  MAVGAME_NATIVE=1     -march=native: tuned for the build machine only (a wheel built so can crash
                       with an illegal instruction elsewhere).  The default is portable: the
                       x86-64-v2 baseline, with the hottest searches also compiled for x86-64-v3
                       and picked at load time (csrc/multiversion.h)
  MAVGAME_PORTABLE=1   portable even if MAVGAME_NATIVE is set (the default already is; wheels set it)
  MAVGAME_NO_CUDA=1    skip the CUDA kernels even if nvcc is found
  MAVGAME_NVCC         the nvcc to use (default: nvcc on PATH, $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, then
                       the PyPI wheel's, nvidia/cu*/bin/nvcc in site-packages: pip install nvidia-cuda-nvcc
                       nvidia-cuda-cccl, whose <nv/target> the bf16 and wmma headers need)
  MAVGAME_REQUIRE_CUDA=1  fail the build if the CUDA kernels do not compile (default: warn, build CPU-only)
  MAVGAME_CUDA_ARCH    extra nvcc architecture flags, e.g. "-gencode arch=compute_90,code=sm_90"
                       (default: nvcc's default target, with PTX that the driver compiles for newer GPUs)
  MAVGAME_SANITIZE=1   build with AddressSanitizer + UBSan (load with LD_PRELOAD=libasan)

The build prints one line per phase (the C files compiled, whether CUDA kernels were found and built):
`pip install -v .` and `python -m build` show them; a plain `pip install .` keeps a backend quiet.
"""
import os
import platform
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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


def say(msg):
    """One line per build phase, on stderr (pip shows it with -v; python -m build always)."""
    print(f"mavgame: {msg}", file=sys.stderr, flush=True)


def pip_nvcc_candidates():
    """Where the PyPI CUDA compiler wheel (``pip install nvidia-cuda-nvcc``) puts nvcc: ``nvidia/cu*/bin/nvcc``
    under a site-packages directory of this interpreter (the build's own environment first, then the base
    environment's: pip's isolated build environments see only their own)."""
    import site
    import sysconfig
    roots = []
    for key in ("purelib", "platlib"):
        roots.append(sysconfig.get_paths().get(key))
        roots.append(sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix}).get(key))
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # old virtualenv's site module
        pass
    found = []
    for root in dict.fromkeys(r for r in roots if r):
        found += sorted(Path(root).glob("nvidia/cu*/bin/nvcc"), reverse=True)   # the newest CUDA major first
    return [str(p) for p in found if os.access(p, os.X_OK)]


def find_nvcc():
    """The nvcc to build the kernels with, or None: ``MAVGAME_NVCC`` (a path; it must exist), else ``nvcc`` on
    PATH, else ``$CUDA_HOME/bin/nvcc`` (``CUDA_PATH``, ``/usr/local/cuda``), else the PyPI wheel's
    (``nvidia-cuda-nvcc``, in this interpreter's site-packages)."""
    if env_flag("MAVGAME_NO_CUDA"):
        return None
    forced = os.environ.get("MAVGAME_NVCC", "")
    if forced:
        if not (Path(forced).is_file() and os.access(forced, os.X_OK)):
            raise SystemExit(f"mavgame: MAVGAME_NVCC={forced!r} is not an executable file")
        return forced
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
        cand = Path(cuda_home) / "bin" / "nvcc"
        nvcc = str(cand) if cand.exists() else None
    if nvcc is None:
        nvcc = next(iter(pip_nvcc_candidates()), None)
    return nvcc


def cuda_lib_dirs(nvcc):
    """The directories nvcc itself links the CUDA runtime from (its dry run prints them): an nvcc on
    PATH may be a wrapper script far from the toolkit, so its own location says nothing."""
    out = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull], capture_output=True,
                         text=True, timeout=60)
    dirs = []
    for line in (out.stdout + out.stderr).splitlines():
        if "LIBRARIES=" in line:
            dirs += [d.strip('"')[2:] for d in line.split("LIBRARIES=", 1)[1].split() if d.strip('"').startswith("-L")]
    dirs.append(str(Path(nvcc).resolve().parent.parent / "lib64"))
    return [d for d in dirs if not d.endswith("stubs") and Path(d).is_dir()]


def compile_kernels(nvcc, cus, objdir, werror):
    """nvcc -c every kernel file (in parallel); returns the objects.  Raises on the first failure."""
    arch = os.environ.get("MAVGAME_CUDA_ARCH", "").split()
    host = "-fPIC,-Wall,-Wextra" + (",-Werror" if werror else "")
    jobs = []
    for cu in cus:
        obj = objdir / (cu.stem + ".o")
        cmd = [nvcc, "-O3", "-std=c++17", *arch, "-Xcompiler", host, "-c", str(cu), "-o", str(obj),
               "-I", str(ROOT / "csrc"), "-I", str(ROOT / "kernels")]
        if werror:
            cmd[1:1] = ["-Werror", "all-warnings"]
        jobs.append((cmd, obj))

    def run(job):
        res = subprocess.run(job[0], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(job[0])}\n{res.stdout}{res.stderr}")
        return str(job[1])

    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        return list(pool.map(run, jobs))


class BuildExt(build_ext):
    """Compiles kernels/*.cu with nvcc when present, then the C extension.  A failed CUDA build
    warns and falls back to the CPU package (MAVGAME_REQUIRE_CUDA=1 makes it an error)."""

    def build_extensions(self):
        cus = sorted((ROOT / "kernels").glob("*.cu"))
        nvcc = find_nvcc()
        ext = self.extensions[0]
        if not cus:
            say("no CUDA kernels in kernels/; building the CPU package")
        elif env_flag("MAVGAME_NO_CUDA"):
            say(f"{len(cus)} CUDA kernel files found, skipped (MAVGAME_NO_CUDA=1): building the CPU-only package")
        elif nvcc is None:
            say(f"{len(cus)} CUDA kernel files found but no nvcc: building the CPU-only package")
        else:
            say(f"compiling {len(cus)} CUDA kernel files with {nvcc}")
            objdir = Path(self.build_temp) / "kernels"
            objdir.mkdir(parents=True, exist_ok=True)
            t0 = time.time()
            try:
                libdirs = cuda_lib_dirs(nvcc)
                static = [Path(d) / "libcudart_static.a" for d in libdirs if (Path(d) / "libcudart_static.a").exists()]
                if not static:
                    raise RuntimeError(f"libcudart_static.a not found in {libdirs}")
                objs = compile_kernels(nvcc, cus, objdir, env_flag("MAVGAME_WERROR"))
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                if env_flag("MAVGAME_REQUIRE_CUDA"):
                    raise
                say(f"WARNING: the CUDA kernels did not build, building the CPU-only package:\n{exc}")
            else:
                say(f"built {len(cus)} CUDA kernel file(s) in {time.time() - t0:.1f} s")
                # the runtime linked statically: the module imports on machines without the CUDA
                # libraries or a GPU (it then reports no device: _core.cuda_status())
                ext.extra_objects += objs + [str(static[0])]
                ext.libraries += ["dl", "rt", "stdc++"]
                ext.define_macros.append(("MG_WITH_CUDA", "1"))
        flags = " ".join(f for f in ext.extra_compile_args if f.startswith(("-O", "-march", "-Werror", "-fsanitize")))
        say(f"building {ext.name} from {len(ext.sources)} C files ({flags})")
        t0 = time.time()
        super().build_extensions()
        say(f"{ext.name} built in {time.time() - t0:.0f} s")


cflags = ["-std=c11", "-O3", "-Wall", "-Wextra", "-D_POSIX_C_SOURCE=200809L", "-fno-strict-aliasing"]
ldflags = []
if env_flag("MAVGAME_WERROR"):
    cflags.append("-Werror")
define_macros = []
if env_flag("MAVGAME_NATIVE") and not env_flag("MAVGAME_PORTABLE"):
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
