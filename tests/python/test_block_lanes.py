"""Block lanes (src/emit/plan.h, plan_block_lanes): a kernel with shared memory and barriers
that every thread of its block meets runs each block as lane loops over its threads, a
barrier between two of them, instead of a fiber per thread.  Each kernel here is checked
against NumPy on fresh random inputs, at several block shapes, through both CPU tiers, and
the generated C says which way it ran."""
import numpy as np
import pytest

import kiln

TIERS = ["0", "tcc"]


def _jit(monkeypatch, tiers, fn):
    monkeypatch.setenv("KILN_TIERS", tiers)
    return kiln.jit(target="cpu", cache=False)(fn)


def _lanes(k):
    return "kiln_blanes_(" in k.inspect_source()


def _tree_sum(res, a):
    # the CUDA samples' reduction: a grid-stride partial per thread, a tree in shared memory
    s = kiln.shared.array(256, kiln.float64)
    tid = kiln.threadIdx.x
    i = kiln.grid(1)
    acc = 0.0
    stride = kiln.gridsize(1)
    while i < a.size:
        acc += a[i]
        i += stride
    s[tid] = acc
    kiln.syncthreads()
    step = kiln.blockDim.x // 2
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        kiln.syncthreads()
        step //= 2
    if tid == 0:
        kiln.atomic.add(res, 0, s[0])


@pytest.mark.parametrize("tiers", TIERS)
@pytest.mark.parametrize("n, grid, block", [(1, 1, 1), (1000, 3, 256), (1 << 16, 64, 128),
                                            (100003, 7, 32)])
def test_tree_reduction(monkeypatch, tiers, rng, n, grid, block):
    k = _jit(monkeypatch, tiers, _tree_sum)
    a = rng.random(n)
    res = np.zeros(1)
    k[grid, block](res, a)
    np.testing.assert_allclose(res[0], a.sum(), rtol=1e-12)
    assert _lanes(k)
    # the grid-stride while is a lane for loop: passes over a prefix of the x lanes
    assert "const i64 nx_ = sp" in k.inspect_source()


TILE = 16


def _tiled_matmul(A, B, C):
    # the Numba-CUDA documentation's fast_matmul
    sA = kiln.shared.array(shape=(TILE, TILE), dtype=kiln.float32)
    sB = kiln.shared.array(shape=(TILE, TILE), dtype=kiln.float32)
    x, y = kiln.grid(2)
    tx = kiln.threadIdx.x
    ty = kiln.threadIdx.y
    tmp = np.float32(0.0)
    for i in range((A.shape[1] + TILE - 1) // TILE):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TILE]
        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TILE, x]
        kiln.syncthreads()
        for j in range(TILE):
            tmp += sA[ty, j] * sB[j, tx]
        kiln.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@pytest.mark.parametrize("tiers", TIERS)
@pytest.mark.parametrize("m, kk, n", [(16, 16, 16), (100, 37, 51), (64, 130, 33)])
def test_tiled_matmul(monkeypatch, tiers, rng, m, kk, n):
    k = _jit(monkeypatch, tiers, _tiled_matmul)
    A = rng.random((m, kk), np.float32)
    B = rng.random((kk, n), np.float32)
    # F-ordered and strided operands too: the lanes' accesses follow the strides
    for a, b in ((A, B), (np.asfortranarray(A), B[:, ::1]), (A, np.asfortranarray(B))):
        C = np.full((m, n), np.nan, np.float32)
        k[((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), (TILE, TILE)](a, b, C)
        np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4)
    assert _lanes(k)


def _neighbours(a, out):
    # a value kept across barriers (v, one per thread) and a shift through shared memory:
    # wrong if a thread read its neighbour's slot before the neighbour wrote it
    s = kiln.shared.array(0, kiln.float64)  # dynamic: the launch's 4th value
    t = kiln.threadIdx.x + kiln.blockDim.x * (kiln.threadIdx.y + kiln.blockDim.y * kiln.threadIdx.z)
    nt = kiln.blockDim.x * kiln.blockDim.y * kiln.blockDim.z
    b = kiln.blockIdx.x
    g = b * nt + t
    v = 0.0
    if g < a.size:
        v = a[g]
    s[t] = v
    kiln.syncthreads()
    w = s[(t + 1) % nt]
    kiln.syncthreads()
    s[t] = w * 2.0
    kiln.syncthreads()
    if g < out.size:
        out[g] = s[(t + nt - 1) % nt] + v


@pytest.mark.parametrize("tiers", TIERS)
@pytest.mark.parametrize("block", [(64, 1, 1), (8, 4, 2), (1, 1, 1), (5, 3, 7), (32, 32, 1)])
def test_values_across_barriers_and_3d_blocks(monkeypatch, tiers, rng, block):
    k = _jit(monkeypatch, tiers, _neighbours)
    nt = block[0] * block[1] * block[2]
    nb = 5
    a = rng.random(nb * nt - 3)
    out = np.full(a.size, np.nan)
    k[nb, block, 0, nt * 8](a, out)
    pad = np.concatenate([a, np.zeros(3)]).reshape(nb, nt)
    np.testing.assert_allclose(out, (pad * 3.0).ravel()[:a.size])
    assert _lanes(k)


def _histogram(hist, x, nbins):
    # a block's private histogram in shared memory, merged with one atomic per bin
    h = kiln.shared.array(64, kiln.int64)
    t = kiln.threadIdx.x
    if t < 64:
        h[t] = 0
    kiln.syncthreads()
    for i in range(kiln.grid(1), x.size, kiln.gridsize(1)):
        kiln.atomic.add(h, x[i] % nbins, 1)
    kiln.syncthreads()
    if t < nbins:
        kiln.atomic.add(hist, t, h[t])


@pytest.mark.parametrize("tiers", TIERS)
def test_shared_histogram(monkeypatch, tiers, rng):
    k = _jit(monkeypatch, tiers, _histogram)
    x = rng.integers(0, 1 << 30, 200001)
    hist = np.zeros(64, np.int64)
    k[9, 128](hist, x, 64)
    np.testing.assert_array_equal(hist, np.bincount(x % 64, minlength=64))
    assert _lanes(k)  # the grid-stride loop is a lane for loop over the block's x lanes


def _strided_sums(out, a):
    # grid-stride loops over the block's x lanes: their start a thread's x position
    # (through a local assigned once, or threadIdx.x itself), the step gridsize(1), a
    # constant or 1
    s = kiln.shared.array(shape=(4, 32), dtype=kiln.float64)
    tx = kiln.threadIdx.x
    ty = kiln.threadIdx.y
    start = tx + kiln.blockIdx.x * kiln.blockDim.x
    acc = 0.0
    for i in range(start, a.shape[1], kiln.gridsize(1)):
        acc += a[ty, i]
    for i2 in range(kiln.threadIdx.x, a.shape[1], 5):
        acc += 2.0 * a[ty, i2]
    for j in range(tx, 7):  # lanes past 7 never enter; the others overlap
        acc += j
    s[ty, tx] = acc
    kiln.syncthreads()
    if tx == 0:
        t = 0.0
        for k in range(kiln.blockDim.x):
            t += s[ty, k]
        out[kiln.blockIdx.x, ty] = t


@pytest.mark.parametrize("tiers", TIERS)
@pytest.mark.parametrize("n, grid", [(1000, 3), (31, 2), (5000, 1), (0, 1)])
def test_grid_stride_loops_over_x_lanes(monkeypatch, tiers, rng, n, grid):
    k = _jit(monkeypatch, tiers, _strided_sums)
    a = rng.random((4, n))
    out = np.zeros((grid, 4))
    k[grid, (32, 4)](out, a)
    ref = np.zeros((grid, 4))
    for b in range(grid):
        for tx in range(32):
            ref[b] += a[:, np.arange(tx + b * 32, n, grid * 32)].sum(axis=1)
            ref[b] += 2.0 * a[:, np.arange(tx, n, 5)].sum(axis=1) + sum(range(tx, 7))
    np.testing.assert_allclose(out, ref)
    assert _lanes(k)


def _per_lane_loops(a, out):
    # loops each thread runs on its own inside the block's lane loops: thread 0's serial
    # scan, a triangular loop over a varying range with its counter read after it, a while
    # under a varying condition, break and continue
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    kiln.syncthreads()
    if t == 0:
        for k in range(1, 64):
            s[k] += s[k - 1]
    kiln.syncthreads()
    acc = 0.0
    last = -1
    for j in range(t):
        if j % 3 == 1:
            continue
        if j > 40:
            break
        acc += s[j]
        last = j
    n = 0
    if t % 2 == 1:
        v = t
        while v > 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
    out[t] = s[t] + acc + 1000.0 * last + 1e6 * n


def test_loops_each_lane_runs_on_its_own(monkeypatch, rng):
    a = rng.random(64)
    c = np.cumsum(a)
    ref = np.empty(64)
    for t in range(64):
        acc, last = 0.0, -1
        for j in range(t):
            if j % 3 == 1:
                continue
            if j > 40:
                break
            acc += c[j]
            last = j
        n = 0
        if t % 2 == 1:
            v = t
            while v > 1:
                v = v // 2 if v % 2 == 0 else 3 * v + 1
                n += 1
        ref[t] = c[t] + acc + 1000.0 * last + 1e6 * n
    for tiers in TIERS:
        k = _jit(monkeypatch, tiers, _per_lane_loops)
        out = np.zeros(64)
        k[1, 64](a, out)
        np.testing.assert_allclose(out, ref)
        assert _lanes(k)


def _return_in_a_lane_loop(a, out):
    s = kiln.shared.array(32, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    kiln.syncthreads()
    for j in range(t):
        if s[j] > 0.9:
            return  # leaves the thread: no lane loop can write that
    out[t] = s[t]


def test_a_return_in_a_threads_own_loop_keeps_fibers(monkeypatch):
    a = np.linspace(0, 1, 32)
    k = _jit(monkeypatch, "0", _return_in_a_lane_loop)
    out = np.full(32, -1.0)
    k[1, 32](a, out)
    first = int(np.argmax(a > 0.9))
    np.testing.assert_allclose(out[:first + 1], a[:first + 1])
    assert (out[first + 1:] == -1).all()
    assert not _lanes(k)


def _lanes_and_warps(out):
    s = kiln.shared.array(128, kiln.int64)
    t = kiln.threadIdx.x + kiln.blockDim.x * kiln.threadIdx.y
    s[t] = kiln.laneid
    kiln.syncthreads()
    out[kiln.blockIdx.x, t] = s[t] + 100 * (t // kiln.warpsize)


@pytest.mark.parametrize("tiers", TIERS)
def test_laneid_is_the_threads_place_in_its_warp(monkeypatch, tiers):
    # Numba-CUDA's test_simple_laneid caught laneid read from the fiber that was not running
    k = _jit(monkeypatch, tiers, _lanes_and_warps)
    out = np.zeros((2, 128), np.int64)
    k[2, (16, 8)](out)
    t = np.arange(128)
    np.testing.assert_array_equal(out, np.tile(t % 32 + 100 * (t // 32), (2, 1)))
    assert _lanes(k)


def _start_not_recomputed(out, a, m):
    # the loop's start is a thread's x plus something a lane loop does not write again
    # (m // 2, a.shape[0]): the loop runs per thread; and a loop that divides int64 values
    s = kiln.shared.array(64, kiln.float64)
    tx = kiln.threadIdx.x
    start = tx + m // 2
    acc = 0.0
    for i in range(start, a.shape[0], kiln.blockDim.x):
        acc += a[i]
    v = a.shape[0] + tx
    while v > 0:
        acc += v % 10
        v //= 10
    s[tx] = acc
    kiln.syncthreads()
    out[tx] = s[63 - tx]


@pytest.mark.parametrize("tiers", TIERS)
def test_a_start_that_is_not_written_again(monkeypatch, tiers, rng):
    k = _jit(monkeypatch, tiers, _start_not_recomputed)
    a = rng.random(1000)
    out = np.zeros(64)
    k[1, 64](out, a, 7)
    ref = np.array([a[t + 3::64].sum() + sum(int(c) for c in str(1000 + t)) for t in range(64)])
    np.testing.assert_allclose(out, ref[::-1])
    assert _lanes(k)


def _while_forms(out, a, step):
    # grid-stride whiles that are not lane for loops: the counter read after the loop, a
    # continue that would skip the step, a step from an argument (its sign unknown)
    t = kiln.threadIdx.x
    s = kiln.shared.array(32, kiln.float64)
    i = kiln.grid(1)
    acc = 0.0
    while i < a.size:
        acc += a[i]
        i += kiln.gridsize(1)
    acc += i  # the first position past the end
    j = kiln.grid(1)
    while j < a.size:
        j += 3
        if j % 2 == 0:
            continue
        acc += 2.0 * j
    m = kiln.grid(1)
    while m < a.size:
        acc += 3.0 * a[m]
        m += step
    s[t] = acc
    kiln.syncthreads()
    out[kiln.grid(1)] = s[31 - t]


@pytest.mark.parametrize("tiers", TIERS)
def test_grid_stride_whiles_that_stay_masked(monkeypatch, tiers, rng):
    k = _jit(monkeypatch, tiers, _while_forms)
    n, grid = 1000, 2
    a = rng.random(n)
    out = np.zeros(64)
    k[grid, 32](out, a, 7)
    ref = np.zeros(64)
    for g in range(64):
        i = g
        acc = a[g::64].sum()
        while i < n:
            i += 64
        acc += i
        j = g
        while j < n:
            j += 3
            if j % 2 == 0:
                continue
            acc += 2.0 * j
        acc += 3.0 * a[g::7].sum()
        ref[g] = acc
    ref = ref.reshape(2, 32)[:, ::-1].ravel()
    np.testing.assert_allclose(out, ref)
    assert _lanes(k)


def _while_in_a_loop(out, n):
    # huntG 1: the grid-stride while is reached three times; i is past n after the first
    sh = kiln.shared.array(1, kiln.int32)
    i = kiln.threadIdx.x
    for r in range(3):
        while i < n:
            out[i] += 1
            i += 4
        kiln.syncthreads()
    sh[0] = 0


def _while_start_changed(out, n):
    # huntG 2: the start's uniform part changes between the start's assignment and the loop
    sh = kiln.shared.array(1, kiln.int32)
    b = 0
    i = kiln.threadIdx.x + b
    for r in range(2):
        b += 1
    while i < n:
        out[i] += 1
        i += 4
    kiln.syncthreads()
    sh[0] = b


@kiln.jit(device=True)
def _lane_of():
    return kiln.laneid


def _laneid_in_a_device_function(out):
    # huntG 3: a device function read laneid from the fiber, which block lanes do not run
    s = kiln.shared.array(64, kiln.int64)
    t = kiln.threadIdx.x
    s[t] = _lane_of()
    kiln.syncthreads()
    out[t] = s[t]


@pytest.mark.parametrize("tiers", TIERS)
def test_what_the_first_grid_stride_whiles_got_wrong(monkeypatch, tiers):
    for fn in (_while_in_a_loop, _while_start_changed):
        k = _jit(monkeypatch, tiers, fn)
        out = np.zeros(10, np.int64)
        k[1, 4](out, 10)
        np.testing.assert_array_equal(out, np.ones(10, np.int64))
        assert _lanes(k)
    k = _jit(monkeypatch, tiers, _laneid_in_a_device_function)
    out = np.zeros(40, np.int64)
    k[1, 40](out)
    np.testing.assert_array_equal(out, np.arange(40) % 32)
    assert _lanes(k)
