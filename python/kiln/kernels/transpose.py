"""transpose(a, b=None): Numba's ``numba.cuda.kernels.transpose``, a kiln kernel.

On the GPU each block transposes one TILE x TILE tile through shared memory, so that both
the reads of ``a`` and the writes of ``b`` are coalesced (the algorithm Numba cites:
devblogs.nvidia.com/parallelforall/efficient-matrix-transpose-cuda-cc).  The tile has one
column more than it is wide, so a warp reading a column of it meets 32 different banks.
Its element type is the arrays' dtype, fixed when the kernel is made: one kernel per
dtype, made at first use.  On the CPU target (arrays in host memory, KILN_TARGET=cpu) a
block's threads are fibers of one CPU thread and the tile buys nothing: each grid
position copies one element, a kernel without barriers, which the CPU target runs as
plain loops.
"""

import kiln

# The tile's edge: a block of TILE x TILE threads (1024, the most a CUDA block holds), as
# Numba sizes it from MAX_THREADS_PER_BLOCK.
TILE = 32
# The CPU kernel's block edge: blocks only group positions there.
CPU_BLOCK = 16

# the kernels, made at first use (importing this module compiles nothing): the GPU kernel
# of each dtype, and under None the CPU one
_kernels = {}


def _tiled_kernel(dt):
    tile_shape = (TILE, TILE + 1)

    @kiln.jit
    def transpose_tiled(a, b):
        tile = kiln.shared.array(shape=tile_shape, dtype=dt)
        tx = kiln.threadIdx.x
        ty = kiln.threadIdx.y
        bx = kiln.blockIdx.x * kiln.blockDim.x
        by = kiln.blockIdx.y * kiln.blockDim.y
        if by + ty < a.shape[0] and bx + tx < a.shape[1]:
            tile[ty, tx] = a[by + ty, bx + tx]
        kiln.syncthreads()
        if bx + ty < b.shape[0] and by + tx < b.shape[1]:
            b[bx + ty, by + tx] = tile[tx, ty]

    return transpose_tiled


def _each_kernel():
    @kiln.jit
    def transpose_each(a, b):
        i, j = kiln.grid(2)
        if i < b.shape[0] and j < b.shape[1]:
            b[i, j] = a[j, i]

    return transpose_each


def transpose(a, b=None):
    """Writes the transpose of the 2-D array ``a`` into ``b`` and returns ``b``; without
    ``b``, into a new device array of ``a``'s dtype.  ``a`` is a kiln device array (or a
    NumPy array, copied for the launch); its stream is used when it has one."""
    if len(a.shape) != 2:
        raise ValueError(f"transpose takes a 2-D array, not one of shape {tuple(a.shape)}")
    stream = getattr(a, "stream", 0) or 0
    rows, cols = a.shape
    if b is None:
        b = kiln.device_array((cols, rows), dtype=a.dtype, stream=stream)
    elif tuple(b.shape) != (cols, rows) or b.dtype != a.dtype:
        raise ValueError(f"transpose of a {a.dtype} array of shape {(rows, cols)} goes into "
                         f"one of shape {(cols, rows)} and the same dtype, not {b.dtype} "
                         f"{tuple(b.shape)}")
    if b.shape[0] == 0 or b.shape[1] == 0:
        return b
    each = _kernels.get(None)
    if each is None:
        each = _kernels[None] = _each_kernel()
    on_host = getattr(b, "on_host", None)  # a NumPy b goes where the launch takes it
    if on_host is None:
        on_host = each._resolve_target() == 0
    if on_host:
        grid = (-(-b.shape[0] // CPU_BLOCK), -(-b.shape[1] // CPU_BLOCK))
        each[grid, (CPU_BLOCK, CPU_BLOCK), stream](a, b)
        return b
    kernel = _kernels.get(a.dtype)
    if kernel is None:
        kernel = _kernels[a.dtype] = _tiled_kernel(kiln.from_dtype(a.dtype))
    # x runs along a's columns (b's rows), y along a's rows
    grid = (-(-cols // TILE), -(-rows // TILE))
    kernel[grid, (TILE, TILE), stream](a, b)
    return b
