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
"""

from ._kiln import CompileError, CudaError, PerformanceWarning, version as __version__
from ._kiln import CacheWarning, CacheError  # noqa: F401
from . import cache  # noqa: F401  (kiln.cache.stats(), kiln.cache.clear())
from ._types import (  # noqa: F401  (re-exported)
    Signature, void, none, bool_, boolean, b1, int8, i1, byte, int16, i2, int32, i4, intc,
    int64, i8, intp, int_, uint8, u1, uint16, u2, uint32, u4, uintc, uint64, u8, uintp,
    float32, f4, single, float64, f8, double, float_,
)
from ._dispatch import (  # noqa: F401
    jit, Dispatcher, vectorize, reduce, is_available, cuda_unavailable_reason, synchronize,
    select_device,
)
from ._cuda import (  # noqa: F401
    DeviceArray, to_device, device_array, device_array_like, as_cuda_array, stream,
    default_stream, event, event_elapsed_time, pinned_array, pinned_array_like, Device,
    get_current_device, list_devices, detect, defer_cleanup, close, pinned, gpus,
)
from ._kiln import Stream, Event  # noqa: F401


class _Intrinsic:
    """A name that only has a meaning inside kernels (kiln.grid, kiln.syncthreads...).

    The compiler recognises it by its ``_kiln_name``; calling it from the host
    is an error that says so."""

    __slots__ = ("_kiln_name",)

    def __init__(self, name):
        self._kiln_name = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self._kiln_name}() can only be used inside a kiln kernel")

    def __repr__(self):
        return f"<kiln intrinsic {self._kiln_name}>"


class _Namespace(_Intrinsic):
    __slots__ = ("_members",)

    def __init__(self, name, members):
        super().__init__(name)
        self._members = {m: _Intrinsic(f"{name}.{m}") for m in members}

    def __getattr__(self, attr):
        try:
            return self._members[attr]
        except KeyError:
            raise AttributeError(f"{self._kiln_name} has no attribute '{attr}'") from None

    def __dir__(self):
        return list(self._members)


threadIdx = _Namespace("kiln.threadIdx", ("x", "y", "z"))
blockIdx = _Namespace("kiln.blockIdx", ("x", "y", "z"))
blockDim = _Namespace("kiln.blockDim", ("x", "y", "z"))
gridDim = _Namespace("kiln.gridDim", ("x", "y", "z"))
laneid = _Intrinsic("kiln.laneid")
warpsize = 32
grid = _Intrinsic("kiln.grid")
gridsize = _Intrinsic("kiln.gridsize")
syncthreads = _Intrinsic("kiln.syncthreads")
syncwarp = _Intrinsic("kiln.syncwarp")
threadfence = _Intrinsic("kiln.threadfence")
threadfence_block = _Intrinsic("kiln.threadfence_block")
threadfence_system = _Intrinsic("kiln.threadfence_system")
shared = _Namespace("kiln.shared", ("array",))
local = _Namespace("kiln.local", ("array",))
atomic = _Namespace("kiln.atomic", ("add", "sub", "max", "min", "exch", "compare_and_swap", "cas",
                                    "and_", "or_", "xor", "inc", "dec"))
shfl_sync = _Intrinsic("kiln.shfl_sync")
shfl_down_sync = _Intrinsic("kiln.shfl_down_sync")
shfl_up_sync = _Intrinsic("kiln.shfl_up_sync")
shfl_xor_sync = _Intrinsic("kiln.shfl_xor_sync")
ballot_sync = _Intrinsic("kiln.ballot_sync")
all_sync = _Intrinsic("kiln.all_sync")
any_sync = _Intrinsic("kiln.any_sync")
activemask = _Intrinsic("kiln.activemask")
cbrt = _Intrinsic("kiln.cbrt")
fma = _Intrinsic("kiln.fma")
popc = _Intrinsic("kiln.popc")
brev = _Intrinsic("kiln.brev")
clz = _Intrinsic("kiln.clz")
ffs = _Intrinsic("kiln.ffs")
selp = _Intrinsic("kiln.selp")


# Numba names kiln does not provide, with what to use instead: a clear AttributeError
# rather than a bare one when a Numba file is run after `import kiln as cuda`.
_NOT_PROVIDED = {
    "mapped_array": "use kiln.pinned_array (page-locked) and kiln.to_device",
    "managed_array": "use kiln.device_array and copy explicitly",
    "mapped": "allocate with kiln.pinned_array and copy with kiln.to_device",
    "const": "pass the array as a kernel argument (reads of arguments are cached)",
    "fp16": "float16 is not supported yet (LANGUAGE.md: later)",
    "cg": "cooperative groups are not supported",
    "external_stream": "pass the stream object or its handle as the launch's stream",
    "per_thread_default_stream": "use kiln.stream()",
    "profile_start": "use the profiler's own controls",
    "profile_stop": "use the profiler's own controls",
    "current_context": "kiln uses each device's primary context; see kiln.get_current_device()",
    "require_context": "kiln makes the device's primary context current by itself",
}


def __getattr__(name):
    hint = _NOT_PROVIDED.get(name)
    if hint is not None:
        raise AttributeError(f"kiln has no '{name}' (a Numba CUDA name): {hint}")
    raise AttributeError(f"module 'kiln' has no attribute '{name}'")
