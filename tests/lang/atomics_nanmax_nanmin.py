# kiln.atomic.nanmax / nanmin (Numba's cuda.atomic.nanmax / nanmin): a NaN is a missing value on
# either side (the stored one is replaced, a NaN given is ignored), unlike max and min; on
# integers they are max and min.  Each returns the old value.  Diffed against np.nanmax.
import numpy as np
import kiln


@kiln.jit
def reduce_all(vals, out, old):
    i = kiln.grid(1)
    if i < vals.size:
        kiln.atomic.nanmax(out, 0, vals[i])
        kiln.atomic.nanmin(out, 1, vals[i])
        kiln.atomic.max(out, 2, vals[i])
    if i == 0:
        old[0] = kiln.atomic.nanmax(out, 3, 5.0)


@kiln.jit
def ints(vals, out):
    i = kiln.grid(1)
    if i < vals.size:
        kiln.atomic.nanmax(out, 0, vals[i])
        kiln.atomic.nanmin(out, 1, vals[i])


def main():
    for dt in (np.float32, np.float64):
        v = np.array([3.0, np.nan, -7.5, 12.0, np.nan, 0.5], dt)
        out = np.array([np.nan, np.nan, -np.inf, np.nan], dt)
        old = np.zeros(1, dt)
        reduce_all[1, 8](v, out, old)
        print(np.dtype(dt).name, "nanmax:", out[0] == np.nanmax(v), "nanmin:", out[1] == np.nanmin(v),
              "slot 3 (was NaN):", out[3], "returned:", old[0])
    iv = np.array([4, -9, 17, 2], np.int64)
    io = np.array([0, 0], np.int64)
    ints[1, 4](iv, io)
    print("int64:", io.tolist())
