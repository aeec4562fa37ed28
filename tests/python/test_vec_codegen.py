"""The wide CUDA entry's vector path (src/emit/vecplan.h, emit_vec.c), one test per shape:
which arrays move as one 16-byte vector per thread (the CUDA source, and the PTX that
NVRTC makes of it for sm_80 and sm_90: ld.global.nc.v4.f32, st.global.v4.f32), and which
stay element loads because the layout or the kernel forbids it.  Alignment is known only
at run time: the source tests each array's pointer and falls back to element loads.
tests/python/test_gpu_vec.py runs these shapes on the GPU; the CPU target does not change,
which the last tests check against NumPy."""
import math
import re

import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln
from kiln._fuse import _kernel_argkey

ARCHS = (80, 90)


def cuda(kernel, sig, arch=90):
    """(CUDA source, PTX of kiln_entry_wide or None) of a kernel's specialisation."""
    _, argkey = _kiln.parse_signature(sig)
    return cuda_of(kernel, argkey, arch)


def cuda_of(kernel, argkey, arch=90):
    src = _compile._translate(kernel, argkey, 1, arch).source
    cubin, is_ptx, _, _ = _kiln.nvrtc_compile(src, (0, 0, 0), arch)  # it compiles
    assert is_ptx == 0 and cubin[:4] == b"\x7fELF"
    ptx = _kiln.nvrtc_compile(src, (0, 0, 0), arch, True)[0].rstrip(b"\0").decode()
    at = ptx.find(".entry kiln_entry_wide")
    return src, (ptx[at:] if at >= 0 else None)


def fused(fn, sig, arch=90):
    """The CUDA source and wide PTX of a kiln.fuse function's GPU kernel for a signature."""
    key, layouts, _ = fn._signature(sig)
    spec = fn._spec(key, 1)
    return cuda_of(spec.kernel, _kernel_argkey(spec, key, layouts), arch)


def ops(ptx):
    return re.findall(r"(?:ld|st)\.global[.\w]*", ptx)


@kiln.fuse
def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


@pytest.mark.parametrize("arch", ARCHS)
def test_fused_chain_reads_and_writes_float4(arch):
    """The issue's 6-op chain on its flat view: x and y read as one float4 each per
    thread, the result written as one, four positions of the body in between."""
    src, ptx = fused(chain, "(float32[::1], float32[::1])", arch)
    assert "typedef struct __align__(16) { f32 v[4]; } KV4_f32;" in src
    wide = src[src.index("void kiln_entry_wide("):]
    assert "const i64 x0_ = (i64)KILN_BID_X * KILN_BDIM_X * 4 + (i64)KILN_TID_X * 4;" in wide
    # the vectors must lie inside every array and the launch
    for p in (0, 1, 2):
        assert f"if (p{p}s0 < nv_) nv_ = p{p}s0;" in wide
    assert "if (x0_ + 4 <= nv_) {" in wide
    # each input: one vector where its pointer is 16-byte aligned, else four elements
    for p in (1, 2):
        assert f"if (((u64)p{p}d & 15) == 0) {{\n            l{p}_[0] = *(const KV4_f32 *)(p{p}d + x0_);" in wide
        assert f"l{p}_[0].v[3] = p{p}d[x0_ + 3];" in wide
    for c in range(4):
        x = f"x0_ + {c}" if c else "x0_"
        assert f"kiln_body_v(E_, {x}, p0, p1, p2, &s0_[0].v[{c}], &w0_[{c}], l1_[0].v[{c}], l2_[0].v[{c}]);" in wide
    assert "if (((u64)p0d & 15) == 0 && w0_[0] && w0_[1] && w0_[2] && w0_[3]) {\n" \
           "            *(KV4_f32 *)(p0d + x0_) = s0_[0];" in wide
    # the body on the elements: no load or store of its own
    body = src[src.index("KILN_BODY void kiln_body_v("):src.index('#line 1 "<kiln entry>"')]
    assert "f32 *vs0_, kbool *vw0_, f32 vl1_, f32 vl2_)" in body
    assert ".data[" not in body and "(*(*vw0_ = 1, vs0_)) = " in body
    assert "expf(((vl1_ * vl2_)" in body
    # the launch's last thread runs its positions one at a time, as written
    assert "if (x_ < n_) kiln_body(E_, x_, p0, p1, p2);" in wide
    # NVRTC: one 16-byte load per input and one 16-byte store (plus the element fallbacks)
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 2 and o.count("st.global.v4.f32") == 1, o


@pytest.mark.parametrize("dtype,load", [
    ("bool", "v4.u8"), ("int8", "v4.u8"), ("uint8", "v4.u8"), ("int16", "v4.u16"),
    ("float16", "v4.u16"), ("int32", "v4.u32"), ("uint32", "v4.u32"), ("float32", "v4.f32"),
    ("int64", "v2.u64"), ("uint64", "v2.u64"), ("float64", "v2.f64"),
])
def test_every_real_dtype_moves_four_elements_at_once(dtype, load):
    """Four elements per thread: 16 bytes for 4-byte types, two 16-byte halves for 8-byte
    ones, 8 or 4 bytes for the narrow ones (aligned to their size)."""
    src, ptx = cuda(add, f"void({dtype}[::1], {dtype}[::1], {dtype}[::1])")
    size = np.dtype(dtype).itemsize
    assert f"__align__({min(16, 4 * size)})" in src
    assert f"& {min(16, 4 * size) - 1}) == 0" in src
    o = ops(ptx)
    want = 2 if size < 8 else 4  # x and y; an 8-byte type's vector is two halves
    assert o.count("ld.global.nc." + load) == want, o
    assert o.count("st.global." + load) == want // 2, o


def test_eight_byte_elements_make_two_vectors_per_thread():
    """With a float64 array, a vector holds 2 positions (16 bytes): a thread's 4 positions
    are 2 vectors a block's width apart, so each load instruction of a warp reads one
    span; the kernel's float32 arrays then move as 8-byte vectors on the same positions."""
    src, ptx = cuda(add, "void(float64[::1], float32[::1], float32[::1])")
    wide = src[src.index("void kiln_entry_wide("):]
    assert "const i64 x0_ = (i64)KILN_BID_X * KILN_BDIM_X * 4 + (i64)KILN_TID_X * 2;" in wide
    assert "const i64 xs_ = (i64)KILN_BDIM_X * 2;" in wide
    assert "if (x0_ + xs_ + 2 <= nv_) {" in wide
    assert "l1_[1] = *(const KV2_f32 *)(p1d + x0_ + xs_);" in wide
    assert "kiln_body_v(E_, x0_ + xs_ + 1, p0, p1, p2, &s0_[1].v[1], &w0_[3], l1_[1].v[1], l2_[1].v[1]);" in wide
    assert "*(KV2_f64 *)(p0d + x0_ + xs_) = s0_[1];" in wide
    assert "const i64 x_ = x0_ + xs_ * (k_ / 2) + k_ % 2;" in wide
    o = ops(ptx)
    assert o.count("ld.global.nc.v2.f32") == 4 and o.count("st.global.v2.f64") == 2, o


@kiln.jit
def add(out, x, y):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def _no_vector_path(src):
    return re.search(r"\bKV\d", src) is None and "kiln_body_v" not in src


def test_strided_arrays_stay_element_loads():
    """A strided array (layout A) has no vector: its elements are strides apart.  The
    contiguous ones still move as vectors."""
    src, ptx = cuda(add, "void(float32[:], float32[:], float32[:])")
    assert _no_vector_path(src)
    assert "const i64 x_ = x0_ + k_ * KILN_BDIM_X;" in src   # the block-strided wide loop
    assert "v4" not in " ".join(ops(ptx))
    src, ptx = cuda(add, "void(float32[::1], float32[:], float32[::1])")
    head = src[src.index("KILN_BODY void kiln_body_v("):]
    assert "f32 *vs0_, kbool *vw0_, f32 vl2_)" in head and "vl1_" not in src
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 1 and o.count("st.global.v4.f32") == 1, o


def test_f_order_and_two_dimensional_arrays_stay_element_loads():
    """kiln.fuse on F-order (or broadcast) 2-D arrays runs its 2-D kernel: no vectors.
    A 1-D F array is contiguous: it takes part."""
    src, _ = fused(chain, "(float32[::1, :], float32[::1, :])")
    assert _no_vector_path(src)
    src, _ = fused(chain, "(float32[:, ::1], float32[::1])")
    assert _no_vector_path(src)
    src, ptx = cuda(add, "void(float32[::1], float32[::1], float32[::1])")
    assert "kiln_body_v" in src


@kiln.jit
def add_complex(out, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] * 2


def test_complex_arrays_stay_element_loads():
    src, _ = cuda(add_complex, "void(complex64[::1], complex64[::1])")
    assert _no_vector_path(src)


@kiln.jit
def accumulate(out, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] += x[i]


@kiln.jit(device=True)
def store(a, i, v):
    a[i] = v


@kiln.jit
def through_callee(out, x):
    i = kiln.grid(1)
    if i < x.size:
        store(out, i, x[i] + 1)


@kiln.jit
def reads_a_neighbour(out, x):
    i = kiln.grid(1)
    if i + 1 < x.size:
        out[i] = x[i] + x[i + 1]


@pytest.mark.parametrize("kernel", [accumulate, through_callee], ids=lambda k: k.__name__)
def test_an_array_read_or_written_elsewhere_keeps_its_stores(kernel):
    """out read as well as written (+=), or written by a device function: its element
    stores stay as written; x still arrives as a vector."""
    src, ptx = cuda(kernel, "void(float32[::1], float32[::1])")
    head = src[src.index("KILN_BODY void kiln_body_v("):]
    assert "vs0_" not in src and "f32 vl1_)" in head
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 1 and "st.global.v4.f32" not in o, o


def test_loads_at_other_indices_stay_loads():
    """x[i] is the vector's element, x[i + 1] a load from memory (the next thread's)."""
    src, _ = cuda(reads_a_neighbour, "void(float32[::1], float32[::1])")
    body = src[src.index("KILN_BODY void kiln_body_v("):src.index('#line 1 "<kiln entry>"')]
    assert re.search(r"vl1_ \+ v\d+_x\.data\[\(?v\d+_i \+ ", body), body


@kiln.jit
def early_return(out, x):
    i = kiln.grid(1)
    if i >= x.size:
        return
    if x[i] < 0:
        return
    out[i] = x[i] * 2


def test_a_store_that_may_not_run_writes_only_the_elements_stored():
    """Each position sets its element's flag when it stores: the vector is written whole
    only when all four did, else element by element (the others keep their values)."""
    src, _ = cuda(early_return, "void(float32[::1], float32[::1])")
    assert "kbool w0_[4] = {0, 0, 0, 0};" in src
    for c in range(4):
        x = f"x0_ + {c}" if c else "x0_"
        assert f"if (w0_[{c}]) p0d[{x}] = s0_[0].v[{c}];" in src
    body = src[src.index("KILN_BODY void kiln_body_v("):src.index('#line 1 "<kiln entry>"')]
    assert body.count("return;") >= 2    # a position returns from its own call


@kiln.jit
def moved_position(out, x):
    i = kiln.grid(1)
    if i + 1 < x.size:
        i = i + 1
    out[kiln.grid(1)] = x[i]


@kiln.jit
def grid_call_index(out, x, n):
    if kiln.grid(1) < n:
        out[kiln.grid(1)] = x[kiln.grid(1)] * 3


def test_the_position_is_a_local_assigned_once_from_grid():
    """i is assigned twice: x[i] is not at the position; out[kiln.grid(1)] is."""
    src, _ = cuda(moved_position, "void(float32[::1], float32[::1])")
    head = src[src.index("KILN_BODY void kiln_body_v("):]
    assert "vl1_" not in src and "f32 *vs0_, kbool *vw0_)" in head
    src, ptx = cuda(grid_call_index, "void(int32[::1], int32[::1], int64)")
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.u32") == 1 and o.count("st.global.v4.u32") == 1, o


@kiln.jit
def poly(out, x, c):
    i = kiln.grid(1)
    if i < out.size:
        acc = 0.0
        for j in range(c.size):
            acc = acc * x[i] + c[j]
        out[i] = acc


def test_a_loop_in_the_body_reads_the_vectors_element():
    """x[i] inside an unrolled loop (unroll.h) is the vector's element, hoisted as a name;
    c[j] stays a load.  The result is stored as a vector after the loop."""
    src, ptx = cuda(poly, "void(float32[::1], float32[::1], float32[::1])")
    body = src[src.index("KILN_BODY void kiln_body_v("):src.index('#line 1 "<kiln entry>"')]
    # the loop's hoisted x[i] is the element (a register), c[j] a load from memory
    assert re.search(r"const f32 hl\d+_\d+_0 = vl1_;", body)
    assert re.search(r"const f32 hl\d+_\d+_0 = v\d+_c\.data\[", body)
    assert "x.data[" not in body
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 1 and o.count("st.global.v4.f32") == 1, o


@kiln.jit
def thread_index(out, x):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = x[i] + kiln.threadIdx.x


def test_debug_and_kernels_without_a_wide_entry_have_no_vector_path():
    src, _ = cuda(thread_index, "void(float32[::1], float32[::1])")
    assert _no_vector_path(src) and "void kiln_entry_wide(" not in src
    dbg = kiln.jit(debug=True)(add.py_func)
    src, _ = cuda(dbg, "void(float32[::1], float32[::1], float32[::1])")
    assert _no_vector_path(src) and "void kiln_entry_wide(" in src


def test_vectorize_flat_kernel_moves_vectors():
    """kiln.vectorize's kernel for contiguous arrays (out[i] = f(a0[i], a1[i]))."""
    @kiln.vectorize(["float32(float32, float32)"])
    def hyp(a, b):
        return math.sqrt(a * a + b * b)

    k = hyp._kernel("flat", ("a", "a"), 1)
    sig = hyp._flat_signature(np.dtype(np.float32), [np.dtype(np.float32)] * 2)
    src, ptx = cuda(k, sig)
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 2 and o.count("st.global.v4.f32") == 1, o


def test_nvrtc_compiles_the_vector_path_for_every_checked_arch():
    """KILN_CHECK_CUDA's check (sm_80, sm_90) on the shapes above."""
    for kernel, sig in ((add, "void(float64[::1], float64[::1], float64[::1])"),
                        (early_return, "void(float16[::1], float16[::1])"),
                        (accumulate, "void(uint8[::1], uint8[::1])"),
                        (grid_call_index, "void(bool[::1], bool[::1], int64)")):
        _, argkey = _kiln.parse_signature(sig)
        assert [a for a, _, _ in _compile.check_cuda(kernel, argkey)] == list(ARCHS)


@kiln.fuse
def bias(x, b):
    return np.exp(x * b + 0.5) * x - b / 3.0


def test_fused_broadcast_row_issues_four_rows_loads_first():
    """A 2-D fused kernel (b one row broadcast along x's rows) has no wide entry: each
    thread runs rows in a loop whose counter is the row itself, so the unrolled loop
    (unroll.h) loads x for four rows before the first row's arithmetic."""
    src, ptx = fused(bias, "(float32[:, ::1], float32[::1])")
    assert "void kiln_entry_wide(" not in src
    for c in range(4):
        assert re.search(rf"const f32 hl\d+_\d+_{c} = v\d+_u_x\.data\[", src), c
    first = re.search(r"const f32 hl\d+_\d+_3 = v\d+_u_x\.data\[", src).start()
    assert first < src.index("expf(", src.index("KILN_BODY void kiln_body("))


def test_fused_row_operand_reads_a_row_vector():
    """The same call with 4k columns on the GPU (kiln/_fuse.py _row_flat): x flat, b a row
    operand read at the column `k_c = k_i0 % k_cols`.  The wide entry takes one remainder
    per vector (32-bit when both fit) and reads b's four columns as one float4 where the
    row's length is a multiple of 4, b is aligned and the columns lie inside b; the body
    reads the element and no longer needs the column."""
    from kiln._fuse import _ROW, _code_of
    f32 = _code_of(np.dtype(np.float32))
    key = ((0, f32, 1, 0), (_ROW, f32, 1, 0))
    spec = bias._spec(key, 1)
    assert "    k_c = k_i0 % k_cols\n" in spec.source and "u_b[k_c]" in spec.source
    src, ptx = cuda_of(spec.kernel, _kernel_argkey(spec, key, ["C", "C"]))
    wide = src[src.index("void kiln_entry_wide("):]
    assert "if (p2s0 < nv_)" not in wide            # b's extent is the row's, not the launch's
    assert "const i64 m_ = p3;\n        const bool mv_ = m_ > 0 && m_ % 4 == 0;" in wide
    assert "const i64 c0_ = mv_ ? kiln_col_(x0_, m_) : 0;" in wide
    assert "if (mv_ && ((u64)p2d & 15) == 0 && c0_ + 4 <= p2s0) {\n" \
           "            l2_[0] = *(const KV4_f32 *)(p2d + c0_);" in wide
    # elsewhere each element at its own column, 0 outside b (the body would have faulted)
    assert "kiln_wrap(kiln_mod_i64(x0_ + 3, m_), p2s0); l2_[0].v[3] = (u64)q_ < (u64)p2s0 ? p2d[q_] : (f32)0;" in wide
    body = src[src.index("KILN_BODY void kiln_body_v("):src.index('#line 1 "<kiln entry>"')]
    assert "f32 vl1_, f32 vl2_)" in body and ".data[" not in body
    o = ops(ptx)
    assert o.count("ld.global.nc.v4.f32") == 2 and o.count("st.global.v4.f32") == 1, o
    # the remainder of the vector path: one 32-bit one (and the 64-bit one past 2^32)
    vec = ptx[:ptx.index("st.global.v4.f32")]
    assert len(re.findall(r"rem\.u32", vec)) >= 1


@kiln.jit
def row_add(out, x, b, m):
    i = kiln.grid(1)
    c = i % m
    if i < out.size:
        out[i] = x[i] + b[c]


@kiln.jit
def row_both(out, x, b, m):
    i = kiln.grid(1)
    c = i % m
    if i < out.size:
        out[i] = x[i] + b[c] + b[i]


@kiln.jit
def row_twice(out, x, b, m):
    i = kiln.grid(1)
    c = i % m
    if i < out.size:
        c = c + 1
        out[i] = x[i] + b[c]


@kiln.jit
def row_m_changes(out, x, b, m):
    i = kiln.grid(1)
    m = m + 1
    c = i % m
    if i < out.size:
        out[i] = x[i] + b[c]


def test_row_vectors_of_eight_byte_elements_take_a_column_per_vector():
    """float64: two vectors of 2 per thread, each with its own column."""
    src, ptx = cuda(row_add, "void(float64[::1], float64[::1], float64[::1], int64)")
    wide = src[src.index("void kiln_entry_wide("):]
    assert "const bool mv_ = m_ > 0 && m_ % 2 == 0;" in wide
    assert "const i64 c1_ = mv_ ? kiln_col_(x0_ + xs_, m_) : 0;" in wide
    assert "c0_ + 2 <= p2s0 && c1_ + 2 <= p2s0" in wide
    assert "l2_[1] = *(const KV2_f64 *)(p2d + c1_);" in wide
    assert ops(ptx).count("ld.global.nc.v2.f64") == 4, ops(ptx)  # x and b, two vectors each


@pytest.mark.parametrize("kernel", [row_both, row_twice, row_m_changes], ids=lambda k: k.__name__)
def test_a_column_that_is_not_pos_mod_m_reads_memory(kernel):
    """b read at the position too, a column assigned twice, or m assigned: no row vector
    (x still moves as vectors)."""
    src, _ = cuda(kernel, "void(float32[::1], float32[::1], float32[::1], int64)")
    assert "kiln_col_(x0_" not in src and "const i64 m_" not in src
    assert "l1_[0] = *(const KV4_f32 *)(p1d + x0_);" in src


def test_cpu_row_operand_kernel_matches_numpy(rng):
    """The row path's kernel text on the CPU target (no wide entry there): the same values
    as NumPy's broadcast, at a column count that is not a multiple of 4 too."""
    from kiln._fuse import _ROW, _code_of
    for rows, cols in ((64, 16), (7, 13)):
        x = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
        b = rng.uniform(-2, 2, cols).astype(np.float32)
        f32 = _code_of(x.dtype)
        spec = bias._spec(((0, f32, 1, 0), (_ROW, f32, 1, 0)), 0)
        vals = [x.reshape(-1), b]
        out = bias._exec(bias._plan(spec, vals, None, (x.size,), None, cols), vals, None)
        want = np.exp(x.astype(float) * b + 0.5) * x - b / 3.0
        np.testing.assert_allclose(out.reshape(x.shape), want, rtol=3e-6, atol=3e-6)


# ---- the CPU target: unchanged -----------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 4, 5, 1023, 4099])
def test_cpu_chain_matches_numpy_at_every_size_and_layout(rng, n):
    x = rng.uniform(-2, 2, n + 3).astype(np.float32)
    y = rng.uniform(-2, 2, n + 3).astype(np.float32)
    want = lambda a, b: np.exp(a * b + np.float32(0.5)) * a - b / np.float32(3.0)  # noqa: E731
    for a, b in ((x[:n], y[:n]), (x[1:n + 1], y[2:n + 2]), (x[:n][::-1], y[:n])):
        np.testing.assert_allclose(chain(a, b), want(a, b), rtol=2e-6, atol=1e-6)
    m = rng.uniform(-2, 2, (n, 6)).astype(np.float32)
    for a in (np.asfortranarray(m), m[:, ::2], m[1:]):
        np.testing.assert_allclose(chain(a, a), want(a, a), rtol=2e-6, atol=1e-6)
        if a.shape[0]:
            np.testing.assert_allclose(bias(a, a[0]), want(a, a[0]), rtol=2e-6, atol=1e-6)


def test_cpu_kernels_match_numpy(rng):
    x = rng.uniform(-1, 1, 1001).astype(np.float32)
    out = np.full(1001, 7, np.float32)
    early_return[8, 128](out, x)
    np.testing.assert_array_equal(out, np.where(x < 0, 7, x * 2))
    y = rng.integers(0, 100, 1001).astype(np.int32)
    o = np.zeros(1001, np.int32)
    grid_call_index[8, 128](o, y, 1000)
    np.testing.assert_array_equal(o[:1000], y[:1000] * 3)
    assert o[1000] == 0

