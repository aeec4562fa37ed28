"""kiln: a just-in-time compiler for Python kernels, with its core in C.

    import kiln

    @kiln.jit
    def saxpy(x, y, a):
        i = kiln.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    saxpy[blocks, threads](x, y, 2.0)

The kernel language and the API follow Numba's CUDA dialect, so a Numba
kernel file runs after ``import kiln as cuda``.  See LANGUAGE.md and the docs.

Importing kiln is cheap on purpose: NumPy and the compiler machinery are
imported when the first kernel is compiled, not here.

The package's modules import one way, each only from those below it:
``_compile`` (source text, globals, build; knows no Dispatcher) <- ``_dispatch``
(jit, the Dispatcher) <- ``_ufunc`` (vectorize, reduce) <- ``_gufunc`` (guvectorize) <- ``_fuse`` (fuse) <- ``_modes``
(kiln.compile's modes) <- this file, with ``compiler`` (Numba's compile_ptx and
compile: over ``_dispatch`` and ``_compile``) beside ``_modes``; beneath
them all ``_kiln`` (the C extension), ``_types``, ``_intrinsics`` (the names
kernels use), ``_cuda``, ``cache`` and ``_obs`` (metrics, traces, logs, dumps).  tests/python/test_layout.py checks it.
"""

from ._kiln import CompileError, CudaError, PerformanceWarning, version as __version__
from ._kiln import CacheWarning, CacheError  # noqa: F401
from . import cache  # noqa: F401  (kiln.cache.stats(), kiln.cache.clear())
from ._obs import metrics, profile  # noqa: F401  (docs/observability.md)
from ._types import (  # noqa: F401  (re-exported)
    Signature, void, none, bool_, boolean, b1, int8, i1, byte, int16, i2, int32, i4, intc,
    int64, i8, intp, int_, uint8, u1, uint16, u2, uint32, u4, uintc, uint64, u8, uintp,
    float16, f2, half, float32, f4, single, float64, f8, double, float_, complex64, c8, csingle,
    complex128, c16, cdouble, complex_, typeof, from_dtype, bfloat16,
)
from . import types  # noqa: F401  (Numba's type classes: kiln.types.Array, UniTuple...)
from . import bf16  # noqa: F401  (Numba's cuda.bf16: bfloat16's functions in kernels)
from .bf16 import is_bfloat16_supported  # noqa: F401
from ._dispatch import (  # noqa: F401
    jit, Dispatcher, is_available, cuda_unavailable_reason, synchronize, select_device,
)
from ._cuda import (  # noqa: F401
    DeviceArray, to_device, device_array, device_array_like, as_cuda_array, from_cuda_array_interface, is_cuda_array, stream,
    default_stream, legacy_default_stream, per_thread_default_stream, external_stream, event, event_elapsed_time, pinned_array, pinned_array_like, Device,
    mapped_array, mapped_array_like, managed_array,
    get_current_device, list_devices, detect, defer_cleanup, close, pinned, gpus, HostDevice,
    MemoryRegion,
)
from ._kiln import Stream, Event  # noqa: F401
from ._ipc import (  # noqa: F401  (GPU memory shared between processes, docs/ipc.md)
    current_context, require_context, open_ipc_array, IpcHandle, IpcArrayHandle, Context,
)
from .args import In, Out, InOut  # noqa: F401  (Numba's argument hints)
from ._extern import declare_device, CUSource, ExternFunction  # noqa: F401  (external CUDA code)
from ._extern import PTXSource, Cubin, Fatbin, LTOIR, Object, Archive  # noqa: F401
from .misc.special import literal_unroll  # noqa: F401  (for x in literal_unroll(t))
from .compiler import (  # noqa: F401  (Numba's compiler entries: PTX and LTO-IR text)
    compile_ptx, compile_ptx_for_current_device, compile_for_current_device,
)


from ._intrinsics import (  # noqa: F401  (the names kernels use)
    threadIdx, blockIdx, blockDim, gridDim, laneid, warpsize, grid, gridsize, syncthreads,
    syncwarp, threadfence, threadfence_block, threadfence_system, shared, local, const, atomic,
    syncthreads_and, syncthreads_or, syncthreads_count, fp16, cg, shfl_sync, shfl_down_sync, shfl_up_sync, shfl_xor_sync, ballot_sync, all_sync, any_sync,
    activemask, eq_sync, lanemask_lt, match_any_sync, match_all_sync, cbrt, fma, popc, brev, clz, ffs, selp,
    ldca, ldcg, ldcs, ldlu, ldcv, stcg, stcs, stwb, stwt,
)
from . import vector_types  # noqa: E402  (CUDA's vector types: kiln.float32x4, kiln.float4...)

globals().update(vector_types._exports)


# The decorators over kiln._ufunc, which is imported at their first use (about 15 ms).


def vectorize(func_or_sigs=None, **options):
    """Makes an elementwise function (a ufunc) of a scalar function.

    ``@kiln.vectorize`` compiles for the dtypes of each call;
    ``@kiln.vectorize(["float32(float32, float32)", ...])`` compiles those signatures
    now; a call takes the first signature its argument dtypes match exactly, else the
    first they cast to safely, else within their kind, as NumPy's ufuncs choose loops.  Lambdas
    work too: ``kiln.vectorize(["float32(float32)"])(lambda x: x * 2)``.

    The result is called like a NumPy ufunc: ``f(a, b, out=None, stream=0)``, with
    NumPy's broadcasting over arrays and scalars (Python scalars typed as NumPy 2 types
    them next to the arrays); it returns an array of the kind of its first array
    argument (NumPy, CuPy, PyTorch or kiln device array).  A NumPy ``out=`` with device
    array inputs is filled from the device and returned, as Numba's.  An ``out=`` that
    overlaps an input other than element for element (``f(a[1:], b, out=a[:-1])``) gives
    NumPy's result for NumPy arrays (through a temporary); for device arrays the kernel
    writes it in place, and the overlapping elements are unspecified, as on a GPU.

    Options: ``target`` (``'auto'``, ``'cpu'``, ``'cuda'``; ``'parallel'`` means the
    CPU), ``fastmath``, ``debug``, ``lineinfo``; Numba's ``cache`` and ``nopython`` are
    accepted and ignored, and ``identity`` (a number) is what ``.reduce`` of an empty array
    returns.  ``f.reduce(a, stream=0)`` folds a 1-d array with a binary ufunc, as Numba's."""
    from ._ufunc import Vectorized

    if callable(func_or_sigs) and hasattr(func_or_sigs, "__code__"):
        return Vectorized(func_or_sigs, (), **options)

    def decorate(fn):
        return Vectorized(fn, func_or_sigs or (), **options)

    return decorate


def guvectorize(signatures, layout=None, **options):
    """Makes a generalized ufunc of a function over core dimensions, as Numba's
    ``guvectorize`` does: ``@kiln.guvectorize(['void(float32[:,:], float32[:,:], float32[:,:])'],
    '(m,n),(n,p)->(m,p)')``.  The function writes its results into its output arguments
    (a ``()`` output is a one-element array); a call loops it over the leading dimensions.

    The result is called as ``f(*inputs, out=None, stream=0)`` or ``f(*inputs, *outputs)``;
    outputs not given are allocated and returned (a tuple for several), as device arrays
    when an argument is one.  ``kiln.guvectorize('(n)->(n)')`` with no signatures is
    compiled for each call's dtypes and needs its outputs passed.  Options as for
    ``kiln.vectorize`` (``target``, ``fastmath``, ``debug``, ``lineinfo``) plus
    ``max_blocksize``.  See docs/language.md."""
    from ._gufunc import guvectorize as make

    return make(signatures, layout, **options)


def reduce(func=None, **options):
    """Makes a parallel reduction of a binary function, as ``numba.cuda.reduce`` does.

    ``kiln.reduce(lambda a, b: a + b)`` or ``@kiln.reduce`` over a ``def``.  The
    function must be associative, and commutative too (the GPU folds in grid-stride
    order).  The result is called as ``r(array, size=None, res=None, init=None,
    stream=0)``: it reduces the first ``size`` elements of the array (all by default,
    any shape, read in C order) and returns the result as a scalar; ``init`` is folded
    in as well, and an empty array with no ``init`` is a ValueError; with ``res`` (a
    one-element array of the result's dtype) the result is written to ``res[0]`` and
    None is returned, without waiting for the GPU.

    Options: ``target``, ``fastmath``, ``debug``, as for ``kiln.jit``."""
    from ._ufunc import Reduction

    def make(fn):
        if not callable(fn):
            raise TypeError(f"kiln.reduce takes a binary function (a def or a lambda), not "
                            f"{type(fn).__name__}")
        return Reduction(fn, **options)

    return make(func) if func is not None else make


def Reduce(func, **options):
    """Numba's ``cuda.Reduce(func)``: ``kiln.reduce`` with Numba's default ``init=0``, which
    is folded into every result and is the result for an empty array (``kiln.reduce`` folds
    nothing unless asked, and refuses an empty array without ``init``)."""
    r = reduce(func, **options)
    r._init_default = 0
    return r


def fuse(func=None, **options):
    """``@kiln.fuse`` or ``@kiln.fuse(signatures=[...], cache=True, fastmath=False)``: a function
    of arrays written with NumPy (operators, ufuncs with a kernel counterpart, ``np.where``,
    ``.astype``, sum/prod/max/min/mean over all axes or the last) becomes one kernel.

    Calling it returns what NumPy returns for the same call (values, dtypes under NEP 50,
    shapes, broadcasting), computed without temporary arrays: NumPy arrays in give NumPy
    results from the CPU target, GPU arrays in a kiln device array from the GPU.  What
    cannot be fused is a CompileError at its line.  ``signatures`` (``"(float32[:, ::1],
    float32)"``) compile at decoration, and let ``kiln precompile`` build the kernels.
    ``fastmath=True`` compiles the kernel as ``@kiln.jit(fastmath=True)`` does (approximate
    transcendental functions and division).  See docs/modes.md."""
    from ._fuse import Fused

    if func is not None:
        return Fused(func, **options)
    return lambda fn: Fused(fn, **options)


def compile(fn=None, sig=None, *, mode="default", max_records=8, **numba_options):
    """kiln.compile(step, mode=...): ``step`` is host code that launches kiln kernels and
    vectorize, reduce and fuse functions; the result is called as the step.

    ``mode="default"`` runs it as it is.  ``mode="reduce-overhead"`` records the step's
    launches at the first call of each guard (the arrays' dtypes, shapes, strides and
    devices; the scalars' values) and replays them on later calls without running the
    step's Python: as one CUDA graph on the GPU, as the prepared launches on the CPU.  At
    most ``max_records`` guards are kept.  Steps that copy between host and device, or
    return values a replay cannot rebuild, run eagerly with one kiln.PerformanceWarning.
    See docs/modes.md.  Used as a decorator with or without arguments.

    ``kiln.compile(pyfunc, sig, device=True, output='ptx', ...)``, with a signature, is
    Numba's compiler entry instead: it returns ``(ptx or LTO-IR, return type)`` (see
    kiln.compiler.compile)."""
    if sig is not None:
        if mode != "default" or max_records != 8:
            raise TypeError("kiln.compile(pyfunc, sig, ...) compiles to PTX or LTO-IR; mode= "
                            "and max_records= are for kiln.compile(step, mode=...)")
        from .compiler import compile as compile_code

        return compile_code(fn, sig, **numba_options)
    if numba_options:
        raise TypeError(f"kiln.compile(pyfunc, sig, {', '.join(numba_options)}=...) needs the "
                        "signature to compile for; kiln.compile(step, mode=...) takes only "
                        "mode= and max_records=")
    from ._modes import compile as compile_step

    return compile_step(fn, mode=mode, max_records=max_records)

# Numba names kiln does not provide, with what to use instead: a clear AttributeError
# rather than a bare one when a Numba file is run after `import kiln as cuda`.
_NOT_PROVIDED = {
    "mapped": "allocate with kiln.pinned_array and copy with kiln.to_device",
    "profile_start": "use the profiler's own controls",
    "profile_stop": "use the profiler's own controls",
}


def __getattr__(name):
    # the rest of kiln.types (Array, UniTuple, CPointer, longlong...) by their plain names
    # too, as Numba files that map numba.cuda.types to kiln find them
    if not name.startswith("_") and name in types.__dict__:
        return types.__dict__[name]
    # Numba's cuda.random, cuda.devicearray, cuda.driver, cuda.devices, cuda.runtime and
    # cuda.config, imported at first use (they import NumPy)
    if name in ("random", "devicearray", "driver", "devices", "runtime", "config"):
        import importlib

        return importlib.import_module("." + name, __name__)
    hint = _NOT_PROVIDED.get(name)
    if hint is not None:
        raise AttributeError(f"kiln has no '{name}' (a Numba CUDA name): {hint}")
    raise AttributeError(f"module 'kiln' has no attribute '{name}'")
