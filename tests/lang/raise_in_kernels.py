# raise in kernels and device functions: a global exception class, alone or called with
# constants, is raised on the host after the launch (with or without debug=True), worded as
# Numba's ("In function 'f', file F, line N, tid=[...] ctaid=[...]: message"), or with the
# place as a note when the first argument is not a string; other raises are CompileErrors
import re

import numpy as np
import kiln


class MyError(Exception):
    pass


class TwoArgs(Exception):
    def __init__(self, code, what):
        super().__init__(code, what)


@kiln.jit("void(int32)")
def plain(x):
    if x == 1:
        raise MyError
    elif x == 2:
        raise MyError("foo")
    elif x == 3:
        raise ValueError('it is "three"', -3, 2.5, True, None)


@kiln.jit(device=True)
def check(a, i):
    if a[i] < 0:
        raise TwoArgs(7, "negative")
    return a[i] * 2


@kiln.jit
def through_device_function(r, a):
    i = kiln.grid(1)
    if i < a.size:
        r[i] = check(a, i)
        r[i] += 1          # a raise in a device function leaves it, not the kernel


@kiln.jit
def at_position(a):
    # only kiln.grid(): the CPU runs the grid as one flat loop; the message still names the
    # thread and block, as the GPU would
    x, y = kiln.grid(2)
    if x < a.shape[0] and y < a.shape[1] and a[x, y] < 0:
        raise ValueError("negative")


def show(e):
    # the file's directory differs between checkouts
    print(type(e).__name__, re.sub(r"file \S*/", "file ", str(e)), e.args[1:])


def main():
    plain[1, 1](0)
    for v in (1, 2, 3):
        try:
            plain[1, 1](v)
        except (MyError, ValueError) as e:
            show(e)
    a = np.array([1.0, 2.0, -1.0, 4.0])
    r = np.zeros(4)
    try:
        through_device_function[1, 4](r, a)
    except TwoArgs as e:
        print(type(e).__name__, e.args[0], e.args[1:], e.__notes__[0].split(",")[0])
    print(r[[0, 1, 3]].tolist())
    g = np.zeros((40, 40))
    g[21, 6] = -1
    try:
        at_position[(8, 2), (4, 32)](g)
    except ValueError as e:
        show(e)
    for body in ("raise 5", "x = ValueError\n    raise x", "raise ValueError(n)",
                 "raise", "raise NoSuchError", "raise ValueError from None",
                 "raise ValueError(msg='a')"):
        src = {}
        exec(f"def bad(n):\n    {body}\n", {}, src)
        try:
            kiln.jit("void(int64)")(src["bad"])
        except kiln.CompileError as e:
            print(str(e).splitlines()[0].split(": error: ")[1])
