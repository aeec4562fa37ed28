# A branch whose condition is known when compiling is not typed, as Numba prunes it before
# typing: a frozen global flag (`if DEBUG:`), a device function's bool argument given as a
# constant (a specialisation per value, as Numba's literal dispatch), or its default, and
# `out is None` for a parameter that defaults to None (an arm that returns then decides
# whether the function always returns).  What
# only the dead branch does (a float index, a tuple of another type) is then no error; the
# same code in a branch that runs still is, and a bool argument that is not a constant
# keeps both branches.
import numpy as np
import kiln

DEBUG = False
VERBOSE = 1


@kiln.jit(device=True)
def pick(a, i, neg, twice=False):
    b = (i, np.uint64(i))  # noqa: the tuple's second type is uint64
    if neg:
        b = (b[0] % a.shape[0], b[1] % a.shape[0])  # uint64 % int64 is float64: a bad index
    elif twice:
        return 2 * a[b[0]]
    return a[b[0]] + a[b[1]]


@kiln.jit
def k(a, out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = pick(a, i, False) + pick(a, i, False, True)
        if DEBUG:
            out[i] = a[1.5]
        elif VERBOSE:
            out[i] += 0.5
        else:
            out[i] = a[2.5]


@kiln.jit(device=True)
def scale(a, i, out=None):
    if out is None:
        return a[i] * 2
    else:
        out[i] = a[i] * 3
        return out[i]


@kiln.jit
def optional(a, b, r):
    i = kiln.grid(1)
    if i < a.size:
        r[i] = scale(a, i) + scale(a, i, b) + scale(a, i, None)


@kiln.jit
def live(a, out):
    i = kiln.grid(1)
    out[i] = pick(a, i, True)


@kiln.jit
def runtime_flag(a, out, neg):
    i = kiln.grid(1)
    b = (i, np.uint64(i))
    if neg:
        b = (b[0] % a.shape[0], b[1] % a.shape[0])
    out[i] = a[b[1]]


def main():
    a = np.arange(8.0)
    out = np.zeros(8)
    k[1, 8](a, out)
    print(out.tolist())
    b, r = np.zeros(8), np.zeros(8)
    optional[1, 8](a, b, r)
    print(r.tolist(), b.tolist())
    for f in (live, runtime_flag):
        try:
            f[1, 8](a, out, True) if f is runtime_flag else f[1, 8](a, out)
            print("ok")
        except kiln.CompileError as e:
            print(str(e).splitlines()[0])


if __name__ == "__main__":
    main()
