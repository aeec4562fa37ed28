# a.T inside a kernel: a view with the axes reversed (a C array's view is F-ordered), read and
# written through, of C, F and strided 2-D arrays and a 3-D one; a 1-D array's .T is itself;
# diffed against NumPy's .T.
import numpy as np
import kiln


@kiln.jit
def read(a, out):
    i, j = kiln.grid(2)
    b = a.T
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = b[i, j] + a.T.shape[0] * 1000


@kiln.jit
def write(a):
    i, j = kiln.grid(2)
    if i < a.shape[1] and j < a.shape[0]:
        a.T[i, j] = i * 10 + j


@kiln.jit
def three(a, out):
    i = kiln.grid(1)
    t = a.T
    if i < t.shape[0]:
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k]


@kiln.jit
def flat(v, out):
    i = kiln.grid(1)
    if i < v.size:
        out[i] = v.T[i]


def main():
    base = np.arange(24.0).reshape(3, 8)
    for name, arr in (("C", base[:, :4].copy()), ("F", np.asfortranarray(base[:, :4])),
                      ("strided", base[:, ::2]), ("negative", base[::-1, 6::-2])):
        out = np.zeros((arr.shape[1], arr.shape[0]))
        read[(1, 1), (8, 8)](arr, out)
        print("read", name, np.array_equal(out, arr.T + 1000 * arr.shape[1]))
    a = np.zeros((3, 4))
    write[(1, 1), (8, 8)](a)
    print("write", np.array_equal(a.T, np.add.outer(np.arange(4) * 10, np.arange(3))))
    c = np.arange(60.0).reshape(3, 4, 5)
    o3 = np.zeros((5, 4, 3))
    three[1, 8](c, o3)
    print("3-d", np.array_equal(o3, c.T))
    v = np.arange(5.0)
    ov = np.zeros(5)
    flat[1, 8](v, ov)
    print("1-d", np.array_equal(ov, v))
