# Shared memory and barriers on the CPU target: each block's threads run as fibers that meet
# at every syncthreads (rt_blocks.h).  A tiled matmul (2-D blocks, two barriers per tile),
# a block tree reduction (barriers inside a loop, on the threads still active), dynamic
# shared memory (the launch's 4th value), a device function with its own shared array and
# barrier, syncthreads_count/and/or, syncwarp, 3-D blocks, local arrays in each thread, an
# index error raised in one thread, and results diffed against NumPy float64.
import numpy as np
import kiln

TPB = 8


@kiln.jit
def matmul(A, B, C):
    sA = kiln.shared.array(shape=(TPB, TPB), dtype=kiln.float64)
    sB = kiln.shared.array(shape=(TPB, TPB), dtype=kiln.float64)
    x, y = kiln.grid(2)
    tx = kiln.threadIdx.x
    ty = kiln.threadIdx.y
    acc = 0.0
    for t in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + t * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + t * TPB]
        if x < B.shape[1] and ty + t * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + t * TPB, x]
        kiln.syncthreads()
        for j in range(TPB):
            acc += sA[ty, j] * sB[j, tx]
        kiln.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


@kiln.jit
def block_sums(a, out):
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    kiln.syncthreads()
    step = kiln.blockDim.x // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        kiln.syncthreads()
        step //= 2
    if t == 0:
        out[kiln.blockIdx.x] = s[0]


@kiln.jit
def reverse_dynamic(a, out):
    s = kiln.shared.array(0, dtype=kiln.int32)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    s[t] = a[i]
    kiln.syncthreads()
    out[i] = s[kiln.blockDim.x - 1 - t] * 100 + len(s)


@kiln.jit(device=True)
def rotate(v):
    s = kiln.shared.array(16, kiln.int64)
    t = kiln.threadIdx.x
    s[t] = v
    kiln.syncthreads()
    r = s[(t + 1) % kiln.blockDim.x]
    kiln.syncthreads()
    return r


@kiln.jit
def rotate_twice(a, out):
    i = kiln.grid(1)
    out[i] = rotate(rotate(a[i]))


@kiln.jit
def votes(a, out):
    i = kiln.grid(1)
    b = kiln.blockIdx.x
    c = kiln.syncthreads_count(a[i] > 0)
    every = kiln.syncthreads_and(a[i] >= 0)
    some = kiln.syncthreads_or(a[i] > 5)
    kiln.syncwarp()
    if kiln.threadIdx.x == 0:
        out[b, 0] = c
        out[b, 1] = every
        out[b, 2] = some


@kiln.jit
def cube(out):
    s = kiln.shared.array((2, 3, 4), kiln.int32)
    x, y, z = kiln.threadIdx.x, kiln.threadIdx.y, kiln.threadIdx.z
    s[z, y, x] = x + 10 * y + 100 * z
    kiln.syncthreads()
    local = kiln.local.array(4, kiln.int32)
    for k in range(4):
        local[k] = s[z, y, k]
    out[kiln.blockIdx.x, z, y, x] = local[3 - x] + 1000 * kiln.blockIdx.x


@kiln.jit(debug=True)
def out_of_bounds(a):
    s = kiln.shared.array(8, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = 1.0
    kiln.syncthreads()
    if t == 3:
        a[t + 100] = s[t]


def main():
    rng = np.random.default_rng(5)
    A, B = rng.random((19, 13)), rng.random((13, 21))
    C = np.zeros((19, 21))
    matmul[(3, 3), (TPB, TPB)](A, B, C)
    print("matmul:", np.allclose(C, A @ B, rtol=1e-12))
    a = rng.random(1000)
    out = np.zeros(16)
    block_sums[16, 64](a, out)
    print("block sums:", np.allclose(out, np.pad(a, (0, 24)).reshape(16, 64).sum(axis=1)))
    x = np.arange(12, dtype=np.int32)
    y = np.zeros(12, np.int32)
    reverse_dynamic[3, 4, 0, 4 * 4](x, y)
    print("dynamic shared:", y.tolist())
    v = np.arange(32, dtype=np.int64)
    w = np.zeros(32, np.int64)
    rotate_twice[2, 16](v, w)
    print("device function barriers:", w.reshape(2, 16)[:, :4].tolist())
    p = np.array([1, 0, 2, 0, 6, 0, 0, 0, -1, 0, 0, 0], np.int64)
    o = np.zeros((3, 3), np.int64)
    votes[3, 4](p, o)
    print("count/and/or:", o.tolist())
    q = np.zeros((2, 2, 3, 4), np.int32)
    cube[2, (4, 3, 2)](q)
    print("3-D blocks:", bool((q[1, 1, 2] == [1000 + 123, 1000 + 122, 1000 + 121, 1000 + 120]).all()))
    try:
        out_of_bounds[1, 8](np.zeros(8))
    except IndexError as e:
        print("IndexError:", e)
