"""GPU execution tests (pytest -m gpu; `make gpu-test` on a machine with a CUDA GPU).

The same kernels as the CPU tests run on the GPU, diffed against the CPU target and
NumPy float64 references on fresh random inputs; then the GPU-only surface: shared
memory, barriers, warp intrinsics, atomics, streams, device arrays and the other
libraries' arrays, vectorize and reduce."""
import cmath
import math
import warnings

import numpy as np
import pytest

import kiln
from kiln import literal_unroll
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, random_array

pytestmark = pytest.mark.gpu

import test_kernels as K  # noqa: E402  (the CPU tests' kernels)
import test_cuda_codegen as G  # noqa: E402


def test_gpu_is_available():
    assert kiln.is_available(), kiln.cuda_unavailable_reason()


def gpu_layouts(a):
    """The same values as device arrays in C, F, strided and negatively strided layouts."""
    big = np.zeros((a.shape[0] * 2, a.shape[1] * 3), a.dtype)
    big[::2, ::3] = a
    rev = np.ascontiguousarray(a[::-1, ::-1])
    return {
        "C": kiln.to_device(np.ascontiguousarray(a)),
        "F": kiln.to_device(np.asfortranarray(a)),
        "strided": kiln.to_device(big)[::2, ::3],
        "negative": kiln.to_device(rev)[::-1, ::-1],
    }


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
def test_axpy_gpu_matches_cpu(rng, dtype):
    n = 5000
    x, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    a = dtype(3)
    cpu = np.zeros(n, dtype)
    kc = kiln.jit(K.axpy.py_func, target="cpu")  # the same kernel on the other target
    kc[(n + 127) // 128, 128](cpu, x, y, a)
    d = kiln.device_array(n, dtype)
    K.axpy[(n + 127) // 128, 128](d, kiln.to_device(x), kiln.to_device(y), a)
    gpu = d.copy_to_host()
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(gpu, 3 * x.astype(np.float64) + y, rtol=1e-6)
        # the GPU contracts 3 * x + y into one FMA (as Numba-CUDA does), the CPU rounds
        # 3 * x first (as NumPy does, without fastmath): they may differ by that rounding,
        # which is large against the result where 3 * x and y nearly cancel
        tol = 1e-6 * np.abs(cpu) + np.finfo(dtype).eps * np.abs(3 * x.astype(np.float64))
        assert (np.abs(gpu.astype(np.float64) - cpu) <= tol).all()
    else:
        np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_2d_every_layout_gpu(rng, dtype, layout):
    shape = (37, 53)
    a, b = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    A, B = gpu_layouts(a)[layout], gpu_layouts(b)[layout]
    out = gpu_layouts(np.zeros(shape))[layout]
    K.add2d[(3, 4), (16, 16)](out, A, B)
    np.testing.assert_allclose(out.copy_to_host(), (a * 2 + b).astype(np.float64), rtol=1e-6)


def test_3d_grid_and_nd_arrays_gpu(rng):
    out = kiln.device_array((5, 7, 9), np.int64)
    K.grid3[(2, 2, 2), (4, 4, 8)](out)
    i, j, k = np.indices((5, 7, 9))
    np.testing.assert_array_equal(out.copy_to_host(), i * 10000 + j * 100 + k)
    a = rng.random((6, 3, 4, 5))
    o = kiln.device_array(6)
    K.nd_sum[1, 32](o, kiln.to_device(a)[:, ::-1, :, ::2])
    np.testing.assert_allclose(o.copy_to_host(), a[:, ::-1, :, ::2].sum(axis=(1, 2, 3)))


def test_device_functions_gpu(rng):
    n = 300
    x = rng.uniform(-1, 2, n)
    a = rng.integers(-50, 50, n)
    b = rng.integers(1, 9, n) * rng.choice([-1, 1], n)
    out, q, r = (kiln.device_array(n, t) for t in (np.float64, np.int64, np.int64))
    K.use_devices[3, 128](out, q, r, *(kiln.to_device(v) for v in (x, a, b)))
    np.testing.assert_allclose(out.copy_to_host(), np.clip(x, 0, 0.5))
    np.testing.assert_array_equal(q.copy_to_host(), a // b)
    np.testing.assert_array_equal(r.copy_to_host(), a % b)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_semantics_gpu(rng, dtype):
    n = 500
    a, b = random_array(rng, n, dtype), random_array(rng, n, dtype)
    b[b == 0] = 1
    out = kiln.device_array((n, 13), dtype)
    K.int_ops[4, 128](out, kiln.to_device(a), kiln.to_device(b))
    cpu = np.zeros((n, 13), dtype)
    kiln.jit(K.int_ops.py_func, target="cpu")[4, 128](cpu, a, b)
    np.testing.assert_array_equal(out.copy_to_host(), cpu)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_semantics_gpu(rng, dtype):
    n = 400
    a = rng.uniform(-50, 50, n).astype(dtype)
    b = rng.uniform(-7, 7, n).astype(dtype)
    b[np.abs(b) < 0.1] = 0.5
    out = kiln.device_array((n, 12), dtype)
    K.float_ops[4, 128](out, kiln.to_device(a), kiln.to_device(b))
    cpu = np.zeros((n, 12), dtype)
    kiln.jit(K.float_ops.py_func, target="cpu")[4, 128](cpu, a, b)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.copy_to_host(), cpu, rtol=tol, atol=tol)


def test_math_functions_gpu(rng):
    x = rng.uniform(0.1, 0.9, 256)
    for name in ["sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                 "cosh", "tanh", "erf", "erfc", "gamma", "lgamma", "log1p", "expm1"]:
        @kiln.jit
        def k(out, x):
            i = kiln.grid(1)
            if i < x.size:
                out[i] = FN(x[i])  # noqa: F821
        k.py_func.__globals__["FN"] = getattr(math, name)
        out = kiln.device_array(256)
        k[2, 128](out, kiln.to_device(x))
        np.testing.assert_allclose(out.copy_to_host(), [getattr(math, name)(v) for v in x],
                                   rtol=1e-12, err_msg=name)
        del k.py_func.__globals__["FN"]


def test_control_local_arrays_atomics_views_gpu(rng):
    out = kiln.device_array(8, np.int64)
    K.control[1, 8](out, 20)
    host = np.zeros(8, np.int64)
    kiln.jit(K.control.py_func, target="cpu")[1, 8](host, 20)
    np.testing.assert_array_equal(out.copy_to_host(), host)
    x = rng.random((50, 4))
    o = kiln.device_array(50)
    K.local_arrays[1, 64](o, kiln.to_device(x))
    np.testing.assert_allclose(o.copy_to_host(), x @ np.arange(1, 5))
    xs = rng.integers(0, 10, 100000).astype(np.int32)
    counts = kiln.to_device(np.zeros(11, np.int32))
    total = kiln.to_device(np.zeros(1))
    K.histogram[(100000 + 255) // 256, 256](counts, kiln.to_device(xs), total)
    c = counts.copy_to_host()
    np.testing.assert_array_equal(c[:10], np.bincount(xs, minlength=10))
    assert c[10] == xs.max() and total.copy_to_host()[0] == 50000.0
    a = rng.random((20, 7))
    v = kiln.device_array((20, 5))
    K.views[1, 32](v, kiln.to_device(a))
    np.testing.assert_allclose(v.copy_to_host()[:, 2], a[:, 1:4].sum(axis=1))


def test_shared_memory_barriers_and_atomics():
    a = np.arange(1000, dtype=np.float32)
    out = kiln.to_device(np.zeros(1, np.float32))
    G.block_sum[(1000 + G.TPB - 1) // G.TPB, G.TPB](kiln.to_device(a), out)
    assert out.copy_to_host()[0] == a.sum()


def emulate_warp_ops(lanes):
    """What G.warp_ops computes in lane 0 of a warp, step by step."""
    v = [int(x) for x in lanes]
    off = 16
    while off > 0:  # shfl_down: a lane past the end keeps its own value
        v = [v[l] + (v[l + off] if l + off < 32 else v[l]) for l in range(32)]
        off //= 2
    m = sum(1 << l for l in range(32) if v[l] > 0)
    w = v[1] + v[0]          # shfl_xor(v, 1) + shfl(v, 0) in lane 0
    u = v[0]                 # shfl_up(v, 1): lane 0 keeps its own
    return v[0] + m + w + u + all(x > 0 for x in v) + any(x > 0 for x in v)


def test_warp_intrinsics(rng):
    a = rng.integers(-20, 40, 64).astype(np.int32)
    out = kiln.to_device(np.zeros(2, np.int64))
    G.warp_ops[1, 64](kiln.to_device(a), out)
    assert out.copy_to_host().tolist() == [emulate_warp_ops(a[:32]), emulate_warp_ops(a[32:])]


@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_syncthreads_and_or_count(rng, dtype):
    # blocks of 128 threads over 1000 values: the last block has threads past the end,
    # which vote 0; G.block_votes stores every + 2 * some + 4 * count per thread
    n, tpb = 1000, G.TPB
    a = rng.integers(-1, 4, n).astype(dtype)
    a[:tpb] = np.abs(a[:tpb]) + 1                # block 0: every value positive
    a[tpb:2 * tpb] = 0                           # block 1: none
    out = kiln.to_device(np.zeros(n, np.int32))
    G.block_votes[(n + tpb - 1) // tpb, tpb](kiln.to_device(a), out)
    got = out.copy_to_host()
    for b in range((n + tpb - 1) // tpb):
        v = np.zeros(tpb, dtype)
        part = a[b * tpb:(b + 1) * tpb]
        v[:part.size] = part
        want = int(np.all(v > 0)) + 2 * int(np.any(v != 0)) + 4 * int(np.sum(v > 1))
        assert (got[b * tpb:(b + 1) * tpb] == want).all(), (b, got[b * tpb], want)


def test_float16_shared_memory_and_fp16(rng):
    n, tpb = 1000, G.TPB
    a = (rng.standard_normal(n) * 3).astype(np.float16)
    out = kiln.to_device(np.zeros(n, np.float16))
    G.half_shared[(n + tpb - 1) // tpb, tpb](kiln.to_device(a), out)
    got = out.copy_to_host()
    s = np.zeros(((n + tpb - 1) // tpb) * tpb, np.float16)
    s[:n] = a
    rev = s.reshape(-1, tpb)[:, ::-1].ravel()[:n]
    fma = (rev.astype(np.float64) * a + 1).astype(np.float16)
    want = fma + np.sin(a) * a                   # each step rounded to float16, as in NumPy
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_native_float16_and_float_min_max():
    # add.f16, fma.rn.f16, setp.f16, cvt.rn.f16.s8... (rt_half.h) give NumPy's float16 bit
    # for bit, and max.f32/min.f64 ignore a NaN operand, as on the CPU (test_half_native)
    import test_half_native as H
    H.test_float16_operations_match_numpy_bit_for_bit(gpu=True)
    H.test_integers_to_float16_as_numpy(gpu=True)
    for dt in (np.float16, np.float32, np.float64):
        H.test_min_max_of_floats_ignore_nan(dt, gpu=True)


@pytest.mark.parametrize("name", ["float16_arithmetic", "float16_fp16_module", "global_arrays",
                                  "complex_cmath", "cpu_blocks", "cpu_warps",
                                  "device_function_compile_time_args", "atomics_nanmax_nanmin",
                                  "warp_match", "builtins_calls", "const_memory",
                                  "array_reshape", "identity_is", "array_reductions",
                                  "ufunc_logical_complex_order", "array_view",
                                  # session 14's constructs (not run on a GPU yet)
                                  "cpu_warp_branch", "complex_while_lanes", "membership",
                                  "tuple_equality", "divmod", "array_transpose_view",
                                  "tuple_slice_concat", "nested_tuple_return",
                                  "tuple_of_tuples_index", "range_limits",
                                  # session 15's (first run on a GPU, an H100, in session 16)
                                  "kernel_parameter_defaults", "record_field_views",
                                  "scalar_view_bits", "weak_int_values_stay_exact",
                                  "int_conversions_keep_values", "tuple_augassign_grows",
                                  # session 16's: spin-waits between warps, Enum arguments
                                  "spin_wait_threads", "enum_getitem_arguments",
                                  "weak_int_meets_narrow_int", "weak_int_unknown_operations",
                                  "numpy_fmod_integers", "for_reversed", "nested_functions",
                                  "for_over_array_rows", "loop_iterable_once",
                                  # session 18's: Numba's float ** int
                                  "float_int_power", "runtime_int_pow_negative",
                                  "compare_python_numbers_exactly", "rounding_of_integers"])
def test_lang_cases_on_the_gpu(name):
    # these tests/lang kernels, run on the GPU (host arrays go to the GPU when one is there),
    # print the same as on the CPU: float16 bit for bit, global arrays (frozen into the
    # program as __device__ data) bit for bit, cmath within 4 ulp of Python's, and the
    # kernels the CPU runs as fibers (shared memory, barriers, warps) as the GPU runs them
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import test_lang
    assert kiln.is_available()
    with open(f"{test_lang.LANG}/{name}.expect") as f:
        assert test_lang.run_case(name) == f.read()


def test_dynamic_shared_memory():
    a = np.arange(64, dtype=np.float64)
    d = kiln.to_device(a)
    G.dynamic_shared[1, 64, 0, 64 * 8](d)
    np.testing.assert_array_equal(d.copy_to_host(), a[::-1])


def test_tiled_matmul(rng):
    A = rng.random((70, 45), np.float32)
    B = rng.random((45, 33), np.float32)
    C = kiln.device_array((70, 33), np.float32)
    G.tiled_matmul[((33 + 15) // 16, (70 + 15) // 16), (16, 16)](kiln.to_device(A), kiln.to_device(B), C)
    np.testing.assert_allclose(C.copy_to_host(), A @ B, rtol=1e-4)


def test_streams_and_async_copies(rng):
    s = kiln.stream()
    x = rng.random(1 << 20)
    d = kiln.to_device(x, stream=s)
    out = kiln.device_array_like(d)
    K.axpy[(x.size + 255) // 256, 256, s](out, d, d, 2.0)
    s.synchronize()
    np.testing.assert_allclose(out.copy_to_host(stream=s), 3 * x)


def test_host_arrays_in_a_gpu_launch_are_copied_with_one_warning(rng):
    @kiln.jit(target="cuda")
    def k(out, x):
        i = kiln.grid(1)
        if i < x.size:
            out[i] = x[i] * 2
    x = rng.random(1000)
    out = np.zeros(1000)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k[4, 256](out, x)
        k[4, 256](out, x)
    assert sum(issubclass(i.category, kiln.PerformanceWarning) for i in w) == 1
    np.testing.assert_allclose(out, 2 * x)


def test_debug_index_error_on_gpu():
    @kiln.jit(debug=True)
    def k(a, n):
        i = kiln.grid(1)
        if i < n:
            a[i] = 1.0
    with pytest.raises(IndexError, match=r"test_gpu.py:\d+: index 10 is out of bounds for axis 0 with size 10"):
        k[1, 16](kiln.device_array(10), 11)
    k[1, 16](kiln.device_array(10), 10)  # the error record was cleared


def test_device_array_api(rng):
    a = rng.random((6, 8))
    d = kiln.to_device(a)
    assert d.shape == (6, 8) and d.dtype == np.float64 and d.size == 48 and d.ndim == 2
    np.testing.assert_array_equal(d[1:5:2, ::-3].copy_to_host(), a[1:5:2, ::-3])
    assert d[2, 3] == a[2, 3]
    np.testing.assert_array_equal(d.T.copy_to_host(), a.T)
    np.testing.assert_array_equal(d.reshape(48).copy_to_host(), a.reshape(48))
    cai = d.__cuda_array_interface__
    assert cai["shape"] == (6, 8) and cai["typestr"] == "<f8" and cai["version"] == 3
    host = np.zeros_like(a)
    d.copy_to_host(host)
    np.testing.assert_array_equal(host, a)
    e = kiln.device_array_like(d)
    e.copy_to_device(a * 2)
    np.testing.assert_array_equal(e.copy_to_host(), a * 2)


def test_device_array_setitem_strides_and_streams(rng, monkeypatch):
    a = rng.random((6, 8))
    d = kiln.to_device(a)
    ref = a.copy()
    d[0, 0] = 5
    ref[0, 0] = 5
    d[1] = np.arange(8)        # a contiguous row: one copy
    ref[1] = np.arange(8)
    d[2:4, ::2] = 7            # a strided view: its span read, changed, written back
    ref[2:4, ::2] = 7
    d[5] = kiln.to_device(np.full(8, 9.0))
    ref[5] = 9.0
    np.testing.assert_array_equal(d.copy_to_host(), ref)
    e = kiln.device_array_like(d)
    e.copy_to_device(d)        # device to device
    np.testing.assert_array_equal(e.copy_to_host(), ref)
    s = kiln.device_array((3, 4), np.float64, strides=(8, 24))
    assert s.strides == (8, 24) and s.flags["F_CONTIGUOUS"]
    like = kiln.device_array_like(kiln.device_array((10, 12))[::2, ::2])
    assert like.strides == (48, 8) and like.flags.c_contiguous
    assert kiln.is_cuda_array(d) and not hasattr(d, "__array_interface__")
    np.testing.assert_array_equal(d.view(np.int64).copy_to_host(), ref.view(np.int64))
    np.testing.assert_array_equal(d.view(np.float32).copy_to_host(), ref.view(np.float32))
    for st, handle in ((kiln.legacy_default_stream(), 1), (kiln.per_thread_default_stream(), 2)):
        assert st.handle == handle
        out, ones = kiln.device_array(1000), kiln.to_device(np.ones(1000))
        K.axpy[4, 256, st](out, ones, ones, 2.0)
        st.synchronize()
        np.testing.assert_array_equal(out.copy_to_host(), np.full(1000, 3.0))
    ext = kiln.stream()
    assert kiln.external_stream(ext.handle).handle == ext.handle
    # KILN_TARGET=cpu on a GPU machine: the device API on host memory, kernels on the CPU
    monkeypatch.setenv("KILN_TARGET", "cpu")
    h = kiln.to_device(np.ones(1000))
    assert h.on_host and not hasattr(h, "__cuda_array_interface__")
    assert isinstance(kiln.get_current_device(), kiln.HostDevice)
    hout = kiln.device_array(1000)
    K.axpy[4, 256](hout, h, h, 2.0)
    np.testing.assert_array_equal(np.asarray(hout), np.full(1000, 3.0))


def test_cupy_interop(rng):
    cp = pytest.importorskip("cupy")
    x = cp.asarray(rng.random(1000))
    out = cp.zeros(1000)
    K.axpy[4, 256](out, x, x, 3.0)
    np.testing.assert_allclose(cp.asnumpy(out), 4 * cp.asnumpy(x))
    d = kiln.to_device(np.arange(10.0))
    c = cp.asarray(d)  # CuPy reads our __cuda_array_interface__ without a copy
    c *= 2
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(10.0) * 2)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        y = cp.arange(1000, dtype=cp.float64)
    out2 = cp.zeros(1000)
    K.axpy[4, 256, s](out2, y, y, 1.0)
    s.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(out2), 2 * np.arange(1000.0))


def test_torch_interop(rng):
    torch = pytest.importorskip("torch")
    x = torch.rand(1000, device="cuda", dtype=torch.float32)
    out = torch.zeros(1000, device="cuda", dtype=torch.float32)
    K.axpy[4, 256](out, x, x, np.float32(1.0))
    torch.testing.assert_close(out, 2 * x)
    d = kiln.to_device(np.arange(5.0))
    t = torch.from_dlpack(d)
    assert t.device.type == "cuda" and t.tolist() == [0, 1, 2, 3, 4]
    t2 = torch.as_tensor(d, device="cuda")
    t2 += 1
    assert d.copy_to_host().tolist() == [1, 2, 3, 4, 5]


def test_jax_dlpack_interop():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    try:
        x = jnp.arange(16, dtype=jnp.float32)
        if x.devices().pop().platform != "gpu":
            pytest.skip("jax has no GPU backend here")
    except Exception as e:  # pragma: no cover
        pytest.skip(f"jax unusable: {e}")
    out = kiln.device_array(16, np.float32)
    K.axpy[1, 32](out, x, x, np.float32(1.0))
    np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(16, dtype=np.float32))


def test_vectorize_on_gpu_returns_the_input_kind(rng):
    from test_ufunc import rel_diff

    a, b = rng.random(1000), rng.random(1000)
    ref = (a - b) / (np.abs(a) + np.abs(b) + 1)
    r = rel_diff(kiln.to_device(a), kiln.to_device(b))
    assert isinstance(r, kiln.DeviceArray)
    np.testing.assert_allclose(r.copy_to_host(), ref)
    rb = rel_diff(kiln.to_device(rng.random((5, 1, 7))), kiln.to_device(rng.random((3, 1))))
    assert rb.shape == (5, 3, 7)
    cp = pytest.importorskip("cupy")
    rc = rel_diff(cp.asarray(a), b)
    assert isinstance(rc, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(rc), ref)
    torch = pytest.importorskip("torch")
    rt = rel_diff(torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda"))
    assert isinstance(rt, torch.Tensor) and rt.is_cuda
    np.testing.assert_allclose(rt.cpu().numpy(), ref)


def test_guvectorize_on_gpu(rng):
    """The gufuncs of test_gufunc.py on the GPU: host arrays in (staged, results copied
    back through the user's views), device arrays in and out on a stream, other libraries'
    arrays, and the same values as the CPU target."""
    from test_gufunc import copy_and_double, dot, matmul, saxpy

    a = rng.random((1001, 2, 4)).astype(np.float32)
    b = rng.random((1001, 4, 5)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.PerformanceWarning)  # host arrays staged
        np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-5)
        x, y = rng.random((10, 3, 3)), rng.random((3, 3))
        np.testing.assert_allclose(matmul(x, y), x @ y)
        r = np.zeros(7)
        c, d = rng.random((7, 33)), rng.random((7, 33))
        dot(c, d, r)
        np.testing.assert_allclose(r, (c * d).sum(1))
        f = rng.random((5, 2)).astype(np.float32)
        np.testing.assert_array_equal(saxpy(np.float32(2), f, f), 3 * f)
    s = kiln.stream()
    da, db = kiln.to_device(a, s), kiln.to_device(b, s)
    out = kiln.device_array((1001, 2, 5), np.float32, stream=s)
    assert matmul(da, db, out=out, stream=s) is out
    res = out.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_allclose(res, a @ b, rtol=1e-5)
    g = kiln.to_device(rng.random(64).astype(np.float32))
    bb, cc = copy_and_double(g)
    assert isinstance(bb, kiln.DeviceArray) and cc.dtype == np.float64
    np.testing.assert_array_equal(cc.copy_to_host(), g.copy_to_host() * 2.5)
    cp = pytest.importorskip("cupy")
    rc = dot(cp.asarray(c), cp.asarray(d))
    assert isinstance(rc, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(rc), (c * d).sum(1))


def test_reduce_on_gpu(rng):
    from test_ufunc import add, biggest

    for n in [1, 7, 256, 257, 100003, 1 << 22]:
        a = rng.random(n)
        np.testing.assert_allclose(add(kiln.to_device(a)), a.sum(), rtol=1e-9)
    i = rng.integers(-1000, 1000, 50001)
    assert add(kiln.to_device(i)) == i.sum()
    f = rng.random(77777).astype(np.float32)
    assert biggest(kiln.to_device(f)) == f.max()
    assert add(kiln.to_device(f), init=1.5) == pytest.approx(f.astype(np.float64).sum() + 1.5, rel=1e-4)
    # res= keeps the result on the GPU and returns at once, as numba.cuda.reduce does
    res = kiln.device_array(1, np.float64)
    assert add(kiln.to_device(a), res=res) is None
    np.testing.assert_allclose(res.copy_to_host()[0], a.sum(), rtol=1e-9)
    with pytest.raises(TypeError, match="res has dtype float32"):
        add(kiln.to_device(a), res=kiln.device_array(1, np.float32))


def test_inspect_ptx():
    src = K.axpy.inspect_ptx()
    assert ".entry kiln_entry" in src


def test_synchronize_reports_pending_kernel_errors():
    @kiln.jit
    def k(a, step):
        for i in range(0, 10, step):
            a[i] = 1
    k[1, 1](kiln.device_array(10), 1)
    k[1, 1](kiln.device_array(10), 0)
    with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
        kiln.synchronize()
    kiln.synchronize()  # reported once


def test_events_time_gpu_work_and_pinned_arrays_round_trip():
    n = 1 << 24
    x = kiln.pinned_array(n, np.float32)
    x[:] = 1.5
    d = kiln.to_device(x)
    s = kiln.stream()
    start, end = kiln.event(), kiln.event()
    start.record(s)
    K.axpy[(n + 255) // 256, 256, s](d, d, d, np.float32(2))
    end.record(s)
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 0 < ms < 1000 and kiln.event_elapsed_time(start, end) == ms
    back = kiln.pinned_array_like(x)
    d.copy_to_host(back)
    assert (back == 4.5).all()
    dev = kiln.get_current_device()
    assert dev.WARP_SIZE == 32 and dev.MULTIPROCESSOR_COUNT > 0
    assert dev.compute_capability >= (7, 0)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_numba_bit_and_float_device_functions_gpu_match_cpu(rng, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 5000, dtype=dtype, endpoint=True)
    x[:4] = [0, 1, info.max, info.min]
    f = rng.uniform(-8, 8, 5000)
    cpu = K.run_numba_device_functions(x, f, kiln.jit(K.numba_device_functions.py_func, target="cpu")[79, 64])
    outs = [kiln.to_device(np.zeros_like(c)) for c in cpu]
    K.numba_device_functions[79, 64](*outs, kiln.to_device(x), kiln.to_device(f))
    for c, g in zip(cpu[:4], outs[:4]):
        np.testing.assert_array_equal(g.copy_to_host(), c)
    for c, g in zip(cpu[4:], outs[4:]):
        np.testing.assert_allclose(g.copy_to_host(), c, rtol=1e-15)


@kiln.jit
def complex_axpy(out, x, a, b):
    i = kiln.grid(1)
    if i < out.size:
        z = x[i]
        out[i] = a * z + b + cmath.exp(z * 1j) / (z + 2) - z.conjugate() ** 2 + abs(z)
        kiln.atomic.add(x.imag, i, 1.0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_kernels_gpu_match_numpy(rng, dtype):
    """complex arithmetic, a complex128 scalar (two parameter slots) and a complex64 one, in
    a launch large enough for the wide entry, and atomics on an array's .imag view."""
    n = 1 << 20
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    a, b = 0.5 - 2j, np.complex64(1 + 1j)
    out = kiln.to_device(np.zeros(n, dtype))
    xd = kiln.to_device(x)
    complex_axpy[n // 256, 256](out, xd, a, b)
    ref = (dtype(a) * x + dtype(b) + np.exp(x * 1j) / (x + 2) - np.conj(x) ** 2 + abs(x))
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(out.copy_to_host(), ref, rtol=tol, atol=tol)
    np.testing.assert_array_equal(xd.copy_to_host(), x + dtype(1j))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cmath_gpu_matches_cpu(dtype):
    """Every cmath function on special values (tests/lang/complex_cmath.py's kernel): the GPU
    gives the CPU's results within 8 ulp of its precision, by complex_cmath's rule: a NaN in
    both results matches whatever the other part (C99 Annex G leaves the sign of an infinite
    part beside a NaN unspecified), and an infinity or zero must be the same value."""
    import os
    import runpy
    import itertools

    lang = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "lang", "complex_cmath.py"))
    reals = [-0.0, 0.0, 1.0, -1.0, 1.5, -3.5, math.pi, 1e-3, math.inf, -math.inf, math.nan]
    z = np.array([complex(p, q) for p, q in itertools.product(reals, reals)], dtype)
    w = np.roll(z, 5)
    cpu = np.zeros((z.size, len(lang["NAMES"])), np.complex128)
    kiln.jit(lang["funcs"].py_func, target="cpu")[1, z.size](z, w, cpu)
    gpu = kiln.to_device(np.zeros_like(cpu))
    lang["funcs"][1, z.size](kiln.to_device(z), kiln.to_device(w), gpu)
    g = gpu.copy_to_host()
    eps = float(np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps)
    bad = [f"{name}({complex(z[i])}): gpu {complex(g[i, k])}, cpu {complex(cpu[i, k])}"
           for i in range(z.size) for k, name in enumerate(lang["NAMES"])
           if not lang["close"](complex(g[i, k]), complex(cpu[i, k]), eps, 8)]
    assert not bad, f"{len(bad)} results differ:\n" + "\n".join(bad[:40])


def test_launch_bounds_limit_the_block_on_the_gpu():
    @kiln.jit(launch_bounds=(128, 2, 4))
    def fill(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = 1.0

    d = kiln.device_array(256, np.float32)
    fill[2, 128](d)
    assert d.copy_to_host().sum() == 256
    with pytest.raises(kiln.CudaError, match="CUDA_ERROR_INVALID_VALUE"):
        fill[1, 256](d)
        kiln.synchronize()


def test_shared_memory_carveout_is_accepted_by_the_driver():
    # each carveout Numba accepts reaches cuFuncSetAttribute, and the kernel still runs
    for carveout in ("MaxL1", "MaxShared", "default", 0, 50, 100, -1):
        @kiln.jit(shared_memory_carveout=carveout)
        def add_one(x):
            i = kiln.grid(1)
            if i < x.size:
                x[i] = i + 1

        d = kiln.to_device(np.zeros(10, np.int32))
        add_one[1, 10](d)
        assert (d.copy_to_host() == np.arange(1, 11)).all(), carveout
        want = {"MaxL1": 0, "MaxShared": 100}.get(carveout, carveout)
        if want != "default" and want >= 0:  # what the driver reports for -1 is its own
            assert kiln._kiln.entry_attribute(next(iter(add_one.overloads.values())), 9) == want


def test_argument_hints_and_extensions_on_the_gpu():
    @kiln.jit
    def set_three(a):
        a[0] = 3

    for hint, want in ((kiln.In, 0), (kiln.InOut, 3), (kiln.Out, 3)):
        h = np.zeros(1, np.int64)
        set_three[1, 1](hint(h))
        assert h[0] == want, hint
    rec = np.zeros(1, np.dtype([("b", np.int32)], align=True))

    @kiln.jit
    def set_rec(r):
        r[0]["b"] = 3

    set_rec[1, 1](kiln.In(rec))
    assert rec[0]["b"] == 0
    set_rec[1, 1](kiln.InOut(rec))
    assert rec[0]["b"] == 3

    class DefaultIn:
        def prepare_args(self, ty, val, **kwargs):
            return ty, kiln.args.wrap_arg(val, default=kiln.In)

    @kiln.jit
    def nocopy(a):
        a[0] = 3

    nocopy.extensions.append(DefaultIn())
    h = np.zeros(1, np.int64)
    nocopy[1, 1](h)
    assert h[0] == 0


def test_recursive_device_functions_on_the_gpu():
    @kiln.jit("int64(int64)", device=True)
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    @kiln.jit(device=True)
    def is_even(n):
        if n == 0:
            return True
        return is_odd(n - 1)

    @kiln.jit(device=True)
    def is_odd(n):
        if n == 0:
            return False
        return is_even(n - 1)

    @kiln.jit
    def k(r, x):
        i = kiln.grid(1)
        if i < x.size:
            r[0, i] = fib(x[i])
            r[1, i] = is_even(x[i])

    x = np.arange(16, dtype=np.int64)
    r = kiln.device_array((2, 16), np.int64)
    k[1, 32](r, kiln.to_device(x))
    got = r.copy_to_host()
    fibs = [0, 1]
    for _ in range(14):
        fibs.append(fibs[-1] + fibs[-2])
    assert got[0].tolist() == fibs
    assert got[1].tolist() == [int(v % 2 == 0) for v in range(16)]


class _KernelRaised(Exception):
    pass


def test_raise_in_kernels_on_the_gpu():
    @kiln.jit("void(int32)", debug=True)
    def f(x):
        if x == 1:
            raise _KernelRaised
        elif x == 2:
            raise _KernelRaised("foo")

    f[1, 1](0)
    with pytest.raises(_KernelRaised, match=r"In function 'f', file \S+, line \d+, "
                                            r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]$"):
        f[1, 1](1)
    with pytest.raises(_KernelRaised, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]: foo$"):
        f[1, 1](2)

    @kiln.jit
    def g(a):
        if kiln.threadIdx.x == 3 and kiln.blockIdx.x == 1:
            raise ValueError("three")
        a[kiln.grid(1)] = 1.0

    d = kiln.device_array(8, np.float64)
    g[2, 4](d)   # no debug: raised at the next synchronisation
    with pytest.raises(ValueError, match=r"tid=\[3, 0, 0\] ctaid=\[1, 0, 0\]: three"):
        kiln.synchronize()


def test_print_in_kernels_on_the_gpu():
    import os
    import subprocess
    import sys
    script = (
        "import numpy as np, kiln\n"
        "@kiln.jit\n"
        "def show(a):\n"
        "    i = kiln.grid(1)\n"
        "    if i < a.size:\n"
        "        print(i, 'hop!', a[i], a[i] > 1.0, (i, (2.5, True)), (7,))\n"
        "show[1, 3](kiln.to_device(np.array([0.5, -1.25, 3.0])))\n"
        "kiln.synchronize()\n"
        "print('after', flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "python"))
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == "after"
    assert sorted(lines[:-1]) == [f"{i} hop! {v:f} {v > 1.0} ({i}, (2.500000, True)) (7,)"
                                  for i, v in enumerate((0.5, -1.25, 3.0))]


def test_cache_hinted_loads_and_stores_on_the_gpu():
    @kiln.jit
    def k(r, x):
        i = kiln.grid(1)
        if i < x.size:
            kiln.stcs(r, i, kiln.ldcs(x, i) + kiln.ldcg(x, i) + kiln.ldlu(x, i))
            kiln.stwt(r, i, kiln.ldcv(r, i) * 2)

    for dt in (np.int8, np.float16, np.float32, np.int64, np.float64):
        x = np.arange(100).astype(dt)
        r = kiln.device_array(100, dt)
        k[1, 128](r, kiln.to_device(x))
        assert np.array_equal(r.copy_to_host(), (x * 3 * 2).astype(dt)), dt


def test_print_formats_count_in_the_constant_memory_size():
    # Numba-CUDA's test_get_const_mem_unspecialized: the format is a __constant__ array
    @kiln.jit
    def show(val, flag):
        if flag:
            print(val)

    show[1, 1](1, False)
    show[1, 1](1.0, False)
    sizes = show.get_const_mem_size()
    assert len(sizes) == 2 and min(sizes.values()) >= 4, sizes


def test_tuple_arguments_on_gpu():
    """Tuples of scalars, nested tuples and tuples of device and host arrays as kernel
    arguments on the GPU (the kernel of their leaves; host arrays in a tuple are copied
    back when written)."""
    @kiln.jit
    def k(r, t, arrs):
        i = kiln.grid(1)
        a, (b, c) = t
        if i < len(arrs[0]):
            arrs[0][i] = arrs[1][i] * a + b * c
        if i == 0:
            r[0] = len(t) + len(arrs)

    n = 300
    x = np.zeros(n, np.float32)
    y = kiln.to_device(np.arange(n, dtype=np.float32))
    r = kiln.device_array(1, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.PerformanceWarning)
        k[3, 128](r, (2.0, (np.float32(3), 4)), (x, y))
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 2 + 12)
    assert r.copy_to_host()[0] == 4


def test_global_device_array_by_address_on_the_gpu():
    # Numba's test_globals doc example: a global device array is read where it lies, so a
    # later copy_to_device is seen by the next launch; writes reach it too
    g = {"np": np, "kiln": kiln}
    exec(compile('''
PRICES = kiln.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))

@kiln.jit
def totals(q, out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = q[i] * PRICES[i]
        PRICES[i] += 1
''', "<global-device-array>", "exec"), g)
    q = kiln.to_device(np.ones(5, np.float32))
    out = kiln.device_array(5, np.float32)
    g["totals"][1, 32](q, out)
    np.testing.assert_array_equal(out.copy_to_host(), [10, 25, 5, 15, 30])
    g["PRICES"].copy_to_device(np.array([20, 50, 10, 30, 60], np.float32))
    g["totals"][1, 32](q, out)
    np.testing.assert_array_equal(out.copy_to_host(), [20, 50, 10, 30, 60])
    np.testing.assert_array_equal(g["PRICES"].copy_to_host(), [21, 51, 11, 31, 61])


def test_transpose_kernel_gpu():
    # kiln.kernels.transpose (numba.cuda.kernels.transpose): the shared-memory tile kernel
    from kiln.kernels.transpose import transpose

    for rows, cols, dtype in ((5, 6, np.float64), (128, 128, np.complex128),
                              (1025, 512, np.float64), (17, 16, np.bool_), (33, 70, np.int8)):
        x = (np.arange(rows * cols) % 13).astype(dtype).reshape(rows, cols)
        dy = transpose(kiln.to_device(x))
        assert not dy.on_host and dy.shape == (cols, rows)
        np.testing.assert_array_equal(dy.copy_to_host(), x.T)
        dz = kiln.device_array((cols, rows), dtype=dtype)
        transpose(kiln.to_device(x), dz)
        np.testing.assert_array_equal(dz.copy_to_host(), x.T)


def test_compile_ptx_for_current_device_gpu():
    def add(x, y):
        return x + y

    cc = kiln.get_current_device().compute_capability
    ptx, resty = kiln.compile_ptx_for_current_device(add, (kiln.float32, kiln.float32),
                                                     device=True)
    assert f".target sm_{cc[0]}{cc[1]}" in ptx and resty == kiln.float32


def test_mapped_and_managed_arrays_on_the_gpu():
    """Numba's mapped_array and managed_array: the kernel writes host-visible memory in place;
    after synchronize() the NumPy array holds the results, with no copy."""
    @kiln.jit
    def scale(a, s):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = a[i] * s + i

    for make in (kiln.mapped_array, kiln.managed_array):
        a = make(1000, np.float32)
        a[:] = np.arange(1000, dtype=np.float32)
        scale[4, 256](a, np.float32(2))
        kiln.synchronize()
        np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32) * 3)
    m = kiln.mapped_array_like(np.zeros((6, 4), order="F"))
    m[:] = 1
    flat = m.reshape(-1, order="F")
    scale[1, 32](flat, 2.0)
    kiln.synchronize()
    np.testing.assert_array_equal(flat, 2 + np.arange(24))


def test_copy_without_a_stream_waits_for_a_streams_kernel():
    """Numba's pattern (test_vectorize.py's test_1d_async): launch on a stream, then
    copy_to_host() without one; the copy must see the kernel's results."""
    @kiln.jit
    def slow_fill(a, v, reps):
        i = kiln.grid(1)
        if i < a.size:
            x = 0.0
            for k in range(reps):  # long enough that an unordered copy would read zeros
                x = x * 0.5 + v
            a[i] = x
    s = kiln.stream()
    for _ in range(3):
        d = kiln.device_array(1 << 20, np.float64)
        d.copy_to_device(np.zeros(1 << 20), stream=s)
        slow_fill[(1 << 20) // 256, 256, s](d, 1.0, 20000)
        h = d.copy_to_host()
        assert (h == 2.0).all()


def test_cpointer_arguments_on_the_gpu():
    # Numba's doc example (doc_examples/test_cpointer.py): a raw device address, indexed x[i]
    @kiln.jit(kiln.void(kiln.types.CPointer(kiln.uint8), kiln.uint32))
    def add_one(x, n):
        i = kiln.grid(1)
        if i < n:
            x[i] += 1

    x = kiln.to_device(np.arange(10, dtype=np.uint8))
    add_one[1, 32](x.__cuda_array_interface__["data"][0], len(x))
    assert x.copy_to_host().tolist() == list(range(1, 11))

    # atomics, a device function, a negative index (C's pointer arithmetic), complex elements
    @kiln.jit("float64(float64*, int64)", device=True)
    def twice(p, i):
        return p[i] * 2.0

    @kiln.jit("void(float64*, float64*, int32*, complex128*, int64)")
    def mixed(src, dst, count, z, n):
        i = kiln.grid(1)
        if i < n:
            dst[i] = twice(src, i) + src[i - 1]
            kiln.atomic.add(count, 0, 1)
            z[i] = z[i] * 1j

    buf = np.arange(1001, dtype=np.float64)
    src, dst = kiln.to_device(buf), kiln.device_array(1000, np.float64)
    count = kiln.to_device(np.zeros(1, np.int32))
    zh = (np.arange(1000) + 1j).astype(np.complex128)
    z = kiln.to_device(zh)
    addr = lambda a: a.__cuda_array_interface__["data"][0]  # noqa: E731
    mixed[8, 128](addr(src) + 8, addr(dst), addr(count), addr(z), 1000)
    np.testing.assert_array_equal(dst.copy_to_host(), 2 * buf[1:] + buf[:-1])
    assert count.copy_to_host()[0] == 1000
    np.testing.assert_array_equal(z.copy_to_host(), zh * 1j)


def test_kernel_resources_on_the_gpu():
    """get_regs_per_thread, get_shared_mem_per_block, get_local_mem_per_thread and
    get_max_threads_per_block read the loaded kernel's attributes."""
    N = 1000

    @kiln.jit("void(float32[::1])")
    def lmem(ary):
        lm = kiln.local.array(N, dtype=np.float32)
        for j in range(N):
            lm[j] = ary[(j * 7) % ary.size]
        for j in range(N):
            ary[j % ary.size] += lm[(j * 13) % N]

    @kiln.jit
    def smem(ary):
        sm = kiln.shared.array(10, dtype=ary.dtype)
        for j in range(10):
            sm[j] = j
        for j in range(10):
            ary[j] = sm[j]

    assert lmem.get_regs_per_thread() > 0
    assert lmem.get_local_mem_per_thread() >= N * 4
    smem[1, 1](np.zeros(10, np.float32))
    smem[1, 1](np.zeros(10, np.float64))
    sh = smem.get_shared_mem_per_block()
    assert sh[(kiln.float32[::1],)] >= 40 and sh[(kiln.float64[::1],)] >= 80, sh
    assert 0 < smem.get_max_threads_per_block(kiln.void(kiln.float32[::1])) <= 1024
def test_records_on_the_gpu():
    """tests/lang/records.py's aligned kernel on the GPU: device and host arrays of records,
    a record argument by reference (staged and copied back), whole records copied."""
    import runpy
    import os

    ns = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(__file__)), "lang",
                                     "records.py"))
    dt = ns["ALIGNED"]
    a = np.zeros(3, dt)
    for i in range(3):
        a[i] = (i % 2 == 0, i, 60000 + i, 7 * i, 2**63 + i, 1.5 * i, i / 4, 10.0 * i,
                complex(i, 1), complex(2, i), (i, 2 * i, 3 * i), 0)
    cpu, cpu_out = a.copy(), np.zeros(3)
    kiln.jit(ns["fields"].py_func, target="cpu")[1, 3](cpu, cpu_out)
    d, out = kiln.to_device(a), kiln.device_array(3, np.float64)
    assert d.dtype == dt
    ns["fields"][1, 3](d, out)
    assert d.copy_to_host().tobytes() == cpu.tobytes()
    np.testing.assert_array_equal(out.copy_to_host(), cpu_out)
    b = a.copy()
    ns["set_field"][1, 1](b[1], 123.25)  # a host record: staged, written back
    assert b[1]["d"] == 123.25
    ns["copy_rec"][1, 1](d, 0, 2)
    h = d.copy_to_host()
    assert h[0].tobytes() == h[2].tobytes()




def test_record_storage_on_the_gpu():
    """tests/lang/records_storage.py on the GPU: record arrays in shared and local memory
    (whole records and fields), frozen record tables in global and constant memory, each
    against the CPU target's result on the same structured arrays."""
    import runpy
    import os

    ns = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(__file__)), "lang",
                                     "records_storage.py"))
    dt, block = ns["NESTED"], ns["BLOCK"]
    x = np.zeros(2 * block, dt)
    x["i"] = np.arange(2 * block)
    x["j"] = np.arange(2 * block * 6).reshape(2 * block, 3, 2)
    for name in ("reverse_blocks", "local_records"):
        cpu, gpu = np.zeros_like(x), np.zeros_like(x)
        kiln.jit(ns[name].py_func, target="cpu")[2, block](x, cpu)
        dx, dy = kiln.to_device(x), kiln.to_device(gpu)
        ns[name][2, block](dx, dy)
        assert dy.copy_to_host().tobytes() == cpu.tobytes(), name
    src = np.arange(block, dtype=np.float64)
    cpu, gpu = np.zeros(block), np.zeros(block)
    kiln.jit(ns["shared_fields"].py_func, target="cpu")[1, block](src, cpu)
    ns["shared_fields"][1, block](src, gpu)
    np.testing.assert_array_equal(gpu, cpu)
    xs, ys = np.zeros(2), np.zeros(2, np.int64)
    odd, n = np.zeros((2, 5)), np.full(1, -1, np.int64)
    ns["read_tables"][1, 2](xs, ys, odd, n)
    np.testing.assert_array_equal(xs, ns["TABLE"]["x"])
    np.testing.assert_array_equal(ys, ns["TABLE"]["y"])
    table = ns["ODD"]
    np.testing.assert_array_equal(odd, [[r[f] for f in table.dtype.names] for r in table])
    assert n[0] == 0


def test_datetimes_on_the_gpu():
    """datetime64/timedelta64 host and device arrays and scalars as int64 counts."""
    import runpy
    import os

    ns = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(__file__)), "lang",
                                     "datetime_counts.py"))
    a = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    b = a + np.random.randint(0, 10000, a.size)
    d = np.zeros_like(a, dtype="timedelta64[D]")
    ns["diff"][1, 32](a, b, d)
    np.testing.assert_array_equal(d, b - a)
    da, db = kiln.to_device(a), kiln.to_device(b)
    dd = kiln.device_array(a.size, dtype="timedelta64[D]")
    ns["diff"][1, 32](da, db, dd)
    host = dd.copy_to_host()
    assert host.dtype == np.dtype("timedelta64[D]")
    np.testing.assert_array_equal(host, b - a)
    v = da.view(np.int64)
    np.testing.assert_array_equal(v.copy_to_host(), a.view(np.int64))
    matches = np.zeros(a.size, np.bool_)
    shifted = np.zeros_like(a)
    later = np.zeros(a.size, np.bool_)
    step = a[6] - a[5]
    ns["match_shift"][1, 32](a, a[5], step, matches, shifted, later)
    assert list(matches.nonzero()[0]) == [5]
    np.testing.assert_array_equal(shifted, a - step)
    np.testing.assert_array_equal(later, a > a[5])

def test_string_stores_on_the_gpu():
    """tests/lang/records_strings.py on the GPU: string constants into bytes and unicode
    arrays (host and device) and into string fields of records, byte for byte as the CPU
    target stores them."""
    import runpy
    import os

    ns = runpy.run_path(os.path.join(os.path.dirname(os.path.dirname(__file__)), "lang",
                                     "records_strings.py"))
    u, s = np.zeros(5, "<U12"), np.zeros(5, "S12")
    cu, cs = u.copy(), s.copy()
    kiln.jit(ns["fill"].py_func, target="cpu")[1, 8](cu, cs)
    ns["fill"][1, 8](u, s)
    assert u.tobytes() == cu.tobytes() and s.tobytes() == cs.tobytes()
    du = kiln.to_device(np.zeros(5, "<U12"))
    ds = kiln.to_device(np.zeros(5, "S12"))
    ns["fill"][1, 8](du, ds)
    assert du.copy_to_host().tobytes() == cu.tobytes()
    assert ds.copy_to_host().tobytes() == cs.tobytes()
    a, ca = np.zeros(3, ns["REC"]), np.zeros(3, ns["REC"])
    kiln.jit(ns["records"].py_func, target="cpu")[1, 1](ca)
    ns["records"][1, 1](a)
    assert a.tobytes() == ca.tobytes()
    assert a[1]["name"] == "ÅÄÖ–✓x" and a[0]["tag"] == b"ab"

def test_external_device_functions_on_the_gpu(tmp_path):
    # Numba's test_device_func.py patterns: CUSource with Numba's ABI, several sources (a
    # set), a declaration reached from device functions and the kernel, abi="c" (zero and
    # two arguments, void, a pointer), a .cu file on disk including a toolkit header
    times2_cu = kiln.CUSource(
        'extern "C" __device__ int times2(int *out, int a) { *out = a * 2; return 0; }')
    times4_cu = kiln.CUSource(
        'extern "C" __device__ int times2(int *out, int a);\n'
        'extern "C" __device__ int times4(int *out, int a)'
        ' { int t; times2(&t, a); *out = t * 2; return 0; }')
    cabi_cu = kiln.CUSource(
        'extern "C" __device__ int const42() { return 42; }\n'
        'extern "C" __device__ int add2(int a, int b) { return a + b; }\n'
        'extern "C" __device__ void consume(int a) { asm volatile("" : : "r"(a) : "memory"); }\n'
        'extern "C" __device__ void put42(int *a) { *a = 42; }')
    times2 = kiln.declare_device("times2", "int32(int32)", link=times2_cu)
    times4 = kiln.declare_device("times4", "int32(int32)", link={times2_cu, times4_cu})
    const42 = kiln.declare_device("const42", "int32()", link=cabi_cu, abi="c")
    add2 = kiln.declare_device("add2", "int32(int32, int32)", link=cabi_cu, abi="c")
    consume = kiln.declare_device("consume", "void(int32)", link=cabi_cu, abi="c")
    put42 = kiln.declare_device("put42", kiln.void(kiln.types.CPointer(kiln.int32)),
                                link=cabi_cu, abi="c")

    @kiln.jit
    def dev1(x):
        return times2(x)

    @kiln.jit
    def dev2(x):
        return dev1(x)

    @kiln.jit
    def kernel(r, x):
        i = kiln.grid(1)
        if i < len(r):
            consume(x[i])
            r[i] = (dev2(x[i]) + times2(x[i] + i) + times4(x[i]) + const42()
                    + add2(x[i], i))

    x = np.arange(10, dtype=np.int32)
    r = kiln.device_array(10, np.int32)
    kernel[1, 32](r, kiln.to_device(x))
    i = np.arange(10)
    np.testing.assert_array_equal(r.copy_to_host(), 2 * x + 2 * (x + i) + 4 * x + 42 + x + i)

    @kiln.jit(kiln.void(kiln.types.CPointer(kiln.int32), kiln.int64))
    def fill(p, n):
        put42(p)

    d = kiln.to_device(np.zeros(3, np.int32))
    fill[1, 1](d.__cuda_array_interface__["data"][0] + 4, 3)
    assert d.copy_to_host().tolist() == [0, 42, 0]

    rng = tmp_path / "rng.cu"
    rng.write_text('#include <curand_kernel.h>\n'
                   'extern "C" __device__ int random_number(unsigned int *out,'
                   ' unsigned long long seed) {\n'
                   '  curandStateXORWOW_t state;\n  curand_init(seed, 1, 0, &state);\n'
                   '  *out = curand(&state);\n  return 0;\n}\n')
    random_number = kiln.declare_device("random_number", kiln.int32(kiln.uint64),
                                        link=[str(rng)])

    @kiln.jit
    def draw(out, seed):
        out[0] = random_number(seed)

    out = kiln.to_device(np.zeros(1, np.uint32))
    draw[1, 1](out, 1)
    assert out.copy_to_host()[0] == 323845807  # Numba's expectation for seed 1


# ---- cooperative groups (kiln.cg): cooperative launches and the grid barrier ----------

def _sequential_rows(M):
    col = kiln.grid(1)
    g = kiln.cg.this_grid()
    for row in range(1, M.shape[0]):
        M[row, col] = M[row - 1, M.shape[1] - col - 1] + 1
        g.sync()


def test_grid_sync_sequential_rows_on_the_gpu():
    """Numba's cooperative groups example: each row reads the previous row's opposite
    column, written by another block; a missing or leaky grid barrier shows."""
    k = kiln.jit("void(int32[:, ::1])")(_sequential_rows)
    (e,) = k.overloads.values()
    assert e.cooperative
    most = e.max_cooperative_grid_blocks(32)
    assert most == e.max_cooperative_grid_blocks((8, 4)) == e.max_cooperative_grid_blocks((4, 4, 2))
    assert most >= 32, most
    A = kiln.to_device(np.zeros((1024, 1024), np.int32))
    k[32, 32](A)
    np.testing.assert_array_equal(A.copy_to_host(), np.tile(np.arange(1024), (1024, 1)).T)
    k[32, 32](A)  # the barrier's counter is ready for the next launch
    cpu = np.zeros((64, 64), np.int32)
    kiln.jit("void(int32[:, ::1])", target="cpu")(_sequential_rows)[2, 32](cpu)
    gpu = kiln.to_device(np.zeros((64, 64), np.int32))
    k[2, 32](gpu)
    np.testing.assert_array_equal(gpu.copy_to_host(), cpu)


def test_grid_sync_multi_phase_reduction_matches_the_cpu(rng):
    import test_cooperative as C
    x = rng.random(100_000).astype(np.float32)
    gx, gout = kiln.to_device(x), kiln.device_array(x.size, np.float32)
    C.phases[(x.size + 255) // 256, 256](gx, gout)
    np.testing.assert_array_equal(gout.copy_to_host(), x + 1)
    np.testing.assert_array_equal(gx.copy_to_host(), np.roll(x + 1, -1) * 2)
    cx, cout = x[:1024].copy(), np.zeros(1024, np.float32)
    kiln.jit(C.phases.py_func, target="cpu")[8, 128](cx, cout)
    gx, gout = kiln.to_device(x[:1024]), kiln.device_array(1024, np.float32)
    C.phases[8, 128](gx, gout)
    np.testing.assert_array_equal(gx.copy_to_host(), cx)


def test_grid_sync_many_times_conserves_the_heat_equation():
    """Numba's Laplace example: thousands of grid barriers in a loop, over several blocks,
    with threads (and whole blocks) past the end returned before them."""
    @kiln.jit
    def heat(buf_0, buf_1, timesteps, k):
        i = kiln.grid(1)
        if i >= len(buf_0):
            return
        grid = kiln.cg.this_grid()
        for step in range(timesteps):
            data, nxt = (buf_0, buf_1) if step % 2 == 0 else (buf_1, buf_0)
            t = data[i]
            left = data[i - 1] if i > 0 else 0.0
            right = data[i + 1] if i < len(data) - 1 else 0.0
            nxt[i] = t + k * (left - 2 * t + right)
            grid.sync()

    data = np.zeros(1001)
    data[500] = 10000
    b0, b1 = kiln.to_device(data), kiln.device_array(1001, np.float64)
    heat[12, 128](b0, b1, 4000, 0.25)  # blocks 8 to 11 return at once: they count as arrived
    c0, c1 = data.copy(), np.zeros(1001)
    kiln.jit(heat.py_func, target="cpu")[8, 128](c0, c1, 4000, 0.25)
    np.testing.assert_allclose(b1.copy_to_host(), c1, rtol=1e-12, atol=1e-12)


def test_grid_sync_reached_by_some_threads_while_the_others_returned():
    """Numba's sessionize example over several blocks: only a session's first thread syncs;
    the others, thread 0 of a block among them, have returned and count as arrived."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lang",
                        "cooperative_groups.py")
    spec = importlib.util.spec_from_file_location("lang_cooperative_groups", path)
    L = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(L)
    ids = np.repeat(np.arange(12), [1, 5, 9, 2, 30, 1, 1, 14, 3, 6, 20, 4])
    res = kiln.to_device(np.full(ids.size, -1, np.int64))
    L.sessionize[3, 32](kiln.to_device(ids), res)
    cpu = np.full(ids.size, -1, np.int64)
    kiln.jit(L.sessionize.py_func, target="cpu")[3, 32](ids, cpu)
    starts = np.r_[0, np.flatnonzero(np.diff(ids)) + 1]
    np.testing.assert_array_equal(cpu, np.repeat(starts, np.diff(np.r_[starts, ids.size])))
    np.testing.assert_array_equal(res.copy_to_host(), cpu)


def test_a_cooperative_grid_too_large_for_the_gpu_names_the_most_blocks():
    k = kiln.jit("void(int32[:, ::1])")(_sequential_rows)
    most = k.max_cooperative_grid_blocks(1024)
    A = kiln.device_array((2, (most + 1) * 1024), np.int32)
    with pytest.raises(ValueError, match=rf"{most + 1} blocks of 1024 threads is too large: "
                                         rf"at most {most} blocks"):
        k[most + 1, 1024](A)
    k[most, 1024](kiln.device_array((2, most * 1024), np.int32))
    kiln.synchronize()


def test_reduce_overhead_replays_a_cooperative_kernel_on_the_gpu():
    import test_cooperative as C

    def step(x, out):
        C.phases[4, 64](x, out)
        return out

    f = kiln.compile(step, mode="reduce-overhead")
    with warnings.catch_warnings():
        warnings.simplefilter("error", kiln.PerformanceWarning)
        for k in range(4):
            base = np.arange(200, dtype=np.float32) * (k + 1)
            x, out = kiln.to_device(base), kiln.device_array(200, np.float32)
            f(x, out)
            np.testing.assert_array_equal(out.copy_to_host(), base + 1)
            np.testing.assert_array_equal(x.copy_to_host(), np.roll(base + 1, -1) * 2)
    assert f.records[0].launches == 1


def test_ufuncs_on_arrays_in_kernels_on_the_gpu():
    # Numba's doc example (doc_examples/test_ufunc.py), then broadcasting, layouts, same_kind
    @kiln.jit
    def f(r, x):
        np.sin(x, r)

    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)
    f[1, 1](r, x)
    np.testing.assert_allclose(r, np.sin(x), rtol=1e-6)

    @kiln.jit
    def g(r, c, a, b):
        i = kiln.grid(1)
        if i < r.shape[0]:  # one row per thread: each thread's ufunc on its rows
            np.add(a[i], b, r[i])
            np.multiply(r[i], 2, out=r[i])
            np.less(a[i], b, c[i])

    a = np.linspace(0.5, 6.0, 64 * 5).reshape(64, 5)
    b = np.array([1.0, 2.0, 0.5, 3.0, 7.0])
    d_r = kiln.device_array((64, 5), np.float32, order="F")
    d_c = kiln.device_array((64, 5), np.bool_)
    g[2, 32](d_r, d_c, kiln.to_device(a), kiln.to_device(b))
    np.testing.assert_allclose(d_r.copy_to_host(), ((a + b) * 2).astype(np.float32), rtol=1e-6)
    np.testing.assert_array_equal(d_c.copy_to_host(), a < b)

    @kiln.jit
    def bad(r, a, b):
        np.add(a, b, r)

    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        bad[1, 1](kiln.device_array((3, 4)), kiln.to_device(np.zeros(3)), kiln.device_array((3, 4)))
        kiln.synchronize()


def test_jit_link_on_the_gpu():
    # @jit(link=[...]) (Numba's test_cffi pattern): the kernel's own source defines a function
    # declared without link=; Numba's `void *out` for a void function
    mutator = kiln.CUSource('extern "C" __device__ int array_mutator(void *out, int *a)'
                            ' { a[0] = a[1]; return 0; }')
    array_mutator = kiln.declare_device("array_mutator",
                                        kiln.void(kiln.types.CPointer(kiln.int32)))

    @kiln.jit(kiln.void(kiln.types.CPointer(kiln.int32)), link=[mutator])
    def mutate(p):
        array_mutator(p)

    d = kiln.to_device(np.array([0, 7], np.int32))
    mutate[1, 1](d.__cuda_array_interface__["data"][0])
    assert d.copy_to_host().tolist() == [7, 7]
def test_random_on_the_gpu_draws_what_the_cpu_draws():
    """kiln.random: the states are a device array; the GPU's draws (raw, uniform and normal)
    are the CPU target's for the same states."""
    from kiln import random as kr

    @kiln.jit
    def draws(states, raw, u32, u64, n64):
        i = kiln.grid(1)
        if i < states.shape[0]:
            for j in range(raw.shape[1]):
                raw[i, j] = kr.xoroshiro128p_next(states, i)
                u32[i, j] = kr.xoroshiro128p_uniform_float32(states, i)
                u64[i, j] = kr.xoroshiro128p_uniform_float64(states, i)
                n64[i, j] = kr.xoroshiro128p_normal_float64(states, i)

    s = kiln.stream()
    states = kr.create_xoroshiro128p_states(256, seed=42, subsequence_start=5, stream=s)
    s.synchronize()
    assert isinstance(states, kiln.DeviceArray) and not states.on_host
    host = states.copy_to_host()
    outs = [np.zeros((256, 8), t) for t in (np.uint64, np.float32, np.float64, np.float64)]
    kiln.jit(draws.py_func, target="cpu")[2, 128](host, *outs)
    douts = [kiln.device_array((256, 8), o.dtype) for o in outs]
    draws[2, 128](states, *douts)
    for o, d in zip(outs[:3], douts[:3]):  # raw bits and uniforms: bit for bit
        np.testing.assert_array_equal(d.copy_to_host(), o)
    # normals: the float32 logarithm of Numba's formula, libm's on the CPU and libdevice's on
    # the GPU, may differ by an ulp of float32
    np.testing.assert_allclose(douts[3].copy_to_host(), outs[3], rtol=1e-6)
    np.testing.assert_array_equal(states.copy_to_host(), host)
    again = kiln.device_array(256, kr.xoroshiro128p_dtype)
    kr.init_xoroshiro128p_states(again, 42, subsequence_start=5)
    assert (again.copy_to_host() == kr.create_xoroshiro128p_states(256, 42, 5).copy_to_host()).all()




def test_compiled_device_code_linked_by_nvjitlink_on_the_gpu(tmp_path):
    # PTX and LTO-IR files (NVRTC's relocatable output of a .cu) and Numba's code objects,
    # linked by nvJitLink with and without LTO: the same results as the .cu source
    from kiln import _kiln
    src = ('extern "C" __device__ int affine(int *out, int a, int b) '
           '{ *out = 3 * a + b; return 0; }\n')
    arch = kiln.get_current_device().compute_capability
    arch = arch[0] * 10 + arch[1]

    def nvrtc(output):
        code, _, _, _ = _kiln.nvrtc_compile(src, (0, 0, 0), arch, True, "affine", False, output)
        return bytes(code)

    (tmp_path / "affine.ptx").write_bytes(nvrtc(1))
    (tmp_path / "affine.ltoir").write_bytes(nvrtc(2))
    links = [str(tmp_path / "affine.ptx"), str(tmp_path / "affine.ltoir"),
             kiln.LTOIR(nvrtc(2), "affine-object"), kiln.CUSource(src)]
    x = np.arange(1000, dtype=np.int32)
    for link in links:
        for lto in (True, False):
            f = kiln.declare_device("affine", "int32(int32, int32)", link=link)

            def body(r, x):
                i = kiln.grid(1)
                if i < r.size:
                    acc = 0
                    for k in range(4):  # a call in a loop, as the LTO benchmark has
                        acc += f(x[i], k)
                    r[i] = acc

            kern = kiln.jit(lto=lto)(body)
            r = kiln.device_array(1000, np.int32)
            kern[8, 128](r, kiln.to_device(x))
            np.testing.assert_array_equal(r.copy_to_host(), 12 * x + 6, err_msg=f"{link} {lto}")


def test_cooperative_external_code_on_the_gpu():
    # declare_device(use_cooperative=True): the CUDA C code syncs the whole grid
    src = kiln.CUSource('#include <cooperative_groups.h>\n'
                        'extern "C" __device__ int gsync(int *out) '
                        '{ cooperative_groups::this_grid().sync(); return 0; }')
    gsync = kiln.declare_device("gsync", "void()", link=src, use_cooperative=True)

    @kiln.jit
    def mirror(a, b):
        i = kiln.grid(1)
        a[i] = i
        gsync()  # every block's writes are visible after it
        b[i] = a[a.size - 1 - i]

    n = 8 * 64
    a, b = kiln.device_array(n, np.int32), kiln.device_array(n, np.int32)
    mirror[8, 64](a, b)
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(n)[::-1])
    assert next(iter(mirror.overloads.values())).cooperative


def test_array_reductions_per_thread_on_the_gpu(rng):
    # each thread reduces its own row of a device array (a loop in that thread), NumPy's
    # result types; min of an empty row is NumPy's ValueError at the next synchronisation
    @kiln.jit
    def rows(a, s, m, v, c, big):
        i = kiln.grid(1)
        if i < a.shape[0]:
            s[i] = a[i].sum()
            m[i] = np.nanmax(a[i])
            v[i] = np.var(a[i])
            c[i] = np.count_nonzero(a[i])
            big[i] = np.any(a[i])

    a = rng.random((100, 37))
    a[3, 5] = np.nan
    a[7] = 0.0
    d = kiln.to_device(a)
    outs = [kiln.device_array(100, t) for t in (np.float64, np.float64, np.float64, np.int64,
                                                np.bool_)]
    rows[4, 32](d, *outs)
    s, m, v, c, big = (o.copy_to_host() for o in outs)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m, np.nanmax(a, axis=1), rtol=0)
    np.testing.assert_allclose(v, np.var(a, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(c, np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(big, np.any(a, axis=1))
    assert np.isnan(s[3]) and not big[7]

    @kiln.jit
    def smallest(a, out):
        out[0] = np.min(a)

    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        smallest[1, 1](kiln.device_array(0, np.float64), kiln.device_array(1, np.float64))
        kiln.synchronize()


def test_libdevice_functions_on_the_gpu():
    # kiln.libdevice (Numba's cuda.libdevice): a tuple of pointer results, a tuple of a result
    # and one, and a scalar; each against NumPy
    from kiln import libdevice

    @kiln.jit
    def calls(s, c, frac, ex, r, x, a, b, d):
        i = kiln.grid(1)
        if i < x.size:
            s[i], c[i] = libdevice.sincos(x[i])
            frac[i], ex[i] = libdevice.frexp(x[i] + 1.0)
            r[i] = libdevice.sad(a[i], b[i], d[i])

    n = 100
    x = np.linspace(-10, 10, n)
    a, b, d = np.arange(0, 2 * n, 2), np.arange(50, 50 + n), np.arange(15, 15 + n)
    s, c, frac = np.zeros(n), np.zeros(n), np.zeros(n)
    ex, r = np.zeros(n, np.int32), np.zeros(n, np.int64)
    calls[4, 32](s, c, frac, ex, r, x, a, b, d)
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-14, atol=1e-15)
    m, e = np.frexp(x + 1.0)
    np.testing.assert_array_equal(frac, m)
    np.testing.assert_array_equal(ex, e)
    np.testing.assert_array_equal(r, np.abs(a - b) + d)


# ---- bfloat16 -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["test_every_bfloat16_widens_exactly",
                                  "test_float32_to_bfloat16_in_every_mode",
                                  "test_float64_rounds_once",
                                  "test_bfloat16_to_integers_round_and_saturate",
                                  "test_arithmetic_is_rounded_once",
                                  "test_saturating_relu_nan_and_math_functions",
                                  "test_promotion_follows_ml_dtypes",
                                  "test_constants_round_to_nearest_even",
                                  "test_ml_dtypes_arrays_and_scalars"])
def test_bfloat16_on_the_gpu(name):
    # test_bfloat16.py's kernels, launched with host arrays, run on the GPU here and must
    # give the exact reference's bits there too (sm_80 and later round with cvt.rn.bf16.f32)
    import test_bfloat16 as B
    assert kiln.is_bfloat16_supported()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # host arrays copied to the GPU and back
        getattr(B, name)()
        if name == "test_float32_to_bfloat16_in_every_mode":
            for signed in (True, False):
                B.test_integers_to_bfloat16_in_every_mode(signed)


def test_bfloat16_device_arrays_cupy_and_torch(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from kiln.bf16 import hfma

    @kiln.jit
    def axpy(out, x, y):
        i = kiln.grid(1)
        if i < x.size:
            out[i] = hfma(x[i], kiln.bfloat16(2.0), y[i])

    n = 1000
    x = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    want = (2 * x.astype(np.float64) + y.astype(np.float64)).astype(ml_dtypes.bfloat16)
    out = kiln.device_array(n, ml_dtypes.bfloat16)
    axpy[8, 128](out, kiln.to_device(x), kiln.to_device(y))
    got = out.copy_to_host()
    assert got.dtype == ml_dtypes.bfloat16
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:  # CuPy's bfloat16 ('<V2' in its interface): read through DLPack
        cx, cy = cp.asarray(x), cp.asarray(y)
        cout = cp.empty(n, dtype=ml_dtypes.bfloat16)
        axpy[8, 128](cout, cx, cy)
        assert np.array_equal(cp.asnumpy(cout).view(np.uint16), want.view(np.uint16))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:  # PyTorch's bfloat16 has no __cuda_array_interface__: DLPack
        tx = torch.from_numpy(x.view(np.int16)).cuda().view(torch.bfloat16)
        ty = torch.from_numpy(y.view(np.int16)).cuda().view(torch.bfloat16)
        tout = torch.empty(n, dtype=torch.bfloat16, device="cuda")
        axpy[8, 128](tout, tx, ty)
        assert np.array_equal(tout.view(torch.int16).cpu().numpy().view(np.uint16),
                              want.view(np.uint16))


def test_cai_stream_round_trip_on_the_gpu():
    # an array made on a stream names it in its CUDA Array Interface; a consumer waits for
    # it and keeps it as the imported array's stream (kiln/_cai.py)
    class Foreign:
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    @kiln.jit
    def fill(a, v):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = v + i

    s = kiln.stream()
    d = kiln.device_array(1 << 20, np.float32, stream=s)
    fill[(d.size + 255) // 256, 256, s](d, 2.0)
    assert d.__cuda_array_interface__["stream"] == s.handle
    c = kiln.as_cuda_array(Foreign(d))  # synchronizes s: the fill is finished
    assert c.stream.external and c.stream.handle == s.handle
    np.testing.assert_array_equal(c.copy_to_host()[:4], [2.0, 3.0, 4.0, 5.0])
    assert kiln.device_array(4).__cuda_array_interface__["stream"] is None


def test_inspect_sass_of_a_kernel_on_the_gpu():
    import shutil

    if shutil.which("nvdisasm") is None:
        pytest.skip("nvdisasm is not on PATH")

    @kiln.jit((kiln.float32[::1], kiln.int32[::1]), lineinfo=True)
    def add(x, y):
        i = kiln.grid(1)
        if i < len(x):
            x[i] += y[i]

    sass = add.inspect_sass((kiln.float32[::1], kiln.int32[::1]))
    assert "S2R" in sass and "EXIT" in sass


def test_misaligned_host_array_on_the_gpu():
    # a float64 view at a 4-byte offset: the launch copies its bytes into aligned device
    # memory and back (the CPU target refuses it)
    @kiln.jit("void(float64[:])", target="cuda")
    def k(x):
        i = kiln.grid(1)
        if i < x.shape[0]:
            x[i] = i

    x = np.arange(10, dtype=np.float64)
    y = np.ndarray(shape=80, buffer=x, dtype=np.byte)
    z = np.ndarray(9, buffer=y[4:-4], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.PerformanceWarning)
        k[1, 16](z)
    np.testing.assert_array_equal(z, np.arange(9.0))


def test_literal_unroll_over_global_and_argument_arrays_on_gpu():
    """literal_unroll over a closure tuple of NumPy arrays (frozen __device__ data, a
    negative-stride view included) and over a tuple argument of device arrays."""
    frozen = (np.arange(4, dtype=np.float64), np.arange(6, dtype=np.int32).reshape(2, 3),
              np.arange(5, dtype=np.float32)[::-1])

    @kiln.jit
    def k(out, arrays):
        if kiln.grid(1) == 0:
            i = 0
            for a in literal_unroll(frozen):
                out[i] = np.sum(a) + a.max()
                i += 1
            for b in literal_unroll(arrays):
                out[i] = b.size + b.min()
                i += 1

    out = kiln.device_array(5, np.float64)
    args = (kiln.to_device(np.full(3, 2.0, np.float32)),
            kiln.to_device(np.ones((2, 2), np.int64)))
    k[1, 32](out, args)
    np.testing.assert_array_equal(out.copy_to_host(), [6 + 3, 15 + 5, 10 + 4, 3 + 2, 4 + 1])


def test_launch_config_sensitive_kernels_compile_per_configuration_on_the_gpu():
    # kiln.launchconfig (Numba's): the hook sees each new configuration of a marked kernel
    from kiln import launchconfig

    @kiln.jit(cache=False)
    def f(x):
        kiln.atomic.add(x, 0, 1)

    seen = []
    orig = f._compile_for_args

    def wrapped(*args):
        cfg = launchconfig.ensure_current_launch_config()
        f.mark_launch_config_sensitive()
        seen.append((cfg.griddim, cfg.blockdim))
        return orig(*args)

    f._compile_for_args = wrapped
    d = kiln.to_device(np.zeros(1, np.int32))
    for block in (32, 32, 64, 32):
        f[2, block](d)
    assert seen == [((2, 1, 1), (32, 1, 1)), ((2, 1, 1), (64, 1, 1))]
    assert d.copy_to_host()[0] == 2 * (32 + 32 + 64 + 32)
    assert next(iter(f.overloads.values())).launch_config_sensitive


def test_ipc_handles_between_processes_on_the_gpu():
    # kiln's exportable pool (a device array, slices, a negative step; writes seen both
    # ways), and memory another library took with cudaMalloc (CuPy's pool), which goes
    # through the driver's legacy IPC handle (docs/ipc.md)
    import test_ipc

    assert test_ipc.run(test_ipc.SHARED_VIEWS, gpu=True).strip().endswith("ok")
    pytest.importorskip("cupy")
    out = test_ipc.run("""
        import cupy
        c = cupy.arange(12, dtype=cupy.int64)
        d = kiln.as_cuda_array(c)
        h = d[2:].get_ipc_handle()
        with pool() as ex:
            got = ex.submit(read_in_child, h).result(timeout=60)
        assert got.tolist() == list(range(2, 12)), got
        assert int(c[2]) == -5, c  # the child's write
        print("ok")
    """, gpu=True)
    assert out.strip().endswith("ok")
