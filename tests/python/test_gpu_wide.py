"""The wide entry on the GPU (pytest -m gpu): a kernel that sees its position only
through kiln.grid() runs several grid positions per thread when the launch is 1-D,
large enough to fill the GPU, and no array it writes overlaps another argument
(docs/architecture.md, "Wide launches").  Each test checks which entry ran
(Launcher._last_wide) and the result against NumPy."""
import numpy as np
import pytest

import kiln
from conftest import FLOAT_DTYPES, INT_DTYPES, random_array

pytestmark = pytest.mark.gpu

import test_kernels as K  # noqa: E402

# Enough threads to take the wide entry on GPUs with up to 512 SMs, and not a
# multiple of the positions a wide block covers (the tail is guarded).
N = (1 << 22) + 37
TPB = 128


def blocks(n, tpb=TPB):
    return (n + tpb - 1) // tpb


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
def test_wide_axpy_every_dtype(rng, dtype):
    x, y = random_array(rng, N, dtype), random_array(rng, N, dtype)
    a = dtype(3)
    d = kiln.device_array(N, dtype)
    launch = K.axpy[blocks(N), TPB]
    launch(d, kiln.to_device(x), kiln.to_device(y), a)
    assert launch._last_wide
    ref = (a * x + y) if np.dtype(dtype).kind != "f" else (3 * x.astype(np.float64) + y)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(d.copy_to_host(), ref, rtol=1e-6)
    else:
        np.testing.assert_array_equal(d.copy_to_host(), ref)


@kiln.jit
def each_position_once(hits, count):
    i = kiln.grid(1)
    hits[i] += 1
    kiln.atomic.add(count, 0, 1)


def test_wide_runs_every_position_exactly_once():
    for nb in (blocks(N), blocks(N) + 1, blocks(N) + 2, blocks(N) + 3):  # every tail
        hits = kiln.to_device(np.zeros(nb * TPB, np.int32))
        count = kiln.to_device(np.zeros(1, np.int64))
        launch = each_position_once[nb, TPB]
        launch(hits, count)
        assert launch._last_wide
        assert count.copy_to_host()[0] == nb * TPB
        assert (hits.copy_to_host() == 1).all()


@kiln.jit
def early_return(out, x):
    i = kiln.grid(1)
    if i >= x.size:
        return
    if x[i] < 0:
        return
    out[i] = x[i] * 2


def test_wide_return_leaves_one_position_only(rng):
    x = rng.uniform(-1, 1, N).astype(np.float32)
    out = kiln.to_device(np.full(N, 7, np.float32))
    launch = early_return[blocks(N), TPB]
    launch(out, kiln.to_device(x))
    assert launch._last_wide
    np.testing.assert_array_equal(out.copy_to_host(), np.where(x < 0, 7, x * 2))


@kiln.jit
def shift_add(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i] + 1


def test_overlapping_written_array_takes_the_plain_entry(rng):
    x = rng.uniform(-1, 1, N).astype(np.float32)
    d = kiln.to_device(x)
    launch = shift_add[blocks(N), TPB]
    launch(d, d, d)  # written and read through three parameters: no __restrict__
    assert not launch._last_wide
    np.testing.assert_allclose(d.copy_to_host(), 2 * x.astype(np.float64) + 1, rtol=1e-6)
    big = kiln.to_device(np.zeros(N + 1, np.float32))
    launch(big[1:], big[:-1], kiln.to_device(x))  # overlapping views of one allocation
    assert not launch._last_wide


def test_read_only_arrays_may_overlap(rng):
    x = rng.uniform(-1, 1, N).astype(np.float32)
    dx = kiln.to_device(x)
    out = kiln.device_array(N, np.float32)
    launch = shift_add[blocks(N), TPB]
    launch(out, dx, dx)  # the same array read twice: still wide
    assert launch._last_wide
    np.testing.assert_allclose(out.copy_to_host(), 2 * x.astype(np.float64) + 1, rtol=1e-6)


def test_wide_strided_and_negative_strides(rng):
    x = rng.uniform(-1, 1, 2 * N).astype(np.float64)
    y = rng.uniform(-1, 1, N).astype(np.float64)
    dx = kiln.to_device(x)[::2]
    dy = kiln.to_device(y[::-1].copy())[::-1]
    out = kiln.to_device(np.zeros(2 * N, np.float64))[::-2]
    launch = shift_add[blocks(N), TPB]
    launch(out, dx, dy)
    assert launch._last_wide
    np.testing.assert_allclose(out.copy_to_host(), x[::2] + y + 1, rtol=1e-12)


@kiln.jit(device=True)
def store(a, i, v):
    a[i] = v


@kiln.jit
def writes_through_callee(out, x):
    i = kiln.grid(1)
    if i < x.size:
        store(out, i, x[i] + 1)


def test_wide_writes_through_a_device_function(rng):
    x = rng.uniform(-1, 1, N).astype(np.float32)
    out = kiln.device_array(N, np.float32)
    launch = writes_through_callee[blocks(N), TPB]
    launch(out, kiln.to_device(x))
    assert launch._last_wide
    np.testing.assert_allclose(out.copy_to_host(), x.astype(np.float64) + 1, rtol=1e-6)


def test_2d_launch_and_small_launch_take_the_plain_entry(rng):
    x = rng.uniform(-1, 1, N).astype(np.float32)
    out = kiln.device_array(N, np.float32)
    launch = shift_add[(blocks(N), 1), (TPB, 2)]  # 2-D block: plain entry
    launch(out, kiln.to_device(x), kiln.to_device(x))
    assert not launch._last_wide
    np.testing.assert_allclose(out.copy_to_host(), 2 * x.astype(np.float64) + 1, rtol=1e-6)
    small = shift_add[4, TPB]
    o = kiln.device_array(4 * TPB, np.float32)
    small(o, kiln.to_device(x[:4 * TPB]), kiln.to_device(x[:4 * TPB]))
    assert not small._last_wide


@kiln.jit
def uses_thread_index(out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = kiln.threadIdx.x


def test_kernel_reading_thread_indices_never_widens():
    out = kiln.device_array(N, np.int64)
    launch = uses_thread_index[blocks(N), TPB]
    launch(out)
    assert not launch._last_wide
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N) % TPB)


def test_wide_debug_bounds_error_names_the_line():
    @kiln.jit(debug=True)
    def oob(out):
        i = kiln.grid(1)
        out[i] = 1.0  # no guard: the last block's threads run past the end

    out = kiln.device_array(N, np.float32)
    launch = oob[blocks(N), TPB]
    with pytest.raises(IndexError, match="test_gpu_wide.py"):
        launch(out)
        kiln.synchronize()
    assert launch._last_wide
