"""The default build runs on any x86-64 machine: outside the x86-64-v3 copies of the hot searches
(csrc/multiversion.h: `name.arch_x86_64_v3` clones picked at load time, `name_v3` copies picked with
mg_cpu_has_v3(), and the inference engine's `*_avx2` and `*_avx512` kernels picked with
__builtin_cpu_supports in csrc/model/matmul.c, with the policy network's `*_avx2` Winograd transforms where
that kernel is picked), the extension uses no AVX or BMI2 instruction; AVX-512 (zmm registers, mask
registers) appears in the `*_avx512` functions only, and the C sources that compile AVX-512 code check
__builtin_cpu_supports("avx512f") before reaching it."""
import pathlib
import platform
import re
import shutil
import subprocess
import sysconfig

import pytest

from mavgame import _core

# AVX (any VEX-encoded 'v...' mnemonic) and BMI1/BMI2 instructions an x86-64-v2 CPU lacks.
BEYOND_V2 = re.compile(r"\t(v[a-z0-9]+|shlx|shrx|sarx|pext|pdep|andn|blsr|blsi|blsmsk|bzhi|mulx|rorx)[ \t]")
# AVX-512 only: a zmm register, an opmask register (%k0-%k7) or a k-register instruction
AVX512 = re.compile(r"%zmm\d|%k[0-7]\b|\tk(mov|and|or|xor|not|shift|test|add|unpck)[a-z]*[ \t]")
ROOT = pathlib.Path(__file__).resolve().parent.parent


def _base_name(fn: str) -> str:
    """A function's name without gcc's .constprop.N / .isra.N / .part.N suffixes of specialised copies."""
    return re.sub(r"(\.(constprop|isra|part)\.\d+)+$", "", fn)


@pytest.mark.skipif(platform.machine() != "x86_64" or platform.system() != "Linux", reason="x86-64 Linux only")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump not installed")
@pytest.mark.skipif(bool(getattr(_core, "NATIVE_BUILD", 0)), reason="built with MAVGAME_NATIVE=1 (-march=native)")
def test_no_instructions_beyond_x86_64_v2_outside_the_dispatched_copies():
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", _core.__file__], capture_output=True, text=True,
                         check=True).stdout
    fn, bad, clones = None, {}, set()
    for line in asm.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            # gcc's specialised copies of a function keep its name plus .constprop.N / .isra.N / .part.N
            if _base_name(fn).endswith((".arch_x86_64_v3", "_v3", "_avx2", "_avx512")):
                clones.add(fn)
            continue
        if fn and fn not in clones and BEYOND_V2.search(line):
            bad.setdefault(fn, line.strip())
    assert not bad, f"instructions beyond x86-64-v2 in {len(bad)} functions, e.g. {list(bad.items())[:5]}"
    # gcc builds carry the fast copies of perft and the solvers (other compilers, and sanitizer builds,
    # compile one copy: csrc/multiversion.h)
    cc = (sysconfig.get_config_var("CC") or "").split()
    sanitized = "__asan_report" in asm or "__ubsan_handle" in asm
    if cc and cc[0].endswith("gcc") and not sanitized:
        assert {"perft_rec.arch_x86_64_v3", "c4_perft_lean_v3", "negamax.arch_x86_64_v3"} <= clones


@pytest.mark.skipif(platform.machine() != "x86_64" or platform.system() != "Linux", reason="x86-64 Linux only")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump not installed")
@pytest.mark.skipif(bool(getattr(_core, "NATIVE_BUILD", 0)), reason="built with MAVGAME_NATIVE=1 (-march=native)")
def test_avx512_instructions_only_in_avx512_functions():
    """zmm and opmask registers appear in `*_avx512` functions only (not in the `*_avx2` or x86-64-v3
    copies, which run on CPUs without AVX-512), and the matmul kernel has its AVX-512 copy."""
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", _core.__file__], capture_output=True, text=True,
                         check=True).stdout
    fn, bad, seen, names = None, {}, set(), set()
    for line in asm.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            names.add(_base_name(fn))
            continue
        if fn and AVX512.search(line):
            if _base_name(fn).endswith("_avx512"):
                seen.add(_base_name(fn))
            else:
                bad.setdefault(fn, line.strip())
    assert not bad, f"AVX-512 instructions outside *_avx512 functions in {len(bad)}, e.g. {list(bad.items())[:5]}"
    assert "matmul_avx512" in names and {"tile1x8_avx512", "tile12x2_avx512"} <= seen, sorted(seen)[:10]


def test_avx512_code_is_reached_through_cpu_checks():
    """Every C source that compiles functions for AVX-512 (a target attribute naming avx512) checks the
    CPU with __builtin_cpu_supports("avx512f") (and "avx512vl" where it asks for it), and names those
    functions `*_avx512`; no source is compiled for AVX-512 as a whole."""
    sources = [p for p in (ROOT / "csrc").rglob("*.c") if "tests" not in p.parts]
    assert sources, "no C sources found under csrc/"
    found = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        if not re.search(r'target\("[^"]*avx512', text):
            continue
        found.append(path.name)
        assert '__builtin_cpu_supports("avx512f")' in text, path
        if re.search(r'target\("[^"]*avx512vl', text):
            assert '__builtin_cpu_supports("avx512vl")' in text, path
        # each function defined with the AVX-512 attribute macro carries the suffix
        macros = re.findall(r'#define (\w+) __attribute__\(\(target\("[^"]*avx512', text)
        for mac in macros:
            for name in re.findall(rf"^\s*{mac}\s+static\s+(?:inline\s+)?[\w\s\*]*?\b(\w+)\s*\(", text, re.M):
                assert name.endswith("_avx512"), (path.name, name)
    assert "matmul.c" in found
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert "avx512" not in setup.replace("_avx512", ""), "setup.py must not build anything for AVX-512 as a whole"
