"""Kernel shapes bench/cpu.py does not cover, on the CPU target against Numba
@njit(parallel=True) with prange, in one process: grid-stride loops on fixed grids (start
and stride locals, grid() inside range()), a row of a C array per thread (softmax, prefix
sums, matrix-vector products), guards against a local copy of the bound, 2-D histograms.
Rows with "lane mode off" keep kiln out of lane mode with a one-element local array (a
control, not a user's kernel).  Every kiln result is checked against Numba's first; medians
of REPS timed calls each, kiln and Numba interleaved; ratio = Numba ms / kiln ms.

    PYTHONPATH=python .venv/bin/python bench/cpu_shapes.py    # ONLY=substring picks rows
(Written by a helper's hunt, perf33, 2026-12-06.)
"""
import os, sys, time, statistics, math
os.environ.setdefault("KILN_TARGET", "cpu")
os.environ.setdefault("KILN_TIERS", "0")
for _v in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, str(len(os.sched_getaffinity(0))))
import numpy as np
import kiln
import numba
from numba import njit, prange

REPS = int(os.environ.get("REPS", "9"))
ONLY = os.environ.get("ONLY")


def _t(fn, sync):
    t0 = time.perf_counter()
    fn()
    if sync:
        kiln.synchronize()
    return (time.perf_counter() - t0) * 1e3


def bench(name, size, dtype, kfn, nfn, kres, nres, rtol=1e-5, atol=1e-8, reps=REPS):
    """kfn/nfn run the computation; kres/nres return the results to compare."""
    if ONLY and ONLY not in name:
        return
    kfn(); kiln.synchronize(); nfn()
    a, b = kres(), nres()
    if isinstance(a, tuple):
        ok = all(np.allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol) for x, y in zip(a, b))
    else:
        ok = np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)
    if not ok:
        print(f"MISMATCH {name}: kiln {np.asarray(a).ravel()[:6]} numba {np.asarray(b).ravel()[:6]}", flush=True)
    for _ in range(2):
        kfn(); kiln.synchronize(); nfn()
    tk, tn = [], []
    for r in range(reps):
        if r % 2 == 0:
            tk.append(_t(kfn, True)); tn.append(_t(nfn, False))
        else:
            tn.append(_t(nfn, False)); tk.append(_t(kfn, True))
    mk, mn = statistics.median(tk), statistics.median(tn)
    print(f"| {name} | {size} | {dtype} | {mk:.2f} | {mn:.2f} | {mn/mk:.2f}x |{'' if ok else ' WRONG'}"
          f"  (kiln min {min(tk):.2f} max {max(tk):.2f}; numba min {min(tn):.2f} max {max(tn):.2f})", flush=True)


rng = np.random.default_rng(33)

# ---- gridstride ----

# Grid-stride loops on fixed grids: each 32/64-lane chunk runs its whole grid-stride loop
# (stride = gridsize) before the next chunk starts.
@kiln.jit
def k_saxpy_gs(out, x, y, a):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = a * x[i] + y[i]


@kiln.jit
def k_saxpy_gs_nolanes(out, x, y, a):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    pin = kiln.local.array(1, np.float32)   # only to keep kiln out of lane mode
    pin[0] = 0
    for i in range(start, out.shape[0], stride):
        out[i] = a * x[i] + y[i]


@njit(parallel=True)
def n_saxpy(out, x, y, a):
    for i in prange(out.shape[0]):
        out[i] = a * x[i] + y[i]


# grid-stride with per-element work (Horner, degree 8)
@kiln.jit
def k_poly_gs(out, x, coef):
    for i in range(kiln.grid(1), x.shape[0], kiln.gridsize(1)):
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@kiln.jit
def k_poly_gs_locals(out, x, coef):
    start = kiln.grid(1)
    stride = kiln.gridsize(1)
    for i in range(start, x.shape[0], stride):
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@kiln.jit
def k_saxpy_gs_inline(out, x, y, a):
    for i in range(kiln.grid(1), out.shape[0], kiln.gridsize(1)):
        out[i] = a * x[i] + y[i]


@njit(parallel=True)
def n_poly(out, x, coef):
    for i in prange(x.shape[0]):
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


def main():
    N = 1 << 24
    xs = rng.standard_normal(N).astype(np.float32)
    ys = rng.standard_normal(N).astype(np.float32)
    ok, on = np.empty(N, np.float32), np.empty(N, np.float32)
    a = np.float32(2.5)
    for blocks in (64, 1024, N // 256):
        bench(f"grid-stride saxpy, {blocks}x256 threads", "2^24", "float32",
              lambda: k_saxpy_gs[blocks, 256](ok, xs, ys, a), lambda: n_saxpy(on, xs, ys, a),
              lambda: ok, lambda: on)
    bench("grid-stride saxpy, 64x256, lane mode off", "2^24", "float32",
          lambda: k_saxpy_gs_nolanes[64, 256](ok, xs, ys, a), lambda: n_saxpy(on, xs, ys, a),
          lambda: ok, lambda: on)
    bench("grid-stride saxpy, 64x256, grid(1) inside range()", "2^24", "float32",
          lambda: k_saxpy_gs_inline[64, 256](ok, xs, ys, a), lambda: n_saxpy(on, xs, ys, a),
          lambda: ok, lambda: on)
    xp = rng.uniform(-1, 1, N)
    coef = rng.standard_normal(9)
    okd, ond = np.empty(N), np.empty(N)
    for blocks in (64, 1024):
        bench(f"grid-stride Horner deg 8, {blocks}x256 threads", "2^24", "float64",
              lambda: k_poly_gs[blocks, 256](okd, xp, coef), lambda: n_poly(ond, xp, coef),
              lambda: okd, lambda: ond)

        bench(f"grid-stride Horner deg 8, start/stride locals, {blocks}x256", "2^24", "float64",
              lambda: k_poly_gs_locals[blocks, 256](okd, xp, coef), lambda: n_poly(ond, xp, coef),
              lambda: okd, lambda: ond)


main()

# ---- rowlanes ----

# Row-per-thread kernels (C order, the loop walks a row): lane mode (32 rows at once, strided)
# against the same kernel with a 1-element local array, which keeps kiln to its scalar body.
@kiln.jit
def k_cumsum(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
            out[i, j] = acc


@kiln.jit
def k_cumsum_nolanes(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        pin = kiln.local.array(1, np.float64)   # only to keep kiln out of lane mode
        pin[0] = 0.0
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
            out[i, j] = acc


@njit(parallel=True)
def n_cumsum(out, x):
    for i in prange(x.shape[0]):
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
            out[i, j] = acc


@kiln.jit
def k_softmax(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        m = x[i, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(x.shape[1]):
            e = math.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] / s


@kiln.jit
def k_softmax_nolanes(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        pin = kiln.local.array(1, np.float64)
        pin[0] = 0.0
        m = x[i, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(x.shape[1]):
            e = math.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] / s


@njit(parallel=True)
def n_softmax(out, x):
    for i in prange(x.shape[0]):
        m = x[i, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[i, j])
        s = 0.0
        for j in range(x.shape[1]):
            e = math.exp(x[i, j] - m)
            out[i, j] = e
            s += e
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] / s


@kiln.jit
def k_matvec(y, A, x):
    i = kiln.grid(1)
    if i < A.shape[0]:
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        y[i] = acc


@kiln.jit
def k_matvec_nolanes(y, A, x):
    i = kiln.grid(1)
    if i < A.shape[0]:
        pin = kiln.local.array(1, np.float64)
        pin[0] = 0.0
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        y[i] = acc


@njit(parallel=True)
def n_matvec(y, A, x):
    for i in prange(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        y[i] = acc


def main():
    R, C = 8192, 1024
    x = rng.standard_normal((R, C))
    ok, on = np.empty_like(x), np.empty_like(x)
    g = ((R + 127) // 128, 128)
    bench("prefix sum row/thread", f"{R}x{C}", "float64",
          lambda: k_cumsum[g](ok, x), lambda: n_cumsum(on, x), lambda: ok, lambda: on)
    bench("prefix sum row/thread, lane mode off", f"{R}x{C}", "float64",
          lambda: k_cumsum_nolanes[g](ok, x), lambda: n_cumsum(on, x), lambda: ok, lambda: on)
    x32 = x.astype(np.float32)
    ok, on = np.empty_like(x32), np.empty_like(x32)
    bench("softmax row/thread", f"{R}x{C}", "float32",
          lambda: k_softmax[g](ok, x32), lambda: n_softmax(on, x32), lambda: ok, lambda: on, rtol=1e-4, atol=1e-7)
    bench("softmax row/thread, lane mode off", f"{R}x{C}", "float32",
          lambda: k_softmax_nolanes[g](ok, x32), lambda: n_softmax(on, x32), lambda: ok, lambda: on, rtol=1e-4, atol=1e-7)
    ok, on = np.empty_like(x), np.empty_like(x)
    bench("softmax row/thread", f"{R}x{C}", "float64",
          lambda: k_softmax[g](ok, x), lambda: n_softmax(on, x), lambda: ok, lambda: on)
    A = rng.standard_normal((8192, 2048)).astype(np.float32)
    v = rng.standard_normal(2048).astype(np.float32)
    yk, yn = np.empty(8192, np.float32), np.empty(8192, np.float32)
    bench("matvec row/thread, C order", "8192x2048", "float32",
          lambda: k_matvec[64, 128](yk, A, v), lambda: n_matvec(yn, A, v), lambda: yk, lambda: yn, rtol=1e-3, atol=1e-3)
    bench("matvec row/thread, C order, lane mode off", "8192x2048", "float32",
          lambda: k_matvec_nolanes[64, 128](yk, A, v), lambda: n_matvec(yn, A, v), lambda: yk, lambda: yn, rtol=1e-3, atol=1e-3)


main()

# ---- guards ----

# The same kernel (Horner, degree 8, float64) with the bound written four ways.
@kiln.jit
def k_poly_shape(out, x, coef):
    i = kiln.grid(1)
    if i < x.shape[0]:
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@kiln.jit
def k_poly_local(out, x, coef):
    i = kiln.grid(1)
    n = x.shape[0]
    if i < n:
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@kiln.jit
def k_poly_param(out, x, coef, n):
    i = kiln.grid(1)
    if i < n:
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@kiln.jit
def k_poly_len(out, x, coef):
    i = kiln.grid(1)
    if i < len(x):
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


@njit(parallel=True)
def n_poly(out, x, coef):
    for i in prange(x.shape[0]):
        acc = coef[0]
        for k in range(1, 9):
            acc = acc * x[i] + coef[k]
        out[i] = acc


# blur with the guard against img.shape (lane mode) vs against locals H, W
@kiln.jit
def k_blur_shapeguard(out, img):
    x, y = kiln.grid(2)
    H = img.shape[0]
    W = img.shape[1]
    if y < img.shape[0] and x < img.shape[1]:
        acc = 0
        for dy in range(-1, 2):
            yy = min(max(y + dy, 0), H - 1)
            for dx in range(-1, 2):
                xx = min(max(x + dx, 0), W - 1)
                acc += img[yy, xx]
        out[y, x] = acc // 9


@kiln.jit
def k_blur_localguard(out, img):
    x, y = kiln.grid(2)
    H = img.shape[0]
    W = img.shape[1]
    if y < H and x < W:
        acc = 0
        for dy in range(-1, 2):
            yy = min(max(y + dy, 0), H - 1)
            for dx in range(-1, 2):
                xx = min(max(x + dx, 0), W - 1)
                acc += img[yy, xx]
        out[y, x] = acc // 9


@njit(parallel=True)
def n_blur(out, img):
    H, W = img.shape
    for y in prange(H):
        for x in range(W):
            acc = 0
            for dy in range(-1, 2):
                yy = min(max(y + dy, 0), H - 1)
                for dx in range(-1, 2):
                    xx = min(max(x + dx, 0), W - 1)
                    acc += img[yy, xx]
            out[y, x] = acc // 9


def b1(n, t=256):
    return (n + t - 1) // t


def main():
    N = 1 << 24
    xp = rng.uniform(-1, 1, N)
    coef = rng.standard_normal(9)
    ok, on = np.empty(N), np.empty(N)
    bench("Horner, if i < x.shape[0]", "2^24", "float64",
          lambda: k_poly_shape[b1(N), 256](ok, xp, coef), lambda: n_poly(on, xp, coef), lambda: ok, lambda: on)
    bench("Horner, n = x.shape[0]; if i < n", "2^24", "float64",
          lambda: k_poly_local[b1(N), 256](ok, xp, coef), lambda: n_poly(on, xp, coef), lambda: ok, lambda: on)
    bench("Horner, if i < n (n an argument)", "2^24", "float64",
          lambda: k_poly_param[b1(N), 256](ok, xp, coef, N), lambda: n_poly(on, xp, coef), lambda: ok, lambda: on)
    bench("Horner, if i < len(x)", "2^24", "float64",
          lambda: k_poly_len[b1(N), 256](ok, xp, coef), lambda: n_poly(on, xp, coef), lambda: ok, lambda: on)
    H, W = 4096, 4096
    img = rng.integers(0, 256, (H, W), dtype=np.uint8)
    ik, inb = np.empty_like(img), np.empty_like(img)
    bench("3x3 blur clamped, guard y < img.shape[0]", f"{H}x{W}", "uint8",
          lambda: k_blur_shapeguard[(b1(W, 16), b1(H, 16)), (16, 16)](ik, img), lambda: n_blur(inb, img),
          lambda: ik, lambda: inb)
    bench("3x3 blur clamped, guard y < H (local)", f"{H}x{W}", "uint8",
          lambda: k_blur_localguard[(b1(W, 16), b1(H, 16)), (16, 16)](ik, img), lambda: n_blur(inb, img),
          lambda: ik, lambda: inb)


main()

# ---- hist2d ----

NB = 64


# 2-D histogram: atomic.add on a 2-D array (kiln keeps real atomics) vs the same counts into a
# flat 1-D array (kiln gives each OpenMP thread a private copy).
@kiln.jit
def k_hist2d(h, xs, ys):
    i = kiln.grid(1)
    if i < xs.shape[0]:
        bx = int(xs[i] * NB)
        by = int(ys[i] * NB)
        kiln.atomic.add(h, (by, bx), 1)


@kiln.jit
def k_hist2d_flat(h, xs, ys):
    i = kiln.grid(1)
    if i < xs.shape[0]:
        bx = int(xs[i] * NB)
        by = int(ys[i] * NB)
        kiln.atomic.add(h, by * NB + bx, 1)


@njit(parallel=True)
def n_hist2d(xs, ys, nt):
    chunk = (xs.shape[0] + nt - 1) // nt
    local = np.zeros((nt, NB, NB), np.int64)
    for t in prange(nt):
        for i in range(t * chunk, min(xs.shape[0], (t + 1) * chunk)):
            local[t, int(ys[i] * NB), int(xs[i] * NB)] += 1
    return local.sum(axis=0)


@kiln.jit
def k_argmax(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        best = x[i, 0]
        bi = 0
        for j in range(1, x.shape[1]):
            v = x[i, j]
            if v > best:
                best = v
                bi = j
        out[i] = bi


@kiln.jit
def k_argmax_nolanes(out, x):
    i = kiln.grid(1)
    if i < x.shape[0]:
        pin = kiln.local.array(1, np.float64)
        pin[0] = 0.0
        best = x[i, 0]
        bi = 0
        for j in range(1, x.shape[1]):
            v = x[i, j]
            if v > best:
                best = v
                bi = j
        out[i] = bi


@njit(parallel=True)
def n_argmax(out, x):
    for i in prange(x.shape[0]):
        best = x[i, 0]
        bi = 0
        for j in range(1, x.shape[1]):
            v = x[i, j]
            if v > best:
                best = v
                bi = j
        out[i] = bi


def main():
    N = 1 << 24
    xs = rng.random(N, dtype=np.float32)
    ys = rng.random(N, dtype=np.float32)
    nt = numba.get_num_threads()
    res = {}
    hk = np.zeros((NB, NB), np.int64)
    hf = np.zeros(NB * NB, np.int64)

    def kh():
        hk[:] = 0
        k_hist2d[N // 256, 256](hk, xs, ys)

    def kf():
        hf[:] = 0
        k_hist2d_flat[N // 256, 256](hf, xs, ys)

    def nh():
        res["h"] = n_hist2d(xs, ys, nt)
    bench("2-D histogram 64x64, atomic.add(h, (by, bx), 1)", "2^24", "float32->int64",
          kh, nh, lambda: hk, lambda: res["h"])
    bench("2-D histogram 64x64, flat atomic.add(h, by*64+bx, 1)", "2^24", "float32->int64",
          kf, nh, lambda: hf.reshape(NB, NB), lambda: res["h"])
    R, C = 8192, 2048
    x = rng.standard_normal((R, C))
    ik, inb = np.empty(R, np.int64), np.empty(R, np.int64)
    bench("argmax row/thread", f"{R}x{C}", "float64",
          lambda: k_argmax[R // 128, 128](ik, x), lambda: n_argmax(inb, x), lambda: ik, lambda: inb)
    bench("argmax row/thread, lane mode off", f"{R}x{C}", "float64",
          lambda: k_argmax_nolanes[R // 128, 128](ik, x), lambda: n_argmax(inb, x), lambda: ik, lambda: inb)


main()
