"""Numba's ``numba.cuda.cudadrv.devicearray`` names for code that imports them
(``cuda.devicearray.auto_device(x)``, ``isinstance(a, DeviceNDArray)``): aliases of
kiln.DeviceArray and thin helpers over kiln's device-array API (kiln/_cuda.py)."""

from ._cuda import DeviceArray, _is_device_array, device_array, to_device

DeviceNDArray = DeviceArray       # Numba's class of device arrays
DeviceNDArrayBase = DeviceArray   # and its base


def is_cuda_ndarray(obj):
    """Whether obj is a kiln device array (Numba's check for its DeviceNDArray)."""
    return isinstance(obj, DeviceArray)


def verify_cuda_ndarray_interface(obj):
    """Raises AttributeError unless obj has a device array's attributes."""
    for attr in ("shape", "strides", "dtype", "size"):
        if not hasattr(obj, attr):
            raise AttributeError(f"{type(obj).__name__} has no '{attr}': not a device array")


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """``(device array, converted)``: obj itself (False) when it is already on the device,
    else a copy of it on the device (True); a scalar becomes a 0-d array.  A host array must
    be contiguous (C or F order): a strided one is a ValueError, as Numba's."""
    if _is_device_array(obj):
        return obj, False
    import numpy as np

    a = np.asarray(obj)
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise ValueError("Array contains non-contiguous buffer: auto_device copies contiguous "
                         "arrays only; pass np.ascontiguousarray(a) or kiln.to_device(a)")
    if not copy:
        return device_array(a.shape, a.dtype, strides=a.strides, stream=stream), True
    return to_device(a, stream=stream), True


def from_array_like(ary, stream=0):
    """An uninitialised device array of ary's shape, strides and dtype."""
    return device_array(ary.shape, ary.dtype, strides=ary.strides, stream=stream)


__all__ = ["DeviceNDArray", "DeviceNDArrayBase", "is_cuda_ndarray",
           "verify_cuda_ndarray_interface", "auto_device", "from_array_like"]
