# tuple arguments: homogeneous, heterogeneous, nested, empty, of arrays; indexing with
# constants and run-time indices, len, unpacking, iteration; the kernel of their leaves
import numpy as np
import kiln


@kiln.jit
def scalars(r, t):
    a, b, c = t
    s = 0
    for v in t:
        s += v
    i = kiln.grid(1)
    r[0] = len(t)
    r[1] = a * 100 + b * 10 + c
    r[2] = s
    r[3] = t[i + 1]       # a run-time index of a homogeneous tuple
    r[4] = t[-1]


@kiln.jit
def mixed(r, f, t):
    r[0] = t[0] + t[1][0] * t[1][1]
    f[0] = t[2] + t[1][0]
    r[1] = len(t[1]) + len(t[3])


@kiln.jit
def arrays(t, n):
    i = kiln.grid(1)
    if i < n:
        t[0][i] = t[1][i] + t[2][i]


def main():
    r = np.zeros(5, np.int64)
    scalars[1, 1](r, (1, 2, 3))
    print(r.tolist())
    f = np.zeros(1)
    mixed[1, 1](r, f, (7, (2, 3), 0.5, ()))
    print(r[:2].tolist(), f.tolist())
    x0 = np.zeros(8, np.float32)
    arrays[2, 4]((x0, np.arange(8, dtype=np.float32), np.full(8, 0.5, np.float32)), 8)
    print(x0.tolist())
    # new leaf types: a new specialisation of the same kernel of leaves
    scalars[1, 1](r, (np.int8(4), np.int8(5), np.int8(6)))
    print(r.tolist(), len(scalars._tuple_kernels), scalars._tuple_kernels[(None, (None,) * 3)].signatures)
    print(mixed._tuple_kernels[(None, None, (None, (None, None), None, ()))].inspect_types(file=False), end="")
