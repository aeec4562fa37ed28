# NumPy ufuncs on arrays inside a kernel, with an output array (Numba's np.sin(x, r)): the
# calling thread computes every output element, inputs broadcast as NumPy broadcasts them,
# in any layout; each result is diffed against NumPy's own ufunc on the host
import numpy as np
import kiln


@kiln.jit
def unary(x, r_sin, r_exp, r_floor, r_abs, r_sign, b_nan, r32):
    np.sin(x, r_sin)
    np.exp(x, out=r_exp)
    np.floor(x, r_floor)
    np.abs(x, r_abs)
    np.sign(x, r_sign)
    np.isnan(x, b_nan)
    np.sqrt(x, r32)  # float64 results into a float32 array: same_kind allows it


@kiln.jit
def binary(a, b, r_add, r_sub, r_mul, r_div, r_pow, r_min, r_max, r_atan2, c_lt, c_eq, c_ge):
    np.add(a, b, r_add)
    np.subtract(a, b, out=r_sub)
    np.multiply(a, b, r_mul)
    np.true_divide(a, b, r_div)
    np.power(a, b, r_pow)
    np.minimum(a, b, r_min)
    np.maximum(a, b, r_max)
    np.arctan2(a, b, r_atan2)
    np.less(a, b, c_lt)
    np.equal(a, b, c_eq)
    np.greater_equal(a, b, c_ge)


@kiln.jit
def integers(i, j, q, m, band, shl, small):
    np.floor_divide(i, j, q)
    np.remainder(i, j, m)
    np.bitwise_and(i, j, band)
    np.left_shift(i, 2, shl)
    np.add(small, 100, small)  # int8 with a Python int stays int8 (NEP 50): it wraps


@kiln.jit
def scalars(x, r, s):
    np.multiply(x, 2.5, r)           # a Python float is weak: float32 stays float32
    np.add(np.float64(0.25), x, s)   # a NumPy float64 is not: float64, stored into float32
    np.add(1, 2.5, s[0])             # only scalars in: the output row is filled


@kiln.jit(device=True)
def scale_into(a, out):
    np.multiply(a, a, out)


@kiln.jit
def in_device_function(a, out, local_sum):
    tmp = kiln.local.array(4, kiln.float64)
    scale_into(a, tmp)               # a local array as the output
    np.add(tmp, a, out)
    local_sum[0] = tmp[0] + tmp[1] + tmp[2] + tmp[3]


@kiln.jit
def other_types(h, hr, z, zr, zc):
    np.multiply(h, h, hr)            # float16 elements, rounded as NumPy rounds them
    np.multiply(z, 1j, zr)
    np.conj(z, zc)


@kiln.jit
def broadcast_fail(a, b, r):
    np.add(a, b, r)


def same(name, got, want):
    ok = got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6, equal_nan=True)
    if ok and got.dtype.kind == "f":  # the sign of a zero too: np.sign(-0.0) is +0.0
        num = ~np.isnan(want)
        ok = bool((np.signbit(got[num]) == np.signbit(want[num])).all())
    print(f"{name}: {'ok' if ok else f'DIFFERENT {got!r} vs {want!r}'}")


def main():
    x = np.array([[-1.5, 0.25, 2.0], [np.nan, -0.0, 4.5]])
    outs = [np.zeros_like(x) for _ in range(5)] + [np.zeros(x.shape, bool),
                                                    np.zeros(x.shape, np.float32)]
    xf = np.asfortranarray(x)                       # F order in, C order out
    unary[1, 1](xf, *outs)
    with np.errstate(invalid="ignore"):
        for name, got, want in zip(["sin", "exp", "floor", "abs", "sign", "isnan", "sqrt"], outs,
                                   [np.sin(x), np.exp(x), np.floor(x), np.abs(x), np.sign(x),
                                    np.isnan(x), np.sqrt(x).astype(np.float32)]):
            same(name, got, want)

    a = np.linspace(0.5, 6.0, 12).reshape(3, 4)
    b = np.array([1.0, 2.0, 0.5, 3.0])              # a row: broadcast over a's rows
    names = ["add", "sub", "mul", "div", "pow", "min", "max", "atan2"]
    outs = [np.zeros((3, 4)) for _ in names] + [np.zeros((3, 4), bool) for _ in range(3)]
    big = np.zeros((6, 8))
    outs[0] = big[::2, ::-2]                        # a strided, reversed output view
    binary[1, 1](a, b, *outs)
    wants = [a + b, a - b, a * b, a / b, a ** b, np.minimum(a, b), np.maximum(a, b),
             np.arctan2(a, b), a < b, a == b, a >= b]
    for name, got, want in zip(names + ["less", "equal", "greater_equal"], outs, wants):
        same(name, np.ascontiguousarray(got), want)
    print("the view wrote its elements only:", np.count_nonzero(big) == 12)

    col = np.array([[2.0], [3.0], [4.0]])           # a column: broadcast over a's columns
    r = np.zeros((3, 4))
    broadcast_fail[1, 1](a, col, r)
    same("column", r, a + col)

    i = np.array([7, -7, 9, -9, 0], np.int64)
    j = np.array([2, 2, -4, -4, 3], np.int64)
    q, m, band, shl = (np.zeros(5, np.int64) for _ in range(4))
    small = np.array([100, -100, 27], np.int8)
    want_small = small + np.int8(100)
    integers[1, 1](i, j, q, m, band, shl, small)
    for name, got, want in zip(["floor_divide", "remainder", "bitwise_and", "left_shift", "int8"],
                               [q, m, band, shl, small],
                               [i // j, i % j, i & j, i << 2, want_small]):
        same(name, got, want)

    x32 = np.array([1.0, -2.0, 3.5], np.float32)
    r32 = np.zeros(3, np.float32)
    s = np.zeros((2, 3), np.float32)
    scalars[1, 1](x32, r32, s)
    same("weak float", r32, x32 * 2.5)
    same("numpy scalar", s[1], (np.float64(0.25) + x32).astype(np.float32))
    same("only scalars", s[0], np.full(3, 3.5, np.float32))

    a4 = np.array([1.0, 2.0, 3.0, 4.0])
    out = np.zeros(4)
    total = np.zeros(1)
    in_device_function[1, 1](a4, out, total)
    same("device function", out, a4 * a4 + a4)
    print("local array total:", total[0])

    h = np.array([0.1, 1.5, 200.0], np.float16)
    hr = np.zeros(3, np.float16)
    z = np.array([1 + 2j, -3.5j], np.complex64)
    zr, zc = np.zeros(2, np.complex64), np.zeros(2, np.complex64)
    other_types[1, 1](h, hr, z, zr, zc)
    same("float16", hr, h * h)
    same("complex", zr, z * np.complex64(1j))
    same("conj", zc, np.conj(z))

    try:                                            # extents that do not broadcast
        broadcast_fail[1, 1](np.zeros((3, 4)), np.zeros(3), np.zeros((3, 4)))
    except ValueError as e:
        print("ValueError:", e)
    try:                                            # the output cannot broadcast either
        broadcast_fail[1, 1](np.zeros((3, 4)), np.zeros(4), np.zeros((1, 4)))
    except ValueError as e:
        print("ValueError:", e)
