# NumPy's ufuncs without a Python operator (invert/bitwise_not, logical_and/or/xor/not,
# fmax/fmin) on numbers and on arrays in a kernel, and NumPy's order of complex numbers
# (real parts first, then imaginary; NaN compares false) in the comparison ufuncs,
# maximum/minimum and fmax/fmin, and numpy.log2 of complex; diffed against NumPy
import numpy as np
import kiln


@kiln.jit
def ints(i, u8, b, r_inv, r_not, r_u8, r_b):
    np.invert(i, r_inv)
    np.bitwise_not(i, r_not)
    np.invert(u8, r_u8)
    np.invert(b, r_b)                  # of bools: logical not (Python's ~True is -2)


@kiln.jit
def logical(x, y, land, lor, lxor, lnot, z, zand, scal):
    np.logical_and(x, y, land)
    np.logical_or(x, y, lor)
    np.logical_xor(x, y, lxor)
    np.logical_not(x, lnot)
    np.logical_and(z, 1.0, zand)       # a complex number is true when a part is nonzero
    scal[0] = np.logical_xor(x[0], 0.0)
    scal[1] = np.logical_not(np.int32(0))


@kiln.jit
def fminmax(x, y, rmax, rmin, imax, i, j):
    np.fmax(x, y, rmax)                # a NaN loses to a number
    np.fmin(x, y, rmin)
    np.fmax(i, j, imax)


@kiln.jit
def complex_order(z, w, lt, le, gt, ge, mx, mn, fmx, fmn, lg2):
    np.less(z, w, lt)
    np.less_equal(z, w, le)
    np.greater(z, w, gt)
    np.greater_equal(z, w, ge)
    np.maximum(z, w, mx)
    np.minimum(z, w, mn)
    np.fmax(z, w, fmx)
    np.fmin(z, w, fmn)
    np.log2(z, lg2)


@kiln.jit
def complex_scalar(z, w, out, flags):
    out[0] = np.maximum(z, w)
    flags[0] = np.greater(z, w)


@kiln.jit
def bad_invert(x, r):
    np.invert(x, r)


def same(name, got, want):
    ok = got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6, equal_nan=True)
    print(f"{name}: {'ok' if ok else f'DIFFERENT {got!r} vs {want!r}'}")


def main():
    i = np.array([0, 1, -1, 127, -128], np.int8)
    u8 = np.array([0, 1, 255], np.uint8)
    b = np.array([True, False])
    r_inv, r_not = np.zeros(5, np.int8), np.zeros(5, np.int8)
    r_u8, r_b = np.zeros(3, np.uint8), np.zeros(2, bool)
    ints[1, 1](i, u8, b, r_inv, r_not, r_u8, r_b)
    same("invert int8", r_inv, np.invert(i))
    same("bitwise_not", r_not, np.bitwise_not(i))
    same("invert uint8", r_u8, np.invert(u8))
    same("invert bool", r_b, np.invert(b))

    x = np.array([0.0, 1.5, -2.0, np.nan])
    y = np.array([0.0, 0.0, 3.0, 1.0])
    z = np.array([0j, 1j, 2 + 0j, 0j], np.complex128)
    outs = [np.zeros(4, bool) for _ in range(4)]
    zand = np.zeros(4, np.complex128)               # a bool result stored into complex
    scal = np.zeros(2, bool)
    logical[1, 1](x, y, *outs, z, zand, scal)
    for name, got, want in zip(["logical_and", "logical_or", "logical_xor", "logical_not"],
                               outs, [np.logical_and(x, y), np.logical_or(x, y),
                                      np.logical_xor(x, y), np.logical_not(x)]):
        same(name, got, want)
    same("logical_and complex", zand, np.logical_and(z, 1.0).astype(np.complex128))
    same("logical scalars", scal, np.array([np.logical_xor(x[0], 0.0), True]))

    x = np.array([1.0, np.nan, np.nan, -0.5], np.float32)
    y = np.array([2.0, 3.0, np.nan, -1.5], np.float32)
    rmax, rmin = np.zeros(4, np.float32), np.zeros(4, np.float32)
    ii, jj = np.array([1, -5, 7]), np.array([2, -6, 7])
    imax = np.zeros(3, np.int64)
    fminmax[1, 1](x, y, rmax, rmin, imax, ii, jj)
    same("fmax", rmax, np.fmax(x, y))
    same("fmin", rmin, np.fmin(x, y))
    same("fmax int", imax, np.fmax(ii, jj))

    nan = complex(np.nan, 0)
    z = np.array([1 + 2j, 1 + 2j, 1 + 3j, 2 - 5j, nan, 1j, -0.5 - 0.5j], np.complex64)
    w = np.array([1 + 2j, 1 + 1j, 1 + 4j, 1 + 9j, 1j, nan, 0.5 + 0.5j], np.complex64)
    cmps = [np.zeros(7, bool) for _ in range(4)]
    mms = [np.zeros(7, np.complex64) for _ in range(4)]
    lg2 = np.zeros(7, np.complex64)
    with np.errstate(invalid="ignore"):
        complex_order[1, 1](z, w, *cmps, *mms, lg2)
        wants = [np.less(z, w), np.less_equal(z, w), np.greater(z, w), np.greater_equal(z, w)]
        for name, got, want in zip(["less", "less_equal", "greater", "greater_equal"], cmps, wants):
            same("complex " + name, got, want)
        wants = [np.maximum(z, w), np.minimum(z, w), np.fmax(z, w), np.fmin(z, w)]
        for name, got, want in zip(["maximum", "minimum", "fmax", "fmin"], mms, wants):
            same("complex " + name, got, want)
        same("complex log2", lg2[[0, 1, 2, 3, 5, 6]], np.log2(z)[[0, 1, 2, 3, 5, 6]])

    out = np.zeros(1, np.complex128)
    flags = np.zeros(1, bool)
    complex_scalar[1, 1](1 + 2j, 1 + 1j, out, flags)
    print("scalar maximum:", out[0], "greater:", flags[0])

    try:
        bad_invert[1, 1](np.zeros(2), np.zeros(2))
    except kiln.CompileError as e:
        print("CompileError:", str(e).splitlines()[0])
