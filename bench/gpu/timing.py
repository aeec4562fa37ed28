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
