# NumPy's reductions of a whole array inside a kernel (np.sum(a), a.sum(), np.mean ...):
# the calling thread loops over every element, in any layout and number of dimensions;
# results and their types are diffed against NumPy's own on the host
import warnings

import numpy as np
import kiln


@kiln.jit
def floats(a, out):
    out[0] = np.sum(a)
    out[1] = a.sum()
    out[2] = np.prod(a)
    out[3] = np.mean(a)
    out[4] = np.var(a)
    out[5] = a.std()
    out[6] = np.min(a)
    out[7] = a.max()
    out[8] = np.amax(a)


@kiln.jit
def nans(a, out):
    out[0] = np.nansum(a)
    out[1] = np.nanprod(a)
    out[2] = np.nanmean(a)
    out[3] = np.nanvar(a)
    out[4] = np.nanstd(a)
    out[5] = np.nanmin(a)
    out[6] = np.nanmax(a)
    out[7] = np.max(a)               # a NaN propagates


@kiln.jit
def ints(b, u, iout, fout, uout):
    iout[0] = np.sum(b)              # int32 sums in int64, as NumPy does
    iout[1] = b.prod()
    iout[2] = np.min(b)
    iout[3] = np.count_nonzero(b)
    fout[0] = np.mean(b)             # float64
    fout[1] = np.var(b)
    uout[0] = np.sum(u)              # uint8 sums in uint64


@kiln.jit
def truth(a, b, c, out, count):
    out[0] = np.all(a)
    out[1] = np.any(a)
    out[2] = c.all()
    out[3] = c.any()
    out[4] = np.all(b)
    count[0] = np.count_nonzero(c)
    count[1] = np.count_nonzero(a)


@kiln.jit
def complexes(z, zout, rout):
    zout[0] = np.sum(z)
    zout[1] = np.mean(z)
    zout[2] = np.max(z)              # NumPy's lexicographic order
    zout[3] = z.prod()
    rout[0] = np.var(z)              # real
    rout[1] = np.std(z)


@kiln.jit(device=True)
def total(a):
    return a.sum() / a.size


@kiln.jit
def in_device_function(a, out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = total(a) + i


@kiln.jit
def of_empty(a, out):
    out[0] = np.sum(a)
    out[1] = np.min(a)


@kiln.jit
def with_axis(a, out):
    out[0] = np.sum(a, 0)


def same(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    ok = got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6, equal_nan=True)
    print(f"{name}: {'ok' if ok else f'DIFFERENT {got!r} vs {want!r}'}")


def main():
    a = np.array([[1.0, -2.5, 3.0], [0.5, 4.0, -0.0]])
    for name, arr in [("C", a), ("F", np.asfortranarray(a)), ("reversed view", a[::-1, ::-2])]:
        out = np.zeros(9)
        floats[1, 1](arr, out)
        same("floats " + name, out, [np.sum(arr), arr.sum(), np.prod(arr), np.mean(arr),
                                     np.var(arr), arr.std(), np.min(arr), arr.max(),
                                     np.amax(arr)])
    x = np.array([np.nan, -1.5, 2.5, np.nan, 3.0], np.float32)
    out = np.zeros(8, np.float32)
    nans[1, 1](x, out)
    same("nan reductions float32", out,
         np.array([np.nansum(x), np.nanprod(x), np.nanmean(x), np.nanvar(x), np.nanstd(x),
                   np.nanmin(x), np.nanmax(x), np.max(x)], np.float32))
    x = np.array([np.nan, np.nan])
    out = np.zeros(8)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        nans[1, 1](x, out)
        same("all NaN", out, [np.nansum(x), np.nanprod(x), np.nanmean(x), np.nanvar(x),
                              np.nanstd(x), np.nanmin(x), np.nanmax(x), np.max(x)])

    b = np.array([[3, -1], [7, 2], [0, 5]], np.int32)
    u = np.array([200, 100, 250], np.uint8)
    iout, fout, uout = np.zeros(4, np.int64), np.zeros(2), np.zeros(1, np.uint64)
    ints[1, 1](b, u, iout, fout, uout)
    same("int reductions", iout, [np.sum(b), b.prod(), np.min(b), np.count_nonzero(b)])
    same("int mean and var", fout, [np.mean(b), np.var(b)])
    same("uint8 sum", uout, [np.sum(u)])
    print("result types as NumPy's:", np.sum(b).dtype, np.sum(u).dtype, np.mean(b).dtype)

    a = np.array([0.0, -0.0, np.nan, 0.0])
    c = np.array([True, False, True])
    out, count = np.zeros(5, bool), np.zeros(2, np.int64)
    truth[1, 1](a, np.ones((2, 2)), c, out, count)
    same("all/any", out, [np.all(a), np.any(a), c.all(), c.any(), True])
    same("count_nonzero", count, [np.count_nonzero(c), np.count_nonzero(a)])

    z = np.array([1 + 2j, 3 - 1j, 1 + 5j, -2j], np.complex64)
    zout, rout = np.zeros(4, np.complex64), np.zeros(2, np.float32)
    complexes[1, 1](z, zout, rout)
    same("complex", zout, np.array([np.sum(z), np.mean(z), np.max(z), z.prod()], np.complex64))
    same("complex var and std", rout, np.array([np.var(z), np.std(z)], np.float32))

    a = np.arange(6.0)
    out = np.zeros(4)
    in_device_function[1, 4](a, out)
    same("device function", out, a.mean() + np.arange(4))

    out = np.zeros(2)
    try:
        of_empty[1, 1](np.zeros(0), out)
    except ValueError as e:
        print("ValueError:", e, "| the sum:", out[0])
    try:
        with_axis[1, 1](np.zeros((2, 2)), np.zeros(2))
    except kiln.CompileError as e:
        print("CompileError:", str(e).splitlines()[0])
