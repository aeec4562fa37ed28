"""GPU memory for Python: kiln.DeviceArray and the host-side API.

The memory itself, the launch path's view of it and the copies are C (see
_ext/devarray.c); this module gives the arrays their NumPy-facing methods
(dtype, copy_to_host, slicing, __cuda_array_interface__, __dlpack__) with
Numba's names.  NumPy is imported when a method needs it.
"""

import math

from . import _kiln
from ._types import DTYPE_NAMES, dtype_code


def _np():
    import numpy

    return numpy


_codes = {}  # numpy dtype -> kiln dtype code: dtype.name is slow, and this is per call


def _code(dtype):
    code = _codes.get(dtype) if dtype.__hash__ is not None else None
    if code is not None:
        return code
    np = _np()
    dt = np.dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, np.dtype) else dtype)
    code = dtype_code(dt.name)
    if code is None:
        raise TypeError(f"kiln device arrays do not support dtype {dt}")
    if isinstance(dtype, np.dtype):
        _codes[dtype] = code
    return code


def _typestr(code):
    name = DTYPE_NAMES[code]
    return _np().dtype(name).str


class DeviceArray(_kiln.DeviceArrayBase):
    """An array in GPU memory (Numba's DeviceNDArray).

    ``kiln.to_device(a)`` makes one from a host array; ``.copy_to_host()`` brings it
    back.  It exposes ``__cuda_array_interface__`` and ``__dlpack__``, so CuPy,
    PyTorch and JAX take it without a copy."""

    @property
    def dtype(self):
        """The elements' NumPy dtype."""
        return _np().dtype(DTYPE_NAMES[self._dtype_code])

    @property
    def device(self):
        """The ordinal of the GPU that holds the memory."""
        return self._device

    def is_c_contiguous(self):
        """Whether the elements lie in C order with no gaps."""
        s = self.itemsize
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and st != s:
                return False
            s *= n
        return True

    def is_f_contiguous(self):
        """Whether the elements lie in Fortran order with no gaps."""
        s = self.itemsize
        for n, st in zip(self.shape, self.strides):
            if n != 1 and st != s:
                return False
            s *= n
        return True

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": _typestr(self._dtype_code),
            "data": (self._ptr, False),
            "version": 3,
            "stream": 1,  # work is ordered on the legacy default stream
        }

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if stream not in (None, 1, 2, -1):
            _kiln.synchronize()  # the consumer's stream must see our finished work
        return _kiln.dlpack_capsule(self)

    def __dlpack_device__(self):
        return (2, self._device)

    def copy_to_host(self, ary=None, stream=0):
        """A NumPy array with the contents (or the contents copied into `ary`)."""
        np = _np()
        if self.is_c_contiguous() or self.is_f_contiguous():
            order = "C" if self.is_c_contiguous() else "F"
            out = np.empty(self.shape, self.dtype, order=order)
            _kiln.copy("d2h", self._device, out, self._ptr, self.nbytes, stream)
        else:
            lo, hi = self._span
            raw = np.empty(hi - lo, np.uint8)
            _kiln.copy("d2h", self._device, raw, self._ptr + lo, hi - lo, stream)
            view = np.lib.stride_tricks.as_strided(raw[-lo:].view(self.dtype), self.shape, self.strides)
            out = np.ascontiguousarray(view)
        if ary is None:
            return out
        if ary.shape != self.shape:
            raise ValueError(f"copy_to_host: ary has shape {ary.shape}, the array {self.shape}")
        ary[...] = out
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copies a host array (of the same shape) into this array."""
        np = _np()
        src = np.asarray(ary, dtype=self.dtype)
        if src.shape != self.shape:
            raise ValueError(f"copy_to_device: ary has shape {src.shape}, the array {self.shape}")
        if self.is_c_contiguous():
            src = np.ascontiguousarray(src)
        elif self.is_f_contiguous():
            src = np.asfortranarray(src)
        else:
            raise ValueError("copy_to_device needs a contiguous device array")
        _kiln.copy("h2d", self._device, self._ptr, src, self.nbytes, stream)

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            k = idx.index(Ellipsis)
            fill = self.ndim - (len(idx) - 1)
            idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
        if len(idx) > self.ndim:
            raise IndexError(f"too many indices for array: array is {self.ndim}-dimensional, "
                             f"but {len(idx)} were indexed")
        offset, shape, strides = 0, [], []
        for k, (n, st) in enumerate(zip(self.shape, self.strides)):
            i = idx[k] if k < len(idx) else slice(None)
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                length = len(range(start, stop, step))
                offset += start * st
                shape.append(length)
                strides.append(st * step)
            else:
                i = int(i)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {idx[k]} is out of bounds for axis {k} with size {n}")
                offset += i * st
        view = _kiln.device_view(self, offset, tuple(shape), tuple(strides))
        if not shape:  # every axis indexed: a scalar, as NumPy gives
            return view.copy_to_host()[()]
        return view

    def reshape(self, *shape, order="C"):
        """A view with another shape (one dimension may be -1); the array must be
        contiguous in ``order`` ('C' or 'F')."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        size = 1
        unknown = [i for i, s in enumerate(shape) if s == -1]
        for s in shape:
            if s != -1:
                size *= s
        if unknown:
            shape = list(shape)
            shape[unknown[0]] = self.size // size if size else 0
            shape = tuple(shape)
            size = self.size
        if size != self.size:
            raise ValueError(f"cannot reshape an array of size {self.size} into shape {shape}")
        if order == "C" and not self.is_c_contiguous() or order == "F" and not self.is_f_contiguous():
            raise ValueError("reshape needs an array contiguous in that order; copy it first")
        strides, s = [0] * len(shape), self.itemsize
        dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
        for i in dims:
            strides[i] = s
            s *= shape[i]
        return _kiln.device_view(self, 0, tuple(shape), tuple(strides))

    def ravel(self, order="C"):
        """A one-dimensional view of a contiguous array."""
        return self.reshape(self.size, order=order)

    @property
    def T(self):
        """The transposed view (dimensions and strides reversed)."""
        return _kiln.device_view(self, 0, self.shape[::-1], self.strides[::-1])

    def __repr__(self):
        return f"<kiln.DeviceArray shape={self.shape} dtype={self.dtype} device={self._device}>"


_kiln.set_device_array_class(DeviceArray)


def _is_gpu_array(obj):
    if isinstance(obj, DeviceArray):
        return True
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] == 2
        except Exception:
            return False
    return False


_typestrs = {}  # __cuda_array_interface__ typestr -> (kiln dtype code, itemsize)


def _typestr_info(typestr):
    got = _typestrs.get(typestr)
    if got is None:
        dt = _np().dtype(typestr)
        got = _typestrs[typestr] = (_code(dt), dt.itemsize)
    return got


def as_cuda_array(obj):
    """A DeviceArray viewing another library's GPU array without a copy."""
    if isinstance(obj, DeviceArray):
        return obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        code, isz = _typestr_info(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides, s = [0] * len(shape), isz
            for i in range(len(shape) - 1, -1, -1):
                strides[i] = s
                s *= shape[i]
        ptr = cai["data"][0]
        return _kiln.wrap(ptr, shape, tuple(strides), code, _device_of(obj), obj)
    raise TypeError(f"{type(obj).__name__} is not a GPU array (no __cuda_array_interface__)")


def _device_of(obj):
    dev = getattr(obj, "device", None)
    for attr in ("id", "index"):
        v = getattr(dev, attr, None)
        if isinstance(v, int):
            return v
    if isinstance(dev, int):
        return dev
    return _kiln.current_device()


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a host array to the GPU; returns a DeviceArray."""
    if isinstance(obj, DeviceArray):
        return obj
    np = _np()
    a = np.asarray(obj)
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        a = np.ascontiguousarray(a)
    order = "C" if a.flags.c_contiguous else "F"
    d = _kiln.device_empty(a.shape, _code(a.dtype), order, _kiln.current_device(), stream)
    if to is not None:
        d = to
    _kiln.copy("h2d", d._device, d._ptr, a, a.nbytes, stream)
    return d


def device_array(shape, dtype=None, strides=None, order="C", stream=0):
    """An uninitialised DeviceArray (Numba's cuda.device_array)."""
    np = _np()
    if isinstance(shape, int):
        shape = (shape,)
    d = _kiln.device_empty(tuple(shape), _code(np.dtype(dtype if dtype is not None else np.float64)),
                           order, _kiln.current_device(), stream)
    if strides is not None and tuple(strides) != d.strides:
        raise ValueError("custom strides are not supported; use order='C' or 'F'")
    return d


def device_array_like(ary, stream=0):
    """A DeviceArray of the shape, dtype and order of another array."""
    order = "F" if getattr(getattr(ary, "flags", None), "f_contiguous", False) and not \
        getattr(ary.flags, "c_contiguous", True) else "C"
    return device_array(ary.shape, ary.dtype, order=order, stream=stream)


def stream():
    """A new CUDA stream on the current device."""
    return _kiln.stream(_kiln.current_device())


def default_stream():
    """The current device's default (legacy) stream, as a kiln.Stream."""
    return _kiln.default_stream(_kiln.current_device())


# ---- events, page-locked memory, devices (Numba's names) -----------------------------------

def event(timing=True):
    """A CUDA event on the current device (Numba's cuda.event): ``e.record(stream)``,
    ``e.synchronize()``, ``e.query()``, ``e.wait(stream)``, ``start.elapsed_time(end)`` in ms."""
    return _kiln.event(_kiln.current_device(), bool(timing))


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events (Numba's cuda.event_elapsed_time)."""
    return _kiln.event_elapsed_time(evtstart, evtend)


def pinned_array(shape, dtype=None, strides=None, order="C"):
    """A NumPy array in page-locked host memory, which copies to and from the GPU at full
    speed and asynchronously (Numba's cuda.pinned_array)."""
    np = _np()
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F'")
    dt = np.dtype(dtype if dtype is not None else np.float64)
    count = math.prod(shape)
    buf = _kiln.pinned_alloc(_kiln.current_device(), count * dt.itemsize)
    a = np.frombuffer(buf, dt, count).reshape(shape, order=order)
    if strides is not None and tuple(strides) != a.strides:
        raise ValueError("custom strides are not supported; use order='C' or 'F'")
    return a


def pinned_array_like(ary):
    """A page-locked array of the shape, dtype and order of another array."""
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    return pinned_array(ary.shape, ary.dtype, order=order)


class pinned:
    """``with kiln.pinned(a, b): ...`` page-locks existing NumPy arrays for the block, so
    copies of them to and from the GPU run at full speed (Numba's cuda.pinned).  Arrays
    must be contiguous and writable; memory that is already pinned is left as it is."""

    def __init__(self, *arrays):
        self._arrays = arrays
        self._done = []

    def __enter__(self):
        dev = _kiln.current_device()
        try:
            for i, a in enumerate(self._arrays):
                try:
                    changed = _kiln.host_register(dev, a, True)
                except (BufferError, ValueError) as e:  # NumPy raises ValueError
                    raise ValueError(f"kiln.pinned: argument {i + 1} is not a contiguous, "
                                     f"writable host array ({e})") from None
                if changed:
                    self._done.append((dev, a))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        while self._done:
            dev, a = self._done.pop()
            _kiln.host_register(dev, a, False)
        return False


_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1, "MAX_BLOCK_DIM_X": 2, "MAX_BLOCK_DIM_Y": 3, "MAX_BLOCK_DIM_Z": 4,
    "MAX_GRID_DIM_X": 5, "MAX_GRID_DIM_Y": 6, "MAX_GRID_DIM_Z": 7,
    "MAX_SHARED_MEMORY_PER_BLOCK": 8, "TOTAL_CONSTANT_MEMORY": 9, "WARP_SIZE": 10,
    "MAX_REGISTERS_PER_BLOCK": 12, "CLOCK_RATE": 13, "MULTIPROCESSOR_COUNT": 16,
    "INTEGRATED": 18, "CAN_MAP_HOST_MEMORY": 19, "CONCURRENT_KERNELS": 31, "ECC_ENABLED": 32,
    "PCI_BUS_ID": 33, "PCI_DEVICE_ID": 34, "MEMORY_CLOCK_RATE": 36,
    "GLOBAL_MEMORY_BUS_WIDTH": 37, "L2_CACHE_SIZE": 38, "MAX_THREADS_PER_MULTIPROCESSOR": 39,
    "ASYNC_ENGINE_COUNT": 40, "UNIFIED_ADDRESSING": 41, "PCI_DOMAIN_ID": 50,
    "COMPUTE_CAPABILITY_MAJOR": 75, "COMPUTE_CAPABILITY_MINOR": 76,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81, "MAX_REGISTERS_PER_MULTIPROCESSOR": 82,
    "MANAGED_MEMORY": 83, "COOPERATIVE_LAUNCH": 95, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
}


class Device:
    """A CUDA device (Numba's cuda.get_current_device()): ``id``, ``name``,
    ``compute_capability`` and the driver's attributes by their Numba names
    (``MULTIPROCESSOR_COUNT``, ``MAX_THREADS_PER_BLOCK``, ``WARP_SIZE``...)."""

    def __init__(self, device_id):
        info = _kiln.cuda_info()
        if not 0 <= device_id < len(info["devices"]):
            raise ValueError(f"device {device_id} does not exist (this machine has "
                             f"{len(info['devices'])})")
        self.id = device_id
        self.name = info["devices"][device_id][0]
        cc = info["devices"][device_id][1]
        self.compute_capability = (cc // 10, cc % 10)

    def __getattr__(self, attr):
        code = _ATTRIBUTES.get(attr)
        if code is None:
            raise AttributeError(f"kiln.Device has no attribute '{attr}'")
        return _kiln.device_attribute(self.id, code)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_ATTRIBUTES))

    def __enter__(self):
        """``with kiln.gpus[1]:`` selects the device for the block."""
        self._previous = _kiln.current_device()
        _kiln.select_device(self.id)
        return self

    def __exit__(self, *exc):
        _kiln.select_device(self._previous)
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<kiln.Device {self.id} '{self.name}' sm_{self.compute_capability[0]}{self.compute_capability[1]}>"


def get_current_device():
    """The selected device (kiln.select_device), as a kiln.Device."""
    return Device(_kiln.current_device())


def list_devices():
    """Every CUDA device of the machine, as kiln.Device objects."""
    return [Device(i) for i in range(len(_kiln.cuda_info()["devices"]))]


class _GPUs:
    """``kiln.gpus``: the machine's CUDA devices as a sequence (Numba's cuda.gpus)."""

    def __len__(self):
        return len(_kiln.cuda_info()["devices"]) if _kiln.cuda_available()[0] else 0

    def __getitem__(self, i):
        return list_devices()[i]

    def __iter__(self):
        return iter(list_devices())

    @property
    def current(self):
        return get_current_device()

    def __repr__(self):
        return f"<kiln.gpus: {len(self)} device(s)>"


gpus = _GPUs()


def detect():
    """Prints the CUDA devices kiln sees and returns whether there is at least one
    (Numba's cuda.detect)."""
    ok, why = _kiln.cuda_available()
    if not ok:
        print(f"kiln: no CUDA GPU can be used: {why}")
        return False
    devs = list_devices()
    print(f"Found {len(devs)} CUDA device{'s' if len(devs) != 1 else ''}")
    for d in devs:
        cc = d.compute_capability
        print(f"id {d.id} {d.name!r:>30} sm_{cc[0]}{cc[1]}  {d.MULTIPROCESSOR_COUNT} SMs")
    return True


class defer_cleanup:
    """Numba's cuda.defer_cleanup(): kiln frees device memory when its last reference goes
    (stream-ordered), so there is nothing to defer; the context manager is accepted."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def close():
    """Numba's cuda.close(): kiln keeps the primary context, which other libraries share;
    this waits for all GPU work and reports kernel errors, as a clean end of GPU use."""
    if _kiln.cuda_available()[0]:
        _kiln.synchronize()
