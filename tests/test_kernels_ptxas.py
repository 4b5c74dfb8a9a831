"""Register use, spills and local memory of the CUDA kernels, as ptxas reports them (``nvcc -Xptxas -v``).

Every ``__global__`` kernel of ``kernels/*.cu`` is compiled for the architectures the package claims (sm_80:
A100; sm_90: H100/H200), as the build compiles it (``-O3 -std=c++17``), and ptxas's report is parsed per
kernel and architecture: registers, static shared memory, stack frame, spill stores / loads and local memory.
A spill or any local memory (a stack frame: an array indexed at run time, a spilled register) is a slow,
silent regression on the GPU that the CPU harness cannot show, so the test fails on it.  The figures are
recorded in docs/kernels.md ("Registers and shared memory"); ``python tests/test_kernels_ptxas.py`` prints
that table for the nvcc it finds.  Skipped without nvcc (``MAVGAME_NVCC``, or ``nvcc`` on PATH: CI installs the
PyPI wheel's, .ci/run).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
ARCHS = ("sm_80", "sm_90")
DOC = ROOT / "docs" / "kernels.md"


def find_nvcc() -> Optional[str]:
    """The nvcc the build would use first: MAVGAME_NVCC, else nvcc on PATH (setup.py's lookup goes on to
    CUDA_HOME and the PyPI wheel; CI sets MAVGAME_NVCC)."""
    forced = os.environ.get("MAVGAME_NVCC")
    if forced:
        return forced if os.access(forced, os.X_OK) else None
    return shutil.which("nvcc")


@dataclass
class KernelUse:
    """ptxas's figures for one kernel on one architecture."""

    kernel: str        # the demangled name, without its parameters
    arch: str
    registers: int
    smem: int          # static shared memory, bytes
    stack: int         # stack frame, bytes (local memory for arrays and spills)
    spill_stores: int
    spill_loads: int
    lmem: int          # local memory reported apart from the frame (older ptxas), bytes


def kernel_files() -> List[Path]:
    """The .cu files that define a kernel."""
    return [f for f in sorted(KERNELS.glob("*.cu")) if "__global__" in f.read_text()]


_TEMPLATE_ARGS = {"f": "float", "t": "bf16"}   # matmul.cu's weight types (uint16_t: bfloat16 bits)


def _demangle(sym: str) -> str:
    """The kernel's name from its Itanium mangling, with the template argument of an instantiation
    (``_Z14matmul_kernel2ItEv...``: ``matmul_kernel2<bf16>``)."""
    m = re.match(r"_Z(\d+)(\w+)", sym)
    if not m:
        return sym
    n = int(m.group(1))
    name, rest = m.group(2)[:n], m.group(2)[n:]
    t = re.match(r"I(\w+?)E", rest)
    if t:
        name += "<" + ",".join(_TEMPLATE_ARGS.get(c, c) for c in t.group(1)) + ">"
    return name


def parse_ptxas(text: str) -> List[KernelUse]:
    """The per-entry figures of ``ptxas -v`` output (several files and architectures may be concatenated).

    The report of one entry is ``Compiling entry function 'SYM' for 'sm_XX'``, then ``Function properties
    for SYM`` with ``N bytes stack frame, N bytes spill stores, N bytes spill loads``, then ``Used N registers,
    ... N bytes smem ...`` (and, from older ptxas, ``N bytes lmem``).  Properties of non-entry (device)
    functions are folded into the entry that follows them only through the stack frame, which is what ptxas
    reports for the entry itself."""
    out: List[KernelUse] = []
    cur: Optional[Dict] = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\d+a?)'", line)
        if m:
            cur = {"kernel": _demangle(m.group(1)), "arch": m.group(2), "stack": 0, "spill_stores": 0,
                   "spill_loads": 0, "lmem": 0, "smem": 0}
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur["stack"], cur["spill_stores"], cur["spill_loads"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(s.group(1)) if s else 0
            lm = re.search(r"(\d+) bytes lmem", line)
            cur["lmem"] = int(lm.group(1)) if lm else 0
            out.append(KernelUse(**cur))
            cur = None
    return out


def _tool_env() -> Dict[str, str]:
    """The environment for nvcc: without the sanitizer runtimes that the ASan test pass preloads into every
    process (nvcc and its children are not built for them)."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


def compile_report(nvcc: str, src: Path, archs=ARCHS) -> Tuple[str, List[KernelUse]]:
    """ptxas -v of one kernel file for ``archs`` (the build's flags): (raw output, parsed figures)."""
    gencode = [a for arch in archs for a in ("-gencode", f"arch=compute_{arch[3:]},code={arch}")]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, "-O3", "-std=c++17", *gencode, "-Xptxas", "-v", "-c", str(src), "-o",
               str(Path(tmp) / (src.stem + ".o")), "-I", str(ROOT / "csrc"), "-I", str(KERNELS)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_tool_env())
    text = res.stdout + res.stderr
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{text}")
    return text, parse_ptxas(text)


def all_reports(nvcc: str) -> Dict[str, Tuple[str, List[KernelUse]]]:
    files = kernel_files()
    with ThreadPoolExecutor(max_workers=max(1, min(len(files), os.cpu_count() or 1))) as pool:
        return dict(zip((f.name for f in files), pool.map(lambda f: compile_report(nvcc, f), files)))


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, env=_tool_env()).stdout
    m = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return f"{m.group(1)} ({m.group(2)})" if m else out.strip().splitlines()[-1]


def table(reports: Dict[str, Tuple[str, List[KernelUse]]]) -> str:
    """The docs/kernels.md table: one row per kernel, registers and static shared memory per architecture."""
    head = "| file | kernel | " + " | ".join(f"{a} registers | {a} smem (bytes)" for a in ARCHS) + \
        " | spills, stack, lmem |"
    rows = [head, "|" + " --- |" * (3 + 2 * len(ARCHS))]
    for name, (_, uses) in reports.items():
        by = {}
        for u in uses:
            by.setdefault(u.kernel, {})[u.arch] = u
        for kernel in sorted(by):
            cells = []
            for a in ARCHS:
                u = by[kernel].get(a)
                cells += [str(u.registers), f"{u.smem:,}"] if u else ["-", "-"]
            bad = sum(u.stack + u.spill_stores + u.spill_loads + u.lmem for u in by[kernel].values())
            rows.append(f"| `{name}` | `{kernel}` | " + " | ".join(cells) + f" | {'none' if bad == 0 else bad} |")
    return "\n".join(rows)


def test_parser_reads_registers_spills_and_local_memory():
    """The parser on ptxas's own wording, a spilling entry and an old ptxas's lmem among them."""
    text = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z14matmul_kernel3PfPKfS1_iiii' for 'sm_80'
ptxas info    : Function properties for _Z14matmul_kernel3PfPKfS1_iiii
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 12544 bytes smem, 392 bytes cmem[0]
ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    48 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, 16 bytes lmem, 392 bytes cmem[0]
"""
    a, b = parse_ptxas(text)
    assert _demangle("_Z14matmul_kernel2ItEvPfPKfPKT_iiii") == "matmul_kernel2<bf16>"
    assert _demangle("_Z14matmul_kernel3IfEvPfPKfPKT_iiii") == "matmul_kernel3<float>"
    assert (a.kernel, a.arch, a.registers, a.smem, a.stack, a.spill_stores, a.lmem) == \
        ("matmul_kernel3", "sm_80", 64, 12544, 0, 0, 0)
    assert (b.kernel, b.arch, b.registers, b.smem, b.stack, b.spill_stores, b.spill_loads, b.lmem) == \
        ("foo", "sm_90", 255, 0, 48, 8, 12, 16)


@pytest.fixture(scope="module")
def reports():
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("no nvcc (MAVGAME_NVCC or on PATH): ptxas's report needs it")
    return all_reports(nvcc)


def test_every_kernel_is_compiled_for_every_claimed_architecture(reports):
    for name, (text, uses) in reports.items():
        # the kernel's name follows `__global__ void`, after a `__launch_bounds__(...)` if it has one
        declared = set(re.findall(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s+)?(\w+)",
                                  (KERNELS / name).read_text()))
        for arch in ARCHS:
            seen = {u.kernel.split("<")[0] for u in uses if u.arch == arch}
            assert declared <= seen, f"{name} {arch}: ptxas reported {sorted(seen)}, the file declares " \
                                     f"{sorted(declared)}:\n{text}"


def test_no_kernel_spills_or_uses_local_memory(reports):
    bad = [u for _, uses in reports.values() for u in uses if u.stack or u.spill_stores or u.spill_loads or u.lmem]
    assert not bad, "kernels with spills or local memory:\n" + "\n".join(map(str, bad))


def test_docs_table_lists_every_kernel(reports):
    """docs/kernels.md records every kernel's registers and shared memory (regenerate the table with
    ``python tests/test_kernels_ptxas.py``)."""
    doc = DOC.read_text()
    for name, (_, uses) in reports.items():
        for kernel in {u.kernel for u in uses}:
            assert f"| `{name}` | `{kernel}` |" in doc, f"docs/kernels.md has no row for {name} {kernel}"


if __name__ == "__main__":
    nv = find_nvcc()
    if nv is None:
        sys.exit("no nvcc (MAVGAME_NVCC or on PATH)")
    print(f"nvcc {nvcc_version(nv)}: {' '.join(ARCHS)}\n")
    print(table(all_reports(nv)))
