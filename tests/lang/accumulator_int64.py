# a variable first assigned a Python int literal and later combined with a narrower
# integer type is int64, as in Numba (LANGUAGE.md): `s = 0; s += x[i]` with int32 x
# accumulated in int32 and overflowed where Python's integers do not
import numpy as np
import kiln


@kiln.jit
def total(out, x):
    s = 0
    for i in range(x.size):
        s += x[i]
    out[0] = s


@kiln.jit
def count(out, x):
    n = 0
    for i in range(x.size):
        if x[i] > 0:
            n = n + x[i]
    out[0] = n


@kiln.jit
def stays(out, x):
    v = x[0]
    if x.size > 1:  # both values reach the use below: one variable
        v = 0
    w = 1
    for i in range(2):
        w = w * 2
    out[0] = v + w


def main():
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32):
        info = np.iinfo(dt)
        x = np.full(1000, info.max, dt)
        out = np.zeros(2, np.int64)
        total[1, 1](out, x)
        count[1, 1](out[1:], x)
        print(np.dtype(dt).name, (out == 1000 * int(info.max)).all())
    x = np.full(4, 2**31 - 1, np.int32)
    out = np.zeros(1, np.int64)
    total[1, 1](out, x)
    print(out[0], 4 * (2**31 - 1))
    print(total.inspect_types(file=False), end="")
    print(count.inspect_types(file=False), end="")
    stays[1, 1](np.zeros(1, np.int32), np.ones(1, np.int32))
    print(stays.inspect_types(file=False), end="")
