# datetime64 and timedelta64 arguments: kernels take them as int64 counts of their unit
# (the arrays' memory as it is, so writes land in them and keep their dtype); arithmetic and
# comparisons within one unit give NumPy's results: datetime - datetime is a timedelta,
# datetime - timedelta a datetime, == against a datetime64 scalar
import numpy as np
import kiln


@kiln.jit
def diff(start, end, delta):
    for i in range(kiln.grid(1), delta.size, kiln.gridsize(1)):
        delta[i] = end[i] - start[i]


@kiln.jit
def match_shift(dates, target, step, matches, shifted, later):
    for i in range(kiln.grid(1), matches.size, kiln.gridsize(1)):
        matches[i] = dates[i] == target
        shifted[i] = dates[i] - step
        later[i] = dates[i] > target


def main():
    a = np.arange("2005-02", "2005-04", dtype="datetime64[D]")
    b = a + (np.arange(a.size) * 37) % 1000
    d = np.zeros_like(a, dtype="timedelta64[D]")
    diff[1, 32](a, b, d)
    print(d.dtype, np.array_equal(d, b - a), d[:5])
    ns = np.array(["2020-01-01T00:00:00.000000001", "2021-06-15T12:00:00"], "datetime64[ns]")
    dn = np.zeros(2, "timedelta64[ns]")
    diff[1, 2](ns[::-1].copy(), ns, dn)
    print(dn, np.array_equal(dn, ns - ns[::-1]))
    target, step = a[5], a[6] - a[5]
    matches = np.zeros(a.size, np.bool_)
    shifted = np.zeros_like(a)
    later = np.zeros(a.size, np.bool_)
    match_shift[1, 32](a, target, step, matches, shifted, later)
    print([int(k) for k in matches.nonzero()[0]], np.array_equal(shifted, a - step),
          np.array_equal(later, a > target))
    try:
        diff[1, 32](a, b.astype("datetime64[h]"), d)
    except TypeError as e:
        print("TypeError:", e)
