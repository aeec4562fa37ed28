# rejected: *x of something that is not a tuple, *f() of a device function's result
# (unpacking repeats the expression for each item, and a device function may write), and
# zip(*t) as a for loop's iterable (the loop's iterables are written out)
import numpy as np
import kiln


@kiln.jit(device=True)
def pair(a):
    a[0] += 1
    return (1.0, 2.0)


@kiln.jit(device=True)
def add2(x, y):
    return x + y


@kiln.jit
def not_a_tuple(a):
    a[0] = add2(*a)


@kiln.jit
def device_result(a):
    a[1] = add2(*pair(a))


@kiln.jit
def zip_star(a):
    t = (a, a)
    for x, y in zip(*t):
        a[0] += x * y


def main():
    for k in (not_a_tuple, device_result, zip_star):
        try:
            k[1, 1](np.zeros(4))
        except kiln.CompileError as e:
            print(f"CompileError: {e}")
