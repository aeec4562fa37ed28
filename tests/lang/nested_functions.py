# Functions defined inside kernels and device functions (def, and `name = lambda ...`), as
# Numba-CUDA compiles them: each is a device function, the enclosing function's variables
# it reads passed at each call (so it sees their values at the call, as Python's closures
# do); writes through captured arrays reach them.  Used as a value, calling itself or a
# function nested beside it are errors.
import numpy as np
import kiln as cuda


@cuda.jit(device=True)
def dev(x):
    def sq(v):
        return v * v + x
    return sq(x)


@cuda.jit
def k(out, x, s):
    t = 2.0

    def inner(v):
        return v * t + s

    def pair(a, b=1):
        q = a + b
        return q, q * 2

    scale = lambda v, w=10: v * w + t
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = inner(x[i])
        a, b = pair(i)
        out[i, 1] = a + b
        t = 3.0
        out[i, 2] = inner(x[i])  # t is 3.0 at this call
        out[i, 3] = pair(i, 10)[1]
        out[i, 4] = scale(x[i]) + scale(x[i], 1)
        out[i, 5] = dev(x[i])

        def put(j, v):
            out[i, j] = v
        put(6, -1.0)
        acc = 0.0
        for j in range(3):
            def add(v):
                return v + j
            acc = add(acc)
        out[i, 7] = acc


a_global = 100.0


@cuda.jit
def two_levels(out, x):
    a_global = 2.0  # a local of the kernel, which a def two levels down reads (hunt20 1)

    def mid(v):
        def inner(w):
            return w * a_global
        return inner(v) + 1
    out[0] = mid(x[0])


@cuda.jit
def unrolled(o):
    # a def in a literal_unroll body: one per copy, of the copy's types (hunt20 5: "defined
    # twice")
    j = 0
    for v in cuda.literal_unroll((1, 2.5)):
        def twice(w):
            return w * 2
        o[j] = twice(v)
        j += 1


@cuda.jit(device=True)
def shaped(v, m):
    a = cuda.local.array(m, np.float64)
    for i in range(m):
        a[i] = v + i
    return a[m - 1]


@cuda.jit
def local_shapes(o, x):
    # a local constant as a local array's shape, captured or passed (hunt20 7)
    n = 4

    def g(v):
        b = cuda.local.array(n, np.float64)
        for i in range(n):
            b[i] = v * i
        return b[n - 1]
    o[0] = g(x[0])
    o[1] = shaped(x[0], n)


def as_value(o):
    def g(v):
        return v + 1
    h = g
    o[0] = h(1)


def recursive(o):
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    o[0] = fact(4)


def sibling(o):
    def a(v):
        return v + 1

    def b(v):
        return a(v) * 2
    o[0] = b(1)


def rebinds(o):
    t = 1.0

    def g():
        t = t + 1  # Python: t is g's own local, read before it is assigned
        return t
    o[0] = g()


def before(o):
    o[0] = later(1.0)  # Python: UnboundLocalError (hunt20 4: it ran)

    def later(v):
        return v * 2


def branches(o):
    if o[0] > 0:
        def g(v):
            return v + 1
    else:
        def g(v):
            return v - 1
    o[0] = g(1.0)


def extra(o):
    s = 2.0

    def f(v):
        return v * s
    o[0] = f(1.0, 100.0)  # hunt20 8: "multiple values for argument 's'", a hidden parameter


def keyword(o):
    s = 2.0

    def f(v):
        return v * s
    o[0] = f(1.0, s=100.0)


def main():
    x = np.arange(4.0)
    out = np.zeros((4, 8))
    k[1, 4](out, x, 0.5)
    want = [[v * 2 + 0.5, (i + 1) * 3, v * 3 + 0.5, (i + 10) * 2, (v * 10 + 3) + (v + 3),
             v * v + v, -1.0, 3.0] for i, v in enumerate(x)]
    print(out.tolist() == want, out[1].tolist())
    o = np.zeros(1)
    two_levels[1, 1](o, np.array([3.0]))
    print("two levels:", o[0])
    o = np.zeros(2)
    unrolled[1, 1](o)
    print("unrolled:", o.tolist())
    local_shapes[1, 1](o, np.array([2.0]))
    print("local shapes:", o.tolist())
    for f in (as_value, recursive, sibling, rebinds, before, branches, extra, keyword):
        try:
            cuda.jit(f)[1, 1](np.zeros(1))
        except cuda.CompileError as e:
            print(f.__name__, "|", str(e).splitlines()[0].split("error: ")[1])
