# A Python int that may not fit a narrower typed integer it meets is int64, as Numba types
# it, so that no value wraps to the typed width (hunt17): a literal returned or assigned
# after a typed value (scalars and tuple elements), a Python int given to a device
# function's parameter or default, and counters computed in loops, in arithmetic and
# min/max.  A literal that fits stays with the typed operand (NEP 50).
import numpy as np
import kiln as cuda


@cuda.jit(device=True)
def clamp_or_flag(v):
    if v >= 0:
        return v
    return -1000


@cuda.jit(device=True)
def flag_first(v):
    if v < 0:
        return -1000
    return v


@cuda.jit(device=True)
def pair(v):
    if v > 0:
        return v, 1
    return 500, 0


@cuda.jit(device=True)
def addn(x, n):
    return x + n


@cuda.jit(device=True)
def scale(x, f=1000):
    return x * f


@cuda.jit(device=True)
def sub_from(n, x):
    return n - x


@cuda.jit
def returns_and_variables(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = clamp_or_flag(x[i])
        out[i, 1] = flag_first(x[i])
        a, b = pair(x[i])
        out[i, 2] = a
        w = x[i]
        if w < 0:
            w = 1000
        out[i, 3] = w
        z = x[i]
        if z < 0:
            z = 5  # fits int8: z stays int8
        out[i, 4] = z * 30  # int8 arithmetic, as NumPy's (wraps)


@cuda.jit
def parameters(u8, out):
    i = cuda.grid(1)
    if i < u8.size:
        out[i, 0] = addn(u8[i], 300)
        out[i, 1] = scale(u8[i])
        out[i, 2] = sub_from(0, u8[i])
        out[i, 3] = addn(u8[i], -1)


@cuda.jit
def counters(x, i8, n, out):
    i = cuda.grid(1)
    if i < x.size:
        cnt = 0
        for j in range(n):
            cnt += 1
        out[i, 0] = x[i] - cnt
        big = 0
        for j in range(n):
            big += 100
        out[i, 1] = big + i8[i]
        out[i, 2] = max(big, i8[i])
        w = 0
        for j in range(n):
            w -= 1
        out[i, 3] = min(w, x[i])
        out[i, 4] = w // x[i]


def main():
    x = np.array([7, -3], np.int8)
    out = np.zeros((2, 5), np.int64)
    returns_and_variables[1, 2](x, out)
    print(out.tolist())
    u8 = np.array([1, 200], np.uint8)
    out = np.zeros((2, 4), np.int64)
    parameters[1, 2](u8, out)
    print(out.tolist())
    x = np.array([3, 200], np.uint8)
    i8 = np.array([1, -3], np.int8)
    out = np.zeros((2, 5), np.int64)
    counters[1, 2](x, i8, 10, out)
    print(out.tolist())
