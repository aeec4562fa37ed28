"""The wide entry's vector path on the GPU (pytest -m gpu; src/emit/vecplan.h): 1-D
contiguous arrays read and written only at the position move as one vector per thread,
four consecutive positions, with element loads where a pointer is not aligned and the
launch's last positions one at a time.  Each test checks the results against NumPy at
sizes that are not multiples of four, with views that break the alignment, and (for
explicit launches) that the wide entry ran.  tests/python/test_vec_codegen.py shows the
code of each shape."""
import numpy as np
import pytest

import kiln
from conftest import ALL_DTYPES, random_array

pytestmark = pytest.mark.gpu

# Enough threads to take the wide entry on GPUs with up to 512 SMs; + 37: not a
# multiple of 4 (the last thread's positions run one at a time)
N = (1 << 22) + 37
TPB = 128


def blocks(n, tpb=TPB):
    return (n + tpb - 1) // tpb


@kiln.jit
def add(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def _sum(x, y, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return x | y
    with np.errstate(over="ignore"):
        return (x + y).astype(dt)


@pytest.mark.parametrize("dtype", ALL_DTYPES + [np.float16])
@pytest.mark.parametrize("n", [N, N + 1, N + 2, N + 3])
def test_every_dtype_and_tail(rng, dtype, n):
    x, y = random_array(rng, n, dtype), random_array(rng, n, dtype)
    if np.dtype(dtype) == np.float16:
        x, y = rng.uniform(-8, 8, n).astype(np.float16), rng.uniform(-8, 8, n).astype(np.float16)
    d = kiln.device_array(n, dtype)
    launch = add[blocks(n), TPB]
    launch(d, kiln.to_device(x), kiln.to_device(y))
    assert launch._last_wide
    np.testing.assert_array_equal(d.copy_to_host(), _sum(x, y, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shift", [(1, 0, 0), (0, 1, 0), (0, 0, 3), (1, 2, 3)])
def test_views_that_break_the_alignment(rng, dtype, shift):
    """Offset views (a[1:]) of the output, of either input or of all: each array on its
    own falls back to element loads or stores."""
    so, sx, sy = shift
    x, y = random_array(rng, N + 4, dtype), random_array(rng, N + 4, dtype)
    fill = random_array(rng, N + 4, dtype)
    big = kiln.to_device(fill)
    out = big[so:so + N]
    launch = add[blocks(N), TPB]
    launch(out, kiln.to_device(x)[sx:sx + N], kiln.to_device(y)[sy:sy + N])
    assert launch._last_wide
    got = big.copy_to_host()
    np.testing.assert_array_equal(got[so:so + N], _sum(x[sx:sx + N], y[sy:sy + N], dtype))
    # nothing outside the view is written
    np.testing.assert_array_equal(got[:so], fill[:so])
    np.testing.assert_array_equal(got[so + N:], fill[so + N:])


@pytest.mark.parametrize("n", [N, N + 1, N + 3])
@pytest.mark.parametrize("shift", [0, 1])
def test_mixed_widths_two_vectors_per_thread(rng, n, shift):
    """A float64 output and float32 inputs: 2 positions per vector, 2 vectors per thread
    a block apart; the tail and unaligned views as above."""
    x = rng.uniform(-1, 1, n + 1).astype(np.float32)
    y = rng.uniform(-1, 1, n + 1).astype(np.float32)
    big = kiln.to_device(np.full(n + 1, 5, np.float64))
    out = big[shift:shift + n]
    launch = add[blocks(n), TPB]
    launch(out, kiln.to_device(x)[shift:shift + n], kiln.to_device(y)[:n])
    assert launch._last_wide
    got = big.copy_to_host()
    want = (x[shift:shift + n] + y[:n]).astype(np.float64)  # added in float32, as the kernel
    np.testing.assert_array_equal(got[shift:shift + n], want)
    assert got[0 if shift else n] == 5


@kiln.jit
def scale_below(out, x, n):
    i = kiln.grid(1)
    if i < n:
        out[i] = x[i] * 3


@pytest.mark.parametrize("m", [N - 1, N - 2, N - 5, N // 2 + 1])
def test_positions_past_the_kernels_own_bound_keep_their_values(rng, m):
    """n < the arrays' extents: a vector's positions past n store nothing (their flags
    stay clear), so those elements keep what they held."""
    x = rng.integers(-1000, 1000, N).astype(np.int32)
    out = kiln.to_device(np.full(N, -7, np.int32))
    launch = scale_below[blocks(N), TPB]
    launch(out, kiln.to_device(x), m)
    assert launch._last_wide
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[:m], x[:m] * 3)
    assert (got[m:] == -7).all()


# positions that return before their store: test_gpu_wide.py's
# test_wide_return_leaves_one_position_only (the wide entry is the vector path now)


def test_strided_and_mixed_layouts(rng):
    """A strided input stays element loads beside contiguous ones; a negative stride too."""
    x = rng.uniform(-1, 1, 2 * N).astype(np.float64)
    y = rng.uniform(-1, 1, N).astype(np.float64)
    out = kiln.device_array(N, np.float64)
    launch = add[blocks(N), TPB]
    launch(out, kiln.to_device(x)[::2], kiln.to_device(y))
    assert launch._last_wide
    np.testing.assert_array_equal(out.copy_to_host(), x[::2] + y)
    rev = kiln.to_device(y[::-1].copy())[::-1]
    launch(out, kiln.to_device(x)[1::2], rev)
    np.testing.assert_array_equal(out.copy_to_host(), x[1::2] + y)


@kiln.jit
def poly(out, x, c):
    i = kiln.grid(1)
    if i < out.size:
        acc = 0.0
        for j in range(c.size):
            acc = acc * x[i] + c[j]
        out[i] = acc


@pytest.mark.parametrize("m", [1, 5, 8])
def test_a_loop_in_the_body(rng, m):
    """The vector's element read inside an unrolled loop (src/emit/unroll.h)."""
    x = rng.uniform(-1, 1, N + 1).astype(np.float32)
    c = rng.uniform(-1, 1, m).astype(np.float32)
    out = kiln.device_array(N, np.float32)
    launch = poly[blocks(N), TPB]
    launch(out, kiln.to_device(x)[1:], kiln.to_device(c))
    assert launch._last_wide
    want = np.zeros(N)
    for j in range(m):
        want = want * x[1:].astype(np.float64) + c[j]
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5, atol=1e-5)


@kiln.fuse
def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


def _chain64(x, y):
    x, y = x.astype(np.float64), y.astype(np.float64)
    return np.exp(x * y + 0.5) * x - y / 3.0


@pytest.mark.parametrize("shape", [(1 << 12, 1 << 10), (4099, 1031), ((1 << 22) + 3,)])
def test_fused_chain_flat_and_offset(rng, shape):
    """The issue's chain: its flat view (C order), offset 1-D views, F order (its 2-D
    kernel) and a strided input, against NumPy in float64."""
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    y = rng.uniform(-2, 2, shape).astype(np.float32)
    dx, dy = kiln.to_device(x), kiln.to_device(y)
    got = chain(dx, dy).copy_to_host()
    np.testing.assert_allclose(got, _chain64(x, y), rtol=3e-6, atol=3e-6)
    fx, fy = x.reshape(-1), y.reshape(-1)
    for a, b in ((1, 0), (0, 3), (2, 1)):
        n = fx.size - 3
        got = chain(kiln.to_device(fx)[a:a + n], kiln.to_device(fy)[b:b + n]).copy_to_host()
        np.testing.assert_allclose(got, _chain64(fx[a:a + n], fy[b:b + n]), rtol=3e-6, atol=3e-6)
    if len(shape) == 2:
        fxo, fyo = np.asfortranarray(x), np.asfortranarray(y)
        got = chain(kiln.to_device(fxo), kiln.to_device(fyo)).copy_to_host()
        np.testing.assert_allclose(got, _chain64(x, y), rtol=3e-6, atol=3e-6)
        got = chain(kiln.to_device(x)[:, ::2], dy[:, ::2]).copy_to_host()
        np.testing.assert_allclose(got, _chain64(x[:, ::2], y[:, ::2]), rtol=3e-6, atol=3e-6)


def test_vectorize_on_the_gpu(rng):
    @kiln.vectorize(["float64(float64, float64)", "int16(int16, int16)"], target="cuda")
    def mix(a, b):
        return a * 2 + b

    for dt in (np.float64, np.int16):
        a, b = random_array(rng, N, dt), random_array(rng, N, dt)
        got = mix(kiln.to_device(a), kiln.to_device(b))
        got = got.copy_to_host() if hasattr(got, "copy_to_host") else got
        np.testing.assert_array_equal(got, (a * 2 + b).astype(dt))
        got = mix(kiln.to_device(a)[1:], kiln.to_device(b)[:-1])
        got = got.copy_to_host() if hasattr(got, "copy_to_host") else got
        np.testing.assert_array_equal(got, (a[1:] * 2 + b[:-1]).astype(dt))


@kiln.fuse
def row3(x, b, s):
    return x * b + s


def _check_row3(got, x, b, s):
    with np.errstate(over="ignore"):
        ref = x * b + s
    assert got.shape == ref.shape and got.dtype == ref.dtype
    got = got.copy_to_host() if hasattr(got, "copy_to_host") else got  # (KILN_TARGET=cpu)
    if ref.dtype.kind == "f":  # NVRTC contracts x * b + s into one fma
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int64", "bool"])
def test_fused_row_operands(rng, dtype):
    """Rows broadcast along C-contiguous arrays (kiln/_fuse.py _row_flat: the flat kernel,
    the row read at the column, as vectors where the row length is a multiple of 4 and
    it is aligned): rows of 1-D and (1, m) shape, an unaligned row view (element loads at
    each column), a one-element array beside them, 3-D arrays, against NumPy."""
    dt = np.dtype(dtype)
    cases = [((4096, 1024), (1024,)), ((3, 5, 64), (1, 1, 64)), ((1000, 300), (300,)),
             ((2048, 2052), (1, 2052)), ((513, 8), (8,)), ((4096, 1026), (1026,))]
    for sx, sb in cases:
        x, b, s = random_array(rng, sx, dt), random_array(rng, sb, dt), random_array(rng, (1, 1), dt)
        dx, ds = kiln.to_device(x), kiln.to_device(s)
        _check_row3(row3(dx, kiln.to_device(b), ds), x, b, s)
        # an unaligned row: a view from the second element on
        wide = random_array(rng, sb[:-1] + (sb[-1] + 1,), dt)
        _check_row3(row3(dx, kiln.to_device(wide)[..., 1:], ds), x, wide[..., 1:], s)
