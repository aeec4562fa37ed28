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


def _early_exit_scan(a, out, stop):
    # a uniform early return (every thread of the block leaves), a varying while before
    # the barrier, and a Hillis-Steele prefix sum over the block
    s = kiln.shared.array(128, kiln.int64)
    t = kiln.threadIdx.x
    b = kiln.blockIdx.x
    if b >= stop:
        return
    v = a[b * 128 + t]
    n = 0
    while v > 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        n += 1
    s[t] = n
    kiln.syncthreads()
    d = 1
    while d < 128:
        x = 0
        if t >= d:
            x = s[t - d]
        kiln.syncthreads()
        s[t] += x
        kiln.syncthreads()
        d *= 2
    out[b * 128 + t] = s[t]


def _collatz(v):
    n = 0
    while v > 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        n += 1
    return n


@pytest.mark.parametrize("tiers", TIERS)
def test_uniform_return_varying_while_and_scan(monkeypatch, tiers, rng):
    k = _jit(monkeypatch, tiers, _early_exit_scan)
    a = rng.integers(1, 1000, 6 * 128)
    out = np.full(a.size, -1, np.int64)
    k[6, 128](a, out, 4)
    steps = np.array([_collatz(int(v)) for v in a]).reshape(6, 128)
    np.testing.assert_array_equal(out[:4 * 128], np.cumsum(steps[:4], axis=1).ravel())
    assert (out[4 * 128:] == -1).all()
    assert _lanes(k)


def _count_pred(a, out):
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    n = kiln.syncthreads_count(s[t] > 0.5)  # a barrier with a value: fibers
    out[t] = n + s[63 - t]


def _shuffle(a, out):
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    kiln.syncthreads()
    out[t] = kiln.shfl_down_sync(0xFFFFFFFF, s[t], 1)  # a warp operation: fibers


def _barrier_in_loop_bound_by_thread(a, out):
    s = kiln.shared.array(64, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    for i in range(t % 2, 2):  # a loop whose trips differ per thread, with no barrier
        s[t] += 1.0
    kiln.syncthreads()
    out[t] = s[63 - t]


def test_kernels_that_keep_fibers_or_take_lanes_give_right_results(monkeypatch, rng):
    a = rng.random(64)
    out = np.zeros(64)
    k = _jit(monkeypatch, "0", _count_pred)
    k[1, 64](a, out)
    np.testing.assert_allclose(out, (a > 0.5).sum() + a[::-1])
    assert not _lanes(k) and "kiln_bthread_" in k.inspect_source()
    k = _jit(monkeypatch, "0", _shuffle)
    k[1, 64](a, out)
    ref = np.concatenate([a[1:32], a[31:32], a[33:64], a[63:64]])
    np.testing.assert_allclose(out, ref)
    assert not _lanes(k)
    k = _jit(monkeypatch, "0", _barrier_in_loop_bound_by_thread)
    k[1, 64](a, out)
    bumped = a + np.where(np.arange(64) % 2 == 0, 2.0, 1.0)
    np.testing.assert_allclose(out, bumped[::-1])


def test_thread_positions_are_recomputed_not_stored(monkeypatch):
    # tx, ty and grid(2)'s x, y are written again where they are read: the shared tiles are
    # indexed at unit stride along the lanes (no per-thread array of positions)
    k = _jit(monkeypatch, "0", _tiled_matmul)
    A = np.ones((16, 16), np.float32)
    C = np.zeros((16, 16), np.float32)
    k[(1, 1), (16, 16)](A, A, C)
    src = k.inspect_source()
    assert (C == 16).all()
    assert "KILN_TID_X" in src and "_tx[l_]" not in src and "_x[l_]" not in src
    assert "_tmp[nl_]" in src  # the accumulator: one per thread


def _many_locals(a, out):
    s = kiln.shared.array(1024, kiln.float64)
    t = kiln.threadIdx.x
    g = kiln.blockIdx.x * kiln.blockDim.x + t
    v0 = a[g]
    v1 = v0 * 2.0
    v2 = v1 + 1.0
    v3 = v2 * v0
    s[t] = v3
    kiln.syncthreads()
    out[g] = s[1023 - t] + v0 + v1 + v2 + v3


def test_a_1024_thread_block_on_a_thread_with_a_small_stack(monkeypatch, rng):
    # the varying locals' arrays are on the stack (PLAN_BLOCK_LANE_BYTES bounds them): a
    # thread made after threading.stack_size(512 KiB) runs the largest block
    import threading
    k = _jit(monkeypatch, "0", _many_locals)
    a = rng.random(2 * 1024)
    out = np.zeros_like(a)
    err = []

    def run():
        try:
            k[2, 1024](a, out)
        except BaseException as e:  # noqa: BLE001 (reported below)
            err.append(e)

    old = threading.stack_size(512 << 10)
    try:
        th = threading.Thread(target=run)
        th.start()
        th.join(120)
    finally:
        threading.stack_size(old)
    assert not th.is_alive() and not err, err
    v3 = (a * 2 + 1) * a
    ref = v3.reshape(2, 1024)[:, ::-1].ravel() + a + 2 * a + (2 * a + 1) + v3
    np.testing.assert_allclose(out, ref)
    assert _lanes(k)
