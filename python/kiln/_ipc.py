"""GPU memory shared between processes: Numba's IPC handles, and the GPU's current context.

``DeviceArray.get_ipc_handle()`` gives an ``IpcArrayHandle`` that pickles; another process
of the same user opens it (``with handle as array:``) and sees the same GPU memory, not a
copy.  ``current_context().get_ipc_handle(array.gpu_data)`` gives the lower-level
``IpcHandle``, whose ``handle.reserved`` bytes ``kiln.open_ipc_array`` opens.

kiln's arrays come from an exportable memory pool of kiln's own (src/target/cuda_ipc.c):
the bytes describe the allocation, and the exporting process hands the pool's file
descriptor to the importer over a Unix socket (src/util/fdserve.c), so the exporting
process must still be running when a handle is opened.  Memory that another library
allocated with cuMemAlloc is shared through the driver's legacy handle.  As in Numba, the
memory must stay alive in the exporting process while other processes have it open
(the handle keeps the array it came from alive there), and a closed handle's arrays must
not be used.  docs/ipc.md says more."""

from . import _kiln
from ._cuda import (DeviceArray, Device, HostContext, MemoryRegion, _code, _np, host_ipc_refusal,
                    on_host)




class _Reserved:
    """Numba's ``IpcHandle.handle``: ``reserved`` is the bytes another process opens."""

    __slots__ = ("reserved",)

    def __init__(self, reserved):
        self.reserved = bytes(reserved)

    def __eq__(self, other):
        return isinstance(other, _Reserved) and other.reserved == self.reserved

    def __hash__(self):
        return hash(self.reserved)

    def __repr__(self):
        return f"<kiln IPC handle bytes ({len(self.reserved)})>"


def _span(shape, strides, itemsize):
    """(lowest, highest + 1) byte of an array of these strides, from its first element."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, 0
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


def _array_desc(shape, dtype, strides):
    np = _np()
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) or hasattr(shape, "__index__") else shape
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"an array shape has no negative sizes: {shape}")
    if strides is None:
        strides, s = [0] * len(shape), dtype.itemsize
        for i in range(len(shape) - 1, -1, -1):
            strides[i] = s
            s *= shape[i]
    strides = (strides,) if isinstance(strides, int) else tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"strides {strides} do not match shape {shape}")
    return shape, dtype, strides


class IpcHandle:
    """GPU memory of one process that another can open (Numba's ``IpcHandle``): ``handle``
    (its ``reserved`` bytes), ``size`` (bytes), ``offset`` (of the memory in the allocation
    that the bytes describe), ``base`` (what it came from, kept alive; None in another
    process) and ``source_info``.  It pickles; ``open()`` in another process maps the
    memory, ``close()`` unmaps it."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = handle if isinstance(handle, _Reserved) else _Reserved(handle)
        self.size = int(size)
        self.source_info = source_info
        self.offset = int(offset)
        self._opened = None  # (pointer, device, kind to close, allocation bytes)

    def __reduce__(self):
        return (_rebuild_handle, (self.handle.reserved, self.size, self.source_info, self.offset))

    def open(self, context=None):
        """Maps the memory into this process; its MemoryRegion.  A handle opens once at a
        time (ValueError otherwise)."""
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")
        if on_host():
            raise host_ipc_refusal()
        opened = _kiln.ipc_open(self.handle.reserved)
        if self.offset < 0 or self.offset + self.size > opened[3]:
            _kiln.ipc_close(opened[2], opened[1], opened[0])
            raise ValueError(f"this handle's memory ({self.size} bytes at offset {self.offset}) "
                             f"is not inside the shared allocation ({opened[3]} bytes)")
        self._opened = opened
        return MemoryRegion(opened[0] + self.offset, self.size, opened[1])

    def open_staged(self, context=None):
        """Numba's open for a device other than the memory's: kiln maps the memory on its
        own device (peer access is the driver's), so this is ``open()``."""
        return self.open(context)

    def open_array(self, context, shape, dtype, strides=None):
        """Maps the memory and returns a DeviceArray of that shape, dtype and strides over
        it (not a copy); the array must fit in the handle's ``size``."""
        shape, dtype, strides = _array_desc(shape, dtype, strides)
        lo, hi = _span(shape, strides, dtype.itemsize)
        if hi - lo > self.size:
            raise ValueError(f"an array of shape {shape} and strides {strides} spans {hi - lo} "
                             f"bytes; the handle's memory has {self.size}")
        mem = self.open(context)
        try:
            return _kiln.wrap(mem.device_pointer - lo, shape, strides, _code(dtype), mem.device,
                              self)
        except BaseException:
            self.close()
            raise

    def close(self):
        """Unmaps what open() mapped (after the device's work on it is done)."""
        if self._opened is None:
            raise ValueError("IpcHandle not opened")
        ptr, dev, kind, _ = self._opened
        self._opened = None
        _kiln.ipc_close(kind, dev, ptr)

    def __repr__(self):
        return f"<kiln.IpcHandle of {self.size} bytes at offset {self.offset}>"


def _rebuild_handle(reserved, size, source_info, offset):
    return IpcHandle(None, _Reserved(reserved), size, source_info, offset)


class IpcArrayHandle:
    """A DeviceArray another process can open (Numba's ``IpcArrayHandle``, from
    ``DeviceArray.get_ipc_handle()``): ``with handle as array:`` maps it for the block.
    It pickles."""

    def __init__(self, ipc_handle, array_desc):
        self._ipc_handle = ipc_handle
        self._array_desc = array_desc

    def open(self):
        """The DeviceArray over the shared memory (open once at a time)."""
        d = self._array_desc
        return self._ipc_handle.open_array(None, d["shape"], d["dtype"], d["strides"])

    def close(self):
        """Unmaps what open() mapped."""
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False


def array_ipc_handle(self):
    """An IpcArrayHandle of the array (Numba's ``DeviceNDArray.get_ipc_handle()``): it
    pickles, and another process opens it with ``with handle as array:``."""
    if self._device < 0:
        raise host_ipc_refusal()
    handle = Context(self._device).get_ipc_handle(self.gpu_data)
    return IpcArrayHandle(handle, {"shape": self.shape, "strides": self.strides,
                                   "dtype": self.dtype})


class Context:
    """The current device's context on the GPU (Numba's ``cuda.current_context()``): kiln
    uses each device's primary context and makes it current itself.  ``device``,
    ``get_memory_info()``, ``synchronize()``, ``get_ipc_handle(memory)``."""

    def __init__(self, device_id):
        self.device = Device(device_id)

    def get_memory_info(self):
        """(free, total) bytes of the device's memory."""
        return _kiln.mem_info(self.device.id)

    def synchronize(self):
        """Waits for the device's work (reports kernel errors, as kiln.synchronize)."""
        with self.device:
            _kiln.synchronize()

    def get_ipc_handle(self, memory):
        """An IpcHandle of GPU memory: a DeviceArray's ``gpu_data`` (or the array itself),
        or any object with ``device_pointer`` and ``size``."""
        if isinstance(memory, DeviceArray):
            memory = memory.gpu_data
        ptr, size = getattr(memory, "device_pointer", None), getattr(memory, "size", None)
        if not isinstance(ptr, int) or not isinstance(size, int):
            raise TypeError(f"get_ipc_handle takes GPU memory (a DeviceArray's gpu_data), not "
                            f"{type(memory).__name__}")
        if getattr(memory, "device", 0) == -1:
            raise host_ipc_refusal()
        if size == 0:
            raise ValueError("an empty array has no memory to share")
        reserved, offset, alloc, dev = _kiln.ipc_export(ptr)
        return IpcHandle(memory, _Reserved(reserved), size, {"device": dev}, offset)

    def __repr__(self):
        return f"<kiln.Context of device {self.device.id}>"


def current_context(devnum=None):
    """The GPU's context (with KILN_TARGET=cpu, the host's: kiln.HostContext)."""
    if on_host():
        return HostContext()
    return Context(_kiln.current_device() if devnum is None else int(devnum))


def require_context(fn):
    """Numba's decorator: kiln makes the device's context current by itself."""
    return fn


class open_ipc_array:
    """``with kiln.open_ipc_array(handle, shape, dtype) as array:``: the DeviceArray over
    another process's memory that ``handle`` (an IpcHandle's ``handle.reserved`` bytes)
    describes, mapped for the block.  (A class, not contextlib's decorator: contextlib
    costs `import kiln` 2 ms.)"""

    def __init__(self, handle, shape, dtype, strides=None, offset=0):
        self._args = (handle, shape, dtype, strides, offset)
        self._ipch = None

    def __enter__(self):
        handle, shape, dtype, strides, offset = self._args
        shape, dtype, strides = _array_desc(shape, dtype, strides)
        lo, hi = _span(shape, strides, dtype.itemsize)
        ipch = IpcHandle(None, _Reserved(getattr(handle, "reserved", handle)), hi - lo,
                         offset=offset)
        array = ipch.open_array(None, shape, dtype, strides)
        self._ipch = ipch
        return array

    def __exit__(self, *exc):
        ipch, self._ipch = self._ipch, None
        if ipch is not None:
            ipch.close()
        return False


# a method of DeviceArray, set here so that _cuda need not import this module
DeviceArray.get_ipc_handle = array_ipc_handle
