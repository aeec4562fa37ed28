"""Launch overhead on the CPU target: a compiled kernel with 5 arguments (3 arrays,
a float, an int) and a one-element body, against a Numba @njit call with the same
arguments and an empty Python function, in one run.

    PYTHONPATH=python .venv/bin/python bench/launch_cpu.py
"""
import statistics
import time

import numpy as np

import kiln

N = 20000
ROUNDS = 15


@kiln.jit
def k5(a, b, c, x, n):
    i = kiln.grid(1)
    if i < n:
        c[i] = a[i] + b[i] * x


def py5(a, b, c, x, n):
    pass


def per_call(f, *args):
    f(*args)
    meds = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for _ in range(N):
            f(*args)
        meds.append((time.perf_counter() - t) / N * 1e6)
    return statistics.median(meds)


def main():
    a, b, c = (np.ones(16, np.float32) for _ in range(3))
    rows = [("empty Python function", per_call(py5, a, b, c, 2.0, 1))]
    launcher = k5[1, 1]
    rows.append(("kiln k[1, 1](...) (launcher reused)", per_call(launcher, a, b, c, 2.0, 1)))
    rows.append(("kiln k[1, 1](...) (config each call)",
                 per_call(lambda *args: k5[1, 1](*args), a, b, c, 2.0, 1)))
    try:
        from numba import njit

        @njit
        def n5(a, b, c, x, n):
            for i in range(n):
                c[i] = a[i] + b[i] * x

        rows.append(("numba @njit call", per_call(n5, a, b, c, 2.0, 1)))
    except ImportError:
        pass
    print(f"# launch overhead, median of {ROUNDS} x {N} calls, microseconds per call\n")
    print("| call | us |")
    print("| --- | ---: |")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")


if __name__ == "__main__":
    main()
