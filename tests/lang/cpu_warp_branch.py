# Warp operations inside a branch that only some warps take (legal CUDA: the branch is the
# same for every lane of a warp).  On the CPU target (blocks as fibers, rt_blocks.h) the warps
# that skip the branch must still wait at the next syncthreads() until the warp in it has
# finished: a two-level block scan (each warp scans with shuffles, warp 0 scans the warp
# totals), a broadcast of a ballot taken by warp 1 only, syncthreads_count after a branch
# with shuffles; diffed against NumPy.
import numpy as np
import kiln

TPB = 256


@kiln.jit
def block_scan(a, out):
    sums = kiln.shared.array(8, np.float64)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    lane = t % 32
    w = t // 32
    v = a[i] if i < a.size else 0.0
    d = 1
    while d < 32:  # inclusive scan inside each warp
        u = kiln.shfl_up_sync(0xffffffff, v, d)
        if lane >= d:
            v += u
        d *= 2
    if lane == 31:
        sums[w] = v
    kiln.syncthreads()
    if w == 0:  # warp 0 alone scans the 8 warp totals
        s = sums[lane] if lane < 8 else 0.0
        d = 1
        while d < 8:
            u = kiln.shfl_up_sync(0xffffffff, s, d)
            if lane >= d:
                s += u
            d *= 2
        if lane < 8:
            sums[lane] = s
    kiln.syncthreads()
    if w > 0:
        v += sums[w - 1]
    if i < a.size:
        out[i] = v


@kiln.jit
def ballot_broadcast(a, out):
    sm = kiln.shared.array(1, np.uint32)
    t = kiln.threadIdx.x
    if t == 0:
        sm[0] = 0
    kiln.syncthreads()
    if t // 32 == 1:
        b = kiln.ballot_sync(0xffffffff, a[t] > 0)
        if t == 32:
            sm[0] = b
    kiln.syncthreads()
    out[t] = sm[0]


@kiln.jit
def count_after_branch(a, out):
    t = kiln.threadIdx.x
    v = a[t]
    if t < 32:
        v += kiln.shfl_xor_sync(0xffffffff, v, 1)
    c = kiln.syncthreads_count(v > 0)
    out[t] = c


def main():
    rng = np.random.default_rng(11)
    for n in (1, 200, 256, 300, 1000):
        a = rng.random(n)
        out = np.zeros(n)
        block_scan[(n + TPB - 1) // TPB, TPB](a, out)
        want = np.concatenate([np.cumsum(a[b:b + TPB]) for b in range(0, n, TPB)])
        print("block scan", n, np.allclose(out, want))
    a = rng.integers(-3, 4, 96).astype(np.int64)
    o = np.zeros(96, np.uint32)
    ballot_broadcast[1, 96](a, o)
    want = sum(1 << l for l in range(32) if a[32 + l] > 0)
    print("ballot of warp 1 seen by all:", bool((o == want).all()))
    c = rng.integers(-2, 3, 64).astype(np.int64)
    oc = np.zeros(64, np.int32)
    count_after_branch[1, 64](c, oc)
    v = c.copy()
    v[:32] += c[np.arange(32) ^ 1]
    print("syncthreads_count after a branch of shuffles:", bool((oc == (v > 0).sum()).all()))
