"""kiln's device API on the CPU target (KILN_TARGET=cpu, docs/cpu-device-api.md): device
arrays in host memory behind the same kiln.DeviceArray, copies, views and strides against
NumPy, kernels that take the arrays in place, streams and events that are synchronous, the
device queries; and, without KILN_TARGET=cpu and without a GPU, the CudaError that names
it (no silent fallback)."""
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import kiln
from conftest import ALL_DTYPES, PYDIR, random_array

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")


@pytest.fixture(autouse=True)
def cpu_target(monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")


def host_ptr(d):
    return d.__array_interface__["data"][0]


@kiln.jit
def axpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@kiln.jit
def scale2d(out, x, a):
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = x[i, j] * a


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_to_device_and_back_keeps_values_in_host_memory(rng, dtype):
    a = random_array(rng, (7, 5), dtype)
    for src in (a, np.asfortranarray(a), a[::2, ::-1]):
        d = kiln.to_device(src)
        assert isinstance(d, kiln.DeviceArray) and d.on_host and d.device == -1
        assert (d.shape, d.dtype, d.size, d.ndim) == (src.shape, src.dtype, src.size, src.ndim)
        np.testing.assert_array_equal(d.copy_to_host(), src)
        np.testing.assert_array_equal(np.asarray(d), src)  # __array_interface__
    f = kiln.to_device(np.asfortranarray(a))
    assert f.strides == np.asfortranarray(a).strides and f.is_f_contiguous()
    out = np.empty_like(a)
    assert kiln.to_device(a).copy_to_host(out) is out
    np.testing.assert_array_equal(out, a)


def test_host_arrays_have_no_cuda_array_interface():
    d = kiln.device_array((4, 3), np.float32)
    # CuPy, PyTorch and Numba would take the pointer for device memory
    assert not hasattr(d, "__cuda_array_interface__")
    ai = d.__array_interface__
    assert ai["shape"] == (4, 3) and ai["typestr"] == "<f4" and ai["data"][1] is False
    assert d.__dlpack_device__() == (1, 0)  # kDLCPU
    v = np.from_dlpack(d)  # the same memory
    d[...] = 3
    np.testing.assert_array_equal(v, np.full((4, 3), 3, np.float32))
    assert "host" in repr(d)
    assert kiln.is_cuda_array(d) and not kiln.is_cuda_array(np.zeros(2))


def test_device_array_layouts_match_numpy():
    for shape, order in (((3, 4), "C"), ((3, 4), "F"), ((2, 3, 4), "F"), ((5,), "C"), ((), "C")):
        d = kiln.device_array(shape, np.int16, order=order)
        ref = np.empty(shape, np.int16, order=order)
        assert d.strides == ref.strides and d.nbytes == ref.nbytes
        assert d.flags["C_CONTIGUOUS"] == ref.flags["C_CONTIGUOUS"]
        assert d.flags.f_contiguous == ref.flags.f_contiguous
    d = kiln.device_array((3, 4), np.float64, strides=(8, 24))
    assert d.strides == (8, 24) and d.is_f_contiguous()
    with pytest.raises(ValueError, match="overlap"):
        kiln.device_array((3, 4), np.float64, strides=(8, 8))
    # like a strided view: contiguous, strides in the view's order (NumPy's empty_like)
    for order in ("C", "F"):
        base = np.zeros((10, 12), order=order)
        view = base[::2, ::2]
        dv = kiln.to_device(base)[::2, ::2]
        like = kiln.device_array_like(dv)
        assert like.strides == np.empty_like(view).strides
        assert kiln.pinned_array_like(dv).strides == np.empty_like(view).strides
        assert kiln.mapped_array_like(dv).strides == np.empty_like(view).strides


def test_views_getitem_setitem_match_numpy(rng):
    a = random_array(rng, (6, 8), np.float64)
    d = kiln.to_device(a)
    ref = a.copy()
    for idx in (np.s_[1:5, ::3], np.s_[::-1, 2], np.s_[..., 1::2], np.s_[3], np.s_[-1, ::-2]):
        np.testing.assert_array_equal(d[idx].copy_to_host(), ref[idx])
        assert d[idx].strides == ref[idx].strides
    assert d[2, 3] == ref[2, 3] and d[-1, -1] == ref[-1, -1]
    with pytest.raises(IndexError):
        d[6, 0]
    assert d[np.int64(2), np.uint8(3)] == ref[2, 3]
    # what NumPy refuses is refused, never truncated to an int: d[1.5] was row 1
    for bad in (1.5, "1", np.float64(2.9), True, np.bool_(False), (1.7, 2), None, [0, 1]):
        with pytest.raises(IndexError, match="only integers, slices"):
            d[bad]
        with pytest.raises(IndexError, match="only integers, slices"):
            d[bad] = 99.0
    np.testing.assert_array_equal(d.copy_to_host(), ref)
    np.testing.assert_array_equal(d.T.copy_to_host(), ref.T)
    # a 2-D transpose is a new C-contiguous array, as Numba's (its transpose kernel): writes
    # to it stay there; other ranks transpose as views
    t = d[::2, ::3].T
    assert t.strides == (t.shape[1] * 8, 8) and t.is_c_contiguous()
    np.testing.assert_array_equal(t.copy_to_host(), ref[::2, ::3].T)
    t[0, 0] = -99.0
    assert d[0, 0] == ref[0, 0]
    parts = list(kiln.to_device(np.arange(10.0)).split(4))   # Numba's split: views
    assert [p.copy_to_host().tolist() for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pytest.raises(ValueError, match="only 1-d arrays"):
        list(d.split(2))
    d3 = kiln.to_device(np.arange(24.0).reshape(2, 3, 4))
    assert d3.T.strides == np.empty((2, 3, 4)).T.strides
    assert d.transpose((0, 1)) is d
    with pytest.raises(ValueError, match="invalid axes"):
        d.transpose((1, 1))
    np.testing.assert_array_equal(d.reshape(4, 12).copy_to_host(), ref.reshape(4, 12))
    np.testing.assert_array_equal(d.ravel().copy_to_host(), ref.ravel())
    # writes, through views too: the same memory
    d[0, 0] = 5
    ref[0, 0] = 5
    d[1] = np.arange(8)
    ref[1] = np.arange(8)
    d[2:4, ::2] = 7          # broadcast over a strided view
    ref[2:4, ::2] = 7
    view = d[::-1, 1::3]
    view[0] = -1
    ref[::-1, 1::3][0] = -1
    d[5] = kiln.to_device(np.full(8, 9.0))
    ref[5] = 9.0
    np.testing.assert_array_equal(d.copy_to_host(), ref)
    e = kiln.device_array_like(a)
    e.copy_to_device(d)      # device to device
    np.testing.assert_array_equal(e.copy_to_host(), ref)
    kiln.to_device(a, to=e)  # into an existing array
    np.testing.assert_array_equal(e.copy_to_host(), a)
    # another dtype is Numba's TypeError, never a silent conversion
    with pytest.raises(TypeError, match="incompatible dtype: ary is float32"):
        e.copy_to_host(np.zeros(a.shape, np.float32))
    with pytest.raises(TypeError, match="incompatible dtype: ary is int8"):
        e.copy_to_device(np.zeros(a.shape, np.int8))
    with pytest.raises(TypeError, match="ary must be a NumPy array, not list"):
        e.copy_to_host([0.0] * a.size)
    np.testing.assert_array_equal(e.copy_to_host(), a)


def test_view_reinterprets_the_same_memory():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    d = kiln.to_device(a)
    for dt in (np.uint32, np.int64, np.int16, np.float32):
        v = d.view(dt)
        assert v.strides == a.view(dt).strides
        np.testing.assert_array_equal(v.copy_to_host(), a.view(dt))
    d.view(np.int64)[0, 0] = -1   # writes land in the original
    np.testing.assert_array_equal(d.copy_to_host()[0, :2], [-1, -1])
    with pytest.raises(ValueError, match="multiple"):
        kiln.to_device(np.zeros(3, np.int32)).view(np.int64)
    with pytest.raises(ValueError, match="contiguous"):
        d[:, ::2].view(np.int64)


def test_kernels_take_host_arrays_in_place(rng):
    n = 1000
    x, y = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    dx, dy, dout = kiln.to_device(x), kiln.to_device(y), kiln.device_array(n, np.float32)
    before = host_ptr(dout)
    axpy[(n + 127) // 128, 128](dout, np.float32(2), dx, dy)
    assert host_ptr(dout) == before
    np.testing.assert_allclose(dout.copy_to_host(), 2 * x + y, rtol=1e-6)
    # a strided view and an F-order array: the launch reads the struct's strides
    big = kiln.to_device(random_array(rng, 2 * n, np.float32))
    half = big[::2]
    axpy[(n + 127) // 128, 128](half, np.float32(1), dx, dy)
    np.testing.assert_allclose(big.copy_to_host()[::2], x + y, rtol=1e-6)
    m = np.asfortranarray(random_array(rng, (33, 17), np.float64))
    dm, dres = kiln.to_device(m), kiln.device_array((33, 17), np.float64, order="F")
    scale2d[(3, 3), (16, 8)](dres, dm, 3.0)
    np.testing.assert_array_equal(dres.copy_to_host(), m * 3.0)
    # the kernel wrote the array's own memory: a NumPy view of it sees the values
    np.testing.assert_array_equal(np.asarray(dres), m * 3.0)


def test_a_cpu_kernel_takes_host_device_arrays():
    @kiln.jit(target="cpu")
    def fill(a, v):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = v

    d = kiln.device_array(10, np.int32)
    fill[1, 16](d, 4)   # not "a GPU array, but the kernel was asked to run on the CPU"
    np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 4, np.int32))


def test_streams_and_events_are_synchronous():
    s = kiln.stream()
    assert "host" in repr(s)
    n = 256
    d = kiln.to_device(np.ones(n, np.float32), stream=s)
    out = kiln.device_array_like(d, stream=s)
    start, end = kiln.event(), kiln.event()
    start.record(s)
    axpy[2, 128, s](out, np.float32(3), d, d)
    time.sleep(0.02)
    end.record(s)
    assert end.query()
    end.synchronize()
    end.wait(s)
    s.synchronize()
    ms = start.elapsed_time(end)
    assert 19 <= ms < 5000, ms
    assert kiln.event_elapsed_time(start, end) == ms
    np.testing.assert_array_equal(out.copy_to_host(stream=s), np.full(n, 4, np.float32))
    with pytest.raises(kiln.CudaError, match="never recorded"):
        kiln.event().elapsed_time(end)
    with pytest.raises(ValueError, match="timing=False"):
        kiln.event(timing=False).elapsed_time(end)
    for st, handle in ((kiln.default_stream(), 0), (kiln.legacy_default_stream(), 1),
                       (kiln.per_thread_default_stream(), 2), (kiln.external_stream(0x1234), 0x1234)):
        assert st.handle == handle
        st.synchronize()
        axpy[2, 128, st](out, np.float32(1), d, d)
    kiln.synchronize()


def test_device_queries_answer_for_the_cpu_target(capsys, monkeypatch):
    # the CUDA API runs here, as Numba's simulator says: is_available() agrees with detect()
    assert kiln.is_available() and kiln.detect()
    monkeypatch.setenv("KILN_TARGET", "auto")
    assert kiln.is_available() == (kiln.cuda_unavailable_reason() == "")
    monkeypatch.setenv("KILN_TARGET", "cpu")
    dev = kiln.get_current_device()
    assert isinstance(dev, kiln.HostDevice) and dev.id == 0
    assert dev.compute_capability == (9, 0)
    assert dev.WARP_SIZE == 32 and dev.MAX_THREADS_PER_BLOCK == 1024
    assert dev.MULTIPROCESSOR_COUNT == (os.cpu_count() or 1)
    with pytest.raises(AttributeError):
        dev.NO_SUCH_ATTRIBUTE
    assert len(kiln.gpus) == 1 and kiln.gpus[0] == dev and kiln.gpus.current == dev
    assert kiln.list_devices() == [dev]
    with kiln.gpus[0]:
        pass
    assert kiln.select_device(0) == dev
    with pytest.raises(ValueError, match="KILN_TARGET=cpu"):
        kiln.select_device(1)
    assert kiln.detect() is True
    assert "KILN_TARGET=cpu" in capsys.readouterr().out
    ctx = kiln.current_context()
    free, total = ctx.get_memory_info()
    assert 0 < free <= total and ctx.device == dev
    kiln.close()


def test_pinned_mapped_and_managed_arrays_are_numpy_arrays():
    for make in (kiln.pinned_array, kiln.mapped_array, kiln.managed_array):
        a = make((3, 4), np.int32, order="F")
        assert isinstance(a, np.ndarray) and a.flags.f_contiguous and a.shape == (3, 4)
        a[...] = 1
        b = make(12, np.float32)
        axpy[1, 16](b, np.float32(2), np.ones(12, np.float32), np.ones(12, np.float32))
        np.testing.assert_array_equal(b, np.full(12, 3, np.float32))
    with kiln.pinned(np.zeros(4)):
        pass


def test_ufuncs_return_host_device_arrays(rng):
    x = random_array(rng, 100, np.float64)
    mul = kiln.vectorize(["float64(float64, float64)"], target="cuda")(lambda a, b: a * b)
    dx = kiln.to_device(x)
    r = mul(dx, dx)  # Numba's target='cuda' runs on the CPU target
    assert isinstance(r, kiln.DeviceArray) and r.on_host
    np.testing.assert_array_equal(r.copy_to_host(), x * x)
    np.testing.assert_array_equal(mul(x, 2.0), x * 2.0)
    total = kiln.reduce(lambda a, b: a + b)
    np.testing.assert_allclose(total(dx), x.sum(), rtol=1e-12)
    res = kiln.device_array(1, np.float64)
    assert total(dx, res=res) is None
    np.testing.assert_allclose(res.copy_to_host()[0], x.sum(), rtol=1e-12)


def test_ufunc_scalar_first_and_reduce(rng):
    # Numba's test_vectorize_scalar_arg and test_vectorize.py's reduce: a Python scalar
    # before a device array, and ufunc.reduce of host and device arrays with its dtype
    add = kiln.vectorize(["int32(int32, int32)", "float64(float64, float64)"],
                         target="cuda")(lambda a, b: a + b)
    d = kiln.to_device(np.arange(10, dtype=np.float64))
    np.testing.assert_array_equal(add(1.0, d).copy_to_host(), np.arange(1, 11))
    for n in (1, 8, 100, 1025):
        x = np.arange(n, dtype=np.int32)
        for arr in (x, kiln.to_device(x)):
            r = add.reduce(arr)
            assert r == x.sum() and r.dtype == np.int32
    with pytest.raises(ValueError, match="no identity"):
        add.reduce(np.zeros(0, np.int32))
    ident = kiln.vectorize(["float64(float64, float64)"], identity=0)(lambda a, b: a + b)
    assert ident.reduce(np.zeros(0)) == 0.0
    with pytest.raises(ValueError, match="1-d array"):
        add.reduce(np.zeros((2, 2), np.int32))
    neg = kiln.vectorize(["float64(float64)"])(lambda a: -a)
    with pytest.raises(TypeError, match="binary ufunc"):
        neg.reduce(np.zeros(3))


def run(body, **env):
    env = dict(os.environ, PYTHONPATH=PYDIR, **env)
    for k in [k for k, v in env.items() if v is None]:
        del env[k]
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        script = os.path.join(d, "host_device_script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(body))
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                           timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_without_kiln_target_cpu_no_gpu_is_an_error_that_names_it():
    out = run("""
        import warnings
        warnings.simplefilter("ignore")
        import numpy as np
        import kiln
        for call in (lambda: kiln.to_device(np.zeros(3)), lambda: kiln.device_array(3),
                     kiln.stream, kiln.event, kiln.get_current_device):
            try:
                call()
                print("no error")
            except kiln.CudaError as e:
                assert "no CUDA GPU can be used" in str(e) and "KILN_TARGET=cpu" in str(e), e
                print("error")
        print(len(kiln.gpus))
        try:
            kiln.mapped_array(3)
        except kiln.CudaError as e:
            print("no mapped_array:", "KILN_TARGET=cpu" in str(e))
    """, KILN_TARGET=None, KILN_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    assert out.split() == ["error"] * 5 + ["0", "no", "mapped_array:", "True"], out


def test_kiln_target_is_read_at_each_call_of_the_device_api():
    # _kiln.default_device reads KILN_TARGET through getenv at each call: os.environ's
    # writes reach it, and a process may switch the device API to host memory and back
    out = run("""
        import os
        import numpy as np
        import kiln
        from kiln import _kiln
        os.environ["KILN_TARGET"] = "cpu"
        d = kiln.device_array(4, np.float32)
        print(d.on_host, _kiln.default_device(), kiln._cuda.on_host())
        del os.environ["KILN_TARGET"]
        print(_kiln.default_device(), kiln._cuda.on_host())
        try:
            kiln.device_array(4)
        except kiln.CudaError as e:
            print("error", "no CUDA GPU can be used" in str(e))
    """, KILN_TARGET=None, KILN_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    assert out.split() == ["True", "-1", "True", "0", "False", "error", "True"], out


@pytest.mark.skipif(not os.path.exists(FAKE), reason="needs the fake CUDA driver (make builds it)")
def test_kiln_target_cpu_uses_host_memory_even_with_a_gpu():
    out = run("""
        import warnings
        import numpy as np
        import kiln
        assert kiln.is_available()
        d = kiln.to_device(np.arange(4.0))
        print(d.on_host, hasattr(d, "__cuda_array_interface__"))

        @kiln.jit(target="cuda")
        def k(a):
            a[kiln.grid(1)] = 2.0

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            k[1, 4](d)  # a GPU kernel stages a host array: copied in and back
        print(any("host array" in str(x.message) for x in w))
    """, KILN_TARGET="cpu", KILN_CUDA_DRIVER=FAKE)
    assert out.split() == ["True", "False", "True"], out
    out = run("""
        import numpy as np
        import kiln
        d = kiln.to_device(np.arange(4.0))
        print(d.on_host, hasattr(d, "__cuda_array_interface__"), d.device)
    """, KILN_TARGET=None, KILN_CUDA_DRIVER=FAKE)
    assert out.split() == ["False", "True", "0"], out


def test_numbas_getitem_setitem_squeeze_bind_and_stream_callbacks():
    # DeviceNDArray.getitem/setitem/squeeze/bind and Stream.add_callback/async_done, which
    # real Numba-CUDA programs call (hunt8.md 5)
    import asyncio
    import threading

    h = np.arange(12.0).reshape(1, 3, 1, 4)
    d = kiln.to_device(h)
    assert d.squeeze().shape == (3, 4) and d.squeeze(axis=0).shape == (3, 1, 4)
    assert d.squeeze(axis=(0, -2)).shape == (3, 4)
    np.testing.assert_array_equal(d.squeeze().copy_to_host(), h.squeeze())
    with pytest.raises(ValueError, match="size not equal to one"):
        d.squeeze(axis=1)
    assert d.getitem((0, 1, 0, 2)) == 6.0
    d.setitem((0, 1, 0, 2), 99.0)
    assert d.copy_to_host()[0, 1, 0, 2] == 99.0
    s = kiln.stream()
    b = d.bind(s)
    assert b.stream is s and b.shape == d.shape and host_ptr(b) == host_ptr(d)
    heard, done = [], threading.Event()

    def callback(stream, status, arg):
        heard.append((stream is s, status, arg))
        done.set()

    s.add_callback(callback, "x")
    assert done.wait(10) and heard == [(True, 0, "x")]

    async def wait():
        return await asyncio.wait_for(s.async_done(), 10)

    assert asyncio.run(wait()) is None


@kiln.vectorize
def _rel_diff(a, b):
    return (a - b) / (abs(a) + abs(b) + 1)


def test_vectorize_of_device_arrays_into_a_host_out():
    rng = np.random.default_rng(7)
    # hunt33 4: Numba computes on the device and copies into a host out= (and returns
    # it); kiln said the NumPy array had no __cuda_array_interface__
    a, b = rng.random(50), rng.random(50)
    out = np.empty(50)
    r = _rel_diff(kiln.to_device(a), kiln.to_device(b), out=out)
    assert r is out
    np.testing.assert_allclose(out, (a - b) / (np.abs(a) + np.abs(b) + 1))
    with pytest.raises(ValueError, match="out= must have shape"):
        _rel_diff(kiln.to_device(a), kiln.to_device(b), out=np.empty(50, np.float32))


def test_copies_take_shapes_that_differ_by_extent_1_axes():
    # hunt33 5: Numba compares squeezed shapes, so a (4, 1) column takes a (4,) vector
    d = kiln.device_array((4, 1), np.float64)
    d.copy_to_device(np.arange(4.0))
    assert d.copy_to_host().tolist() == [[0.0], [1.0], [2.0], [3.0]]
    host = np.zeros(4)
    assert d.copy_to_host(ary=host) is host and host.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert kiln.to_device(np.arange(4.0) + 1, to=d) is d
    assert d.copy_to_host().ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    e = kiln.device_array((1, 4), np.float64)
    e.copy_to_device(d)  # device to device: (4, 1) into (1, 4)
    assert e.copy_to_host().tolist() == [[1.0, 2.0, 3.0, 4.0]]
    with pytest.raises(ValueError, match=r"ary has shape \(8,\), the array \(4, 1\)"):
        d.copy_to_device(np.zeros(8))
    with pytest.raises(ValueError, match=r"copy_to_host: ary has shape \(2, 2\)"):
        d.copy_to_host(ary=np.zeros((2, 2)))


def test_an_array_of_no_elements_is_contiguous():
    # hunt33 6: d[:, :0] and e[::-1] of 0 elements were "not contiguous", so reshape,
    # ravel and copy_to_device refused them; NumPy and Numba call any such array both
    d = kiln.to_device(np.zeros((4, 6)))
    e = d[:, :0]
    assert e.is_c_contiguous() and e.is_f_contiguous()
    assert e.reshape(0).shape == (0,) and e.ravel().shape == (0,)
    e.copy_to_device(np.zeros((4, 0)))
    assert kiln.to_device(np.zeros(0))[::-1].reshape(0, 5).shape == (0, 5)


def test_small_host_api_items_of_hunt33():
    # a datetime64 array through DLPack is named as such, with the way out
    with pytest.raises(TypeError, match=r"no datetime64 or timedelta64 dtypes: export "
                                        r"a.view\(np.int64\)"):
        np.from_dlpack(kiln.to_device(np.zeros(2, "M8[s]")))
    # strides whose span passes 2**63 bytes: a ValueError that says so (was a bare
    # OverflowError from the C layer)
    with pytest.raises(ValueError, match=r"past what a device array can address"):
        kiln.device_array((3, 2), np.float64, strides=(2**62, 8))
    # split takes any integer, as Numba's does
    parts = list(kiln.to_device(np.arange(10)).split(np.int64(3)))
    assert [p.shape for p in parts] == [(3,), (3,), (3,), (1,)]
    with pytest.raises(ValueError, match="section must be a positive int"):
        list(kiln.to_device(np.arange(10)).split(2.0))


def test_copy_to_host_into_an_array_of_every_layout(monkeypatch, rng):
    # a C or F array copies straight into an out of the same shape and order; any other
    # out (another order, strided, squeezed shape) takes the values through a temporary
    monkeypatch.setenv("KILN_TARGET", "cpu")
    h = rng.random((4, 6))
    for src in (h, np.asfortranarray(h)):
        d = kiln.to_device(src)
        for out in (np.zeros((4, 6)), np.zeros((4, 6), order="F"), np.zeros((4, 12))[:, ::2]):
            r = d.copy_to_host(out)
            assert r is out
            np.testing.assert_array_equal(out, h)
    d = kiln.to_device(h[:, :1])
    out = np.zeros(4)
    assert d.copy_to_host(out) is out                      # (4, 1) into (4,), as Numba
    np.testing.assert_array_equal(out, h[:, 0])
    ro = np.zeros((4, 6))
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        kiln.to_device(h).copy_to_host(ro)
    np.testing.assert_array_equal(ro, 0)
