# A field of an array of records as an array: a["f"] and a.f (Numba's field views), read,
# written element by element, given to atomics, on a strided record array and a 2-D one;
# a packed record whose field is not a whole number of its items apart is an error
import numpy as np
import kiln

CELL = np.dtype([("count", np.int32), ("msum", np.float64), ("z", np.complex64)], align=True)


@kiln.jit
def bins(keys, cells):
    i = kiln.grid(1)
    if i < keys.size:
        kiln.atomic.add(cells["count"], keys[i], 1)


@kiln.jit
def fill(cells, grid2):
    i = kiln.grid(1)
    if i < cells.size:
        cells["msum"][i] = 0.5 * i
        m = cells.z
        m[i] = complex(i, -i)
    if i < grid2.shape[0]:
        g = grid2["count"]
        for j in range(grid2.shape[1]):
            g[i, j] = i * 10 + j


def main():
    keys = np.array([0, 1, 1, 3, 1], np.int32)
    cells = np.zeros(4, CELL)
    bins[1, 32](keys, cells)
    print(cells["count"].tolist())
    big = np.zeros(8, CELL)
    grid2 = np.zeros((3, 2), CELL)
    fill[1, 32](big[::2], grid2)
    print(big["msum"].tolist())
    print(big["z"].tolist())
    print(grid2["count"].tolist())
