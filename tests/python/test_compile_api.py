"""Numba's compiler entries (kiln.compiler): kiln.compile_ptx, kiln.compile and the
_for_current_device forms give PTX (or LTO-IR) of a kernel or of an exported device function
through NVRTC, without a GPU; bad options and signatures raise Numba's exceptions with clear
text.  Also kiln.kernels.transpose (Numba's numba.cuda.kernels.transpose): on the CPU target
here, its GPU kernel through NVRTC for sm_80 and sm_90."""
import re

import numpy as np
import pytest

import kiln
from kiln import float32, int16, int32, int64, uint32

DEVICE_FUNC = r"\.visible\s+\.func\s+\(\.param\s+\.b{bits}\s+func_retval0\)\s+{name}\("


def add(x, y):
    return x + y


def vadd(r, x, y):
    i = kiln.grid(1)
    if i < len(r):
        r[i] = x[i] + y[i]


@kiln.jit(device=True)
def twice(x):
    return 2 * x


def uses_twice(x):
    return twice(x) + kiln.grid(1)


def test_kernel_ptx_has_an_entry_and_returns_void():
    ptx, resty = kiln.compile_ptx(vadd, (float32[:], float32[:], float32[:]), cc=(8, 0))
    assert ".visible .entry kiln_entry(" in ptx
    assert ".visible .func" not in ptx and "func_retval" not in ptx
    assert ".target sm_80" in ptx
    assert resty == kiln.void
    ptx, _ = kiln.compile_ptx(vadd, "void(float32[::1], float32[::1], float32[::1])")
    assert "ld.global" in ptx and "st.global" in ptx


def test_device_function_is_a_c_symbol_named_after_the_function():
    ptx, resty = kiln.compile_ptx(add, (float32, float32), device=True)
    assert re.search(DEVICE_FUNC.format(bits=32, name="add"), ptx), ptx
    ptx80, _ = kiln.compile_ptx(add, (float32, float32), device=True, cc=(8, 0))
    assert ".target sm_80" in ptx80 and re.search(DEVICE_FUNC.format(bits=32, name="add"), ptx80)
    assert ".visible .entry" not in ptx
    assert resty == float32
    # the signature's return type is the symbol's, converted from what the body returns
    ptx, resty = kiln.compile_ptx(add, int16(int16, int16), device=True)
    assert resty == int16 and ".param .b32 func_retval0" in ptx  # PTX widens 16-bit returns
    _, resty = kiln.compile_ptx(add, "uint32(uint32, uint32)", device=True)
    assert resty == uint32
    ptx, resty = kiln.compile_ptx(add, int64(int64, int64), device=True, abi="c")
    assert re.search(DEVICE_FUNC.format(bits=64, name="add"), ptx) and resty == int64
    ptx, _ = kiln.compile_ptx(add, int32(int32, int32), device=True, abi="c",
                              abi_info={"abi_name": "_Z4funcii"})
    assert re.search(DEVICE_FUNC.format(bits=32, name="_Z4funcii"), ptx), ptx


def test_device_function_calls_device_functions_and_knows_its_thread():
    ptx, resty = kiln.compile_ptx(uses_twice, (int64,), device=True)
    assert re.search(DEVICE_FUNC.format(bits=64, name="uses_twice"), ptx), ptx
    assert "%tid.x" in ptx and resty == int64
    # a jit device function is compiled from its Python function; debug checks compile too
    ptx, resty = kiln.compile_ptx(twice, (float32,), device=True, debug=True)
    assert re.search(DEVICE_FUNC.format(bits=32, name="twice"), ptx) and resty == float32


def test_compile_defaults_to_a_device_function_and_writes_ltoir():
    ptx, resty = kiln.compile(add, int32(int32, int32))
    assert re.search(DEVICE_FUNC.format(bits=32, name="add"), ptx) and resty == int32
    code, resty = kiln.compile(add, int32(int32, int32), output="ltoir")
    assert isinstance(code, bytes) and int.from_bytes(code[:4], "little") == 0x7F4E43ED
    assert resty == int32
    code, resty = kiln.compile(vadd, (float32[:],) * 3, device=False, abi="numba",
                               output="ltoir")
    assert int.from_bytes(code[:4], "little") == 0x7F4E43ED and resty == kiln.void
    from kiln.compiler import compile as compile_, compile_ptx
    assert compile_ptx is kiln.compile_ptx and compile_(add, (float32, float32))[1] == float32


def test_options_reach_nvrtc():
    def f(x, y, d):
        return (x * y + 1.0) / d

    ptx, _ = kiln.compile_ptx(f, (float32, float32, float32), device=True)
    assert "div.rn.f32" in ptx
    ptx, _ = kiln.compile_ptx(f, (float32, float32, float32), device=True, fastmath=True)
    assert "div.approx.ftz.f32" in ptx or "div.full.ftz.f32" in ptx

    def empty():
        pass

    ptx, resty = kiln.compile_ptx(empty, "void()", launch_bounds=(128, 2))
    assert re.search(r"\.maxntid\s+128", ptx) and re.search(r"\.minnctapersm\s+2", ptx)
    ptx, _ = kiln.compile_ptx(vadd, (float32[:],) * 3, lineinfo=True)
    assert re.search(r'\.file.*test_compile_api\.py"', ptx)
    ptx, _ = kiln.compile_ptx(vadd, (float32[:],) * 3, cc=(10, 0))
    assert ".target sm_100" in ptx


def test_for_current_device_targets_the_gpu_or_the_default():
    from kiln import compiler
    if kiln.is_available():
        cc = kiln.get_current_device().compute_capability
    else:
        cc = compiler.DEFAULT_CC
    ptx, resty = kiln.compile_ptx_for_current_device(add, (float32, float32), device=True)
    assert f".target sm_{cc[0]}{cc[1]}" in ptx and resty == float32
    ptx, _ = kiln.compile_for_current_device(add, (float32, float32))
    assert f".target sm_{cc[0]}{cc[1]}" in ptx and ".visible .func" in ptx


def test_bad_options_and_signatures_raise_numbas_exceptions():
    sig = (int32, int32)
    with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
        kiln.compile(add, sig, output="illegal")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fastcall"):
        kiln.compile_ptx(add, sig, abi="fastcall")
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        kiln.compile_ptx(add, sig, abi="c")
    with pytest.raises(TypeError, match="must have void return type"):
        kiln.compile_ptx(add, int32(int32, int32))
    with pytest.raises(TypeError, match="has 1 arguments but 'add' takes 2"):
        kiln.compile_ptx(add, (int32,), device=True)
    with pytest.raises(kiln.CompileError, match="<signature>:1:19: error: invalid syntax"):
        kiln.compile_ptx(add, "int32(int32, int32", device=True)
    with pytest.raises(NotImplementedError, match=r"pass cc=\(9, 0\)"):
        kiln.compile_ptx(vadd, (float32[:],) * 3, cc=(9, 0, "a"))
    with pytest.raises(ValueError, match="compute capability"):
        kiln.compile_ptx(vadd, (float32[:],) * 3, cc="sm_90")
    with pytest.raises(ValueError, match="not a C identifier"):
        kiln.compile(add, sig, abi_info={"abi_name": "two words"})
    with pytest.raises(TypeError, match="needs a Python function"):
        kiln.compile_ptx(42, sig)
    with pytest.raises(TypeError, match="needs the signature"):
        kiln.compile(add, device=True)
    with pytest.raises(TypeError, match="abi_info is a dict"):
        kiln.compile_ptx(add, sig, device=True, abi_info=5)
    with pytest.raises(TypeError, match="abi_name'] is the symbol's name, a str"):
        kiln.compile_ptx(add, sig, device=True, abi_info={"abi_name": 7})
    # a declared return of nothing, from a function that returns a value (hunt29 11)
    with pytest.raises(TypeError, match="returns int32, but signature 'none.*No conversion"):
        kiln.compile_ptx(add, "none(int32, int32)", device=True)


def test_kernel_errors_are_compile_errors_at_their_line():
    def bad(x):
        return x + undefined_name  # noqa: F821

    with pytest.raises(kiln.CompileError, match=r"test_compile_api\.py:\d+:\d+: error"):
        kiln.compile_ptx(bad, (float32,), device=True)

    def pair(x):
        return x, x

    with pytest.raises(kiln.CompileError, match="returns a scalar or nothing"):
        kiln.compile_ptx(pair, (float32,), device=True)

    def nothing(x):
        pass

    with pytest.raises(kiln.CompileError, match="returns nothing, but its signature returns"):
        kiln.compile_ptx(nothing, int32(int32), device=True)


# ---- kiln.kernels.transpose -------------------------------------------------------------

@pytest.mark.parametrize("rows, cols, dtype", [(5, 6, np.float64), (128, 33, np.complex128),
                                               (70, 40, np.int32), (17, 16, np.bool_)])
def test_transpose_on_the_cpu_target(monkeypatch, rows, cols, dtype):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    from kiln.kernels.transpose import transpose

    x = (np.arange(rows * cols) % 11).astype(dtype).reshape(rows, cols)
    dy = transpose(kiln.to_device(x))
    assert dy.shape == (cols, rows) and dy.dtype == x.dtype
    np.testing.assert_array_equal(dy.copy_to_host(), x.T)
    dz = kiln.device_array((cols, rows), dtype=dtype)
    assert transpose(kiln.to_device(x), dz) is dz
    np.testing.assert_array_equal(dz.copy_to_host(), x.T)
    with pytest.raises(ValueError, match="goes into one of shape"):
        transpose(kiln.to_device(x), kiln.device_array((rows, cols + 1), dtype=dtype))


def test_transpose_rejects_other_than_2d(monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")
    from kiln.kernels.transpose import transpose

    with pytest.raises(ValueError, match="2-D"):
        transpose(kiln.to_device(np.zeros(4)))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.bool_])
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_transpose_gpu_kernel_compiles(dtype, cc):
    from kiln.kernels.transpose import _tiled_kernel

    t = kiln.from_dtype(np.dtype(dtype))
    ptx, _ = kiln.compile_ptx(_tiled_kernel(t), (t[:, :], t[:, :]), cc=cc)
    assert ".shared" in ptx and "bar.sync" in ptx


def test_compile_ptx_of_a_dispatcher_takes_its_debug_and_fastmath():
    def store(a, i):
        a[i] = 1.0

    sig = "void(float64[:], int64)"
    plain = kiln.compile_ptx(kiln.jit(store), sig)[0]
    checked = kiln.compile_ptx(kiln.jit(store, debug=True), sig)[0]
    assert checked == kiln.compile_ptx(store, sig, debug=True)[0] != plain
    assert kiln.compile_ptx(kiln.jit(store, debug=True), sig, debug=False)[0] == plain
