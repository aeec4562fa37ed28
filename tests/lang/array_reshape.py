# a.reshape(...) in kernels: a C-order view of a C-contiguous array, the shape an int, a tuple
# (a literal, a tuple argument) or several ints, one -1 inferred, empty arrays; writes through
# the view reach the array; a shape that does not fit is NumPy's ValueError at the line.
import numpy as np
import kiln


@kiln.jit
def copy2(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


@kiln.jit
def copy1(arr, n, got):
    y = arr.reshape(n)
    for i in range(y.shape[0]):
        got[i] = y[i]


@kiln.jit
def copy3(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                got[i, j, k] = y[i, j, k]


@kiln.jit
def write_through(a, rows):
    v = a.reshape(rows, -1)
    i = kiln.grid(1)
    if i < v.shape[0]:
        for j in range(v.shape[1]):
            v[i, j] = i * 100 + j


def main():
    cases = [(np.arange(24), (4, 6), copy2), (np.arange(24), (8, 3), copy2),
             (np.arange(24.0).reshape((1, 8, 1, 1, 3, 1)), (4, 6), copy2),
             (np.arange(25).reshape(5, 5), -1, copy1), (np.arange(25).reshape(5, 5), (-1, 5), copy2),
             (np.arange(25).reshape(5, 5), (5, -1, 5), copy3), (np.arange(25.0).reshape(5, 5), (5, 5, -1), copy3),
             (np.array([]), 0, copy1), (np.array([]), (1, 0, 2), copy3)]
    for arr, shape, k in cases:
        want = arr.reshape(shape)
        got = np.zeros(want.shape, arr.dtype)
        k[1, 1](arr, shape, got)
        print(arr.shape, "->", shape, (got == want).all() and got.shape == want.shape)
    a = np.zeros(12, np.int64)
    write_through[1, 4](a, 4)
    print("written through:", a.tolist())
    for bad in ((5, 5), (-1, -1), (7, -1)):
        try:
            copy2[1, 1](np.arange(24), bad, np.zeros((4, 6), np.int64))
        except ValueError as e:
            print("ValueError:", str(e).split(": ", 1)[1])
