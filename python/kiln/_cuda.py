"""GPU memory for Python: kiln.DeviceArray and the host-side API.

The memory itself, the launch path's view of it and the copies are C (see
_ext/devarray.c); this module gives the arrays their NumPy-facing methods
(dtype, copy_to_host, slicing, __cuda_array_interface__, __dlpack__) with
Numba's names.  NumPy is imported when a method needs it.

With KILN_TARGET=cpu the same API works on host memory (docs/cpu-device-api.md):
new arrays, streams and events go to the "device" HOST, which the C functions
serve without the driver; host-backed arrays expose __array_interface__ instead
of __cuda_array_interface__, and kernels on the CPU target take them without a
copy.  The device queries answer for HostDevice, the CPU target's stand-in.
"""

import math
import operator
import os

from . import _cai, _kiln
from ._types import DTYPE_NAMES, bfloat16, dtype_code


def _np():
    import numpy

    return numpy


_codes = {}  # numpy dtype -> kiln dtype code: dtype.name is slow, and this is per call


def _code(dtype):
    code = _codes.get(dtype) if dtype.__hash__ is not None else None
    if code is not None:
        return code
    np = _np()
    dt = np.dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, (np.dtype, list))
                  else dtype)
    if dt.fields is not None or dt.kind in "MmSU":  # a structured, datetime or string
        # dtype: its id in the record registry (kiln/_records.py)
        if dt.kind in "Mm" and np.datetime_data(dt)[0] == "generic":
            raise TypeError(f"kiln device arrays of {dt} need a unit ({dt}[D], {dt}[ns]...)")
        code = 32 + _kiln.record_id(dt)
    else:
        if not dt.isnative:  # its name is the native type's: the bytes would be misread
            raise TypeError(f"kiln device arrays hold native byte order; {dt} is not: convert "
                            f"with a.astype(a.dtype.newbyteorder('='))")
        code = dtype_code(dt.name)
    if code is None:
        raise TypeError(f"kiln device arrays do not support dtype {dt}")
    if isinstance(dtype, np.dtype):
        _codes[dtype] = code
    return code


def _dtype_of(code):
    """The NumPy dtype of a kiln dtype code (32 and up: a record's)."""
    if code >= 32:
        return _kiln.record_dtype(code - 32)
    if DTYPE_NAMES[code] == "bfloat16":  # ml_dtypes' (NumPy has none): kiln._types says how
        return bfloat16.dtype
    return _np().dtype(DTYPE_NAMES[code])


def _bytes(a):
    """A host array the extension's copies can read: an ml_dtypes.bfloat16 array as its
    uint16 view (NumPy exports no buffer of a user dtype), any other as it is."""
    # dtype.type's name, not dtype.name: NumPy computes the latter in Python (2 us a call)
    return a.view(_np().uint16) if a.dtype.type.__name__ == "bfloat16" else a


def _typestr(code):
    return _dtype_of(code).str


HOST = -1  # the device ordinal of host memory (EXT_HOST_DEVICE in _ext/driver.h)


def on_host():
    """Whether kiln's device API works on host memory: the target is explicitly the
    CPU (KILN_TARGET=cpu).  Read at each call, as the launch path reads it (getenv in C:
    os.environ writes go to the C environment too)."""
    return _kiln.default_device() == HOST


def _device():
    """The device new arrays, streams and events go to: HOST under KILN_TARGET=cpu, else
    the current device (_kiln.default_device, one C call)."""
    return _kiln.default_device()


class MemoryRegion:
    """Device memory as ``DeviceArray.gpu_data`` gives it: ``device_pointer`` (the address
    of its first byte, an int), ``size`` (bytes) and ``device`` (-1: host memory under
    KILN_TARGET=cpu).  Two regions are equal when all three are.  It keeps the array it
    came from alive."""

    __slots__ = ("device_pointer", "size", "device", "_owner")

    def __init__(self, device_pointer, size, device, owner=None):
        self.device_pointer, self.size, self.device = device_pointer, size, device
        self._owner = owner  # the array it came from, kept alive (Numba's MemoryPointer is)

    def _key(self):
        return (self.device_pointer, self.size, self.device)

    def __eq__(self, other):
        return isinstance(other, MemoryRegion) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"MemoryRegion(device_pointer=0x{self.device_pointer:x}, size={self.size}, "
                f"device={self.device})")



def _index(i):
    """An index of one axis as NumPy takes it: an int or NumPy integer (not a bool, a float or
    a string, which NumPy refuses too); kiln's device arrays have no newaxis or fancy
    indexing."""
    if not isinstance(i, (bool, _np().bool_)):
        try:
            return operator.index(i)
        except TypeError:
            pass
    if i is Ellipsis:  # a second one: the first was taken as the axes it stands for
        raise IndexError("an index can only have a single ellipsis ('...')")
    raise IndexError("only integers, slices (`:`) and ellipsis (`...`) are valid indices of a "
                     f"device array, not {type(i).__name__} ({i!r})")

class DeviceArray(_kiln.DeviceArrayBase):
    """An array in GPU memory (Numba's DeviceNDArray).

    ``kiln.to_device(a)`` makes one from a host array; ``.copy_to_host()`` brings it
    back.  It exposes ``__cuda_array_interface__`` and ``__dlpack__``, so CuPy,
    PyTorch and JAX take it without a copy."""

    @property
    def dtype(self):
        """The elements' NumPy dtype."""
        return _dtype_of(self._dtype_code)

    @property
    def device(self):
        """The ordinal of the GPU that holds the memory (-1: host memory, KILN_TARGET=cpu)."""
        return self._device

    @property
    def on_host(self):
        """Whether the array is in host memory (made with KILN_TARGET=cpu)."""
        return self._device == HOST

    @property
    def flags(self):
        """NumPy's flags for this layout (``a.flags["C_CONTIGUOUS"]``, ``.f_contiguous``)."""
        np = _np()
        dummy = np.lib.stride_tricks.as_strided(np.empty(1, self.dtype), self.shape,
                                                self.strides, writeable=False)
        return dummy.flags

    def is_c_contiguous(self):
        """Whether the elements lie in C order with no gaps (an array of no elements is,
        as NumPy says)."""
        if 0 in self.shape:
            return True
        s = self.itemsize
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and st != s:
                return False
            s *= n
        return True

    def is_f_contiguous(self):
        """Whether the elements lie in Fortran order with no gaps (an array of no elements
        is, as NumPy says)."""
        if 0 in self.shape:
            return True
        s = self.itemsize
        for n, st in zip(self.shape, self.strides):
            if n != 1 and st != s:
                return False
            s *= n
        return True

    @property
    def __cuda_array_interface__(self):
        if self._device == HOST:
            # CuPy and others would take the host pointer for device memory
            raise AttributeError("a host-backed kiln.DeviceArray (KILN_TARGET=cpu) has no "
                                 "__cuda_array_interface__; it has __array_interface__")
        d = self._interface()
        d["stream"] = _cai.producer_stream(self.stream)  # the stream it was made on, or None
        if self.size == 0:  # the interface's rule for an empty array
            d["data"] = (0, False)
        return d

    @property
    def stream(self):
        """The stream the array was made on (Numba's DeviceNDArray.stream): the kiln.Stream
        given to device_array/to_device, the producer's stream for an array imported through
        the CUDA Array Interface, or 0 for none."""
        return getattr(self, "_stream", 0)

    @property
    def device_ctypes_pointer(self):
        """The device address as a ctypes.c_void_p (Numba's; None's address for an empty
        array)."""
        import ctypes

        return ctypes.c_void_p(self._ptr if self.size else 0)

    @property
    def alloc_size(self):
        """Bytes of device memory the array spans: from its lowest to its highest element's
        end (Numba's alloc_size of a view)."""
        lo, hi = self._span
        return hi - lo

    @property
    def gpu_data(self):
        """The device memory the array views (Numba's MemoryPointer, compared by value): its
        lowest byte's address, its bytes and its device.  Arrays over the same bytes, such
        as a ``.view(np.int64)`` of a datetime64 array, have equal ``gpu_data``."""
        lo, hi = self._span
        return MemoryRegion(self._ptr + lo, hi - lo, self._device, self)

    @property
    def __array_interface__(self):
        """NumPy's view of a host-backed array (np.asarray(a) shares its memory)."""
        if self._device != HOST:
            raise AttributeError("a kiln.DeviceArray in GPU memory has no __array_interface__; "
                                 "use .copy_to_host()")
        return self._interface()

    def _interface(self):
        """What the CUDA and NumPy array interfaces (version 3) share."""
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": _typestr(self._dtype_code),
            **({"descr": _dtype_of(self._dtype_code).descr} if self._dtype_code >= 32 else {}),
            "data": (self._ptr, False),
            "version": 3,
        }

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self._device != HOST and stream not in (None, 1, 2, -1):
            _kiln.synchronize()  # the consumer's stream must see our finished work
        return _kiln.dlpack_capsule(self)

    def __dlpack_device__(self):
        return (1, 0) if self._device == HOST else (2, self._device)

    def copy_to_host(self, ary=None, stream=0):
        """A NumPy array with the contents (or the contents copied into `ary`, a NumPy array
        of the same shape and dtype: Numba's rule, so nothing is converted silently)."""
        np = _np()
        if ary is not None:
            if not isinstance(ary, np.ndarray):
                raise TypeError(f"copy_to_host: ary must be a NumPy array, not {type(ary).__name__}")
            if ary.dtype != self.dtype:
                raise TypeError(f"copy_to_host: incompatible dtype: ary is {ary.dtype}, the array "
                                f"{self.dtype}")
        c = self.is_c_contiguous()
        if c or self.is_f_contiguous():
            if ary is not None and ary.shape == self.shape and ary.flags.writeable and (
                    ary.flags.c_contiguous if c else ary.flags.f_contiguous):
                # straight into ary: its bytes are the array's, in the same order
                _kiln.copy("d2h", self._device, _bytes(ary), self._ptr, self.nbytes, stream)
                return ary
            out = np.empty(self.shape, self.dtype, order="C" if c else "F")
            _kiln.copy("d2h", self._device, _bytes(out), self._ptr, self.nbytes, stream)
        else:
            lo, hi = self._span
            raw = np.empty(hi - lo, np.uint8)
            _kiln.copy("d2h", self._device, raw, self._ptr + lo, hi - lo, stream)
            view = np.lib.stride_tricks.as_strided(raw[-lo:].view(self.dtype), self.shape, self.strides)
            out = np.ascontiguousarray(view)
        if ary is None:
            return out
        if not _same_squeezed(ary.shape, self.shape):
            raise ValueError(f"copy_to_host: ary has shape {ary.shape}, the array {self.shape}")
        ary[...] = out.reshape(ary.shape)  # (4, 1) into (4,): Numba's squeezed comparison
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copies a host array, or a device array, of the same shape into this array."""
        np = _np()
        if isinstance(ary, DeviceArray) and ary._device != HOST:
            self._copy_from_device(ary, stream)
            return
        # any source with a dtype (a NumPy or host-backed device array, a buffer) keeps it:
        # a conversion would truncate or wrap silently, as the GPU path never does
        src_dt = ary.dtype if hasattr(ary, "dtype") else (
            np.asarray(ary).dtype if isinstance(ary, memoryview) else None)
        if src_dt is not None and src_dt != self.dtype:
            raise TypeError(f"copy_to_device: incompatible dtype: ary is {src_dt}, the array "
                            f"{self.dtype} (convert it with ary.astype())")
        if src_dt is None and not isinstance(ary, (list, tuple)) and not np.isscalar(ary):
            raise TypeError(f"copy_to_device takes an array (NumPy, device, a buffer) or a "
                            f"list, not {type(ary).__name__}")
        src = np.asarray(ary)
        if src_dt is None:  # a list: converted as NumPy does, only where no value changes
            conv = src.astype(self.dtype)
            if not (conv == src).all():
                raise TypeError(f"copy_to_device: the list's values ({src.dtype}) do not fit "
                                f"the array's dtype {self.dtype} unchanged")
            src = conv
        if not _same_squeezed(src.shape, self.shape):
            raise ValueError(f"copy_to_device: ary has shape {src.shape}, the array {self.shape}")
        src = src.reshape(self.shape)
        if self.is_c_contiguous():
            src = np.ascontiguousarray(src)
        elif self.is_f_contiguous():
            src = np.asfortranarray(src)
        else:
            raise ValueError("copy_to_device needs a contiguous device array")
        _kiln.copy("h2d", self._device, self._ptr, _bytes(src), self.nbytes, stream)

    def _copy_from_device(self, other, stream):
        if not _same_squeezed(other.shape, self.shape) or other.dtype != self.dtype:
            raise ValueError(f"copy_to_device: the device array has shape {other.shape} and dtype "
                             f"{other.dtype}, this one {self.shape} and {self.dtype}")
        if other._device != self._device:
            raise ValueError(f"copy_to_device: the arrays are on devices {other._device} and "
                             f"{self._device}; copy through the host")
        if not (self.is_c_contiguous() and other.is_c_contiguous()
                or self.is_f_contiguous() and other.is_f_contiguous()):
            raise ValueError("copy_to_device between device arrays needs both contiguous in "
                             "the same order")
        _kiln.copy("d2d", self._device, self._ptr, other._ptr, self.nbytes, stream)

    def __setitem__(self, idx, value):
        """``d[idx] = value``: a scalar or an array (broadcast) written into the view."""
        np = _np()
        view = self._view(idx)
        if isinstance(value, DeviceArray):
            value = value.copy_to_host()
        src = np.broadcast_to(np.asarray(value, dtype=self.dtype), view.shape)
        if view._device == HOST:
            np.asarray(view)[...] = src
        elif view.is_c_contiguous() or view.is_f_contiguous():
            view.copy_to_device(src)
        else:  # a strided view on the GPU: its span read, changed and written back
            lo, hi = view._span
            raw = np.empty(hi - lo, np.uint8)
            _kiln.copy("d2h", view._device, raw, view._ptr + lo, hi - lo, 0)
            np.lib.stride_tricks.as_strided(raw[-lo:].view(self.dtype), view.shape,
                                            view.strides)[...] = src
            _kiln.copy("h2d", view._device, view._ptr + lo, raw, hi - lo, 0)

    def __getitem__(self, idx):
        view = self._view(idx)
        if not view.shape:  # every axis indexed: a scalar, as NumPy gives
            return view.copy_to_host()[()]
        return view

    def _view(self, idx):
        """The view idx selects (0-d when every axis is indexed by an int)."""
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
                i = _index(i)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {idx[k]} is out of bounds for axis {k} with size {n}")
                offset += i * st
        return _kiln.device_view(self, offset, tuple(shape), tuple(strides))

    def reshape(self, *shape, order="C"):
        """A view with another shape (one dimension may be -1); the array must be
        contiguous in ``order`` ('C' or 'F')."""
        _check_order(order)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        import operator

        try:
            shape = tuple(operator.index(s) for s in shape)
        except TypeError:
            raise TypeError(f"reshape takes ints (one of them may be -1), not {shape!r}") from None
        if any(s < -1 for s in shape):
            raise ValueError(f"negative dimensions are not allowed: {shape}")
        size = 1
        unknown = [i for i, s in enumerate(shape) if s == -1]
        for s in shape:
            if s != -1:
                size *= s
        if unknown:
            if len(unknown) > 1:
                raise ValueError("can only specify one unknown dimension")
            if size == 0 or self.size % size:  # NumPy's: no extent makes the size
                raise ValueError(f"cannot reshape an array of size {self.size} into shape "
                                 f"{tuple(shape)}")
            shape = list(shape)
            shape[unknown[0]] = self.size // size
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

    def view(self, dtype):
        """The same memory seen as another dtype (Numba's DeviceNDArray.view): with another
        item size, the last dimension must be contiguous and its bytes a multiple of it."""
        np = _np()
        dt = np.dtype(dtype)
        code = _code(dt)
        shape, strides = list(self.shape), list(self.strides)
        if dt.itemsize != self.itemsize:
            if not shape or strides[-1] != self.itemsize and shape[-1] != 1:
                raise ValueError("view with another item size needs a contiguous last dimension")
            nbytes = shape[-1] * self.itemsize
            if nbytes % dt.itemsize:
                raise ValueError(f"view: the last dimension's {nbytes} bytes are not a multiple "
                                 f"of {dt}'s {dt.itemsize}")
            shape[-1] = nbytes // dt.itemsize
            strides[-1] = dt.itemsize
        return _kiln.wrap(self._ptr, tuple(shape), tuple(strides), code, self._device, self)

    def ravel(self, order="C"):
        """A one-dimensional view of a contiguous array."""
        return self.reshape(self.size, order=order)

    def split(self, section, stream=0):
        """Numba's ``DeviceNDArray.split``: views of ``section`` elements each (the last may
        be shorter) of a 1-d array of unit stride, one after the other."""
        if self.ndim != 1:
            raise ValueError("only 1-d arrays can be split")
        if self.strides[0] != self.itemsize:
            raise ValueError("only arrays of unit stride can be split")
        import operator
        try:
            n = operator.index(section)  # any integer: np.int64 too
        except TypeError:
            n = 0
        if isinstance(section, bool) or n < 1:
            raise ValueError(f"section must be a positive int, not {section!r}")
        section = n
        for i in range(0, self.size, section):
            yield self[i:i + section]

    def getitem(self, idx, stream=0):
        """Numba's ``DeviceNDArray.getitem``: ``self[idx]`` (copies order with the stream)."""
        return self[idx]

    def setitem(self, idx, value, stream=0):
        """Numba's ``DeviceNDArray.setitem``: ``self[idx] = value``."""
        self[idx] = value

    def squeeze(self, axis=None, stream=0):
        """Numba's ``DeviceNDArray.squeeze``: the view without the axes of extent 1 (those
        of ``axis``, an int or a tuple, which must have extent 1)."""
        n = self.ndim
        if axis is None:
            drop = {k for k in range(n) if self.shape[k] == 1}
        else:
            np = _np()
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            drop = set()
            for a in axes:
                if isinstance(a, np.integer):
                    a = int(a)
                if not isinstance(a, int) or isinstance(a, bool) or not -n <= a < n:
                    raise ValueError(f"axis {a!r} is out of bounds for an array of {n} dimensions")
                if self.shape[a % n] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size "
                                     "not equal to one")
                drop.add(a % n)
        keep = [k for k in range(n) if k not in drop]
        return _kiln.device_view(self, 0, tuple(self.shape[k] for k in keep),
                                 tuple(self.strides[k] for k in keep))

    def bind(self, stream=0):
        """Numba's ``DeviceNDArray.bind``: a view of the same memory whose ``stream`` is
        ``stream``."""
        v = _kiln.device_view(self, 0, self.shape, self.strides)
        v._stream = stream
        return v

    @property
    def T(self):
        """The transpose (``transpose()``): of a 2-D array, a new C-contiguous array, as
        Numba's (which copies through its transpose kernel); of other ranks, the view with
        the dimensions and strides reversed."""
        return self.transpose()

    def transpose(self, axes=None):
        """Numba's ``DeviceNDArray.transpose``: the array itself for the identity axes; a
        2-D array's transpose is a new C-contiguous device array (kiln.kernels.transpose,
        on the array's stream), so writes to it do not reach this array, as in Numba; other
        ranks give the view of the permuted (default: reversed) dimensions, which Numba does
        not support."""
        n = self.ndim
        if axes is not None:
            axes = tuple(axes)
            if sorted(axes) != list(range(n)):
                raise ValueError(f"invalid axes list {axes!r} for an array of {n} dimensions")
            if axes == tuple(range(n)):
                return self
        if n == 2:
            from .kernels.transpose import transpose

            return transpose(self)
        axes = axes if axes is not None else tuple(range(n - 1, -1, -1))
        return _kiln.device_view(self, 0, tuple(self.shape[a] for a in axes),
                                 tuple(self.strides[a] for a in axes))

    def __repr__(self):
        where = "host (KILN_TARGET=cpu)" if self._device == HOST else self._device
        return f"<kiln.DeviceArray shape={self.shape} dtype={self.dtype} device={where}>"


_kiln.set_device_array_class(DeviceArray)


def _is_gpu_array(obj):
    """Whether obj is an array in GPU memory (kiln's, or another library's)."""
    if isinstance(obj, DeviceArray):
        return obj._device != HOST
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] == 2
        except Exception:
            return False
    return False


def _is_device_array(obj):
    """Whether obj is a GPU array or a host-backed kiln.DeviceArray: what Numba's API
    treats as a device array (a ufunc of one returns one)."""
    return isinstance(obj, DeviceArray) or _is_gpu_array(obj)


_typestrs = {}  # __cuda_array_interface__ typestr -> (kiln dtype code, itemsize)


def _typestr_info(typestr):
    got = _typestrs.get(typestr)
    if got is None:
        dt = _np().dtype(typestr)
        got = _typestrs[typestr] = (_code(dt), dt.itemsize)
    return got


def is_cuda_array(obj):
    """Whether obj is a device array (Numba's cuda.is_cuda_array): a kiln.DeviceArray,
    host-backed ones included (KILN_TARGET=cpu), or another library's GPU array."""
    return _is_device_array(obj)


def as_cuda_array(obj, sync=True):
    """A DeviceArray viewing another library's GPU array without a copy; the producer's
    stream is synchronized first unless ``sync=False`` (kiln/_cai.py)."""
    if isinstance(obj, DeviceArray):
        return obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(cai, obj, _device_of(obj), sync)
    raise TypeError(f"{type(obj).__name__} is not a GPU array (no __cuda_array_interface__)")


def launch_view(obj, stream=0):
    """obj (a GPU array of any library) as a DeviceArray for kiln's own launches on
    `stream`: the interface read in C, and the producer's stream waited for only when it
    is another one (the CAI rule; as_cuda_array, Numba's public call, always waits, and
    that wait made every kiln.fuse or vectorize call on CuPy arrays synchronous)."""
    if isinstance(obj, DeviceArray):
        return obj
    v = _kiln.foreign_view(obj, stream)
    return v if v is not None else as_cuda_array(obj)


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceArray over the memory a ``__cuda_array_interface__`` dict describes (Numba's
    cuda.from_cuda_array_interface), on the current device; ``owner`` is kept alive with
    it.  The producer's stream becomes its ``.stream`` and is synchronized first unless
    ``sync=False`` (kiln/_cai.py); a masked array is a NotImplementedError."""
    return _from_cai(desc, owner, _kiln.current_device(), sync)


def _from_cai(cai, owner, device, sync):
    if not isinstance(cai, dict):
        raise TypeError(f"a __cuda_array_interface__ is a dict, not {type(cai).__name__}")
    missing = [k for k in ("shape", "typestr", "data") if k not in cai]
    if missing:
        raise ValueError(f"this __cuda_array_interface__ has no {', '.join(map(repr, missing))}")
    if cai.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported: kiln cannot take a "
                                  "__cuda_array_interface__ with a 'mask'")
    code, isz = _typestr_info(cai["typestr"])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides, s = [0] * len(shape), isz
        for i in range(len(shape) - 1, -1, -1):
            strides[i] = s
            s *= shape[i]
    ptr = cai["data"][0]
    if isinstance(ptr, int) and 0 not in shape:
        if ptr == 0:
            raise ValueError("__cuda_array_interface__['data'][0] is 0 (a null pointer), but the "
                             f"array has shape {shape}")
        align = _np().dtype(cai["typestr"]).alignment
        if ptr % align:
            raise ValueError(f"the GPU array's data pointer {ptr:#x} is not aligned to {align} "
                             "bytes, which its elements need; pass an aligned copy")
    stream = _cai.consumer_stream(cai, device, sync)
    d = _kiln.wrap(ptr, shape, tuple(strides), code, device, owner)
    if stream:
        d._stream = stream
    return d


def _device_of(obj):
    dev = getattr(obj, "device", None)
    for attr in ("id", "index"):
        v = getattr(dev, attr, None)
        if isinstance(v, int):
            return v
    if isinstance(dev, int):
        return dev
    return _kiln.current_device()


def _same_squeezed(a, b):
    """Whether two shapes are equal once their extent-1 axes are dropped: the copies
    between arrays take such shapes, as Numba's check_array_compatibility compares
    squeezed arrays ((4, 1) and (4,))."""
    return tuple(a) == tuple(b) or [n for n in a if n != 1] == [n for n in b if n != 1]


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a host array to the GPU (to host memory with KILN_TARGET=cpu); returns a
    DeviceArray, or ``to`` with the contents copied into it."""
    if to is not None:
        if not isinstance(to, DeviceArray):
            raise TypeError(f"to_device's to= is a kiln device array to copy into, not "
                            f"{type(to).__name__}")
        to.copy_to_device(obj, stream)
        return to
    if isinstance(obj, DeviceArray):
        return obj
    np = _np()
    a = np.asarray(obj)
    if a.dtype.fields is None and not a.dtype.isnative:  # the values, in native order
        a = a.astype(a.dtype.newbyteorder("="))
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        a = np.ascontiguousarray(a)
    order = "C" if a.flags.c_contiguous else "F"
    d = _kiln.device_empty(a.shape, _code(a.dtype), order, _device(), stream)
    _kiln.copy("h2d", d._device, d._ptr, _bytes(a), a.nbytes, stream)
    if stream:
        d._stream = stream
    return d


def _shape_of(shape, who):
    """An array shape from an int, a NumPy int or a sequence of them, as NumPy takes it; a
    TypeError naming `who` for anything else, a ValueError for a negative extent or one
    past 64 bits."""
    if type(shape) is int:   # the common call, device_array(n, ...)
        if 0 <= shape < 2 ** 63:
            return (shape,)
    elif type(shape) is tuple and all(type(n) is int and 0 <= n < 2 ** 63 for n in shape):
        return shape
    import operator

    try:
        shape = (operator.index(shape),)
    except TypeError:
        try:  # 2.5, '3' or None is no extent (int() would take some of them)
            shape = tuple(operator.index(s) for s in shape)
        except TypeError:
            raise TypeError(f"{who}'s shape is an int or a tuple of ints, not {shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if any(n >= 2 ** 63 for n in shape):
        raise ValueError(f"{who}'s shape {shape} has an extent past 2**63 - 1")
    return shape


def _strides_of(strides, shape, itemsize, who):
    """Byte strides as ints, one per dimension, each a multiple of the item size."""
    import operator

    try:
        strides = tuple(operator.index(s) for s in strides)
    except TypeError:
        raise TypeError(f"{who}'s strides are a tuple of ints, not {strides!r}") from None
    if len(strides) != len(shape):
        raise ValueError(f"strides {strides} do not match shape {tuple(shape)}")
    if itemsize and any(st % itemsize for st in strides):
        raise ValueError(f"{who}'s strides {strides} are not multiples of the item size "
                         f"({itemsize} bytes)")
    return strides


def _strides_span(shape, strides, itemsize):
    """The bytes an array of these strides needs from its first element; strides that
    are negative or overlap (two elements at one address) are refused."""
    if len(strides) != len(shape):
        raise ValueError(f"strides {tuple(strides)} do not match shape {tuple(shape)}")
    if any(n == 0 for n in shape):
        return 0
    dims = sorted((st, n) for n, st in zip(shape, strides) if n > 1)
    reach = itemsize
    for st, n in dims:
        if st < reach:
            raise ValueError(f"strides {tuple(strides)} are negative or make elements of shape "
                             f"{tuple(shape)} overlap")
        reach = st * (n - 1) + reach
    if reach >= 1 << 63:
        raise ValueError(f"strides {tuple(strides)} of shape {tuple(shape)} span {reach} bytes, "
                         f"past what a device array can address (2**63)")
    return reach


def _check_order(order):
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")


def device_array(shape, dtype=None, strides=None, order="C", stream=0):
    """An uninitialised DeviceArray (Numba's cuda.device_array); ``strides`` (bytes) for
    a layout other than C or F order."""
    np = _np()
    shape = _shape_of(shape, "device_array")
    _check_order(order)
    code = _code(np.dtype(dtype if dtype is not None else np.float64))
    d = _kiln.device_empty(shape, code, order, _device(), stream)
    if strides is not None:
        strides = _strides_of(strides, shape, d.itemsize, "device_array")
    if strides is not None and strides != d.strides:
        span = _strides_span(shape, strides, d.itemsize)
        base = _kiln.device_empty((span,), _code(np.dtype(np.uint8)), "C", d._device, stream)
        d = _kiln.wrap(base._ptr, shape, strides, code, base._device, base)
    if stream:
        d._stream = stream
    return d


def _contiguity(ary):
    """(C contiguous, F contiguous) of a NumPy, device or interface array (a DeviceArray's
    flags build a NumPy view: its own tests are cheaper)."""
    if isinstance(ary, DeviceArray):
        return ary.is_c_contiguous(), ary.is_f_contiguous()
    flags = ary.flags
    return flags["C_CONTIGUOUS"], flags["F_CONTIGUOUS"]


def _like_strides(ary, c, f):
    """Numba's strides for a new array like `ary`: None (C or F order) when `ary` is
    contiguous, else contiguous strides in the order of `ary`'s (as NumPy's empty_like)."""
    if c or f or ary.ndim <= 1:
        return None
    perm = sorted(enumerate(ary.strides), key=lambda x: x[1])
    strides, stride = [0] * ary.ndim, ary.dtype.itemsize
    for i, _ in perm:
        strides[i] = stride
        stride *= ary.shape[i]
    return tuple(strides)


def device_array_like(ary, stream=0):
    """A DeviceArray of the shape, dtype and layout of another array (a contiguous one
    whose strides keep the order of a strided array's, as Numba's)."""
    if not (hasattr(ary, "shape") and hasattr(ary, "dtype")):
        raise TypeError(f"device_array_like takes an array (NumPy, device or one with the "
                        f"__cuda_array_interface__), not {type(ary).__name__}")
    c, f = _contiguity(ary)
    return device_array(ary.shape, ary.dtype, strides=_like_strides(ary, c, f),
                        order="F" if f and not c else "C", stream=stream)


def stream():
    """A new CUDA stream on the current device (with KILN_TARGET=cpu, a stream whose work
    is done as it is queued)."""
    return _kiln.stream(_device())


def default_stream():
    """The current device's default (legacy) stream, as a kiln.Stream."""
    return _kiln.default_stream(_device())


# the driver's special stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD)
_CU_STREAM_LEGACY = 1
_CU_STREAM_PER_THREAD = 2


def legacy_default_stream():
    """The legacy default stream, named explicitly (Numba's cuda.legacy_default_stream)."""
    return _kiln.stream_of(_device(), _CU_STREAM_LEGACY)


def per_thread_default_stream():
    """The calling thread's default stream (Numba's cuda.per_thread_default_stream)."""
    return _kiln.stream_of(_device(), _CU_STREAM_PER_THREAD)


def external_stream(ptr):
    """A kiln.Stream for a CUstream another library made (Numba's cuda.external_stream); kiln
    does not destroy it, so it must outlive the object."""
    import operator

    try:
        ptr = operator.index(ptr)  # an int: 1.5 or "1" is no stream's handle
    except TypeError:
        raise TypeError(f"external_stream takes a CUstream handle (an int), not "
                        f"{type(ptr).__name__}") from None
    return _kiln.stream_of(_device(), ptr)


# ---- events, page-locked memory, devices (Numba's names) -----------------------------------

def event(timing=True):
    """A CUDA event on the current device (Numba's cuda.event): ``e.record(stream)``,
    ``e.synchronize()``, ``e.query()``, ``e.wait(stream)``, ``start.elapsed_time(end)`` in ms."""
    return _kiln.event(_device(), bool(timing))


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events (Numba's cuda.event_elapsed_time)."""
    return _kiln.event_elapsed_time(evtstart, evtend)


# the _kind of a page-locked array (pinned, mapped, managed): what its errors call it
_WHO = {0: "pinned_array", 1: "mapped_array", 2: "managed_array"}


def pinned_array(shape, dtype=None, strides=None, order="C", _kind=0):
    """A NumPy array in page-locked host memory, which copies to and from the GPU at full
    speed and asynchronously (Numba's cuda.pinned_array)."""
    np = _np()
    shape = _shape_of(shape, _WHO[_kind])
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F'")
    dt = np.dtype(dtype if dtype is not None else np.float64)
    if dt.hasobject:  # a buffer of uninitialised bytes would hold garbage object pointers
        raise TypeError(f"kiln page-locked arrays do not support dtype {dt}: it holds Python "
                        f"objects")
    if strides is not None:
        strides = _strides_of(strides, shape, dt.itemsize, _WHO[_kind])
        nbytes = _strides_span(shape, strides, dt.itemsize)
    else:
        nbytes = math.prod(shape) * dt.itemsize
    if on_host():  # no GPU to copy to: ordinary host memory
        buf = np.empty(nbytes, np.uint8)
    else:
        buf = _kiln.pinned_alloc(_kiln.current_device(), nbytes, _kind)
    return np.ndarray(shape, dt, buffer=buf, strides=strides, order=order)


def pinned_array_like(ary):
    """A page-locked array of the shape, dtype and layout of another array (NumPy or
    device), as device_array_like lays it out."""
    c, f = _contiguity(ary)
    return pinned_array(ary.shape, ary.dtype, strides=_like_strides(ary, c, f),
                        order="F" if f and not c else "C")


_MAPPED = []  # the ndarray subclass below, made at first use (numpy is imported late)


def _mapped_class():
    if _MAPPED:
        return _MAPPED[0]
    np = _np()

    class MappedArray(np.ndarray):
        """A NumPy array over host memory that the GPU reads and writes in place: mapped
        (Numba's cuda.mapped_array) or managed (cuda.managed_array).  A kernel launch takes
        it by its device address, without a copy; the host sees the kernel's writes after
        the launch's stream is synchronized (``kiln.synchronize()``)."""

        stream = 0  # the stream it was made on (Numba's .stream), set by _gpu_host_array

        @property
        def __cuda_array_interface__(self):
            # with unified addressing (every 64-bit platform CUDA supports) the device
            # address of mapped and managed memory is its host address
            c = self.flags["C_CONTIGUOUS"]
            return {"shape": self.shape, "typestr": self.dtype.str,
                    "data": (self.__array_interface__["data"][0] if self.size else 0,
                             not self.flags["WRITEABLE"]),
                    "strides": None if c else self.strides, "version": 3,
                    # the stream it was made on, as Numba's (kiln/_cai.py), or None
                    "stream": _cai.producer_stream(self.stream)}

    _kiln.set_mapped_class(MappedArray)
    _MAPPED.append(MappedArray)
    return MappedArray


_HOST_KINDS = {"mapped": 1, "managed": 2}


def _gpu_host_array(kind, shape, dtype, strides, order, stream=0):
    a = pinned_array(shape, dtype, strides, order, _kind=_HOST_KINDS[kind])
    # on the CPU target a NumPy array in ordinary memory, which kernels use in place
    if on_host():
        return a
    m = a.view(_mapped_class())
    m.stream = stream  # Numba's: the stream it was made on (0: none)
    return m


def mapped_array(shape, dtype=None, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    """A NumPy array in page-locked host memory mapped into the GPU's address space (Numba's
    cuda.mapped_array): kernels read and write it in place, without copies.  portable and
    wc are accepted for Numba's signature; the memory is always portable."""
    return _gpu_host_array("mapped", shape, dtype, strides, order, stream)


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """A mapped array of the shape, dtype and layout of another array, as device_array_like
    lays it out."""
    c, f = _contiguity(ary)
    return mapped_array(ary.shape, ary.dtype, _like_strides(ary, c, f), "F" if f and not c else "C")


def managed_array(shape, dtype=None, strides=None, order="C", stream=0, attach_global=True):
    """A NumPy array in CUDA managed (unified) memory (Numba's cuda.managed_array): host and
    kernels use the same memory, which the driver migrates on demand."""
    return _gpu_host_array("managed", shape, dtype, strides, order, stream)


class pinned:
    """``with kiln.pinned(a, b): ...`` page-locks existing NumPy arrays for the block, so
    copies of them to and from the GPU run at full speed (Numba's cuda.pinned).  Arrays
    must be contiguous and writable; memory that is already pinned is left as it is."""

    def __init__(self, *arrays):
        self._arrays = arrays
        self._done = []

    def __enter__(self):
        if on_host():  # no GPU to copy to: nothing to pin
            return self
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


# The CPU target's stand-in for a GPU (KILN_TARGET=cpu).  Its compute capability is the
# newest kiln compiles for in CI (sm_90), which is also what Numba's test shim assumes on a
# CPU run, so code that picks a path by capability picks the one the H200 runs; what the
# CPU target cannot do (shared memory, barriers, warp operations) is refused at compile
# time whatever the capability says.  The limits are the launch path's (docs/limits.md).
HOST_CC = (9, 0)
_HOST_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64, "MAX_GRID_DIM_X": 2**31 - 1, "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535, "MAX_SHARED_MEMORY_PER_BLOCK": 48 * 1024,
    "TOTAL_CONSTANT_MEMORY": 64 * 1024, "WARP_SIZE": 32, "MAX_REGISTERS_PER_BLOCK": 65536,
    "CLOCK_RATE": 0, "INTEGRATED": 1, "CAN_MAP_HOST_MEMORY": 1, "CONCURRENT_KERNELS": 0,
    "ECC_ENABLED": 0, "PCI_BUS_ID": 0, "PCI_DEVICE_ID": 0, "MEMORY_CLOCK_RATE": 0,
    "GLOBAL_MEMORY_BUS_WIDTH": 0, "L2_CACHE_SIZE": 0, "MAX_THREADS_PER_MULTIPROCESSOR": 2048,
    "ASYNC_ENGINE_COUNT": 0, "UNIFIED_ADDRESSING": 1, "PCI_DOMAIN_ID": 0,
    "COMPUTE_CAPABILITY_MAJOR": HOST_CC[0], "COMPUTE_CAPABILITY_MINOR": HOST_CC[1],
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 48 * 1024, "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
    "MANAGED_MEMORY": 1, "COOPERATIVE_LAUNCH": 0, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 48 * 1024,
}


class HostDevice(Device):
    """The device of the CPU target (KILN_TARGET=cpu): device arrays live in host memory
    and kernels run on the CPU.  ``id`` 0, ``compute_capability`` HOST_CC, the driver's
    attributes by their Numba names (``MULTIPROCESSOR_COUNT`` is the CPU count)."""

    def __init__(self):
        self.id = 0
        self.name = "kiln CPU target (host memory)"
        self.compute_capability = HOST_CC
        self.uuid = "CPU-00000000-0000-0000-0000-000000000000"

    def __getattr__(self, attr):
        if attr == "MULTIPROCESSOR_COUNT":
            return os.cpu_count() or 1
        v = _HOST_ATTRIBUTES.get(attr)
        if v is None:
            raise AttributeError(f"kiln.HostDevice has no attribute '{attr}'")
        return v

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def reset(self):
        """Numba's Device.reset(): nothing to reset on the host."""

    def __eq__(self, other):
        return isinstance(other, HostDevice)

    def __hash__(self):
        return hash(HostDevice)

    def __repr__(self):
        return "<kiln.HostDevice 0 'kiln CPU target (host memory)' (KILN_TARGET=cpu)>"


def get_current_device():
    """The selected device (kiln.select_device), as a kiln.Device (with KILN_TARGET=cpu,
    the kiln.HostDevice)."""
    if on_host():
        return HostDevice()
    return Device(_kiln.current_device())


def list_devices():
    """Every CUDA device of the machine, as kiln.Device objects (with KILN_TARGET=cpu,
    the one kiln.HostDevice)."""
    if on_host():
        return [HostDevice()]
    return [Device(i) for i in range(len(_kiln.cuda_info()["devices"]))]


class _GPUs:
    """``kiln.gpus``: the machine's CUDA devices as a sequence (Numba's cuda.gpus)."""

    def __len__(self):
        if on_host():
            return 1
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
    if on_host():
        print("Found 1 CUDA device (KILN_TARGET=cpu: kiln's CPU target, host memory)")
        print(f"id 0 {HostDevice().name!r:>30} {os.cpu_count() or 1} CPUs")
        return True
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


# ---- what only the CPU target gives (KILN_TARGET=cpu): kiln.__getattr__ finds them ----------

def host_ipc_refusal():
    return NotImplementedError(
        "IPC handles share GPU memory between processes; with KILN_TARGET=cpu kiln's device "
        "arrays are host memory, which kiln does not share (use multiprocessing.shared_memory)")


class HostContext:
    """Numba's cuda.current_context() on the CPU target: the device, memory figures."""

    def __init__(self):
        self.device = HostDevice()

    def get_memory_info(self):
        """(free, total) bytes of the host's memory."""
        page = os.sysconf("SC_PAGE_SIZE")
        return (os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page)

    def reset(self):
        """Nothing to reset: host memory is freed with its last array."""

    def synchronize(self):
        """The host's work is done when its call returns."""

    def get_ipc_handle(self, memory):
        """IPC handles share GPU memory; the host's is not shared (NotImplementedError)."""
        raise host_ipc_refusal()

    def __repr__(self):
        return "<kiln.HostContext of the CPU target (KILN_TARGET=cpu)>"




def _stream_add_callback(self, callback, arg=None):
    """Numba's ``Stream.add_callback``: ``callback(stream, status, arg)`` once the work
    queued on the stream so far has finished (status 0, or 1 when it failed), called from a
    thread of its own, as the driver's thread calls Numba's."""
    if not callable(callback):  # said here, not later from the callback's thread
        raise TypeError(f"add_callback takes a callable (stream, status, arg), not "
                        f"{type(callback).__name__}")
    import threading

    def wait_then_call():
        try:
            self.synchronize()
            status = 0
        except Exception:  # the failure is the launch's to report; the callback hears of it
            status = 1
        callback(self, status, arg)

    threading.Thread(target=wait_then_call, name="kiln-stream-callback", daemon=True).start()


def _stream_async_done(self):
    """Numba's ``Stream.async_done``: an asyncio future of the running loop, done (None)
    when the work queued on the stream so far has finished."""
    import asyncio

    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def resolve(status):
        if future.done():
            return
        if status == 0:
            future.set_result(None)
        else:
            future.set_exception(Exception(f"Stream error {status}"))

    _stream_add_callback(self, lambda stream, status, arg: loop.call_soon_threadsafe(resolve, status))
    return future


_kiln.Stream.add_callback = _stream_add_callback
_kiln.Stream.async_done = _stream_async_done
