"""kiln.fuse on the CPU against NumPy and Numba parallel, in one run (issue 11).

    PYTHONPATH=python .venv/bin/python bench/cpu_fuse.py [--quick]

Expressions (the issue's):
  rows:  np.sum(np.exp(-x*x/2) * np.where(y > 0, y, 0.1*y), axis=-1), x, y 2^14 x 2^12 float32
  chain: a 6-op elementwise chain, np.exp(x * y + 0.5) * x - y / 3.0, on the same arrays
Each is the same Python function three ways: NumPy (one temporary array per operation),
@kiln.fuse (one kernel), and @numba.njit(parallel=True) (Numba's parfors fuse array
expressions).  Results are checked against NumPy first; timings are warm medians of
BENCH_REPEATS rounds (7, 3 with --quick), the order rotating.  GB/s counts the bytes the
expression must move at least (inputs read once, the output written once).

It also measures the per-call overhead of a fused call on small arrays (8 float64
elements) next to one NumPy ufunc call and the fused function's NumPy version.
"""
import os
import sys

THREADS = int(os.environ.get("OMP_NUM_THREADS") or len(os.sched_getaffinity(0)))
for _var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
os.environ.setdefault("KILN_TIERS", "0")

import datetime  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import kiln  # noqa: E402

try:
    import numba
    from numba import njit
except ImportError:  # pragma: no cover
    sys.exit("numba is needed: .venv/bin/pip install numba")

QUICK = "--quick" in sys.argv
REPEATS = int(os.environ.get("BENCH_REPEATS") or (3 if QUICK else 7))
ROWS, COLS = (1 << 12, 1 << 12) if QUICK else (1 << 14, 1 << 12)


def rows(x, y):
    return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)


def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


def small(x, y):
    return x * y + 1.0


def timed(f, *args):
    t = time.perf_counter()
    f(*args)
    return (time.perf_counter() - t) * 1e3


def main():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    y = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    print(f"# kiln.fuse, CPU target: {datetime.date.today()}, {platform.node()}, "
          f"{THREADS} threads, numpy {np.__version__}, numba {numba.__version__}, "
          f"x, y {ROWS} x {COLS} float32, medians of {REPEATS}")
    print("| expression | NumPy ms | kiln.fuse ms | Numba parallel ms | kiln GB/s | "
          "kiln / NumPy | kiln / Numba |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for fn, out_bytes in ((rows, ROWS * 4), (chain, ROWS * COLS * 4)):
        impls = {"numpy": fn, "kiln": kiln.fuse(fn), "numba": njit(parallel=True, fastmath=False)(fn)}
        want = fn(x, y)
        for name, f in impls.items():
            got = f(x, y)
            assert got.dtype == want.dtype or name == "numba", (name, got.dtype)
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=name)
        times = {k: [] for k in impls}
        order = list(impls)
        for r in range(REPEATS):
            for name in order[r % 3:] + order[:r % 3]:
                times[name].append(timed(impls[name], x, y))
        med = {k: statistics.median(v) for k, v in times.items()}
        gbs = (x.nbytes + y.nbytes + out_bytes) / med["kiln"] / 1e6
        print(f"| {fn.__name__} | {med['numpy']:.1f} | {med['kiln']:.1f} | {med['numba']:.1f} | "
              f"{gbs:.1f} | {med['numpy'] / med['kiln']:.2f} | {med['numba'] / med['kiln']:.2f} |")
    # per-call overhead on small arrays
    a, b = np.ones(8), np.ones(8)
    fused = kiln.fuse(small)
    nb = njit(small)
    fused(a, b), nb(a, b)
    n = 20000 if QUICK else 100000
    rows_ = []
    for label, f, args in (("np.add(a, b) (one ufunc)", np.add, (a, b)),
                           ("NumPy x * y + 1.0", small, (a, b)),
                           ("kiln.fuse x * y + 1.0", fused, (a, b)),
                           ("Numba njit x * y + 1.0", nb, (a, b))):
        best = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                f(*args)
            best.append((time.perf_counter() - t) / n * 1e6)
        rows_.append((label, min(best)))
    print("\n| call on 8 float64 elements | us per call (best of 5) |")
    print("| --- | ---: |")
    for label, us in rows_:
        print(f"| {label} | {us:.2f} |")


if __name__ == "__main__":
    main()
