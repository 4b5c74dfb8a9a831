"""The default build runs on any x86-64 machine: outside the x86-64-v3 copies of the hot searches
(csrc/multiversion.h: `name.arch_x86_64_v3` clones picked at load time, `name_v3` copies picked with
mg_cpu_has_v3(), and the inference engine's `*_avx2` kernels picked with __builtin_cpu_supports in
csrc/model/matmul.c, with the policy network's `*_avx2` Winograd transforms where that kernel is picked),
the extension uses no AVX or BMI2 instruction."""
import platform
import re
import shutil
import subprocess
import sysconfig

import pytest

from mavgame import _core

# AVX (any VEX-encoded 'v...' mnemonic) and BMI1/BMI2 instructions an x86-64-v2 CPU lacks.
BEYOND_V2 = re.compile(r"\t(v[a-z0-9]+|shlx|shrx|sarx|pext|pdep|andn|blsr|blsi|blsmsk|bzhi|mulx|rorx)[ \t]")


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
            if re.sub(r"(\.(constprop|isra|part)\.\d+)+$", "", fn).endswith((".arch_x86_64_v3", "_v3", "_avx2")):
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
