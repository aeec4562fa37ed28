"""The CUDA code of unrolled loops (src/emit/unroll.h), one test per loop shape: which
loops run UNROLL_FACTOR iterations per pass with their loads first, which loads move,
and which loops stay as they are.  Each source is compiled by NVRTC too (no GPU needed);
tests/python/test_gpu_unroll.py runs them."""
import math
import re

import pytest

import kiln
from kiln import _compile, _kiln

RSQRT2 = 0.7071067811865476


def source(kernel, sig, **opts):
    _, argkey = _kiln.parse_signature(sig)
    src = _compile._translate(kernel, argkey, 1, 90).source
    cubin, is_ptx, _, _ = _kiln.nvrtc_compile(src, (0, 0, 0), 90)
    assert is_ptx == 0 and cubin[:4] == b"\x7fELF"
    return src[src.index("KILN_BODY void kiln_body"):src.index('#line 1 "<kiln entry>"')]


def hoisted(src):
    """{copy: [load text]} of the hoisted loads that read memory (not aliases)."""
    out = {}
    for _, j, c, text in re.findall(r"const \w+ hl(\d+)_(\d+)_(\d+) = ([^;]+);", src):
        if not text.startswith("hl"):
            out.setdefault(int(c), []).append(text)
    return out


@kiln.jit
def bs_stride(call, put, s, x, t, r, v):
    for i in range(kiln.grid(1), s.size, kiln.gridsize(1)):
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        e = math.exp(-r * t[i])
        c1 = 0.5 * math.erfc(-d1 * RSQRT2)
        c2 = 0.5 * math.erfc(-d2 * RSQRT2)
        call[i] = s[i] * c1 - x[i] * e * c2
        put[i] = x[i] * e * (1.0 - c2) - s[i] * (1.0 - c1)


def test_grid_stride_loop_runs_four_iterations_per_pass_loads_first():
    src = source(bs_stride, "void(float32[::1], float32[::1], float32[::1], float32[::1], "
                            "float32[::1], float32, float32)")
    # the three inputs (t[i] read three times, s[i] and x[i] twice) are loaded once per copy,
    # for all four copies, before the first copy's arithmetic
    loads = hoisted(src)
    assert sorted(loads) == [0, 1, 2, 3]
    assert all(sorted(loads[c]) == ["v2_s.data[v7_i]", "v3_x.data[v7_i]", "v4_t.data[v7_i]"]
               for c in loads)
    assert src.index("hl0_0_3 =") < src.index("sqrtf(hl0_0_0)") < src.index("sqrtf(hl0_0_1)")
    # the main loop runs while a whole pass is left, counting in 32 bits where the range
    # and the step allow, the inputs apart from the outputs; the loop as written runs the rest
    assert "if (st0 >= 0 && sp0 > st0 && sd0 > 0 && sd0 <= ((i64)1 << 29) && " \
           "sp0 <= (i64)0xFFFFFFFF - sd0 && kiln_apart_" in src
    assert "for (; iu0 < spu0 && spu0 - iu0 > sdu0 * 3u; iu0 += sdu0 * 4u) {" in src
    assert "v7_i = (i64)(u32)(iu0 + sdu0 * 3u);" in src and "it0 = (i64)iu0;" in src
    for r in (2, 3, 4):
        for w in (0, 1):
            assert f"kiln_apart_(lo0_{r}, hi0_{r}, lo0_{w}, hi0_{w})" in src
    assert "for (; sd0 > 0 ? it0 < sp0 : it0 > sp0; it0 = KILN_RANGE_NEXT(i64, it0, sp0, " \
           "sd0))" in src  # a step that cannot pass int64's limit (rt_common.h)
    assert "erfcf(" in src and src.count("erfcf(") == 2 * 5  # four copies and the rest


@kiln.jit
def row_scale(out, a, w):
    i = kiln.grid(1)
    if i < a.shape[0]:
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * w[j] + 1.0


def test_loop_over_a_row_inside_a_thread_is_unrolled():
    src = source(row_scale, "void(float32[::1,:], float32[::1,:], float32[::1])")
    loads = hoisted(src)
    assert sorted(loads) == [0, 1, 2, 3]
    assert any(".data[" in t and "v1_a" in t for t in loads[0]) and any("v2_w.data[" in t for t in loads[0])
    # a and w are checked apart from out; the loop over the row is the one unrolled
    assert "kiln_apart_(lo0_1, hi0_1, lo0_0, hi0_0)" in src
    assert "kiln_apart_(lo0_2, hi0_2, lo0_0, hi0_0)" in src
    assert "v4_j = (i64)(u32)(iu0 + sdu0 * 3u);" in src


@kiln.jit
def running_sum(out, a, n):
    # a local carried from one iteration to the next: the copies run in order
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for j in range(i, n, out.size):
            s = s * 0.5 + a[j]
        out[i] = s


@kiln.jit
def running_sum_atomic(out, a, n):
    i = kiln.grid(1)
    if i < out.size:
        s = 0.0
        for j in range(i, n, out.size):
            s = s * 0.5 + a[j]
            kiln.atomic.add(out, 0, 1.0)    # the body writes memory: a's loads need the check


def test_carried_local_keeps_the_order_and_a_body_that_writes_nothing_needs_no_check():
    src = source(running_sum, "void(float64[::1], float64[::1], int64)")
    assert sorted(hoisted(src)) == [0, 1, 2, 3]
    # the copies update s in order: copy 1's update reads copy 0's result
    c0, c1 = src.index("v4_s = ((v4_s * 0.5) + hl"), src.index("v4_s = ((v4_s * 0.5) + hl", src.index("v4_s = ((v4_s * 0.5) + hl") + 1)
    assert c0 < c1
    # the loop writes nothing (out is written after it): no span of a, no apart check
    assert "kiln_apart_(lo" not in src and "KILN_SPAN(" not in src
    assert "sp0 <= (i64)0xFFFFFFFF - sd0) {" in src
    src = source(running_sum_atomic, "void(float64[::1], float64[::1], int64)")
    assert sorted(hoisted(src)) == [0, 1, 2, 3]
    assert "kiln_apart_(lo0_1, hi0_1, lo0_0, hi0_0)" in src  # a is read, out is written


@kiln.jit
def gather(out, a, idx, n):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        out[i] = a[idx[i]] + a[(i + 3) % 7]


def test_index_through_a_read_only_array_and_constant_modulus_moves():
    src = source(gather, "void(float32[::1], float32[::1], int64[::1], int64)")
    loads = hoisted(src)[0]
    assert len(loads) == 2 and all("v1_a.data" in t for t in loads)
    assert any("v2_idx.data" in t for t in loads)


@kiln.jit
def stays_1(out, a, n):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        if a[i] < 0:
            break
        out[i] = a[i]


@kiln.jit
def stays_2(a, n):
    # reads an array it writes: nothing may move above the stores
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        a[i] = a[i] * 2


@kiln.jit
def stays_3(out, a, n, m):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        for j in range(m):  # the inner loop is unrolled, not the outer
            out[i] += a[j]


@kiln.jit
def stays_4(out, a, n):
    for i in range(kiln.grid(1), n, kiln.gridsize(1)):
        out[i] = a[i] if i % 2 == 0 else 0.0  # a conditional load stays where it is


@kiln.jit
def stays_5(out, a, n):
    for i in range(n - 1, -1, -1):
        out[i] = a[i]


@pytest.mark.parametrize("kernel,sig,unrolled", [
    (stays_1, "void(float32[::1], float32[::1], int64)", 0),
    (stays_2, "void(float32[::1], int64)", 0),
    (stays_3, "void(float32[::1], float32[::1], int64, int64)", 1),
    (stays_4, "void(float32[::1], float32[::1], int64)", 0),
    (stays_5, "void(float32[::1], float32[::1], int64)", 0),
])
def test_loops_that_stay_as_written(kernel, sig, unrolled):
    src = source(kernel, sig)
    assert src.count(" * 4u) {") == unrolled
    assert ("hl" in src) == bool(unrolled)


def test_debug_kernels_are_not_unrolled():
    k = kiln.jit(bs_stride.py_func, debug=True)
    src = source(k, "void(float32[::1], float32[::1], float32[::1], float32[::1], "
                    "float32[::1], float32, float32)")
    assert "hl0_" not in src and "kiln_apart_" not in src
