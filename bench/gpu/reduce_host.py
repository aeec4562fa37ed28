"""Where a small kiln.reduce call's time goes on the GPU (issue 13, point 3: the 2^20 and 2^24
sums measure the call, not memory): wall time per call, synchronised after each, of the
pieces of the call path on a CuPy array, beside CuPy's own sum.  Medians of ROUNDS rounds
of REPS calls, microseconds.

    PYTHONPATH=python python3 bench/gpu/reduce_host.py
"""
import statistics
import time

import cupy as cp
import numpy as np

import kiln
from kiln import _kiln

ROUNDS, REPS = 7, 300


@kiln.reduce
def add(p, q):
    return p + q


def per_call(fn, sync=True):
    for _ in range(20):
        fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(REPS):
            fn()
            if sync:
                cp.cuda.Device().synchronize()
        ts.append((time.perf_counter() - t0) / REPS * 1e6)
    return statistics.median(ts)


def main():
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, kiln {kiln.__version__}, cupy {cp.__version__}\n")
    print("| n | piece | us per call |")
    print("| --- | --- | ---: |")
    for lg in (20, 24):
        big = cp.random.random(1 << lg, dtype=cp.float32)
        kb = kiln.to_device(cp.asnumpy(big))
        res = cp.empty(1, cp.float32)
        kres = kiln.device_array(1, np.float32)
        rows = [
            ("synchronize alone", lambda: None),
            ("big.__cuda_array_interface__", lambda: big.__cuda_array_interface__),
            ("_kiln.foreign_view(big, 0)", lambda: _kiln.foreign_view(big, 0)),
            ("kiln.reduce(kiln array, res=kiln array)", lambda: add(kb, res=kres)),
            ("kiln.reduce(kiln array) -> host", lambda: add(kb)),
            ("kiln.reduce(big, res=res)", lambda: add(big, res=res)),
            ("kiln.reduce(big) -> host", lambda: add(big)),
            ("CuPy big.sum()", lambda: big.sum()),
            ("CuPy float(big.sum())", lambda: float(big.sum())),
        ]
        for name, fn in rows:
            print(f"| 2^{lg} | {name} | {per_call(fn):.2f} |", flush=True)
        print(f"| 2^{lg} | kiln.reduce(big, res=res), not synchronised | "
              f"{per_call(lambda: add(big, res=res), sync=False):.2f} |")
        print(f"| 2^{lg} | CuPy big.sum(), not synchronised | "
              f"{per_call(lambda: big.sum(), sync=False):.2f} |")


if __name__ == "__main__":
    main()
