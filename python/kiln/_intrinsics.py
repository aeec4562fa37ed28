"""The names kernels use from ``kiln`` (kiln.grid, kiln.shared.array, kiln.float32, ...).

On the host they are markers: the compiler recognises each by its ``_kiln_name``,
and calling one from Python is an error that says where it belongs.  ``kiln``
re-exports them; kernels that kiln writes itself (vectorize, reduce) see them
through ``namespace``, a module named ``kiln`` that holds only these names, so
the code that writes those kernels does not import the package above it.

Imports nothing of kiln but ``_types``.
"""

import types

from . import _types


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
syncthreads_and = _Intrinsic("kiln.syncthreads_and")
syncthreads_or = _Intrinsic("kiln.syncthreads_or")
syncthreads_count = _Intrinsic("kiln.syncthreads_count")
threadfence = _Intrinsic("kiln.threadfence")
threadfence_block = _Intrinsic("kiln.threadfence_block")
threadfence_system = _Intrinsic("kiln.threadfence_system")
shared = _Namespace("kiln.shared", ("array",))
local = _Namespace("kiln.local", ("array",))
const = _Namespace("kiln.const", ("array_like",))
atomic = _Namespace("kiln.atomic", ("add", "sub", "max", "min", "nanmax", "nanmin", "exch",
                                    "compare_and_swap", "cas", "and_", "or_", "xor", "inc", "dec"))
# Numba's cuda.fp16: float16 arithmetic, comparisons and math functions
fp16 = _Namespace("kiln.fp16", (
    "hadd", "hsub", "hmul", "hdiv", "hmax", "hmin", "heq", "hne", "hgt", "hge", "hlt", "hle",
    "hfma", "hneg", "habs", "hsin", "hcos", "hlog", "hlog2", "hlog10", "hexp", "hexp2", "hexp10",
    "hsqrt", "hrsqrt", "hceil", "hfloor", "hrcp", "htrunc", "hrint"))
# Numba's cuda.cg: cuda.cg.this_grid() and the group's g.sync() (a cooperative launch)
cg = _Namespace("kiln.cg", ("this_grid",))
shfl_sync = _Intrinsic("kiln.shfl_sync")
shfl_down_sync = _Intrinsic("kiln.shfl_down_sync")
shfl_up_sync = _Intrinsic("kiln.shfl_up_sync")
shfl_xor_sync = _Intrinsic("kiln.shfl_xor_sync")
ballot_sync = _Intrinsic("kiln.ballot_sync")
all_sync = _Intrinsic("kiln.all_sync")
any_sync = _Intrinsic("kiln.any_sync")
activemask = _Intrinsic("kiln.activemask")
eq_sync = _Intrinsic("kiln.eq_sync")
lanemask_lt = _Intrinsic("kiln.lanemask_lt")
match_any_sync = _Intrinsic("kiln.match_any_sync")
match_all_sync = _Intrinsic("kiln.match_all_sync")
cbrt = _Intrinsic("kiln.cbrt")
fma = _Intrinsic("kiln.fma")
popc = _Intrinsic("kiln.popc")
# loads and stores with a cache hint (Numba's): ldcs(array, i), stcs(array, i, value)
ldca = _Intrinsic("kiln.ldca")
ldcg = _Intrinsic("kiln.ldcg")
ldcs = _Intrinsic("kiln.ldcs")
ldlu = _Intrinsic("kiln.ldlu")
ldcv = _Intrinsic("kiln.ldcv")
stcg = _Intrinsic("kiln.stcg")
stcs = _Intrinsic("kiln.stcs")
stwb = _Intrinsic("kiln.stwb")
stwt = _Intrinsic("kiln.stwt")
brev = _Intrinsic("kiln.brev")
clz = _Intrinsic("kiln.clz")
ffs = _Intrinsic("kiln.ffs")
selp = _Intrinsic("kiln.selp")


def _namespace():
    """A module named ``kiln`` with the kernel-side names: the intrinsics and the
    dtypes (kiln.float32, ...)."""
    ns = types.ModuleType("kiln", "the names kernels use from kiln")
    for name, value in globals().items():
        if isinstance(value, _Intrinsic) or name == "warpsize":
            setattr(ns, name, value)
    for name, value in vars(_types).items():
        if isinstance(value, _types.Type):
            setattr(ns, name, value)
    return ns


namespace = _namespace()
