# A device function may return a number on some paths and None on others, or reach its
# end (Python returns None there): Numba's Optional.  The caller asks `r is None` /
# `r is not None` at run time; a variable assigned such a result may be None, returned as
# it is, or converted to another number type; a test of `is None` before the assignment
# in a loop sees the previous iteration's value.  Statements after a return are never
# typed (Numba drops them), so an undefined name there is no error.  Each kernel's results
# are checked against the same functions run by Python.  None read as a number is 0, and a
# TypeError under debug=True.
import numpy as np
import kiln


@kiln.jit(device=True)
def find(a, v):
    for i in range(a.size):
        if a[i] == v:
            return i
    # the end: None


@kiln.jit(device=True)
def half_even(x):
    if x % 2:
        return
    return x // 2


@kiln.jit(device=True)
def passthrough(a, v):
    r = find(a, v)
    return r


@kiln.jit(device=True)
def as_float(x):
    h = half_even(x)
    f = 0.5
    f = h          # a number that may be None, converted
    if f is None:
        return None
    return f * 1.5


@kiln.jit(device=True)
def unreachable(x):
    if x > 0:
        return x
    else:
        return -x
    return never_assigned  # noqa: F821 - dropped before typing, as in Numba


def body(a, vals, pos, halves, flags, scaled, i):
    p = passthrough(a, vals[i])
    if p is None:
        pos[i] = -1
    else:
        pos[i] = p
    h = half_even(vals[i])
    flags[i] = h is not None
    halves[i] = h if h is not None else -7
    q = 0
    for j in range(2):
        if q is None:        # the previous iteration's result
            flags[i] += 10
        q = half_even(vals[i] + j)
    s = as_float(vals[i])
    scaled[i] = -1.0 if s is None else s
    u, w = half_even(vals[i] + 1), 1000   # unpacked whole
    pos[i] += w if u is None else 0
    flags[i] += unreachable(-vals[i]) * 100


@kiln.jit
def k(a, vals, pos, halves, flags, scaled):
    i = kiln.grid(1)
    if i < vals.size:
        body_(a, vals, pos, halves, flags, scaled, i)


body_ = kiln.jit(device=True)(body)


@kiln.jit
def counter(out, x):
    r = half_even(x)
    for r in range(3):  # a loop counter that may also be None (read after it): refused
        out[0] += r
    out[1] = r


@kiln.jit(debug=True)
def checked(out, x):
    out[0] = half_even(x) + 1   # debug=True: None read as a number is a TypeError


def python(a, vals):
    pos, halves, flags = (np.zeros(vals.size, np.int64) for _ in range(3))
    scaled = np.zeros(vals.size)
    g = body.__globals__
    saved = {n: g[n] for n in ("passthrough", "half_even", "as_float", "unreachable", "find")}
    try:
        for n in saved:
            g[n] = saved[n].py_func
        for i in range(vals.size):
            body(a, vals, pos, halves, flags, scaled, i)
    finally:
        g.update(saved)
    return pos, halves, flags, scaled


def main():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 20, 12)
    vals = rng.integers(0, 20, 40)
    pos, halves, flags, scaled = np.zeros(40, np.int64), np.zeros(40, np.int64), \
        np.zeros(40, np.int64), np.zeros(40)
    k[1, 64](a, vals, pos, halves, flags, scaled)
    want = python(a, vals)
    for name, got, w in zip(("pos", "halves", "flags", "scaled"), (pos, halves, flags, scaled), want):
        print(name, "matches Python" if np.array_equal(got, w) else f"differs: {got} {w}")
    print("found", int((pos >= 0).sum()), "of 40; even", int((halves != -7).sum()))
    checked[1, 1](pos, 4)
    print("checked", pos[0])
    try:
        checked[1, 1](pos, 3)
    except TypeError as e:
        print(type(e).__name__, e)
    try:
        counter[1, 1](pos, 3)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0])


if __name__ == "__main__":
    main()
