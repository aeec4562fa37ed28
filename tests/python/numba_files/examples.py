# Kernels written for Numba-CUDA, as in its documentation; the only change is
# the import line ("from numba import cuda" -> "import kiln as cuda").
import math

import numpy as np
import kiln as cuda
from kiln import float32


@cuda.jit
def increment_by_one(an_array):
    pos = cuda.grid(1)
    if pos < an_array.size:
        an_array[pos] += 1


@cuda.jit
def increment_a_2D_array(an_array):
    x, y = cuda.grid(2)
    if x < an_array.shape[0] and y < an_array.shape[1]:
        an_array[x, y] += 1


@cuda.jit
def manual_index(an_array):
    tx = cuda.threadIdx.x
    ty = cuda.blockIdx.x
    bw = cuda.blockDim.x
    pos = tx + ty * bw
    if pos < an_array.size:
        an_array[pos] *= 2


@cuda.jit
def matmul(A, B, C):
    """Perform square matrix multiplication of C = A * B."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


@cuda.jit(device=True)
def polar_to_cartesian(rho, theta):
    x = rho * math.cos(theta)
    y = rho * math.sin(theta)
    return x, y


@cuda.jit
def polar_distance(rho1, theta1, rho2, theta2, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        x1, y1 = polar_to_cartesian(rho1[i], theta1[i])
        x2, y2 = polar_to_cartesian(rho2[i], theta2[i])
        out[i] = ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5


@cuda.jit("void(float32[:], float32[:], float32[:])")
def add_eager(a, b, c):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, a.shape[0], stride):
        c[i] = a[i] + b[i]


@cuda.jit
def count_positive(values, counter):
    i = cuda.grid(1)
    if i < values.size and values[i] > 0:
        cuda.atomic.add(counter, 0, 1)


@cuda.jit
def scratch(out):
    i = cuda.grid(1)
    if i < out.size:
        buf = cuda.local.array(shape=8, dtype=float32)
        for k in range(8):
            buf[k] = k * i
        s = float32(0)
        for k in range(8):
            s += buf[k]
        out[i] = s


@cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def vadd(a, b):
    return a + b


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def run():
    rng = np.random.default_rng()
    a = np.zeros(1000, np.int32)
    increment_by_one[(a.size + 31) // 32, 32](a)
    assert (a == 1).all()
    b = np.zeros((20, 30))
    increment_a_2D_array[(2, 4), (16, 8)](b)
    assert (b == 1).all()
    c = np.arange(100.0)
    manual_index[4, 32](c)
    assert (c == np.arange(100.0) * 2).all()
    A, B = rng.random((16, 16)), rng.random((16, 16))
    C = np.zeros((16, 16))
    matmul[(2, 2), (8, 8)](A, B, C)
    np.testing.assert_allclose(C, A @ B)
    n = 500
    r1, t1, r2, t2 = (rng.random(n) for _ in range(4))
    out = np.zeros(n)
    polar_distance[4, 128](r1, t1, r2, t2, out)
    x1, y1 = r1 * np.cos(t1), r1 * np.sin(t1)
    x2, y2 = r2 * np.cos(t2), r2 * np.sin(t2)
    np.testing.assert_allclose(out, np.hypot(x1 - x2, y1 - y2))
    fa, fb = rng.random(1000).astype(np.float32), rng.random(1000).astype(np.float32)
    fc = np.zeros(1000, np.float32)
    add_eager[4, 64](fa, fb, fc)
    np.testing.assert_allclose(fc, fa + fb)
    vals = rng.standard_normal(10000)
    counter = np.zeros(1, np.int64)
    count_positive[40, 256](vals, counter)
    assert counter[0] == (vals > 0).sum()
    s = np.zeros(64, np.float32)
    scratch[2, 32](s)
    np.testing.assert_allclose(s, 28 * np.arange(64))
    np.testing.assert_allclose(vadd(fa, fb), fa + fb)
    assert abs(sum_reduce(np.arange(1000.0)) - 499500.0) < 1e-9
    return "ok"
