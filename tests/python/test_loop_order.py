"""The CPU entry's loop order and guard folding, planned from the kernel's accesses
(src/emit/plan.h): the innermost loop walks the unit-stride index, every grid
dimension's guard bounds become loop bounds, transposes run tiled.  Each kernel runs on
C, F, strided and negative-stride arrays, serial and parallel launches, and is compared
with NumPy; the generated source shows the order chosen."""
import re

import numpy as np
import pytest

import kiln


@kiln.jit
def st_ij(a, b):
    i, j = kiln.grid(2)
    if i >= 1 and i < a.shape[0] - 1 and j >= 1 and j < a.shape[1] - 1:
        b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@kiln.jit
def st_ji(a, b):
    j, i = kiln.grid(2)
    if i >= 1 and i < a.shape[0] - 1 and j >= 1 and j < a.shape[1] - 1:
        b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@kiln.jit
def transpose(a, b):
    i, j = kiln.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        b[j, i] = a[i, j]


@kiln.jit
def st3(a, b):
    i, j, k = kiln.grid(3)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1 and 0 < k < a.shape[2] - 1:
        b[i, j, k] = (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k] + a[i, j + 1, k]
                      + a[i, j, k - 1] + a[i, j, k + 1] - 6.0 * a[i, j, k])


@kiln.jit
def st3_rev(a, b):
    k, j, i = kiln.grid(3)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1 and 0 < k < a.shape[2] - 1:
        b[i, j, k] = (a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k] + a[i, j + 1, k]
                      + a[i, j, k - 1] + a[i, j, k + 1] - 6.0 * a[i, j, k])


@kiln.jit
def matmul(a, b, c):
    i, j = kiln.grid(2)
    if i < c.shape[0] and j < c.shape[1]:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k] * b[k, j]
        c[i, j] = s


@kiln.jit
def mixed_guard(out, a, m):
    i, j = kiln.grid(2)
    if j < a.shape[1] and i < a.shape[0] and (i + j) % m != 0:
        out[i, j] = a[i, j] * 2.0


@kiln.jit
def blocks_guard(out, a):
    # thread indices as well: the block loops, with both dimensions' bounds folded
    i, j = kiln.grid(2)
    if 1 <= i < a.shape[0] and j < a.shape[1] - 2:
        out[i, j] = a[i, j] + kiln.threadIdx.x


def layouts(rng, shape):
    """The same values as C, F, strided and negative-stride arrays."""
    base = rng.random(shape)
    big = np.zeros(tuple(2 * s + 1 for s in shape))
    strided = big[tuple(slice(1, None, 2) for _ in shape)]
    strided[...] = base
    neg = np.ascontiguousarray(base[tuple(slice(None, None, -1) for _ in shape)])
    neg = neg[tuple(slice(None, None, -1) for _ in shape)]
    return {"C": np.ascontiguousarray(base), "F": np.asfortranarray(base), "strided": strided,
            "negative": neg}


def out_like(kind, shape):
    if kind == "F":
        return np.zeros(shape, order="F")
    if kind == "strided":
        return np.zeros(tuple(3 * s for s in shape))[tuple(slice(None, None, 3) for _ in shape)]
    if kind == "negative":
        return np.zeros(shape)[tuple(slice(None, None, -1) for _ in shape)]
    return np.zeros(shape)


def stencil_ref(a):
    r = np.zeros_like(a)
    r[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return r


def grid2(n0, n1, block=(16, 16)):
    return ((n0 + block[0] - 1) // block[0], (n1 + block[1] - 1) // block[1]), block


@pytest.mark.parametrize("shape", [(7, 5), (130, 97), (300, 260)])  # serial and parallel
@pytest.mark.parametrize("kind", ["C", "F", "strided", "negative"])
def test_stencils_both_orders(rng, shape, kind):
    a = layouts(rng, shape)[kind]
    ref = stencil_ref(np.asarray(a, dtype=np.float64))
    b = out_like(kind, shape)
    st_ij[grid2(*shape)](a, b)
    np.testing.assert_allclose(b, ref, rtol=1e-13)
    b = out_like(kind, shape)
    st_ji[grid2(shape[1], shape[0])](a, b)
    np.testing.assert_allclose(b, ref, rtol=1e-13)


@pytest.mark.parametrize("shape", [(5, 3), (70, 129), (300, 200)])
@pytest.mark.parametrize("kind", ["C", "F", "strided", "negative"])
def test_transpose(rng, shape, kind):
    a = layouts(rng, shape)[kind]
    b = out_like(kind, shape[::-1])
    transpose[grid2(*shape)](a, b)
    np.testing.assert_array_equal(b, np.asarray(a).T)


@pytest.mark.parametrize("shape", [(4, 5, 6), (20, 33, 40)])
@pytest.mark.parametrize("kind", ["C", "F", "negative"])
def test_stencil_3d(rng, shape, kind):
    a = layouts(rng, shape)[kind]
    x = np.asarray(a)
    ref = np.zeros(shape)
    ref[1:-1, 1:-1, 1:-1] = (x[:-2, 1:-1, 1:-1] + x[2:, 1:-1, 1:-1] + x[1:-1, :-2, 1:-1]
                             + x[1:-1, 2:, 1:-1] + x[1:-1, 1:-1, :-2] + x[1:-1, 1:-1, 2:]
                             - 6.0 * x[1:-1, 1:-1, 1:-1])
    blk = (4, 4, 4)
    b = out_like(kind, shape)
    st3[tuple((s + 3) // 4 for s in shape), blk](a, b)
    np.testing.assert_allclose(b, ref, rtol=1e-12, atol=1e-12)
    b = out_like(kind, shape)
    st3_rev[tuple((s + 3) // 4 for s in shape[::-1]), blk](a, b)
    np.testing.assert_allclose(b, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["C", "F"])
def test_matmul(rng, kind):
    L = layouts(rng, (45, 33))
    a = L[kind]
    b = layouts(rng, (33, 70))[kind]
    c = out_like(kind, (45, 70))
    matmul[grid2(45, 70)](a, b, c)
    np.testing.assert_allclose(c, np.asarray(a) @ np.asarray(b), rtol=1e-12)


@pytest.mark.parametrize("shape", [(9, 11), (200, 300)])
def test_guards_on_every_dimension(rng, shape):
    a = rng.random(shape)
    out = np.zeros(shape)
    mixed_guard[grid2(*shape)](out, a, 3)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(out, np.where((i + j) % 3 != 0, a * 2.0, 0.0))
    out = np.zeros(shape)
    blk = (8, 4)
    blocks_guard[grid2(*shape, blk)](out, a)
    ref = np.where((i >= 1) & (j < shape[1] - 2), a + i % 8, 0.0)
    np.testing.assert_array_equal(out, ref)


def test_one_row_launch_of_a_2d_kernel(rng):
    # a 2-D kernel launched with one row in y: the planned inner dimension (y) has one
    # position, and the flat one-row loop over x runs it
    a = rng.random((50000, 3))
    b = np.zeros_like(a)
    st_ij[(50000 + 127) // 128, 128](a, b)  # j = 0 only: the guard excludes every position
    assert not b.any()
    out = np.zeros((50000, 1))
    mixed_guard[(50000 + 127) // 128, 128](out, a[:, :1], 2)
    i = np.arange(50000)[:, None]
    np.testing.assert_array_equal(out, np.where(i % 2 != 0, a[:, :1] * 2.0, 0.0))


def inner_loop(src):
    """The variable of the vectorised loop in the collapsed (2-D/3-D) nest."""
    m = re.search(r"collapse\(\d\)[^\n]*\n(?:.*\n)*?\s*_Pragma\(\"omp simd\"\)\n\s*for \(i64 (\w) ",
                  src)
    return m.group(1) if m else None


def test_plan_in_the_source():
    sig2 = "void(float64[:, ::1], float64[:, ::1])"
    # C arrays: the last index is unit stride; i is grid x in st_ij, grid y in st_ji
    assert inner_loop(st_ij.inspect_source(sig2)) == "y"
    assert inner_loop(st_ji.inspect_source(sig2)) == "x"
    sigf = "void(float64[::1, :], float64[::1, :])"
    assert inner_loop(st_ij.inspect_source(sigf)) == "x"
    assert inner_loop(st_ji.inspect_source(sigf)) == "y"
    src = transpose.inspect_source(sig2)
    assert "tb_" in src and "collapse(3)" in src  # tiled
    assert "tb_" not in st_ij.inspect_source(sig2)
    sig3 = "void(float64[:, :, ::1], float64[:, :, ::1])"
    assert inner_loop(st3.inspect_source(sig3)) == "z"
    assert inner_loop(st3_rev.inspect_source(sig3)) == "x"
    # every bound of the guard left the body: no comparison of j remains there
    body = st_ij.inspect_source(sig2).split("kiln_body(KILN_TP")[1].split("kiln_entry")[0]
    assert "v3_j >=" not in body and "v3_j <" not in body


@kiln.jit
def rowsum(out, a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k]
        out[i] = s


def test_loop_kernels_go_parallel_below_the_thread_threshold_and_survive_fork(rng, tmp_path):
    # 4096 positions of a kernel with a loop weigh 256 each against the threshold
    # (16384 threads): the launch uses OpenMP, so a child forked after it must not
    # (GCC's OpenMP runtime hangs in a forked child)
    a = rng.random((4096, 30))
    out = np.zeros(4096)
    rowsum[16, 256](out, a)
    np.testing.assert_allclose(out, a.sum(1))
    assert "const i64 W_ = 256;" in rowsum.inspect_source()
    code = r"""
import os, sys, numpy as np, kiln
@kiln.jit
def rowsum(out, a):
    i = kiln.grid(1)
    if i < a.shape[0]:
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k]
        out[i] = s
a = np.random.default_rng(1).random((4096, 300))
out = np.zeros(4096)
rowsum[16, 256](out, a)
assert np.allclose(out, a.sum(1))
pid = os.fork()
if pid == 0:
    out[:] = 0
    rowsum[16, 256](out, a)
    os._exit(0 if np.allclose(out, a.sum(1)) else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""
    import os, subprocess, sys
    script = tmp_path / "forked.py"
    script.write_text(code)
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 0 and "child 0" in p.stdout, p.stdout + p.stderr


@kiln.jit
def poly_local(out, x):
    i = kiln.grid(1)
    n = x.shape[0]
    m = n - 1
    if i < m:
        v = x[i]
        out[i] = (2.0 * v + 3.0) * v + 1.0


@kiln.jit
def blur_unpacked(out, img):
    y, x = kiln.grid(2)
    H, W = img.shape
    if 0 < y < H - 1 and 0 < x < W - 1:
        out[y, x] = (img[y - 1, x] + img[y + 1, x] + img[y, x - 1] + img[y, x + 1]) * 0.25


@kiln.jit
def early_local(out, x):
    i = kiln.grid(1)
    n = len(x)
    if i >= n:
        return
    out[i] = x[i] * 2.0


@kiln.jit
def local_changed(out, x):
    i = kiln.grid(1)
    n = x.shape[0]
    if i < n:
        out[i] = x[i] + n
    n = 0  # assigned twice: not an invariant, the guard stays in the body


def test_guards_on_locals_holding_the_bound_fold(rng=np.random.default_rng(3)):
    # perf33 4: `n = x.shape[0]; if i < n:` and `H, W = img.shape` kept the guard in the
    # body (0.35x Numba), where `if i < x.shape[0]` folded it into the loop bounds
    from kiln import _compile, _kiln

    def src(k, sig):
        return _compile._translate(k, _kiln.parse_signature(sig)[1], 0).source

    s = src(poly_local, "void(float64[::1], float64[::1])")
    assert "{ const i64 e_ = (i64)(((p1).shape[0] - 1LL)); if (e_ < xhi_) xhi_ = e_; }" in s
    s = src(blur_unpacked, "void(float64[:, ::1], float64[:, ::1])")
    assert s.count("if (e_ < xhi_) xhi_ = e_;") == 1 and s.count("if (e_ < yhi_) yhi_ = e_;") == 1
    assert "(p1).shape[0] - 1LL" in s and "(p1).shape[1] - 1LL" in s
    s = src(early_local, "void(float64[::1], float64[::1])")
    assert s.count("if (e_ < xhi_) xhi_ = e_;") == 1
    s = src(local_changed, "void(float64[::1], float64[::1])")
    assert "if (e_ < xhi_) xhi_ = e_;" not in s
    for n in (1, 5, 1000, 100003):
        x = rng.random(n)
        out = np.full(n, -1.0)
        poly_local[(n + 127) // 128, 128](out, x)
        want = np.full(n, -1.0)
        want[: n - 1] = ((2.0 * x + 3.0) * x + 1.0)[: n - 1]
        np.testing.assert_allclose(out, want)
        out = np.full(n, -1.0)
        early_local[(n + 127) // 128 + 1, 128](out, x)
        np.testing.assert_allclose(out, 2.0 * x)
        out = np.full(n, -1.0)
        local_changed[(n + 127) // 128, 128](out, x)
        np.testing.assert_allclose(out, x + n)
    for h, w in ((1, 1), (3, 7), (64, 33), (300, 257)):
        for img in (rng.random((h, w)), np.asfortranarray(rng.random((h, w))),
                    rng.random((2 * h, w))[::-2]):
            out = np.zeros((h, w))
            blur_unpacked[((h + 15) // 16, (w + 15) // 16), (16, 16)](out, img)
            want = np.zeros((h, w))
            want[1:-1, 1:-1] = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:]) * 0.25
            np.testing.assert_allclose(out, want)
