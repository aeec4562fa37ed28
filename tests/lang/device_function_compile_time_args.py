# Device functions without a signature take what Numba's do besides values: a dtype, a kiln
# function or an intrinsic (kiln.atomic.add), and integer constants or tuples of them that the
# callee may use as array shapes (a specialisation per value), as test_atomics writes them.
# A device function with an explicit signature still takes values only.
import numpy as np
import kiln
from kiln import float64, int32, uint32


@kiln.jit(device=True)
def as_is(x):
    return x


@kiln.jit(device=True)
def as_int(x):
    return int(x)


@kiln.jit(device=True)
def histogram(out, idx, dtype, n, op, cast):
    sm = kiln.shared.array(n, dtype)
    t = kiln.threadIdx.x
    if t < n:
        sm[t] = 0
    kiln.syncthreads()
    op(sm, cast(idx[t] % n), 1)
    kiln.syncthreads()
    if t < n:
        out[t] = sm[t]


@kiln.jit(device=True)
def grid_fill(out, shape, dtype):
    loc = kiln.local.array(shape, dtype)
    for i in range(shape[0]):
        for j in range(shape[1]):
            loc[i, j] = i * 10 + j
    s = 0
    for i in range(shape[0]):
        for j in range(shape[1]):
            s += loc[i, j]
    out[kiln.threadIdx.x] = s


@kiln.jit
def k32(out, idx):
    histogram(out, idx, uint32, 16, kiln.atomic.add, as_is)


@kiln.jit
def k8(out, idx):
    histogram(out, idx, float64, 8, kiln.atomic.add, as_int)


@kiln.jit
def shapes(a, b):
    grid_fill(a, (2, 3), int32)
    grid_fill(b, (4, 2), float64)


@kiln.jit(["int64(int64)"], device=True)
def typed(x):
    return x


@kiln.jit
def bad(out):
    out[0] = typed(int32)


def main():
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 100, 32)
    out = np.zeros(16, np.uint32)
    k32[1, 32](out, idx)
    print("uint32, 16 bins:", (out == np.bincount(idx % 16, minlength=16)).all())
    out8 = np.zeros(8)
    k8[1, 32](out8, idx.astype(np.float64))
    print("float64, 8 bins:", (out8 == np.bincount(idx % 8, minlength=8)).all())
    a, b = np.zeros(4, np.int64), np.zeros(4)
    shapes[1, 4](a, b)
    print("local shapes from tuples:", a.tolist(), b.tolist())
    try:
        bad[1, 1](np.zeros(1, np.int64))
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
