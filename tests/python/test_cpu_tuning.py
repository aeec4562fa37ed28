"""The CPU source's compiler tuning (src/emit/rt_cpu.h; docs/architecture.md, "The
compiler's tuning"): where GCC takes an AVX-512 processor with znver3's tuning (GCC 12 on
Zen 4), the generated source asks for an AVX-512 core's costs, so that an element's
repeated loads stay in registers instead of being folded into each use."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import kiln

# what kiln's optimised build passes besides the source's own flags (src/target/cpu.c)
FLAGS = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-fwrapv", "-fno-math-errno",
         "-fno-trapping-math", "-funroll-loops", "-fno-strict-aliasing", "-w", "-std=gnu11",
         "-ffp-contract=off"]
# a double-precision vector operation with a memory operand: `vmulpd (%r9,%rcx), ...`
FOLDED = re.compile(r"^\s+v(?:mul|add|sub|div)pd\s+-?\d*\(", re.M)
PRAGMA = '#pragma GCC target("tune=icelake-server,prefer-vector-width=512")'


@kiln.jit
def chain(out, a, b, c):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = ((a[i] * b[i] + c[i]) * a[i] - b[i]) / (c[i] + 1.0)


def _cc():
    cc = os.environ.get("KILN_CC", "cc").split()
    if not shutil.which(cc[0]):
        pytest.skip(f"no C compiler {cc[0]!r}")
    return cc


def _macros(cc):
    return subprocess.run(cc + ["-march=native", "-dM", "-E", "-x", "c", os.devnull],
                          capture_output=True, text=True, check=True).stdout


def _asm(cc, source, tmp_path):
    src = tmp_path / "k.c"
    src.write_text(source)
    r = subprocess.run(cc + FLAGS + ["-S", "-o", "-", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_repeated_loads_stay_in_registers_under_gcc_znver3_avx512(tmp_path):
    cc = _cc()
    m = _macros(cc)
    applies = ("__GNUC__" in m and "__clang__" not in m and "__tune_znver3__" in m
               and "__AVX512F__" in m and "__x86_64__" in m)
    rng = np.random.default_rng()
    n = 1000
    a, b, c = (rng.random(n) for _ in range(3))
    out = np.zeros(n)
    chain[(n + 127) // 128, 128](out, a, b, c)
    np.testing.assert_allclose(out, ((a * b + c) * a - b) / (c + 1.0), rtol=1e-15)
    source = chain.inspect_source(chain.signatures[0])
    assert source.count(PRAGMA) == 1
    if not applies:
        pytest.skip("the tuning exception is for GCC with znver3's tuning and AVX-512 "
                    "(GCC before 13 on Zen 4); this compiler and processor are not that")
    folded = len(FOLDED.findall(_asm(cc, source, tmp_path)))
    # the same source without the pragma: znver3's costs fold the loads (the case exists,
    # so the count above can tell the two apart)
    unfolded = len(FOLDED.findall(_asm(cc, source.replace(PRAGMA, ""), tmp_path)))
    assert unfolded > 0
    assert folded == 0
