"""Signs after integer overflow (src/sema/bounds.c).  Integer arithmetic wraps, so a
non-negative sum, product, shift or power that passes its type's maximum is negative; `%`,
`//` and indexing must then follow Python on the wrapped value (NumPy's int64/int32 arrays
wrap the same way and are the reference).  Where the value provably cannot wrap (grid
coordinates, loop counters, shapes, small constants), sema keeps knowing it is
non-negative and the generated index math has no sign corrections."""
import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln

C62 = 4611686018427387905  # 2**62 + 1
BIG = 9223372036854775807  # 2**63 - 1


def source(k, sig):
    _, argkey = _kiln.parse_signature(sig)
    return _compile._translate(k, argkey, 0).source


@kiln.jit
def wrap64(out, a):
    i = kiln.grid(1)
    if i < out.shape[0]:
        w = i * C62                         # wraps from i = 2 on
        out[i, 0] = w % 1000
        out[i, 1] = w // 1000
        out[i, 2] = (i + BIG) % 1000        # wraps from i = 1 on
        out[i, 3] = (i + BIG) // 1000
        out[i, 4] = (i << 62) % 1000
        out[i, 5] = i ** 21 % 1000
        out[i, 6] = a[2 * (i * BIG)]        # -2 * i: counts back from a's end
        acc = 0
        for j in range(i):
            acc += C62                      # a loop-carried sum wraps as well
        out[i, 7] = acc % 1000
        out[i, 8] = kiln.int64(kiln.uint64(i) * kiln.uint64(18446744073709551615)) % 1000
        out[i, 9] = a[(i * C62) & 7]        # & with a small mask: in range whatever the sign


def ref64(n, a):
    i = np.arange(n, dtype=np.int64)
    out = np.zeros((n, 10), np.int64)
    w = i * np.int64(C62)
    s = i + np.int64(BIG)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = w % 1000, w // 1000, s % 1000, s // 1000
    out[:, 4] = (i << np.int64(62)) % 1000
    out[:, 5] = i ** 21 % 1000
    out[:, 6] = a[np.int64(2) * (i * np.int64(BIG))]
    out[:, 7] = (i * np.int64(C62)) % 1000
    out[:, 8] = (i.astype(np.uint64) * np.uint64(2**64 - 1)).astype(np.int64) % 1000
    out[:, 9] = a[w & 7]
    return out


@kiln.jit
def wrap32(out, a):
    i = kiln.grid(1)
    if i < out.shape[0]:
        x = kiln.int32(i)
        w = x * 1073741825                  # int32: wraps from x = 2 on
        out[i, 0] = w % 1000
        out[i, 1] = w // 1000
        out[i, 2] = (x + 2147483647) % 1000
        out[i, 3] = (x << 30) // 1000
        out[i, 4] = a[kiln.int32(2) * (x * 2147483647)]  # -2 * x
        out[i, 5] = kiln.int32(i * 1073741825) % 1000   # no wrap in int64; the cast wraps
        y = kiln.int8(i) * 13               # int8 wraps at 128
        out[i, 6] = y % 10
        out[i, 7] = y // 10


def ref32(n, a):
    x = np.arange(n, dtype=np.int32)
    out = np.zeros((n, 8), np.int64)
    w = x * np.int32(1073741825)
    out[:, 0], out[:, 1] = w % 1000, w // 1000
    out[:, 2] = (x + np.int32(2147483647)) % 1000
    out[:, 3] = (x << np.int32(30)) // 1000
    out[:, 4] = a[np.int32(2) * (x * np.int32(2147483647))]
    out[:, 5] = (np.arange(n, dtype=np.int64) * 1073741825).astype(np.int32) % 1000
    y = x.astype(np.int8) * np.int8(13)
    out[:, 6], out[:, 7] = y % 10, y // 10
    return out


@pytest.mark.parametrize("kern,ref", [(wrap64, ref64), (wrap32, ref32)], ids=["int64", "int32"])
@pytest.mark.parametrize("debug", [False, True])
def test_wrapped_values_follow_python(rng, kern, ref, debug):
    n = 40
    a = rng.integers(-1000, 1000, 2 * n)
    k = kiln.jit(debug=True)(kern.py_func) if debug else kern
    out = np.zeros_like(ref(n, a))
    k[2, 32](out, a)
    np.testing.assert_array_equal(out, ref(n, a))


@kiln.jit
def fast(out, a, b, c):
    i = kiln.grid(1)
    t = kiln.blockIdx.x * kiln.blockDim.x + kiln.threadIdx.x
    if i < a.shape[0] and t < a.shape[0] - 1:
        out[i] = a[i + 1] + a[t] + b[i % b.shape[0]] + b[(i * 3 + 1) // 2 % b.shape[0]]
        for k in range(c.shape[1] - 1):
            out[i] += c[i % c.shape[0], k + 1] + c[0, (k + 2) % c.shape[1]]
        out[i] += b[(i + kiln.gridsize(1)) % b.shape[0]] + b[(i & 3) << 3]
        for q in range(16):
            out[i] += b[q * 3 + 1]


@kiln.jit
def flat(out, a, n):
    i, j = kiln.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i * out.shape[1] + j]


def test_bounded_arithmetic_keeps_its_fast_form():
    # grid coordinates, thread and block indices, loop counters, shapes and small
    # constants cannot wrap: no negative-index wrap, no sign-corrected % or //
    src = source(fast, "void(float64[::1], float64[::1], float64[::1], float64[:, ::1])")
    body = src[src.index("#line"):]  # the kernel, not the runtime's helpers
    assert "kiln_wrap(" not in body
    assert "kiln_mod_i64" not in body and "kiln_fdiv_i64" not in body
    assert "kiln_mod_nn" in body and "kiln_fdiv_nn" in body
    # a product with a shape, whose bound is int64's maximum, could wrap: it keeps the wrap
    src = source(flat, "void(float64[:, ::1], float64[::1], int64)")
    assert "kiln_wrap(" in src[src.index("#line"):]


def test_fast_form_runs(rng):
    a, b, c = rng.random(300), rng.random(50), rng.random((7, 9))
    out = np.zeros(300)
    fast[3, 128](out, a, b, c)
    i = np.arange(299)
    ref = a[i + 1] + a[i] + b[i % 50] + b[(i * 3 + 1) // 2 % 50]
    for k in range(8):
        ref = ref + c[i % 7, k + 1] + c[0, (k + 2) % 9]
    ref = ref + b[(i + 384) % 50] + b[(i & 3) << 3]
    for q in range(16):
        ref = ref + b[q * 3 + 1]
    np.testing.assert_allclose(out[:299], ref, rtol=1e-12)


@kiln.jit
def strided(out, a, s):
    # s: a stop of unknown sign, so only the step's sign keeps j non-negative
    for j in range(kiln.threadIdx.x, s, kiln.blockDim.x):
        if kiln.blockIdx.x == 0:
            out[0, j] = a[j] * 2
    for j in range(kiln.grid(1), s, kiln.gridsize(1)):
        out[1, j] = a[j]
    for j in range(kiln.grid(1), s, kiln.blockDim.x * kiln.gridDim.x):
        out[2, j] = a[j] + 1.0


@kiln.jit
def strided_unknown(out, a, s):
    for j in range(kiln.threadIdx.x, s, s):    # s may be negative: j may count down past 0
        out[0, j] = a[j]


def test_loops_striding_by_launch_dimensions_count_up():
    # a step of blockDim, gridDim, gridsize() or their product is at least 1, so a loop
    # from a non-negative start only counts up: its index needs no negative-index wrap
    sig = "void(float64[:, ::1], float64[::1], int64)"
    body = source(strided, sig)
    assert "kiln_wrap(" not in body[body.index("#line"):]
    body = source(strided_unknown, sig)
    assert "kiln_wrap(" in body[body.index("#line"):]


def test_loops_striding_by_launch_dimensions_run(rng):
    a = rng.random(1000)
    out = np.zeros((3, 1000))
    strided[3, 64](out, a, 1000)
    np.testing.assert_array_equal(out, [a * 2, a, a + 1.0])
    out = np.zeros((3, 1000))
    strided_unknown[1, 64](out, a, 64)
    np.testing.assert_array_equal(out[0], np.r_[a[:64], np.zeros(936)])
