"""Numba's ``cuda.runtime``: the version of the CUDA toolkit kiln compiles with.

kiln loads no CUDA runtime library (cudart): NVRTC compiles the kernels and the driver
launches them, so the runtime's version is NVRTC's, the toolkit's (``(13, 0)``).  It is
known without a GPU; without NVRTC it is a ``kiln.CudaError`` saying so."""
from . import _kiln
from ._kiln import CudaError


def get_version():
    """``(major, minor)`` of the CUDA toolkit (NVRTC) kiln compiles with."""
    v = _kiln.nvrtc_version()
    if v is None:
        raise CudaError("no CUDA runtime: kiln found no NVRTC (libnvrtc), which it compiles "
                        "CUDA kernels with; install the CUDA toolkit's NVRTC or set "
                        "KILN_NVRTC to its path")
    return (v // 1000, (v % 1000) // 10)


def is_supported_version():
    """Whether kiln can compile CUDA kernels here (it found NVRTC)."""
    return _kiln.nvrtc_version() is not None


def get_runtime_build_version():
    """The same as ``get_version()``: kiln has no runtime of its own build."""
    return get_version()
