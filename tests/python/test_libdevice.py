"""kiln.libdevice (Numba's cuda.libdevice): CUDA's __nv_ functions called from kernels, their
table read from the toolkit's bitcode (tools/gen_libdevice.py) into the compiler
(src/sema/libdevice_table.h) and the package (kiln/_libdevice_table.py), and
kiln.libdevicefuncs' signatures.  Compiled through NVRTC without a GPU; values on the H200
in test_gpu.py."""
import os
import re

import pytest

import kiln
from kiln import libdevice
from kiln._libdevice_table import TABLE
from kiln.libdevicefuncs import create_signature, functions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_compiler_and_the_package_have_the_same_table():
    with open(os.path.join(ROOT, "src", "sema", "libdevice_table.h")) as f:
        rows = re.findall(r"^LD\((\w+), '(\w)', \"(\w*)\", (0x[0-9a-f]+)\)$", f.read(), re.M)
    assert [(n, r, p, int(o, 16)) for n, r, p, o in rows] == list(TABLE)
    names = [n for n, *_ in TABLE]
    assert names == sorted(names)  # libdevice_lookup searches it by halves
    assert len(TABLE) > 300 and {"sin", "sincos", "frexp", "umulhi", "fdiv_rz"} <= set(names)


def test_signatures_follow_the_pointer_results():
    sig = create_signature(*functions["__nv_sincos"])
    assert isinstance(sig.return_type, kiln.types.UniTuple)
    assert list(sig.return_type) == [kiln.float64, kiln.float64]
    assert sig.args == (kiln.float64,)
    sig = create_signature(*functions["__nv_frexpf"])
    assert list(sig.return_type) == [kiln.float32, kiln.int32] and sig.args == (kiln.float32,)
    sig = create_signature(*functions["__nv_usad"])
    assert sig.return_type == kiln.uint32 and sig.args == (kiln.uint32,) * 3
    assert create_signature(*functions["__nv_double2ull_rz"]).return_type == kiln.uint64
    with pytest.raises(TypeError, match="can only be used inside a kiln kernel"):
        libdevice.sin(1.0)


def sincos_frexp(s, c, m, e, x):
    i = kiln.grid(1)
    if i < len(x):
        s[i], c[i] = libdevice.sincos(x[i])
        m[i], e[i] = libdevice.frexpf(x[i])


def mixed(r, a, b):
    r[0] = libdevice.fdiv_rz(a, b) + libdevice.umulhi(a, b) + libdevice.llmax(a, 3)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_calls_compile_to_the_libdevice_code(arch):
    f64, f32 = kiln.float64[::1], kiln.float32[::1]
    ptx, _ = kiln.compile_ptx(sincos_frexp, (f64, f64, f32, kiln.int32[::1], f64),
                              cc=(int(arch[3]), int(arch[4])))
    assert "st.global.f64" in ptx and ("st.global.u32" in ptx or "st.global.b32" in ptx)
    # arguments convert to the parameters' types as C converts them (Numba casts too)
    ptx, _ = kiln.compile_ptx(mixed, (f64, kiln.float32, kiln.int32),
                              cc=(int(arch[3]), int(arch[4])))
    assert "div.rz.f32" in ptx and "mul.hi.u32" in ptx


def test_every_function_of_the_table_compiles():
    # what Numba's test_libdevice generates per function, for every tenth of the table here
    # (all of them take 20 s; the GPU run of the Numba suite compiles each one)
    for name, r, params, outs in TABLE[::10]:
        sig = create_signature(*functions["__nv_" + name])
        ins = ", ".join(f"a{k}" for k in range(len(sig.args)))
        rets = list(sig.return_type) if isinstance(sig.return_type, kiln.types.BaseTuple) \
            else [sig.return_type]
        outs_ = ", ".join(f"r{k}" for k in range(len(rets)))
        src = (f"def f({outs_}, {ins}):\n    ret = libdevice.{name}({ins})\n"
               f"    {', '.join(f'r{k}[0]' for k in range(len(rets)))} = ret\n")
        g = {"libdevice": libdevice}
        exec(src, g)
        ptx, _ = kiln.compile_ptx(g["f"], tuple(t[::1] for t in rets) + tuple(sig.args))
        assert "ld.param" in ptx and "st.global" in ptx, name


def test_bad_calls_say_what_is_wrong(tmp_path):
    def two(r, x):
        r[0] = libdevice.sin(x, x)

    def kw(r, x):
        r[0] = libdevice.sin(x=x)

    def cx(r, x):
        r[0] = libdevice.sin(x * 1j)

    f64 = kiln.float64[::1]
    with pytest.raises(kiln.CompileError, match=r"libdevice.sin\(\) takes 1 positional argument "
                                                r"but 2 were given"):
        kiln.compile_ptx(two, (f64, kiln.float64))
    with pytest.raises(kiln.CompileError, match=r"takes no keyword arguments"):
        kiln.compile_ptx(kw, (f64, kiln.float64))
    with pytest.raises(kiln.CompileError, match=r"takes real numbers, not complex128"):
        kiln.compile_ptx(cx, (f64, kiln.float64))


def test_the_cpu_target_runs_libdevice_too():
    # rt_libdevice_cpu.h (test_libdevice_cpu.py checks every function)
    import math

    import numpy as np

    @kiln.jit(target="cpu")
    def k(r, x):
        r[0] = libdevice.sin(x)

    r = np.zeros(1)
    k[1, 1](r, 1.0)
    assert r[0] == math.sin(1.0)
