"""The GPU path's host side without a GPU: kiln runs against tests/fake_cuda (a
libcuda stand-in that runs nothing and records each launch), loaded through
$KILN_CUDA_DRIVER in a child process.  These check what reaches cuLaunchKernel:
which entry, the grid, and the parameter bytes, for plain and wide launches."""
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")

PRELUDE = """
import ctypes, os, struct, warnings
import numpy as np
import kiln
fake = ctypes.CDLL(os.environ["KILN_CUDA_DRIVER"])
fake.fake_last_name.restype = ctypes.c_char_p

def last():
    cfg = (ctypes.c_uint * 7)()
    fake.fake_last_config(cfg)
    buf = (ctypes.c_int64 * 512)()
    n = fake.fake_last_params(buf, 512)
    return fake.fake_last_name().decode(), tuple(cfg[:3]), tuple(cfg[3:6]), list(buf[:n])

def ptr(d):
    return d.__cuda_array_interface__["data"][0]

class Foreign:  # a GPU array of another library: only the interface, naming `stream`
    def __init__(self, d, stream):
        self.d, self.stream = d, stream
    @property
    def __cuda_array_interface__(self):
        c = dict(self.d.__cuda_array_interface__)
        c["stream"] = self.stream
        return c

@kiln.jit
def saxpy(out, a, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
"""


def run(body):
    assert os.path.exists(FAKE), f"{FAKE} is missing: build with make (meson builds it)"
    env = dict(os.environ, KILN_CUDA_DRIVER=FAKE)
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        script = os.path.join(d, "fake_gpu_script.py")
        with open(script, "w") as f:
            f.write(PRELUDE + textwrap.dedent(body))
        p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                           timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_fake_driver_is_a_usable_gpu():
    out = run("""
        assert kiln.is_available(), kiln.cuda_unavailable_reason()
        x = np.arange(10, dtype=np.float32)
        d = kiln.to_device(x)
        assert (d.copy_to_host() == x).all()
        print("ok")
    """)
    assert out.strip() == "ok"


def test_small_launch_packs_arrays_as_structs():
    run("""
        n = 1000
        out, x, y = (kiln.device_array(n, np.float32) for _ in range(3))
        saxpy[(n + 127) // 128, 128](out, np.float32(2.5), x, y)
        name, grid, block, p = last()
        assert name == "kiln_entry" and grid == (8, 1, 1) and block == (128, 1, 1), (name, grid)
        # the error record, then one pointer per parameter: each array's struct begins with
        # its data pointer (the fake records 8 bytes from each)
        assert p[1] == ptr(out) and p[3] == ptr(x) and p[4] == ptr(y), p
        assert struct.unpack("<f", struct.pack("<q", p[2])[:4])[0] == 2.5
        assert len(p) == 5
    """)


def test_large_launch_takes_the_wide_entry_with_fields_and_thread_count():
    run("""
        n = (1 << 22) + 37
        out, x, y = (kiln.device_array(n, np.float32) for _ in range(3))
        nb = (n + 127) // 128
        launch = saxpy[nb, 128]
        launch(out, np.float32(2.5), x, y)
        name, grid, block, p = last()
        assert launch._last_wide and name == "kiln_entry_wide", name
        assert grid == ((nb + 3) // 4, 1, 1) and block == (128, 1, 1), grid
        # error record, out's 3 fields, a, x's 3 fields, y's 3 fields, the thread count
        assert len(p) == 12, p
        assert p[1:4] == [ptr(out), n, 1] and p[5:8] == [ptr(x), n, 1]
        assert p[8:11] == [ptr(y), n, 1] and p[11] == nb * 128, p
    """)


def test_overlap_2d_and_small_launches_keep_the_plain_entry():
    run("""
        n = (1 << 22) + 37
        nb = (n + 127) // 128
        d = kiln.device_array(n + 1, np.float32)
        x = kiln.device_array(n, np.float32)
        cases = [
            ((nb, 128), (d[1:], np.float32(1), d[:-1], x)),   # out overlaps x
            ((nb, 128), (x, np.float32(1), x, x)),            # out is x
            (((nb, 1), (64, 2)), (x, np.float32(1), d[:-1], d[:-1])),  # 2-D block
            ((100, 128), (x, np.float32(1), d[:-1], d[:-1])),   # too few threads
        ]
        for cfg, args in cases:
            launch = saxpy[cfg]
            launch(*args)
            assert not launch._last_wide and last()[0] == "kiln_entry", cfg
        # arrays that are only read may share memory
        launch = saxpy[nb, 128]
        launch(x, np.float32(1), d[:-1], d[1:])
        assert launch._last_wide and last()[0] == "kiln_entry_wide"
    """)


def test_negative_strides_reach_the_kernel_as_such():
    run("""
        n = (1 << 22) + 37
        base = kiln.device_array(2 * n, np.float64)
        v = base[::-2]
        out = kiln.device_array(n, np.float64)
        launch = saxpy[(n + 255) // 256, 256]
        launch(out, 1.0, v, v)
        name, grid, block, p = last()
        assert name == "kiln_entry_wide"
        assert p[5:8] == [ptr(v), n, -2] and p[8:11] == p[5:8], p
        launch(out, 1.0, v, out)  # out is also read as y: one array, two parameters
        assert last()[0] == "kiln_entry"
    """)


def test_host_arrays_are_staged_through_device_memory():
    out = run("""
        n = 4096
        x = np.arange(n, dtype=np.float32)
        y = np.zeros(n, np.float32)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            saxpy[n // 128, 128](y, np.float32(2), x, x)
        assert [type(x.message).__name__ for x in w] == ["PerformanceWarning"], w
        name, grid, block, p = last()
        assert p[1] != y.ctypes.data and p[3] != x.ctypes.data  # copies, not host pointers
        print("ok")
    """)
    assert out.strip() == "ok"


def test_driver_errors_become_cuda_errors():
    # kiln.CudaError; and once a program has imported cuda.core, whose CUDAError
    # Numba-CUDA raises for a failed launch, that class too
    run("""
        import sys, types
        x = kiln.device_array(10, np.float32)
        mod = types.ModuleType("cuda.core._utils.cuda_utils")
        class CUDAError(Exception):
            pass
        mod.CUDAError = CUDAError
        for rc, name, imported in ((701, "LAUNCH_OUT_OF_RESOURCES", False),
                                   (1, "INVALID_VALUE", True), (1, "INVALID_VALUE", True)):
            if imported:
                sys.modules["cuda.core._utils.cuda_utils"] = mod
            fake.fake_fail_next_launch(rc)
            try:
                saxpy[1, 32](x, np.float32(1), x, x)
            except kiln.CudaError as e:
                assert "CUDA_ERROR_" + name in str(e), e
                assert isinstance(e, CUDAError) == imported and type(e).__name__ == "CudaError"
                saxpy[1, 32](x, np.float32(1), x, x)  # the next launch works
            else:
                raise AssertionError("no CudaError")
        print("ok")
    """)


def test_events_pinned_memory_and_devices():
    out = run("""
        start, end = kiln.event(), kiln.event()
        start.record()
        end.record(kiln.stream())
        end.synchronize()
        assert end.query() is True
        assert start.elapsed_time(end) >= 0 and kiln.event_elapsed_time(start, end) >= 0
        untimed = kiln.event(timing=False)
        untimed.record()
        try:
            start.elapsed_time(untimed)
        except ValueError as e:
            assert "timing=False" in str(e)
        else:
            raise AssertionError("timed an untimed event")
        try:
            start.elapsed_time(3)
        except TypeError:
            pass
        else:
            raise AssertionError("timed a non-event")
        p = kiln.pinned_array((3, 5), np.float32, order="F")
        assert p.shape == (3, 5) and p.dtype == np.float32 and p.flags.f_contiguous
        p[:] = np.arange(15, dtype=np.float32).reshape(3, 5)
        assert (kiln.to_device(p).copy_to_host() == p).all()
        q = kiln.pinned_array_like(np.zeros((2, 2), np.int16))
        assert q.shape == (2, 2) and q.dtype == np.int16 and q.flags.writeable
        dev = kiln.get_current_device()
        assert dev.id == 0 and dev.compute_capability == (9, 0) and dev.name == "kiln fake GPU"
        assert dev.MULTIPROCESSOR_COUNT == 132 and dev.WARP_SIZE == 32
        try:
            dev.NO_SUCH_ATTRIBUTE
        except AttributeError:
            pass
        else:
            raise AssertionError("unknown attribute")
        h = np.zeros(1000, np.float32)
        with kiln.pinned(h, np.zeros(0)):
            with kiln.pinned(h):  # already pinned: left to the outer block
                pass
            d = kiln.to_device(h)
        with kiln.pinned(h):  # the outer block unpinned it: it pins again
            pass
        try:
            with kiln.pinned(np.zeros((4, 4))[:, ::2]):
                pass
        except ValueError as e:
            assert "argument 1 is not a contiguous" in str(e), e
        else:
            raise AssertionError("pinned a strided view")
        assert len(kiln.gpus) == 1 and kiln.gpus[0] == dev and list(kiln.gpus) == [dev]
        assert kiln.gpus.current == dev and kiln.select_device(0) == dev
        with kiln.gpus[0] as g:
            assert g.id == 0
        assert kiln.detect() is True
        with kiln.defer_cleanup():
            pass
        kiln.close()
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_streams_are_blocking_as_numbas():
    # a Numba program launches on a stream and copies back without one: the legacy default
    # stream must wait for the stream's work, so kiln.stream() is CU_STREAM_DEFAULT (0)
    out = run("""
        s = kiln.stream()
        print(fake.fake_last_stream_flags())
    """)
    assert out.split() == ["0"]


def test_device_array_interface_details_as_numbas():
    out = run("""
        d = kiln.device_array(0)
        assert d.__cuda_array_interface__["data"][0] == 0  # the interface's empty array
        assert d.device_ctypes_pointer.value is None
        a = kiln.to_device(np.arange(10.0))
        assert a.device_ctypes_pointer.value == ptr(a)
        assert a.alloc_size == 80 and a[::2].alloc_size == 72 == kiln.as_cuda_array(a[::2]).alloc_size
        assert kiln.mapped_array(3).__cuda_array_interface__["stream"] is None

        class Foreign:  # only the interface, as Numba's tests' ForeignArray
            def __init__(self, arr):
                self._arr = arr
                self.__cuda_array_interface__ = arr.__cuda_array_interface__

        vadd = kiln.vectorize(["f8(f8, f8)"], target="cuda")(lambda x, y: x + y)
        r = vadd(Foreign(a), 6)
        assert isinstance(r, kiln.DeviceArray) and r.shape == (10,)
        o = kiln.device_array(10)
        r2 = vadd(np.ones(10), 6, out=Foreign(o))
        assert isinstance(r2, kiln.DeviceArray) and ptr(r2) == ptr(o)
        assert vadd(np.ones(10), 6, out=o) is o
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_kernel_resources_are_the_drivers_attributes():
    # Numba's get_regs_per_thread & co read cuFuncGetAttribute (the fake driver reports 16
    # registers, 1024 threads): with a signature, of that specialisation; without, a dict
    # by argument types, or the value of the only explicit signature
    out = run("""
        import math
        @kiln.jit
        def pi_sin(x, n):
            i = kiln.grid(1)
            if i < n:
                x[i] = 3.14 * math.sin(x[i])
        pi_sin[1, 10](np.zeros(10, np.float32), 10)
        pi_sin[1, 10](np.zeros(10, np.float64), 10)
        sig = kiln.void(kiln.float32[::1], kiln.int64)
        assert pi_sin.get_regs_per_thread(sig) == 16
        d = pi_sin.get_max_threads_per_block()
        assert d == {sig.args: 1024, (kiln.float64[::1], kiln.int64): 1024}, d
        assert pi_sin.get_shared_mem_per_block(sig) == 0 and pi_sin.get_local_mem_per_thread(sig) == 0
        assert pi_sin.get_const_mem_size(sig) == 0
        spec = kiln.jit("void(float32[::1])")(lambda a: None)
        assert spec.get_regs_per_thread() == 16
        # a bool argument's text is "bool" (the dict's keys are read back from the text)
        @kiln.jit
        def flagged(x, flag):
            if flag:
                x[0] = 1
        flagged[1, 1](np.zeros(1), True)
        assert flagged.get_regs_per_thread() == {(kiln.float64[::1], kiln.bool_): 16}
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_mapped_and_managed_arrays_launch_in_place():
    # Numba's mapped_array(_like) and managed_array: NumPy arrays over memory the GPU uses in
    # place; a launch passes their address (no staging copy, no PerformanceWarning)
    out = run("""
        m = kiln.mapped_array((4, 6), np.float32)
        assert fake.fake_host_alloc_flags() == 3  # CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP
        assert isinstance(m, np.ndarray) and m.shape == (4, 6) and m.flags.c_contiguous
        m[:] = 1.5
        cai = m.__cuda_array_interface__
        assert cai["data"][0] == m.ctypes.data and cai["strides"] is None and cai["typestr"] == "<f4"
        f = kiln.mapped_array_like(np.zeros((3, 5), np.int16, order="F"))
        assert f.flags.f_contiguous and f.dtype == np.int16
        assert f.__cuda_array_interface__["strides"] == f.strides
        g = kiln.managed_array(8, np.float64)
        assert fake.fake_managed_blocks() == 1 and g.shape == (8,)
        assert isinstance(m[1:], type(m)) and m[1:].__cuda_array_interface__["data"][0] == m[1:].ctypes.data

        @kiln.jit
        def fill(a, v):
            i = kiln.grid(1)
            if i < a.size:
                a[i] = v
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a staged host array would warn
            fill[1, 8](g, 2.0)
            fill[1, 8](m[0], 3.0)
        name, grid, block, params = last()
        assert m[0].ctypes.data in params, (params, m.ctypes.data)

        @kiln.jit
        def corner(a, v):
            a[1, 2] = v
        corner[1, 1](f, 7)                      # F order, read from the buffer in C
        assert f.ctypes.data in last()[3] and "int16[::1, :]" in str(corner.signatures[-1])
        s = kiln.stream()
        on_s = kiln.mapped_array((4,), np.float32, stream=s)   # the interface's stream rule
        before = fake.fake_stream_sync_count()
        fill[1, 8](on_s, 1.0)
        assert fake.fake_stream_sync_count() == before + 1 and on_s.ctypes.data in last()[3]
        h = np.zeros(8)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fill[1, 8](h, 1.0)
        assert any(issubclass(x.category, kiln.PerformanceWarning) for x in w)
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_mapped_arrays_are_numpy_arrays_on_the_cpu_target():
    env = dict(os.environ, KILN_TARGET="cpu")
    code = textwrap.dedent("""
        import numpy as np, kiln
        m = kiln.mapped_array((2, 3), np.int32)
        g = kiln.managed_array(4)
        l = kiln.mapped_array_like(np.zeros((2, 2), order="F"))
        assert type(m) is np.ndarray and type(g) is np.ndarray and l.flags.f_contiguous
        assert not hasattr(m, "__cuda_array_interface__")
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr


def test_gpu_reduce_paths_reach_the_driver():
    # the fake runs no kernel, so values are zeros: this checks the host side (buffers reused
    # per thread and stream, init, res=, streams, errors) and the launches it makes
    run("""
        import threading
        @kiln.reduce
        def add(p, q):
            return p + q
        big = kiln.device_array(1 << 20, np.float32)
        before = fake.fake_launch_count()
        # float32 sums in one launch of 8 blocks per multiprocessor (132 here), the last
        # block folding the partials; int16 (no atomics) in two, the second one block
        assert add(big) == 0 and fake.fake_launch_count() == before + 1
        assert last()[1] == (132 * 8, 1, 1)
        assert add(kiln.device_array(1000, np.float32)) == 0 and last()[1] == (4, 1, 1)
        before = fake.fake_launch_count()
        assert add(kiln.device_array(1 << 20, np.int16)) == 0
        assert fake.fake_launch_count() == before + 2 and last()[1] == (1, 1, 1)
        assert add(big, init=2.0) == 0
        assert add(big, res=kiln.device_array(1, np.float32)) is None
        assert add(big, stream=kiln.stream()) == 0
        try:
            add(big, res=kiln.device_array(1, np.float64))
        except TypeError as e:
            assert "res has dtype float64" in str(e)
        else:
            raise AssertionError("res of the wrong dtype taken")
        errors = []
        def worker():
            try:
                for _ in range(50):
                    add(big)
            except Exception as e:
                errors.append(e)
        ts = [threading.Thread(target=worker) for _ in range(4)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert not errors, errors
        # max-autotune times the pass's grid (1, 2, 4, 8 blocks per multiprocessor) on the
        # plan's own result, keeps the choice, and later calls launch with it
        from kiln import _autotune
        searched, res = [], kiln.device_array(1, np.float32)
        real = _autotune._search
        _autotune._search = lambda c, run, sync, d: searched.append((c, d)) or 132 * 2
        tuned = kiln.compile(lambda x, r: add(x, res=r), mode="max-autotune")
        tuned(big, res)
        assert searched == [((132, 264, 528, 1056), 1056)], searched
        assert last()[1] == (264, 1, 1)
        tuned(big, res)
        assert len(searched) == 1 and last()[1] == (264, 1, 1)
        add(big, res=res)                            # outside the step: the default grid
        assert last()[1] == (132 * 8, 1, 1)
        kept = [v for n, v in _autotune.kept() if n.startswith("autotune|reduce-gpu|")]
        assert kept == ["blocks=264"], kept
        # a CuPy-like array (only __cuda_array_interface__) is viewed in C: the pass reads
        # its pointer, res= of the same kind receives the result, and the producer's stream
        # is synchronized only when it is not the call's (the interface's rule)
        out = kiln.device_array(1, np.float32)
        s = kiln.stream()
        x = Foreign(big, 1)                     # the legacy default stream: kiln's own
        add(big, res=out)
        add(big, res=out, stream=s)             # the plans made (their set-up copies wait)
        before = fake.fake_stream_sync_count()
        assert add(x, res=Foreign(out, 1)) is None
        assert fake.fake_stream_sync_count() == before, "same stream: nothing to wait for"
        assert ptr(big) in last()[3], "the pass reads the foreign memory"
        assert add(x, res=Foreign(out, 1), stream=s) is None
        assert fake.fake_stream_sync_count() > before, "another stream: waited for"
        before = fake.fake_stream_sync_count()
        assert add(Foreign(big, s.handle), res=out, stream=s) is None
        assert fake.fake_stream_sync_count() == before
        assert add(x) == 0                       # the result on the host
        try:
            add(Foreign(big, 0))
        except ValueError as e:
            assert "stream'] is 0" in str(e)
        else:
            raise AssertionError("stream 0 taken")
        try:
            add(x, res=Foreign(kiln.device_array(1, np.float64), 1))
        except TypeError as e:
            assert "res has dtype float64" in str(e)
        else:
            raise AssertionError("res of the wrong dtype taken")
    """)


def test_fuse_and_vectorize_on_foreign_arrays_wait_only_for_another_stream():
    # kiln's own launches on CuPy-like arrays follow the interface's rule: no wait when
    # the producer's stream is the launch's (a wait at every call made them synchronous)
    run("""
        @kiln.fuse
        def f(x, y):
            return x * 2 + y
        @kiln.vectorize
        def v(x, y):
            return x * 2 + y
        a = kiln.device_array(1000, np.float32)
        s = kiln.stream()
        for call in (lambda x, y: f(x, y), lambda x, y: v(x, y)):
            call(Foreign(a, 1), Foreign(a, 1))
            before = fake.fake_stream_sync_count()
            r = call(Foreign(a, 1), Foreign(a, 1))
            assert r.shape == (1000,) and ptr(a) in last()[3]
            assert fake.fake_stream_sync_count() == before, "same stream: no wait"
            call(Foreign(a, s.handle), a)
            assert fake.fake_stream_sync_count() == before + 1, "another stream: one wait"
        def slow(ins):
            raise AssertionError("a repeated call on foreign arrays took the NumPy-typed path")
        v._types_and_output = slow              # the memoised launch, as for kiln arrays
        r = v(Foreign(a, 1), Foreign(a, 1))
        assert type(r) is kiln.DeviceArray and r.shape == (1000,) and ptr(r) in last()[3]
        print("ok")
    """)


def test_ufuncs_take_an_out_with_only_the_interface():
    # out= of an object with only __cuda_array_interface__ (Numba's ForeignArray): measured
    # through its view, written in place, and given back as a kiln.DeviceArray over it
    # (which has copy_to_host), as Numba gives back its own device array
    run("""
        class Foreign:
            def __init__(self, d):
                self._arr = d
                self.__cuda_array_interface__ = d.__cuda_array_interface__
        @kiln.vectorize(["f8(f8, f8)"])
        def vadd(a, b):
            return a + b
        @kiln.guvectorize(["(f8, f8, f8[:])"], "(),()->()")
        def gadd(a, b, out):
            out[0] = a + b
        for f in (vadd, gadd):
            out = Foreign(kiln.device_array(10))
            r = f(np.ones(10), np.float64(6), out=out)
            assert isinstance(r, kiln.DeviceArray) and r.shape == (10,) and hasattr(r, "copy_to_host")
            assert ptr(r) == ptr(out._arr) and ptr(out._arr) in last()[3]
        try:
            gadd(np.ones(10), np.float64(6), out=Foreign(kiln.device_array(9)))
        except ValueError as e:
            assert "output 1 has shape (9,)" in str(e), e
        else:
            raise AssertionError("a wrong out shape taken")
        print("ok")
    """)


def test_vectorize_repeat_call_takes_the_memoised_flat_launch():
    # the second call of a vectorize on kiln arrays of one shape in C order skips the
    # NumPy-based typing (_call_gpu_fast): it must launch what the first call launched,
    # with the pointers, sizes and result dtype of this call, 2-D arrays flattened
    out = run("""
        @kiln.vectorize
        def mul(x, y):
            return x * y

        def launches(*args, **kw):
            r = mul(*args, **kw)
            return r, last()

        for shape in ((1000,), (20, 50)):
            a = kiln.device_array(shape, np.float32)
            b = kiln.device_array(shape, np.float32)
            r1, (n1, g1, b1, p1) = launches(a, b)
            a2 = kiln.device_array(shape, np.float32)
            r2, (n2, g2, b2, p2) = launches(a2, b)
            assert n1 == n2 and g1 == g2 == (4, 1, 1) and b1 == b2 == (256, 1, 1), (g1, g2)
            assert r2.shape == shape and r2.dtype == np.float32 and r2 is not r1
            assert ptr(r2) in p2 and ptr(a2) in p2 and ptr(a) not in p2 and p2[-1] == 1000
            o = kiln.device_array(shape, np.float32)
            r3, (_, _, _, p3) = launches(a, b, out=o)
            r4, (_, _, _, p4) = launches(a2, b, out=o)
            assert r3 is o and r4 is o and ptr(o) in p4 and ptr(a2) in p4
        # a memoised call is the flat launch of UfuncBase's C __call__ (ufunc.c): no
        # Python of _ufunc.py runs
        def slow_path(*a, **k):
            raise AssertionError("took the Python path")
        mul._call_gpu = mul._call = mul._call_gpu_fast = slow_path
        r5, (_, _, _, p5) = launches(a2, b)
        assert ptr(r5) in p5 and ptr(a2) in p5
        r6, (_, _, _, p6) = launches(a2, b, out=o)
        assert r6 is o and ptr(o) in p6
        del mul._call_gpu, mul._call, mul._call_gpu_fast
        # another dtype is another kernel and result dtype, not the memoised one
        i = kiln.device_array(1000, np.int32)
        for _ in range(2):
            r, (_, _, _, p5) = launches(i, i)
            assert r.dtype == np.int32 and ptr(r) in p5
        assert len(mul._fast) == 5, mul._fast   # (1-D, 2-D) x (out=, none), int32
        # max-autotune: the search's choice is memoised too, and later calls take it
        from kiln import _autotune
        chosen = []
        real = _autotune.choose
        _autotune.choose = lambda *a, **k: chosen.append(1) or real(*a, **k)
        tuned = kiln.compile(lambda x, y: mul(x, y), mode="max-autotune")
        big = kiln.device_array(5000, np.float32)
        tuned(big, big)
        assert len(chosen) == 1
        tuned_threads = [t for h in mul._fast.values() for t in h[3] if t is not None]
        assert len(tuned_threads) == 1, tuned_threads
        r, (_, g, blk, p6) = launches(big, big)        # outside the step: the default
        assert blk == (256, 1, 1)
        r = tuned(big, big)
        assert len(chosen) == 1 and r.shape == (5000,)
        t = tuned_threads[0]
        assert last()[2] == (t, 1, 1) and last()[1] == (-(-5000 // t), 1, 1)
        # a broadcast call is never taken by the fast path
        r = mul(kiln.device_array((20, 50), np.float32), kiln.device_array(50, np.float32))
        assert r.shape == (20, 50)
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_the_memory_pool_keeps_freed_memory_and_is_trimmed_when_the_device_is_full():
    # the default pool's release threshold is raised when kiln first uses a device (the
    # freed memory is reused, not mapped again at each call); an allocation that finds the
    # device full trims the pools and tries once more; a second failure is the user's error
    out = run("""
        state = (ctypes.c_uint64 * 2)()
        d = kiln.device_array(100, np.float32)
        fake.fake_pool_state(state)
        assert state[0] == 2**64 - 1 and state[1] == 0, list(state)
        fake.fake_fail_allocs(1)
        d2 = kiln.device_array(100, np.float32)     # fails once, trimmed, succeeds
        fake.fake_pool_state(state)
        assert state[1] == 1 and d2.shape == (100,)
        fake.fake_fail_allocs(2)
        try:
            kiln.device_array(100, np.float32)
        except kiln.CudaError as e:
            assert "allocating device memory" in str(e), e
        else:
            raise AssertionError("no error")
        fake.fake_pool_state(state)
        assert state[1] == 2
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_stream_auto_synchronize_synchronizes_when_the_block_ends():
    # Numba's `with stream.auto_synchronize():`: one cuStreamSynchronize at the end of the
    # block, none when the block raises (the exception goes on)
    out = run("""
        s = kiln.stream()
        x = np.arange(10, dtype=np.float32)
        d = kiln.to_device(x, stream=s)
        with s.auto_synchronize() as t:
            assert t is s
            saxpy[1, 32, s](d, np.float32(2), d, d)
            before = fake.fake_stream_sync_count()
        after = fake.fake_stream_sync_count()
        assert after > before   # the stream's synchronize (and the kernel-error check's)
        try:
            with s.auto_synchronize():
                raise KeyError("inside")
        except KeyError:
            pass
        assert fake.fake_stream_sync_count() == after
        print("ok")
    """)
    assert out.strip() == "ok"


def test_global_gpu_array_in_a_cpu_kernel_is_refused():
    # a global device array is captured by address: GPU memory in a kernel compiled for the
    # CPU would be a wild pointer, so it is a CompileError that says so
    out = run("""
        T = kiln.to_device(np.arange(4, dtype=np.float32))

        @kiln.jit(target="cpu")
        def k(o):
            o[0] = T[0]
        try:
            k[1, 1](np.zeros(1, np.float32))
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split("error: ")[1])
    """)
    assert out.strip() == ("global 'T' is a device array in GPU memory, but this kernel is "
                           "being compiled for the CPU, which kernels cannot use (Untyped "
                           "global name 'T')")



def test_a_foreign_gpu_array_global_is_captured_by_address():
    # Numba's test_device_array_capture: any object with __cuda_array_interface__ (CuPy,
    # torch, a wrapper) read as a global is captured by address like a kiln device array;
    # its address is a constant of the specialisation, its layout must be C order
    out = run("""
        class Foreign:  # only the interface, as Numba's ForeignArray
            def __init__(self, a):
                self.__cuda_array_interface__ = a.__cuda_array_interface__
        G = Foreign(kiln.to_device(np.arange(6, dtype=np.float32).reshape(2, 3)))
        S = Foreign(kiln.to_device(np.zeros((4, 4)))[:, 1])
        BAD = Foreign(kiln.to_device(np.zeros(2)))
        BAD.__cuda_array_interface__ = {"shape": (2,), "typestr": "<f8"}

        @kiln.jit
        def k(o):
            o[0] = G[1, 2] + G.shape[1]
        k[1, 1](kiln.device_array(1, np.float32))
        addr = ptr(G)
        src = k.inspect_source()
        print(f"{addr:#x}" in src.lower() or str(addr) in src)
        for name in ("S", "BAD"):  # a kernel made by exec, reading global `name`
            exec(f"def bad(o):\\n    o[0] = {name}[0]\\n", globals())
            try:
                kiln.jit(globals()["bad"])[1, 1](kiln.device_array(1))
            except kiln.CompileError as e:
                print(str(e).splitlines()[0].split("error: ")[1][:60])
    """)
    assert out.splitlines() == [
        "True",
        "global 'S' is a GPU array that is not C-contiguous (global G",
        "global 'BAD' is an object whose __cuda_array_interface__ is ",
    ], out


def test_cooperative_kernels_launch_cooperatively_and_too_large_grids_say_the_most():
    run("""
        @kiln.jit
        def rows(M):
            col = kiln.grid(1)
            g = kiln.cg.this_grid()
            for r in range(1, M.shape[0]):
                M[r, col] = M[r - 1, col] + 1
                g.sync()

        M = kiln.device_array((4, 64), np.int32)
        rows[2, 32](M)
        assert last()[0] == "kiln_entry" and fake.fake_last_coop() == 1
        (e,) = rows.overloads.values()
        assert e.cooperative
        # the fake's occupancy: 2048 threads per SM over the block's, 132 SMs
        assert e.max_cooperative_grid_blocks(256) == 8 * 132
        assert e.max_cooperative_grid_blocks((16, 4, 4), dynsmemsize=0) == 8 * 132
        assert rows.max_cooperative_grid_blocks(32) == 32 * 132
        # a plain kernel is not cooperative, and a large one still widens
        out = kiln.device_array(1 << 22, np.float32)
        saxpy[(1 << 22) // 128, 128](out, np.float32(1), out, out)
        assert fake.fake_last_coop() == 0
        assert not saxpy.overloads[list(saxpy.overloads)[0]].cooperative
        big = kiln.device_array((2, 8 * 132 * 256 + 256), np.int32)
        try:
            rows[8 * 132 + 1, 256](big)
        except ValueError as err:
            assert "1057 blocks of 256 threads is too large: at most 1056 blocks" in str(err), err
        else:
            raise AssertionError("a grid past the resident blocks launched")
    """)


def test_a_pointer_argument_is_its_address_and_keeps_the_plain_entry():
    # CPointer(float32): the launch passes the integer address itself, one 8-byte parameter,
    # and a large launch stays on the plain entry (a pointer has no extent to check overlap)
    run("""
        @kiln.jit("void(float32*, float32, int64)")
        def scale(p, a, n):
            i = kiln.grid(1)
            if i < n:
                p[i] *= a

        n = (1 << 22) + 37
        d = kiln.device_array(n, np.float32)
        nb = (n + 127) // 128
        launch = scale[nb, 128]
        launch(ptr(d), np.float32(2.0), n)
        name, grid, block, p = last()
        assert name == "kiln_entry" and not launch._last_wide, name
        assert len(p) == 4 and p[1] == ptr(d) and p[3] == n, p
        scale[1, 1](0, np.float32(1.0), 0)  # a null address is passed as it is
        assert last()[3][1] == 0
    """)


def test_low_occupancy_warning():
    """Off by default; with KILN_LOW_OCCUPANCY_WARNINGS=1 (or Numba's variable), k[g, b] with
    fewer than 128 blocks on a GPU warns once per kernel, as Numba-CUDA does (its phrase
    included); 128 blocks, kiln's own kernels, target='cpu' and 0 do not; a bad value is a
    ValueError naming the variable."""
    out = run("""
        def caught(fn):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn()
            return [str(x.message) for x in w if issubclass(x.category, kiln.PerformanceWarning)]

        os.environ.pop("KILN_LOW_OCCUPANCY_WARNINGS", None)  # conftest.py sets 0
        @kiln.jit
        def off(a):
            a[0] = 1
        assert caught(lambda: off[1, 1]) == []              # the default
        os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "1"
        @kiln.jit
        def numbas(a):
            a[0] = 1
        assert len(caught(lambda: numbas[1, 1])) == 1       # Numba's variable, kiln's unset
        del os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"]
        os.environ["KILN_LOW_OCCUPANCY_WARNINGS"] = "1"
        @kiln.jit
        def k(a):
            a[0] = 1
        got = caught(lambda: k[(4, 2), 8])
        assert len(got) == 1 and "8 blocks" in got[0], got
        assert "Grid size 8 will likely result in GPU under-utilization due to low occupancy" in got[0]
        assert caught(lambda: k[1, 1]) == []           # once per kernel
        @kiln.jit
        def big(a):
            a[0] = 1
        assert caught(lambda: big[128, 1]) == [] and caught(lambda: big[(64, 2, 1), 32]) == []
        @kiln.jit(target="cpu")
        def host(a):
            a[0] = 1
        assert caught(lambda: host[1, 1]) == []
        x = kiln.to_device(np.arange(5.0))
        assert caught(lambda: kiln.vectorize(["float64(float64)"])(lambda v: v + 1)(x)) == []
        os.environ["KILN_LOW_OCCUPANCY_WARNINGS"] = "0"
        @kiln.jit
        def quiet(a):
            a[0] = 1
        assert caught(lambda: quiet[1, 1]) == []
        os.environ["KILN_LOW_OCCUPANCY_WARNINGS"] = "yes"
        @kiln.jit
        def bad(a):
            a[0] = 1
        try:
            bad[1, 1]
        except ValueError as e:
            assert "KILN_LOW_OCCUPANCY_WARNINGS must be 0 or 1" in str(e), e
        else:
            raise AssertionError("no ValueError")
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_benchmark_hooks_launch_what_they_time():
    # bench/gpu/launch_args.py's hooks: the driver floor (_raw_launches: the packed launch
    # count times), the whole path from C (_path_launches) and the context check
    out = run("""
        from kiln import _kiln
        fake.fake_launch_count.restype = ctypes.c_long
        n = 256
        out, x, y = (kiln.device_array(n, np.float32) for _ in range(3))
        ln = saxpy[2, 128]
        ln(out, np.float32(2.0), x, y)
        c0 = fake.fake_launch_count()
        assert ln._raw_launches(7, out, np.float32(2.0), x, y) >= 0
        c1 = fake.fake_launch_count()
        assert ln._path_launches(5, out, np.float32(2.0), x, y) > 0
        c2 = fake.fake_launch_count()
        assert (c1 - c0, c2 - c1) == (7, 5), (c0, c1, c2)
        assert _kiln._ctx_check_seconds(100) > 0
        print("ok")
    """)
    assert out.strip() == "ok"
