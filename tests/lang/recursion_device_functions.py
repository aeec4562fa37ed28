# Recursive device functions: self recursion with an explicit signature or with the return
# type inferred from the non-recursive return (as Numba does), mutual recursion, an array
# written through the recursion; and Numba's errors for runaway recursion and a return type
# that grows with each call
import numpy as np
import kiln


@kiln.jit("int64(int64)", device=True)
def fib_sig(n):
    if n < 2:
        return n
    return fib_sig(n - 1) + fib_sig(n - 2)


@kiln.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@kiln.jit(device=True)
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


@kiln.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@kiln.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@kiln.jit(device=True)
def fill_down(a, i):
    if i < 0:
        return 0
    a[i] = i * 10
    return 1 + fill_down(a, i - 1)


@kiln.jit
def kernel(r, a, x):
    i = kiln.grid(1)
    if i < x.size:
        r[0, i] = fib_sig(x[i])
        r[1, i] = fib(x[i])
        r[2, i] = is_even(x[i])
    if i == 0:
        r[3, 0] = fill_down(a, a.size - 1)
        r[3, 1] = fact(5)


@kiln.jit(device=True)
def runaway(x):
    return runaway(x)


@kiln.jit(device=True)
def growing(n):
    if n <= 0:
        return None
    return (n, growing(n - 1))


@kiln.jit(device=True)
def other_types(x, y):
    if x > 1:
        return x + other_types(x - y, y * 0.5)
    return y


@kiln.jit(device=True)
def ack(m, n):
    # the literals 1 go to int64 parameters: a Python number converts, as in Numba
    if m == 0:
        return n + 1
    if n == 0:
        return ack(m - 1, 1)
    return ack(m - 1, ack(m, n - 1))


@kiln.jit(device=True)
def halve(x, d):
    if d == 0:
        return x
    return halve(x * 0.5, d - 1)


@kiln.jit
def literal_args(out, mn, f):
    out[0] = ack(mn[0], mn[1])
    f[0] = halve(f[1], 3)


def main():
    out, f = np.zeros(1, np.int64), np.array([0.0, 8.0])
    literal_args[1, 1](out, np.array([2, 3], np.int64), f)
    print("ack(2, 3) =", out[0], "halve(8.0, 3) =", f[0])
    x = np.array([0, 1, 2, 10, 15], dtype=np.int64)
    r = np.zeros((4, 5), dtype=np.int64)
    a = np.zeros(6, dtype=np.int64)
    kernel[1, 8](r, a, x)
    print(r.tolist())
    print(a.tolist())
    for body in ("runaway(1)", "growing(3)", "other_types(13, 1)"):
        src = {}
        exec(f"def k():\n    {body}\n", {"runaway": runaway, "growing": growing,
                                        "other_types": other_types}, src)
        try:
            kiln.jit("void()")(src["k"])
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split(": error: ")[1])
