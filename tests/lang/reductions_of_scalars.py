# NumPy's reductions of a scalar, which NumPy reduces as a 0-d array (a 0-d global array
# is a scalar in kiln): Numba's test_array_reductions unrolls over such tuples
import warnings

import numpy as np
import kiln
from kiln import literal_unroll

CASES = (np.int64([1, 0, 2]), np.array(0), np.array(3.5), np.float64([]),
         np.float64([np.nan, 0.0]))


@kiln.jit
def k(out, x):
    i = 0
    for c in literal_unroll(CASES):
        out[0, i] = np.count_nonzero(c)
        out[1, i] = np.all(c)
        out[2, i] = np.any(c)
        out[3, i] = np.sum(c)
        out[4, i] = np.mean(c)
        out[5, i] = np.var(c)
        out[6, i] = np.nansum(c)
        i += 1
    out[7, 0] = np.max(x)
    out[7, 1] = np.std(x)
    out[7, 2] = np.prod(3)
    out[7, 3] = np.min(2.5)
    out[7, 4] = np.nanmax(np.float32(1.5))


@kiln.jit
def method(out, x):
    out[0] = x.sum()


def main():
    out = np.zeros((8, 5))
    x = np.int8(-3)
    k[1, 1](out, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [[f(c) for c in CASES] for f in (np.count_nonzero, np.all, np.any, np.sum,
                                                np.mean, np.var, np.nansum)]
    want.append([np.max(x), np.std(x), np.prod(3), np.min(2.5), np.nanmax(np.float32(1.5))])
    want = np.array(want, dtype=float)
    print(out.tolist())
    print("as NumPy:", np.array_equal(out, want, equal_nan=True))
    try:
        method[1, 1](out[0], x)
    except kiln.CompileError as e:
        print("CompileError:", e)
