"""The GPU benchmarks' clock: CUDA-event median of reps runs after 3 warm-up runs."""
import statistics

import cupy as cp


def gpu_time(fn, reps=20):
    """Seconds that fn's GPU work takes, the median of reps runs timed with CUDA events."""
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3)
    return statistics.median(ts)


def copy_ceiling():
    """(seconds, GB/s) of a 1 GiB device-to-device copy, counting bytes read and written:
    the bandwidth the memory-bound benchmarks are measured against."""
    src = cp.random.random(1 << 28, dtype=cp.float32)
    dst = cp.empty_like(src)
    sec = gpu_time(lambda: cp.copyto(dst, src))
    return sec, 2 * src.nbytes / sec / 1e9
