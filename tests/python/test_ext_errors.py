"""Errors of the launch path that used to mislead: what an argument is, what a
kernel's parameters are, what the shared-memory limit is, which CUDA driver could
not be loaded.  Each message says what was given and what kiln takes."""
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"), "libkiln-fake-cuda.so")
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")


def run(body, **env):
    env = dict(os.environ, PYTHONPATH=PYDIR, **env)
    with tempfile.TemporaryDirectory() as d:  # kiln reads kernels from their files
        script = os.path.join(d, "ext_errors_script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(body))
        p = subprocess.run([sys.executable, "-W", "always", script], env=env,
                           capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


@kiln.jit
def store(a, x):
    a[0] = x


@kiln.jit
def first(a, x):
    a[0] = x[0]


@pytest.mark.parametrize("value", [
    np.datetime64("2020-01-01"), np.datetime64("NaT"), np.timedelta64(5, "s"),
    np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([5], dtype="timedelta64[s]"),
])
def test_datetime_arguments_are_int64_counts(value):
    # datetime64/timedelta64 scalars and arrays reach kernels as int64 counts of their unit
    # (their 8 bytes, not the 1-d uint8 buffer a NumPy scalar exports)
    a = np.zeros(2, np.int64)
    if np.ndim(value) == 0:
        store[1, 1](a, value)
    else:
        first[1, 1](a, value)
    assert a[0] == value.reshape(-1)[0].view("int64")


def test_uint8_arrays_and_numpy_scalars_still_pass():
    a = np.zeros(2)
    store[1, 1](a, np.uint8(200))
    assert a[0] == 200
    b = np.zeros(4, np.uint8)

    @kiln.jit
    def fill(b, v):
        b[kiln.grid(1)] = v
    fill[1, 4](b, 9)
    assert (b == 9).all()


def test_variadic_parameters_are_a_compile_error_at_definition():
    def star(*args):
        pass

    def kw(a, **options):
        pass

    def kwonly(a, *, b):
        pass

    said = {star: "*args and **kwargs parameters are not supported in kernels",
            kw: "*args and **kwargs parameters are not supported in kernels",
            kwonly: "keyword-only parameters (after a bare '*') are not supported in kernels"}
    for fn, col, word in [(star, 14, "*args"), (kw, 17, "**options"), (kwonly, 17, "*, b")]:
        with pytest.raises(kiln.CompileError) as e:
            kiln.jit(fn)
        msg = str(e.value)
        assert said[fn] in msg, msg
        assert "takes 0 arguments" not in msg
        assert f"test_ext_errors.py:" in msg and "^" in msg, msg
        assert word in msg.splitlines()[1], msg  # the def line, with the caret under it
    with pytest.raises(kiln.CompileError):
        kiln.vectorize(star)
    with pytest.raises(kiln.CompileError):
        kiln.jit(device=True)(star)


@pytest.mark.parametrize("shmem, words", [
    (10 ** 12, ["dynamic_shared_bytes is 1000000000000", "limit of 1073741824 bytes"]),
    (1 << 30 | 1, ["dynamic_shared_bytes is 1073741825", "limit of 1073741824 bytes"]),
    (10 ** 30, ["dynamic_shared_bytes is 1000000000000000000000000000000", "1073741824"]),
    (-5, ["dynamic_shared_bytes", "must be >= 0, got -5"]),
    (-(10 ** 30), ["must be >= 0, got -1000000000000000000000000000000"]),
])
def test_shared_memory_requests_state_the_limit_and_the_request(shmem, words):
    with pytest.raises(ValueError) as e:
        store[1, 32, 0, shmem]
    msg = str(e.value)
    assert all(w in msg for w in words), msg
    if shmem > 0:
        assert ">= 0" not in msg, msg


def test_shared_memory_sizes_take_numpy_integers_not_floats():
    # n * x.itemsize with n a NumPy integer is a numpy.int64 (Numba takes it); a float is not
    # a size, nor is a string
    store[1, 32, 0, np.int64(4) * 8]
    store[1, 32, 0, np.uint16(64)]
    with pytest.raises(ValueError, match="must be >= 0, got -8"):
        store[1, 32, 0, np.int32(-8)]
    for bad in (8.0, np.float64(8), "8"):
        with pytest.raises(TypeError, match="dynamic_shared_bytes must be an int, not"):
            store[1, 32, 0, bad]


def test_shared_memory_over_the_devices_limit_is_refused_at_the_gpu_launch():
    assert os.path.exists(FAKE), FAKE
    p = run("""
        import ctypes, os
        import numpy as np
        import kiln
        fake = ctypes.CDLL(os.environ["KILN_CUDA_DRIVER"])

        @kiln.jit
        def k(a):
            i = kiln.grid(1)
            if i < a.size:
                a[i] = 1.0

        d = kiln.device_array(64, np.float32)
        k[1, 64, 0, 100000](d)  # over 48 KiB, under the device's 227 KiB: launched
        cfg = (ctypes.c_uint * 7)()
        fake.fake_last_config(cfg)
        assert cfg[6] == 100000, list(cfg)
        n = fake.fake_launch_count()
        try:
            k[1, 64, 0, 300000](d)
        except ValueError as e:
            msg = str(e)
            assert "dynamic_shared_bytes is 300000" in msg, msg
            assert "GPU 0 (kiln fake GPU)" in msg and "232448 bytes" in msg, msg
        else:
            raise AssertionError("launched")
        assert fake.fake_launch_count() == n
        print("ok")
    """, KILN_CUDA_DRIVER=FAKE)
    assert p.stdout.strip() == "ok"


@pytest.mark.parametrize("driver, shown, loader_says", [
    ("/nonexistent/dir/libcuda.so.1", None, "No such file or directory"),
    (__file__, None, "invalid ELF header"),
    # a path that is not UTF-8 (bytes 0xff 0xfe): shown escaped, never a UnicodeDecodeError
    ("/nonexistent/\udcff\udcfelibcuda.so.1", "/nonexistent/\\xff\\xfelibcuda.so.1",
     "No such file or directory"),
])
def test_a_cuda_driver_that_cannot_be_loaded_is_named_once(driver, shown, loader_says):
    p = run("""
        import warnings
        import numpy as np
        import kiln

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = kiln.is_available()
            why = kiln.cuda_unavailable_reason()

            @kiln.jit
            def k(a):
                a[kiln.grid(1)] = 2.0

            a = np.zeros(4)
            k[1, 4](a)  # target 'auto' runs it on the CPU
            k[1, 4](a)
            assert kiln.is_available() is False
        assert ok is False and (a == 2).all()
        print(why)
        for x in w:
            print(x.category.__name__, x.message)
    """, KILN_CUDA_DRIVER=driver)
    lines = p.stdout.splitlines()
    why, warned = lines[0], lines[1:]
    shown = shown or driver
    assert why.startswith(f"KILN_CUDA_DRIVER={shown} cannot be loaded: "), why
    assert loader_says in why and "libcuda.so.1 was not found" not in why, why
    assert len(warned) == 1, warned
    assert warned[0].startswith("RuntimeWarning KILN_CUDA_DRIVER=" + shown), warned
    assert loader_says in warned[0] and "runs kernels on the CPU" in warned[0], warned


def test_a_cuda_driver_asked_for_by_target_cuda_names_the_path():
    p = run("""
        import numpy as np
        import kiln

        @kiln.jit(target="cuda")
        def k(a):
            a[kiln.grid(1)] = 2.0

        try:
            k[1, 4](np.zeros(4))
        except kiln.CudaError as e:
            print(e)
    """, KILN_CUDA_DRIVER="/nonexistent/libkiln-driver.so")
    assert "KILN_CUDA_DRIVER=/nonexistent/libkiln-driver.so cannot be loaded" in p.stdout, p.stdout


def test_forall_counts_and_stream_handles_name_what_is_wrong():
    # hunt14 10: np.int64 task counts were refused; a bad tpb was reported as a griddim the
    # user never wrote; a negative or 2**64 stream gave a bare OverflowError
    a = np.zeros(10)
    store.forall(np.int64(1))(a, np.float64(1.0))
    with pytest.raises(ValueError, match="forall's tpb is the threads per block"):
        store.forall(4, tpb=-1)
    with pytest.raises(TypeError, match="forall's tpb .* is an int, not float"):
        store.forall(4, tpb=3.5)
    with pytest.raises(TypeError, match="task count .* not bool"):
        store.forall(True)
    for st in (-1, 2**64):
        with pytest.raises(OverflowError, match="stream's CUstream handle is an int"):
            store[1, 4, st](a, np.float64(1.0))
