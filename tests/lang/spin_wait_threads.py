# Threads of one block that wait in a loop for another thread's write (a flag set with an
# atomic, a lock taken with compare_and_swap): legal on the GPU, whose warps interleave.
# On the CPU each atomic whose result a loop reads, and each fence in a loop, lets the
# block's other threads run (rt_blocks.h's spin points), so these end with the GPU's
# results instead of spinning for ever.  Atomics whose result is dropped are no spin points,
# nor is a compare-and-swap that retries an update (its expected value the last swap's
# result or a fresh read).
import numpy as np
import kiln


@kiln.jit
def consumer_first(flag, data, out):
    t = kiln.threadIdx.x
    if t == 32:  # the producer, in the second warp
        data[0] = 42.0
        kiln.threadfence()
        kiln.atomic.exch(flag, 0, 1)
    if t == 0:  # the consumer, in the first: waits for the producer
        while kiln.atomic.add(flag, 0, 0) == 0:
            pass
        kiln.threadfence()
        out[0] = data[0]


@kiln.jit
def fence_spin(flag, out):
    t = kiln.threadIdx.x
    if t == 0:
        while flag[0] == 0:  # a plain read, a fence each time round
            kiln.threadfence()
        out[0] = flag[0] * 10
    if t == 63:
        kiln.atomic.exch(flag, 0, 7)


@kiln.jit
def locked_sum(lock, total, x):
    i = kiln.grid(1)
    if i < x.size:
        while kiln.atomic.compare_and_swap(lock, 0, 1) != 0:
            pass
        total[0] += x[i]  # inside the lock: no atomic needed
        kiln.threadfence()
        kiln.atomic.exch(lock, 0, 0)


@kiln.jit
def counted(a, hist):  # statement atomics in a loop: no spin point, no block mode
    i = kiln.grid(1)
    for j in range(i, a.size, kiln.gridsize(1)):
        kiln.atomic.add(hist, a[j] % 4, 1)


@kiln.jit
def cas_retry_add(bins, key, val):
    # CUDA's lock-free update: a failed swap returns what the next pass expects, so the
    # loop never waits for another thread; not a spin point (src/sema/cas_retry.c)
    i = kiln.grid(1)
    if i < key.size:
        b = key[i]
        old = bins[b]
        while True:
            assumed = old
            old = kiln.atomic.compare_and_swap(bins[b:b + 1], assumed, assumed + val[i])
            if old == assumed:
                break


@kiln.jit
def cas_reread_max(best, x):
    # the same with the expected value read from memory at each pass
    i = kiln.grid(1)
    if i < x.size:
        while True:
            cur = best[0]
            if kiln.atomic.cas(best, 0, cur, max(cur, x[i])) == cur:
                break


def spins(k, sig):
    """Whether the CPU target's code of k has spin points (whichever target runs it)."""
    from kiln import _compile, _kiln
    return "KILN_SPIN_" in _compile._translate(k, _kiln.parse_signature(sig)[1], 0).source


def main():
    flag, data, out = np.zeros(1, np.int32), np.zeros(1), np.zeros(1)
    consumer_first[1, 64](flag, data, out)
    print("consumer first:", out[0])
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    fence_spin[1, 64](flag, out)
    print("fence spin:", out[0])
    x = np.arange(1, 201, dtype=np.int64)
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int64)
    locked_sum[4, 64](lock, total, x)
    print("locked sum:", total[0], total[0] == x.sum(), "lock free:", lock[0] == 0)
    a = np.arange(1000, dtype=np.int64)
    hist = np.zeros(4, np.int64)
    counted[4, 32](a, hist)
    print("histogram:", hist.tolist())
    key = np.arange(3000, dtype=np.int64) % 7
    val = np.arange(3000, dtype=np.int64)
    bins = np.zeros(7, np.int64)
    cas_retry_add[12, 256](bins, key, val)
    print("cas retry:", (bins == np.bincount(key, weights=val, minlength=7)).all(),
          "spin points:", spins(cas_retry_add, "void(int64[::1], int64[::1], int64[::1])"))
    best = np.zeros(1, np.int64)
    xs = (np.arange(5000, dtype=np.int64) * 7919) % 10007
    cas_reread_max[20, 256](best, xs)
    print("cas reread max:", best[0] == xs.max(),
          "spin points:", spins(cas_reread_max, "void(int64[::1], int64[::1])"))
    print("lock spin points:", spins(locked_sum, "void(int32[::1], int64[::1], int64[::1])"))
