# a.copy() in kernels: a thread's own C-contiguous copy of a global array (a frozen NumPy
# array, strided or not, 1-d or 2-d, float16 too), which the kernel may write without
# touching the global; a copy of an argument, whose shape the compiler does not know, is
# refused with what to write instead.
import numpy as np
import kiln

REV = np.array([1, 2, 3])[::-1]
GRID = np.arange(12.0).reshape(3, 4)[:, ::-1]
HALF = np.array([0.5, 1.5, 2.5], np.float16)


def k(out):
    i = kiln.grid(1)
    q = REV.copy()
    g = GRID.copy()
    h = HALF.copy()
    q[0] = 10 + i
    g[2, 0] += 100
    h[1] = h[1] * 2
    out[i, 0] = q[0] + q[1] + q[2]
    out[i, 1] = g[2, 0] + g[0, 3] + g.shape[1]
    out[i, 2] = h[0] + h[1] + h[2]
    out[i, 3] = REV[0] + GRID[2, 0]


def bad(a, out):
    b = a.copy()
    out[0] = b[0]


def main():
    out = np.zeros((2, 4))
    kiln.jit(k)[1, 2](out)
    print(out.tolist())
    try:
        kiln.jit(bad)[1, 1](np.ones(3), np.zeros(1))
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
