"""CUDA's libdevice functions in kernels (Numba's ``cuda.libdevice``): ``libdevice.sin(x)``,
``libdevice.sincos(x)`` (a tuple of both), ``libdevice.fdiv_rz(a, b)``, ``libdevice.umulhi(a,
b)``...: every ``__nv_NAME`` function of the toolkit's libdevice that takes and gives numbers,
called by ``NAME``.  A function that stores results through pointers returns them, after its
own result if it has one, as a tuple (``frac, exp = libdevice.frexp(x)``).  GPU only: a kernel
compiled for the CPU that calls one is a CompileError.  The list and the types come from the
libdevice bitcode (tools/gen_libdevice.py); docs/language.md says how signedness and pointers
are read from it.

On the host these are markers, as kiln.grid is: calling one outside a kernel is a TypeError.
"""
from ._intrinsics import _Intrinsic
from ._libdevice_table import TABLE

_kiln_name = "kiln.libdevice"  # the compiler's namespace for this module (kiln._compile)

__all__ = [name for name, _r, _p, _o in TABLE]
globals().update({name: _Intrinsic(f"kiln.libdevice.{name}") for name in __all__})


def __dir__():
    return __all__
