# Threads of one block that wait in a loop for another thread's write (a flag set with an
# atomic, a lock taken with compare_and_swap): legal on the GPU, whose warps interleave.
# On the CPU each atomic whose result a loop reads, and each fence in a loop, lets the
# block's other threads run (rt_blocks.h's spin points), so these end with the GPU's
# results instead of spinning for ever.  Atomics whose result is dropped are no spin points.
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
