"""Numba's host API that kiln matches: the CUDA Array Interface's stream rules (producer and
consumer, kiln/_cai.py), Dispatcher.compile_device / inspect_llvm / inspect_sass
(kiln/_inspect.py), inspect_types' signature line, and vectorize's option checks.  The GPU
paths run against the fake driver (tests/fake_cuda) in a child process, as
test_fake_driver.py does."""
import os
import stat
import warnings

import numpy as np
import pytest

import kiln
from kiln import float32, int32

from test_fake_driver import run  # noqa: E402  (the fake-driver child process)


# ---- the CUDA Array Interface's stream, producer and consumer (fake driver) -----------

def test_cai_producer_names_the_arrays_stream_or_none():
    run("""
        d = kiln.device_array(10)
        assert d.stream == 0
        assert d.__cuda_array_interface__["stream"] is None
        s = kiln.stream()
        for a in (kiln.device_array(10, stream=s), kiln.to_device(np.arange(3), stream=s),
                  kiln.device_array_like(np.zeros(4), stream=s),
                  kiln.mapped_array(10, stream=s), kiln.managed_array(10, stream=s)):
            assert a.stream is s
            assert a.__cuda_array_interface__["stream"] == s.handle != 0
        for a in (kiln.mapped_array(10), kiln.managed_array(10)):
            assert a.__cuda_array_interface__["stream"] is None
        # a strided array made on a stream keeps it too
        st = kiln.device_array((3, 4), np.float64, strides=(8, 24), stream=s)
        assert st.__cuda_array_interface__["stream"] == s.handle
        print("ok")
    """)


def test_cai_consumer_keeps_and_syncs_the_producers_stream():
    run("""
        class Foreign:
            def __init__(self, a):
                self.__cuda_array_interface__ = a.__cuda_array_interface__
        syncs = ctypes.CDLL(os.environ["KILN_CUDA_DRIVER"]).fake_stream_sync_count
        s = kiln.stream()
        src = kiln.to_device(np.arange(10.0), stream=s)
        n0 = syncs()
        c = kiln.as_cuda_array(Foreign(src))
        assert syncs() == n0 + 1, "as_cuda_array synchronizes the producer's stream"
        assert c.stream.external and c.stream.handle == s.handle
        assert not s.external and not kiln.default_stream().external
        assert (c.copy_to_host() == np.arange(10.0)).all()
        n0 = syncs()
        kiln.as_cuda_array(Foreign(src), sync=False)
        kiln.from_cuda_array_interface(src.__cuda_array_interface__, sync=False)
        assert syncs() == n0
        os.environ["KILN_CUDA_ARRAY_INTERFACE_SYNC"] = "0"
        kiln.as_cuda_array(Foreign(src))
        assert syncs() == n0
        os.environ["KILN_CUDA_ARRAY_INTERFACE_SYNC"] = "maybe"
        try:
            kiln.as_cuda_array(Foreign(src))
        except ValueError as e:
            assert "KILN_CUDA_ARRAY_INTERFACE_SYNC" in str(e)
        else:
            raise AssertionError("a malformed value was accepted")
        del os.environ["KILN_CUDA_ARRAY_INTERFACE_SYNC"]
        # no stream: nothing to wait for, and the array has none
        plain = kiln.as_cuda_array(Foreign(kiln.device_array(4)))
        assert plain.stream == 0 and syncs() == n0
        print("ok")
    """)


def test_from_cuda_array_interface_layouts_and_refusals():
    run("""
        h = np.arange(10).reshape(2, 5)
        d = kiln.to_device(h)
        face = dict(d.__cuda_array_interface__)
        got = kiln.from_cuda_array_interface(face, owner=d).copy_to_host()
        assert (got == h).all() and got.flags["C_CONTIGUOUS"]
        face["strides"] = h.strides
        assert (kiln.from_cuda_array_interface(face).copy_to_host() == h).all()
        face["mask"] = kiln.to_device(np.ones(10, bool))
        try:
            kiln.from_cuda_array_interface(face)
        except NotImplementedError as e:
            assert "Masked arrays are not supported" in str(e)
        else:
            raise AssertionError("a mask was accepted")
        del face["mask"]
        for bad, exc in ((0, ValueError), ("s", TypeError)):
            try:
                kiln.from_cuda_array_interface(dict(face, stream=bad))
            except exc:
                pass
            else:
                raise AssertionError(f"stream {bad!r} was accepted")
        print("ok")
    """)


def test_negatively_strided_view_copies_to_host():
    # Numba raises NotImplementedError here; kiln copies the span and reads it backwards
    run("""
        h = np.arange(12.0).reshape(3, 4)
        d = kiln.to_device(h)
        assert (d[::-1].copy_to_host() == h[::-1]).all()
        assert (d[::-1, ::-2].copy_to_host() == h[::-1, ::-2]).all()
        print("ok")
    """)


# ---- device functions compiled alone, and SASS ------------------------------------------

def test_compile_device_names_a_symbol_in_its_ptx_and_source():
    @kiln.jit(device=True)
    def add(x, y):
        return x + y

    cres = add.compile_device((int32, int32))
    name = cres.fndesc.mangled_name
    assert "add" in name and name.isidentifier()
    assert str(cres.signature) == "int32(int32, int32)"
    assert add.compile_device((int32, int32)) is cres  # once per signature
    assert name in add.inspect_asm((int32, int32))
    assert name in add.inspect_llvm((int32, int32))
    other = add.compile_device((float32, float32))
    assert other.fndesc.mangled_name != name
    assert str(other.signature) == "float32(float32, float32)"
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        add.inspect_sass((int32, int32))
    with pytest.raises(TypeError, match="signature"):
        add.inspect_asm()


def test_compile_device_of_a_kernel_is_refused():
    @kiln.jit
    def k(a):
        a[0] = 1

    with pytest.raises(RuntimeError, match="compile_device compiles device functions"):
        k.compile_device((float32[::1],))


def test_inspect_llvm_of_a_kernel_is_its_generated_source():
    @kiln.jit((float32[::1], int32))
    def k(a, n):
        a[0] = n

    assert k.inspect_llvm("(float32[::1], int32)") == k.inspect_source("(float32[::1], int32)")
    assert list(k.inspect_llvm()) == ["(float32[::1], int32)"]


def test_inspect_types_starts_with_numbas_signature_line():
    @kiln.jit((float32, int32))
    def foo(x, y):
        pass

    text = foo.inspect_types(file=False)
    assert text.splitlines()[0] == "foo (float32, int32)"
    assert "kernel foo(x: float32, y: int32)" in text


def test_inspect_sass_without_nvdisasm_says_so(monkeypatch, tmp_path):
    @kiln.jit((float32[::1],))
    def f(x):
        x[0] = 0

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    if os.access("/usr/local/cuda/bin/nvdisasm", os.X_OK):
        pytest.skip("/usr/local/cuda has nvdisasm")
    with pytest.raises(RuntimeError, match="nvdisasm was not found"):
        f.inspect_sass()


def test_inspect_sass_runs_nvdisasm_on_a_cubin(monkeypatch, tmp_path):
    """A stand-in nvdisasm shows what kiln hands it: -gi -c and an ELF cubin from NVRTC."""
    @kiln.jit((float32[::1],))
    def f(x):
        x[0] = 0

    tool = tmp_path / "nvdisasm"
    tool.write_text("#!/bin/sh\necho \"args $1 $2\"\nhead -c 4 \"$3\" | od -An -c\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    out = f.inspect_sass("(float32[::1])")
    assert out.startswith("args -gi -c")
    assert "E   L   F" in out
    assert list(f.inspect_sass()) == ["(float32[::1])"]


# ---- vectorize's options ------------------------------------------------------------------

def test_vectorize_unknown_option_is_a_type_and_key_error():
    with pytest.raises(TypeError, match="Unrecognized options: nonexistent"):
        kiln.vectorize(["float32(float32)"], nonexistent=2)(lambda x: x)
    with pytest.raises(KeyError):
        kiln.vectorize(["float32(float32)"], nonexistent=2)(lambda x: x)


def test_vectorize_nopython_warns_that_it_is_redundant():
    def add(a, b):
        return a + b

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        f = kiln.vectorize(["float32(float32, float32)"], target="cpu", nopython=True)(add)
    assert [w.category for w in got] == [RuntimeWarning]
    assert "nopython kwarg for cuda target is redundant" in str(got[0].message)
    assert f(np.float32([2.0]), np.float32([3.0]))[0] == 5.0


# ---- kiln.devicearray: Numba's module of device-array names ---------------------------------

def test_devicearray_names_alias_kilns():
    run("""
        from kiln import devicearray
        assert kiln.devicearray is devicearray
        assert devicearray.DeviceNDArray is kiln.DeviceArray
        d, converted = devicearray.auto_device(2)
        assert converted and d.shape == () and d.copy_to_host() == 2
        h = np.arange(6.0).reshape(2, 3)
        d, converted = devicearray.auto_device(h)
        assert converted and (d.copy_to_host() == h).all()
        assert devicearray.auto_device(d) == (d, False)
        assert devicearray.is_cuda_ndarray(d) and not devicearray.is_cuda_ndarray(h)
        try:
            devicearray.auto_device(np.arange(10.0)[:-1:2])
        except ValueError as e:
            assert "non-contiguous" in str(e)
        else:
            raise AssertionError("a strided host array was copied")
        like = devicearray.from_array_like(h.T)
        assert like.shape == (3, 2) and like.strides == h.T.strides
        print("ok")
    """)


# ---- a host array its elements' alignment does not divide -----------------------------------

def _misaligned():
    x = np.arange(10, dtype=np.float64)
    y = np.ndarray(shape=80, buffer=x, dtype=np.byte)
    return np.ndarray(9, buffer=y[4:-4], dtype=np.float64)  # at a 4-byte offset


def _at_offset(shape, dtype, offset, order="C"):
    """An array of `shape` whose data start `offset` bytes into a fresh buffer (misaligned
    for its elements when offset is not a multiple of their size), and that buffer."""
    dt = np.dtype(dtype)
    raw = np.zeros(int(np.prod(shape)) * dt.itemsize + 64, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    a = np.ndarray(shape, dt, buffer=raw[start:], order=order)
    return a, raw


def test_misaligned_host_arrays_run_on_the_cpu_through_aligned_copies():
    # Numba-CUDA's test_gpu_array_strided: the CPU target reads an aligned copy and writes
    # the elements back; the bytes between them (another array's) are left alone
    @kiln.jit("void(float64[:])", target="cpu")
    def k(x):
        i = kiln.grid(1)
        if i < x.shape[0]:
            x[i] = i

    z = _misaligned()
    k[1, 16](z)
    assert np.array_equal(z, np.arange(9))

    @kiln.jit(target="cpu")
    def add(out, a, b):
        i, j = kiln.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = a[i, j] * 2 + b[i, j]

    rng = np.random.default_rng(3)
    for order in ("C", "F"):
        a, _ = _at_offset((37, 23), np.float64, 4, order)
        a[...] = rng.random(a.shape)
        b, _ = _at_offset((37, 23), np.float32, 2, order)
        b[...] = rng.random(b.shape)
        out, raw = _at_offset((37, 23), np.float64, 3, order)
        assert out.ctypes.data % 8 and a.ctypes.data % 8 and b.ctypes.data % 4
        a_before = a.copy()
        add[(3, 2), (16, 16)](out, a, b)
        np.testing.assert_allclose(out, a * 2 + b.astype(np.float64), rtol=1e-15)
        assert np.array_equal(a, a_before)  # read only: not written back
    # a strided, reversed view whose gaps another argument writes in the same launch
    buf = np.zeros(8 * 40 + 8, np.uint8)
    base = (-buf.ctypes.data) % 8 + 4
    every = np.ndarray((20,), np.float64, buffer=buf[base:], strides=(16,))[::-1]
    gaps = np.ndarray((20,), np.float64, buffer=buf[base + 8:], strides=(16,))
    assert every.ctypes.data % 8 == 4

    @kiln.jit(target="cpu")
    def both(x, y):
        i = kiln.grid(1)
        if i < x.size:
            x[i] = i + 0.5
            y[i] = -i

    both[1, 32](every, gaps)
    assert np.array_equal(every, np.arange(20) + 0.5)
    assert np.array_equal(gaps, -np.arange(20.0))
    # no elements: nothing to copy
    empty, _ = _at_offset((0,), np.float64, 4)
    k[1, 16](empty)


def test_a_recorded_step_runs_eagerly_when_it_reads_a_misaligned_array():
    @kiln.jit(target="cpu")
    def k(x):
        i = kiln.grid(1)
        if i < x.shape[0]:
            x[i] += 1

    def step(x):
        k[1, 16](x)

    f = kiln.compile(step, mode="reduce-overhead")
    z = _misaligned()
    z[:] = 0
    with pytest.warns(kiln.PerformanceWarning, match="misaligned array through a copy"):
        f(z)
    for _ in range(3):
        f(z)
    assert np.array_equal(z, np.full(9, 4.0))


def test_misaligned_host_array_is_staged_for_a_gpu_launch():
    run('''
        x = np.arange(10, dtype=np.float64)
        y = np.ndarray(shape=80, buffer=x, dtype=np.byte)
        z = np.ndarray(9, buffer=y[4:-4], dtype=np.float64)
        assert z.__array_interface__["data"][0] % 8 == 4
        before = z.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", kiln.PerformanceWarning)
            saxpy[1, 16](z, 2.0, z, z)  # the fake driver runs nothing
        name, grid, block, params = last()
        assert params[0] % 8 == 0, "the kernel gets the aligned device copy"
        assert (z.view(np.uint64) == before.view(np.uint64)).all()  # copied back unchanged
        print("ok")
    ''')


def test_pre_launch_callbacks_run_before_each_launch_of_their_configuration():
    # Numba's _LaunchConfiguration.pre_launch_callbacks: f(kernel, launch) before each launch
    import pickle

    @kiln.jit
    def bump(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.zeros(16)
    cfg = bump[2, 8]
    seen = []
    cfg.pre_launch_callbacks.append(lambda k, lc: seen.append(("first", k, lc.griddim, a[0])))
    cfg.pre_launch_callbacks.append(lambda k, lc: seen.append(("second", lc is cfg)))
    cfg(a)
    cfg(a)
    assert np.array_equal(a, np.full(16, 2.0))
    assert [s[0] for s in seen] == ["first", "second"] * 2
    assert seen[0][1] is bump.overloads[bump.signatures[0]]  # the specialisation launched
    assert seen[0][2] == (2, 1, 1) and seen[0][3] == 0.0 and seen[2][3] == 1.0  # before it
    assert seen[1][1] is True
    # a callback's exception ends the launch before anything runs
    def refuse(k, lc):
        raise RuntimeError("not now")
    cfg.pre_launch_callbacks.append(refuse)
    with pytest.raises(RuntimeError, match="not now"):
        cfg(a)
    assert np.array_equal(a, np.full(16, 2.0))
    # the callbacks are this configuration's: a new k[g, b] has none
    fresh = bump[2, 8]
    assert fresh is not cfg and fresh.pre_launch_callbacks == []
    fresh(a)
    assert np.array_equal(a, np.full(16, 3.0)) and len(seen) == 6
    with pytest.raises(pickle.PicklingError, match="Cannot pickle configured launches with "
                                                  "pre-launch callbacks"):
        pickle.dumps(cfg)
    assert pickle.loads(pickle.dumps(fresh)).config == fresh.config


def test_host_api_refuses_what_would_crash_or_change_values(monkeypatch):
    monkeypatch.setenv("KILN_TARGET", "cpu")  # host-backed device arrays here
    # hunt14: object dtypes in page-locked memory held garbage pointers (a segfault at the
    # first store); a big-endian array's bytes were read as native; copy_to_device from a
    # float device array truncated into int32; reshape(0, -1) hid the data
    for make in (lambda: kiln.pinned_array(3, dtype=object),
                 lambda: kiln.mapped_array(3, dtype=[("a", "i4"), ("o", "O")]),
                 lambda: kiln.pinned_array_like(np.array([None] * 3))):
        with pytest.raises(TypeError, match="holds Python objects"):
            make()
    d = kiln.to_device(np.arange(3, dtype=">f8"))
    assert d.dtype == np.float64 and d.copy_to_host().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="native byte order"):
        kiln.device_array(3, dtype=">i4")
    t = kiln.to_device(np.arange(4, dtype=np.int32))
    for src in (kiln.to_device(np.array([1.7, 2.7, -3.9, 1e20])), memoryview(np.arange(4.0)),
                [1.5, 2.5, 3.5, 4.5]):
        with pytest.raises(TypeError, match="incompatible dtype|do not fit"):
            t.copy_to_device(src)
    t.copy_to_device([4, 3, 2, 1])  # a list whose values the dtype holds
    assert t.copy_to_host().tolist() == [4, 3, 2, 1]
    a = kiln.to_device(np.arange(12.0))
    with pytest.raises(ValueError, match="cannot reshape an array of size 12"):
        a.reshape(0, -1)
    with pytest.raises(ValueError, match="one unknown dimension"):
        a.reshape(-1, -1)
    assert a.reshape(3, -1).shape == (3, 4)
    assert a.reshape(np.int64(3), np.int64(4)).shape == (3, 4)
    with pytest.raises(TypeError, match="reshape takes ints"):
        a.reshape(None)


def test_shapes_and_strides_as_numpy_takes_them(monkeypatch):
    # hunt29 11: NumPy ints are shapes; None, floats and extents past 64 bits are clear
    # errors naming the call; strides that are no multiple of the item size are refused
    # when the array is made (copies and launches failed later, each its own way)
    monkeypatch.setenv("KILN_TARGET", "cpu")
    assert kiln.device_array(np.int64(3)).shape == (3,)
    assert kiln.device_array((np.int32(2), 3)).shape == (2, 3)
    assert kiln.pinned_array(np.int64(3)).shape == (3,)
    for make, who in ((kiln.device_array, "device_array"), (kiln.pinned_array, "pinned_array"),
                      (kiln.mapped_array, "mapped_array"), (kiln.managed_array, "managed_array")):
        with pytest.raises(TypeError, match=f"{who}'s shape is an int or a tuple of ints"):
            make((None,))
        with pytest.raises(TypeError, match=f"{who}'s shape"):
            make(3.0)
        with pytest.raises(ValueError, match="past 2\\*\\*63"):
            make(2 ** 63)
        with pytest.raises(ValueError, match="negative dimensions"):
            make((2, -1))
        with pytest.raises(ValueError, match=f"{who}'s strides .* not multiples of the item size"):
            make((2, 3), strides=(25, 8))
    d = kiln.device_array((2, 3), strides=(8, 16))  # F order, given as strides
    assert d.strides == (8, 16)
    with pytest.raises(TypeError, match="to= is a kiln device array"):
        kiln.to_device(np.ones(3), to=np.zeros(3))


def test_a_gpu_array_under_kiln_target_cpu_does_not_advise_setting_it(monkeypatch):
    # hunt14 8: the advice was to set KILN_TARGET=cpu, which was set
    monkeypatch.setenv("KILN_TARGET", "cpu")

    class Fake:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False),
                                    "version": 3}

    @kiln.jit
    def k(a):
        a[0] = 1

    if kiln._kiln.cuda_available()[0]:
        pytest.skip("a GPU is usable here")
    with pytest.raises(kiln.CudaError) as e:
        k[1, 1](Fake())
    assert "set KILN_TARGET=cpu" not in str(e.value) and "copy GPU arrays to the host" in str(e.value)


def test_external_stream_handles_are_checked_not_wrapped(monkeypatch):
    # hunt14 9: 2**64 was taken modulo 2**64 (the legacy default stream), 1.5 as 1
    monkeypatch.setenv("KILN_TARGET", "cpu")
    assert kiln.external_stream(12345).handle == 12345
    assert kiln.external_stream(np.uint64(7)).handle == 7
    for v in (2**64, 2**64 + 5, -1):
        with pytest.raises(OverflowError, match="from 0 to 2\\*\\*64-1"):
            kiln.external_stream(v)
    for v in (1.5, None, "1"):
        with pytest.raises(TypeError, match="external_stream takes a CUstream handle"):
            kiln.external_stream(v)


def test_small_host_api_arguments_are_checked_where_given(monkeypatch):
    # hunt14's smaller items: a non-callable callback failed later on kiln's thread; 2.5 and
    # '3' were taken as extents; a 2-d states array got one row's states on every row
    import kiln.random as kr
    monkeypatch.setenv("KILN_TARGET", "cpu")
    s = kiln.stream()
    with pytest.raises(TypeError, match="add_callback takes a callable"):
        s.add_callback(5)
    for shape in ((2.5,), ("3",)):
        with pytest.raises(TypeError, match="shape is an int or a tuple of ints"):
            kiln.pinned_array(shape)
    assert kiln.pinned_array((np.int64(3),)).shape == (3,)
    with pytest.raises(ValueError, match="1-d array of generator states"):
        kr.init_xoroshiro128p_states(np.zeros((3, 3), kr.xoroshiro128p_dtype), 1)
    for bad in (dict(debug="yes"), dict(cache="yes"), dict(opt=5), dict(inline="x"),
                dict(lineinfo=[1])):
        with pytest.raises(TypeError, match="kiln.jit: "):
            kiln.jit(**bad)(lambda a: None)
    with pytest.raises(ValueError, match="at most 255"):
        kiln.jit(max_registers=2**40)(lambda a: None)


def test_squeeze_takes_numpy_axes_and_two_ellipses_say_so(monkeypatch):
    # hunt14: squeeze(axis=np.int64(0)) was "'numpy.int64' object is not iterable"; d[..., ...]
    # said ellipsis is not a valid index
    monkeypatch.setenv("KILN_TARGET", "cpu")
    d = kiln.to_device(np.zeros((1, 3)))
    assert d.squeeze(axis=np.int64(0)).shape == (3,)
    with pytest.raises(IndexError, match="a single ellipsis"):
        d[..., ...]


# ---- Numba's own type objects in signatures (hunt22 1) --------------------------------------

def test_numba_type_objects_as_signatures():
    """Numba's examples import their types from numba (`from numba import cuda, float32,
    void`); after `import kiln as cuda` those objects still form the signatures."""
    from numba import boolean, float32, float64, int32, types, void

    def body(a, n):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = n

    a = np.zeros(4, np.float32)
    k1 = kiln.jit(void(float32[:], int32))(body)
    k1[1, 4](a, 3)
    assert (a == 3).all() and k1.signatures == ["(float32[:], int32)"]
    k2 = kiln.jit((float32[::1], int32))(body)
    assert k2.signatures == ["(float32[::1], int32)"]
    assert (float32[::1], int32) in k2.overloads and k2.overloads[(float32[::1], int32)]
    k3 = kiln.jit([void(float64[:, ::1], boolean), void(float32[::1, :], boolean)])(
        lambda a, b: None)
    assert k3.signatures == ["(float64[:, ::1], bool)", "(float32[::1, :], bool)"]
    dbl = kiln.jit(float64(float64), device=True)(lambda x: x * 2)
    pair = kiln.jit(types.UniTuple(float32, 2)(float32), device=True)(lambda x: (x, x + 1))

    @kiln.jit
    def use(o):
        p = pair(np.float32(o[1]))
        o[0] = dbl(o[0]) + p[1]

    o = np.array([1.0, 4.0])
    use[1, 1](o)
    assert o[0] == 7.0
    v = kiln.vectorize([float32(float32, float32)])(lambda x, y: x + y)
    assert v(np.ones(3, np.float32), np.ones(3, np.float32)).dtype == np.float32
    with pytest.raises(TypeError, match="the Numba type unicode_type has no kiln signature form"):
        kiln.jit(void(types.unicode_type))(lambda s: None)


def test_runtime_and_driver_versions():
    """Numba's cuda.runtime.get_version() (kiln: NVRTC's, the toolkit's) and
    cuda.driver.driver.get_version() (hunt22 3)."""
    v = kiln._kiln.nvrtc_version()
    assert v is not None, "these tests need NVRTC (the CUDA toolkit), as CI has"
    assert kiln.runtime.get_version() == (v // 1000, v % 1000 // 10)
    assert kiln.runtime.is_supported_version() is True
    if not kiln._kiln.cuda_available()[0]:
        assert kiln.driver.driver.is_available is False
        with pytest.raises(kiln.CudaError, match="libcuda"):
            kiln.driver.driver.get_version()
    out = run("""
        print(kiln.driver.driver.get_version(), kiln.driver.driver.is_available)
    """)
    assert out.strip().splitlines()[-1] == "(13, 0) True", out


def test_numba_jit_functions_are_device_functions():
    """numba-cuda's doc example: a @numba.jit function called from a kernel is compiled as a
    device function, and so is one still decorated with Numba's own cuda.jit(device=True)
    (hunt25 1)."""
    import numba
    from numba import cuda as numba_cuda

    @numba.jit
    def business_logic(x, y, z):
        return 4 * z * (2 * x - (4 * y) / 2 * np.pi)

    @numba.njit
    def square(v):
        return v * v

    @numba_cuda.jit(device=True)
    def plus_one(v):
        return v + 1

    @kiln.jit
    def f(res, xs, ys, zs):
        i = kiln.grid(1)
        if i < res.size:
            res[i] = business_logic(xs[i], ys[i], zs[i]) + square(xs[i]) + plus_one(1.0)

    x = np.arange(10.0)
    y, z, r = x * 2, x + 1, np.zeros(10)
    f[1, 16](r, x, y, z)
    np.testing.assert_allclose(r, 4 * z * (2 * x - (4 * y) / 2 * np.pi) + x * x + 2)
