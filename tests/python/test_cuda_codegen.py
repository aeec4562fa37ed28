"""Every kernel the CPU tests compile is also compiled by NVRTC for sm_80 and sm_90
(make test sets KILN_CHECK_CUDA=1).  These are the GPU-only kernels, which the CPU
target refuses: they are translated for CUDA and compiled by NVRTC here, without a GPU."""
import numpy as np
import pytest

import kiln
from kiln import _compile, _kiln

TPB = 128


@kiln.jit
def block_sum(a, out):
    s = kiln.shared.array(TPB, kiln.float32)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    kiln.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        kiln.syncthreads()
        stride //= 2
    if t == 0:
        kiln.atomic.add(out, 0, s[0])


@kiln.jit
def warp_ops(a, out):
    i = kiln.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += kiln.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    m = kiln.ballot_sync(kiln.activemask(), v > 0)
    w = kiln.shfl_xor_sync(0xffffffff, v, 1) + kiln.shfl_sync(0xffffffff, v, 0)
    u = kiln.shfl_up_sync(0xffffffff, v, 1)
    al = kiln.all_sync(0xffffffff, v > 0)   # every lane takes part: no *_sync under a branch
    an = kiln.any_sync(0xffffffff, v > 0)
    kiln.syncwarp()
    if kiln.laneid == 0:
        out[i // 32] = v + m + w + u + al + an


@kiln.jit
def dynamic_shared(a):
    s = kiln.shared.array(0, kiln.float64)
    t = kiln.threadIdx.x
    s[t] = a[t]
    kiln.syncthreads()
    a[t] = s[kiln.blockDim.x - 1 - t]


@kiln.jit
def tiled_matmul(A, B, C):
    sA = kiln.shared.array((16, 16), kiln.float32)
    sB = kiln.shared.array((16, 16), kiln.float32)
    x, y = kiln.grid(2)
    tx, ty = kiln.threadIdx.x, kiln.threadIdx.y
    acc = kiln.float32(0.0)
    for i in range((A.shape[1] + 15) // 16):
        sA[ty, tx] = A[y, tx + i * 16] if y < A.shape[0] and tx + i * 16 < A.shape[1] else 0
        sB[ty, tx] = B[ty + i * 16, x] if x < B.shape[1] and ty + i * 16 < B.shape[0] else 0
        kiln.syncthreads()
        for j in range(16):
            acc += sA[ty, j] * sB[j, tx]
        kiln.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


@kiln.jit(fastmath=True, lineinfo=True, max_registers=64)
def fast_math(a):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = kiln.float32(1) / (1 + kiln.float32(2.5) ** a[i]) + a[i] / 3 + abs(a[i]) ** 0.5


@kiln.jit
def block_votes(a, out):
    i = kiln.grid(1)
    v = a[i] if i < a.size else 0
    every = kiln.syncthreads_and(v > 0)
    some = kiln.syncthreads_or(v)
    count = kiln.syncthreads_count(v > 1)
    if i < out.size:
        out[i] = every + 2 * some + 4 * count


@kiln.jit
def half_shared(a, out):
    s = kiln.shared.array(TPB, kiln.float16)
    t = kiln.threadIdx.x
    i = kiln.grid(1)
    s[t] = a[i] if i < a.size else 0
    kiln.syncthreads()
    if i < a.size:
        out[i] = kiln.fp16.hfma(s[TPB - 1 - t], a[i], 1) + kiln.fp16.hsin(s[t]) * a[i]


CASES = [
    (block_votes, "void(int16[::1], int32[::1])"),
    (block_votes, "void(float64[:], int32[::1])"),
    (half_shared, "void(float16[::1], float16[::1])"),
    (block_sum, "void(float32[::1], float32[::1])"),
    (warp_ops, "void(int32[::1], int64[::1])"),
    (warp_ops, "void(float64[:], float64[:])"),
    (dynamic_shared, "void(float64[::1])"),
    (tiled_matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    (fast_math, "void(float32[::1])"),
]


@pytest.mark.parametrize("kernel,sig", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_gpu_kernels_compile_with_nvrtc(kernel, sig):
    _, argkey = _kiln.parse_signature(sig)
    _compile.check_cuda(kernel, argkey)


def test_cuda_source_has_line_markers_and_entry():
    _, argkey = _kiln.parse_signature("void(float32[::1], float32[::1])")
    prog = _compile._translate(block_sum, argkey, 1, 90)
    assert 'extern "C" __global__ void kiln_entry' in prog.source
    assert "__shared__ f32 sst0[128]" in prog.source
    assert "#line" in prog.source and "test_cuda_codegen.py" in prog.source


def test_block_votes_and_float16_are_the_ptx_instructions():
    # __syncthreads_and/or/count are bar.red; float16 loads, stores and roundings are cvt,
    # float16 arithmetic is native
    _, argkey = _kiln.parse_signature("void(int32[::1], int32[::1])")
    src = _compile._translate(block_votes, argkey, 1, 90).source
    ptx = _kiln.nvrtc_compile(src, (0, 0, 0), 90, True)[0].decode()
    for op in ("bar.red.and.pred", "bar.red.or.pred", "bar.red.popc.u32"):
        assert op in ptx, op
    _, argkey = _kiln.parse_signature("void(float16[::1], float16[::1])")
    src = _compile._translate(half_shared, argkey, 1, 90).source
    assert "__shared__ kh16 sst0[128]" in src
    ptx = _kiln.nvrtc_compile(src, (0, 0, 0), 90, True)[0].decode()
    assert "cvt.f32.f16" in ptx and "cvt.rn.f16.f32" in ptx
    # hfma, * and + in half precision (rt_half.h)
    assert "fma.rn.f16" in ptx and "mul.f16" in ptx and "add.f16" in ptx


def test_nvrtc_errors_point_at_the_python_line():
    # NVRTC never sees user errors (sema catches them), but its log is the user's file:
    # feed it a broken source with a #line marker to see that the message keeps it.
    bad = '#line 7 "user_kernel.py"\nextern "C" __global__ void kiln_entry() { undefined_fn(); }\n'
    with pytest.raises(kiln.CompileError, match=r"user_kernel\.py\(7\)"):
        _kiln.nvrtc_compile(bad, (0, 0, 0), 90)


def test_ptx_when_asked():
    _, argkey = _kiln.parse_signature("void(float32[::1])")
    prog = _compile._translate(fast_math, argkey, 1, 90)
    ptx, is_ptx, _, _ = _kiln.nvrtc_compile(prog.source, (1, 0, 0), 90, True)
    assert is_ptx == 1 and b".entry kiln_entry" in ptx
    cubin, is_ptx, _, _ = _kiln.nvrtc_compile(prog.source, (1, 0, 0), 90)
    assert is_ptx == 0 and cubin[:4] == b"\x7fELF"


# ---- the wide entry (several grid positions per thread) ---------------------------------

@kiln.jit(device=True)
def _bump(a, i):
    kiln.atomic.add(a, 0, i)


@kiln.jit
def grid_only(out, x, y, counts, n):
    i = kiln.grid(1)
    if i < n:
        out[i] = x[i] + y[i]
        _bump(counts, 1)


@kiln.jit
def grid_stride(out, x):
    for i in range(kiln.grid(1), x.size, kiln.gridsize(1)):
        out[i] = x[i]


def _source(kernel, sig):
    _, argkey = _kiln.parse_signature(sig)
    return _compile._translate(kernel, argkey, 1, 90).source


def test_grid_only_kernel_gets_a_wide_entry_with_restrict_pointers():
    src = _source(grid_only, "void(float32[::1], float32[::1], float32[:], int64[::1], int64)")
    wide = src[src.index("void kiln_entry_wide("):]
    head = wide[:wide.index("{")]
    # written arrays (out; counts through a callee's atomic) are __restrict__ but not const
    assert "f32 *__restrict__ p0d" in head and "const f32 *__restrict__ p0d" not in head
    assert "const i64 *__restrict__ p3d" not in head and "i64 *__restrict__ p3d" in head
    # read-only arrays are const __restrict__; the last parameter is the thread count
    assert "const f32 *__restrict__ p1d" in head and "const f32 *__restrict__ p2d" in head
    assert head.rstrip().endswith("i64 n_)")
    assert "p2.strides[0] = p2t0;" in wide and "kiln_body(E_, x_, p0, p1, p2, p3, p4)" in wide


@pytest.mark.parametrize("kernel,sig", [
    (block_sum, "void(float32[::1], float32[::1])"),       # threadIdx, shared memory, barriers
    (warp_ops, "void(int32[::1], int64[::1])"),            # warp operations
    (grid_stride, "void(float32[::1], float32[::1])"),     # gridsize: already strides
], ids=["block_sum", "warp_ops", "grid_stride"])
def test_kernels_that_see_threads_have_no_wide_entry(kernel, sig):
    src = _source(kernel, sig)
    assert "void kiln_entry(" in src and "void kiln_entry_wide(" not in src


CONST_TABLE = np.arange(10.0)


def test_const_array_like_is_in_constant_memory():
    # kiln.const.array_like puts the array in __constant__ memory: the PTX loads it with
    # ld.const (a plain global array stays __device__ data, loaded with ld.global)
    @kiln.jit("void(float64[:])")
    def k(a):
        c = kiln.const.array_like(CONST_TABLE)
        i = kiln.grid(1)
        if i < a.size:
            a[i] = c[i % 10]

    @kiln.jit("void(float64[:])")
    def g(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = CONST_TABLE[i % 10]

    assert "ld.const.f64" in k.inspect_asm("(float64[:])")
    assert "ld.const" not in g.inspect_asm("(float64[:])")


@kiln.jit
def _hinted(r, x, y2, r2):
    for i in range(len(r)):
        r[i] = kiln.ldca(x, i) + kiln.ldcg(x, i) + kiln.ldcs(x, i) + kiln.ldlu(x, i) + kiln.ldcv(x, i)
        kiln.stcs(r2, (i, 0), kiln.ldcs(y2, (i, 1)))
        kiln.stcg(r, i, r[i] + 1)
        kiln.stwb(r, i, r[i] - 1)
        kiln.stwt(r2, (i, 1), 7)


@pytest.mark.parametrize("dt, bits", [("int8", 8), ("uint16", 16), ("float16", 16), ("int32", 32),
                                      ("float32", 32), ("uint64", 64), ("float64", 64)])
def test_cache_hints_are_the_ptx_numba_writes(dt, bits):
    # Numba-CUDA's test_cache_hints looks for ld.global.<hint>.b<bits> / st.global...
    _, argkey = _kiln.parse_signature(f"void({dt}[::1], {dt}[::1], {dt}[:, ::1], {dt}[:, ::1])")
    src = _compile._translate(_hinted, argkey, 1, 90).source
    for arch in (80, 90):
        ptx = _kiln.nvrtc_compile(src, (0, 0, 0), arch, True)[0].decode()
        for m in ("ca", "cg", "cs", "lu", "cv"):
            assert f"ld.global.{m}.b{bits}" in ptx, m
        for m in ("cg", "cs", "wb", "wt"):
            assert f"st.global.{m}.b{bits}" in ptx, m
