# Cooperative groups (kiln.cg, Numba's cuda.cg): grid-wide barriers.  On the CPU the whole
# grid runs as fibers that all meet at g.sync() (rt_blocks.h).  Numba's sequential_rows
# example (each row reads the previous row's opposite column, written by another block);
# a multi-phase reduction across blocks (block partials in shared memory, then one block
# folds them after the grid barrier, then every thread reads the total); the barrier
# inside a device function and called on this_grid() directly; a sync reached only by some
# threads while the others have returned (Numba's sessionize example); 2-D grids; the
# kernels are marked cooperative; max_cooperative_grid_blocks; and a grid past the CPU's
# bound, refused before any thread runs.
import numpy as np
import kiln
from kiln import int32


@kiln.jit((int32[:, ::1],))
def sequential_rows(M):
    col = kiln.grid(1)
    g = kiln.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


@kiln.jit
def grid_sum(x, partial, out):
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    g = kiln.cg.this_grid()
    s[t] = x[i] if i < x.size else 0.0
    kiln.syncthreads()
    step = kiln.blockDim.x // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        kiln.syncthreads()
        step //= 2
    if t == 0:
        partial[kiln.blockIdx.x] = s[0]
    g.sync()
    # phase 2: block 0 folds the partials
    if kiln.blockIdx.x == 0 and t == 0:
        total = 0.0
        for b in range(kiln.gridDim.x):
            total += partial[b]
        partial[kiln.gridDim.x] = total
    g.sync()
    # phase 3: every thread reads the total
    if i < x.size:
        out[i] = x[i] / partial[kiln.gridDim.x]


@kiln.jit(device=True)
def barrier():
    kiln.cg.this_grid().sync()


@kiln.jit
def shift_left(a, steps):
    i = kiln.grid(1)
    for _ in range(steps):
        v = a[(i + 1) % a.size]
        barrier()
        a[i] = v
        barrier()


@kiln.jit
def sessionize(user_id, results):
    gid = kiln.grid(1)
    size = len(user_id)
    if gid >= size:
        return
    if gid == 0 or user_id[gid] != user_id[gid - 1]:
        results[gid] = gid
        grid = kiln.cg.this_grid()
        grid.sync()
        ahead = 1
        while gid + ahead < size and results[gid + ahead] == -1:
            results[gid + ahead] = gid
            ahead += 1


@kiln.jit
def transpose_in_place_2d(a):
    x, y = kiln.grid(2)
    g = kiln.cg.this_grid()
    v = a[y, x]
    g.sync()
    a[x, y] = v


@kiln.jit
def takes_grid_only(a):
    kiln.cg.this_grid()
    a[0] = 1.0


@kiln.jit
def plain(a):
    a[0] = kiln.grid(1)


def main():
    A = np.zeros((64, 64), dtype=np.int32)
    sequential_rows[64 // 8, 8](A)
    print("sequential_rows:", (A == np.tile(np.arange(64), (64, 1)).T).all())

    x = np.arange(1, 301, dtype=np.float64)
    partial = np.zeros(6)
    out = np.zeros(300)
    grid_sum[5, 64](x, partial, out)
    print("grid sum:", partial[5], np.allclose(out, x / x.sum()), partial[:5].tolist())

    a = np.arange(40, dtype=np.int64)
    shift_left[5, 8](a, 3)
    print("device-function barrier:", a[:6].tolist(), a[-3:].tolist())

    ids = np.array([1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 5])
    res = np.full(len(ids), -1, dtype=np.int64)
    sessionize.forall(len(ids))(ids, res)
    print("sessionize:", res.tolist())

    m = np.arange(64, dtype=np.float32).reshape(8, 8)
    transpose_in_place_2d[(2, 2), (4, 4)](m)
    print("2-D grid:", (m == np.arange(64, dtype=np.float32).reshape(8, 8).T).all())

    z = np.zeros(1)
    takes_grid_only[1, 1](z)
    plain[1, 1](z)
    coop = [e.cooperative for k in (sequential_rows, takes_grid_only, plain)
            for e in k.overloads.values()]
    print("cooperative:", coop)
    e = sequential_rows.overloads[(int32[:, ::1],)]
    print("max blocks:", e.max_cooperative_grid_blocks(256), e.max_cooperative_grid_blocks((16, 16)),
          e.max_cooperative_grid_blocks((16, 4, 4)), sequential_rows.max_cooperative_grid_blocks(32))

    big = np.zeros((2, 1024 * 17), dtype=np.int32)
    sequential_rows[17, 1024](big)
