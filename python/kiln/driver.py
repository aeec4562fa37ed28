"""Numba's ``cuda.driver`` copy functions, for programs that move raw device memory:
``device_to_host``, ``host_to_device`` and ``device_to_device`` of ``size`` bytes.

Device memory is a DeviceArray, its ``gpu_data`` (or an IPC handle's opened memory), or
an address as an int; host memory is a NumPy array or another buffer, contiguous, and
writable for ``device_to_host``.  The rest of Numba's driver layer (contexts, modules,
linkers) is not kiln's: kiln uses each device's primary context itself
(docs/language.md)."""
from . import _kiln
from ._cuda import DeviceArray


def _device_memory(obj, what):
    """(address, device) of device memory given as Numba's driver functions take it."""
    if isinstance(obj, DeviceArray):
        obj = obj.gpu_data
    ptr = getattr(obj, "device_pointer", obj)
    if isinstance(ptr, bool) or not isinstance(ptr, int) or ptr < 0:
        raise TypeError(f"{what} is device memory (a DeviceArray, its gpu_data or an address), "
                        f"not {type(obj).__name__}")
    dev = getattr(obj, "device", None)
    return ptr, _kiln.current_device() if not isinstance(dev, int) else dev


def _size(size):
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"size is a number of bytes (an int >= 0), not {size!r}")
    return size


def device_to_host(dst, src, size, stream=0):
    """Copies size bytes of device memory src into the host buffer dst."""
    ptr, dev = _device_memory(src, "src")
    _kiln.copy("d2h", dev, dst, ptr, _size(size), stream)


def host_to_device(dst, src, size, stream=0):
    """Copies size bytes of the host buffer src into device memory dst."""
    ptr, dev = _device_memory(dst, "dst")
    _kiln.copy("h2d", dev, ptr, src, _size(size), stream)


def device_to_device(dst, src, size, stream=0):
    """Copies size bytes of device memory src into device memory dst."""
    dptr, dev = _device_memory(dst, "dst")
    sptr, _ = _device_memory(src, "src")
    _kiln.copy("d2d", dev, dptr, sptr, _size(size), stream)


class _Driver:
    """Numba's ``cuda.driver.driver``: the CUDA driver kiln loaded."""

    def get_version(self):
        """``(major, minor)`` of the CUDA version the driver supports (cuDriverGetVersion);
        ``kiln.CudaError`` where there is no driver (no GPU)."""
        v = _kiln.cuda_info()["driver"]
        return (v // 1000, (v % 1000) // 10)

    @property
    def is_available(self):
        return bool(_kiln.cuda_available()[0])

    def __repr__(self):
        return "<kiln CUDA driver>"


driver = _Driver()
