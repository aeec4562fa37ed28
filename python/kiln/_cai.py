"""The stream rules of the CUDA Array Interface (version 3), as Numba applies them.

Producer: an array made on a stream (``kiln.device_array(n, stream=s)``, ``to_device``,
``mapped_array``, ``managed_array``) names that stream's handle in
``__cuda_array_interface__['stream']``; an array made without one (stream 0) gives None:
kiln's own work on it is ordered on the legacy default stream, which synchronizes with
every blocking stream, so a consumer need not wait.

Consumer: ``kiln.from_cuda_array_interface(desc)`` and ``kiln.as_cuda_array(obj)`` wrap the
producer's stream as the array's ``.stream`` (``s.external`` is True) and synchronize it
first, so that the producer's pending writes are visible, unless ``sync=False`` or the
environment sets ``KILN_CUDA_ARRAY_INTERFACE_SYNC=0`` (Numba's
``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0`` is read too).  A kernel launch with a foreign array
waits for its stream in C (_ext/interop.c).
"""

import os

from . import _kiln

# the driver's special stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD)
_LEGACY, _PER_THREAD = 1, 2


def producer_stream(stream):
    """The interface's 'stream' value for an array made on `stream` (0 or a kiln.Stream)."""
    if not stream:
        return None
    h = stream.handle
    return h if h else None  # the default stream, named: no stream of the array's own


def sync_enabled():
    """Whether consumers synchronize on the producer's stream (default yes)."""
    for name in ("KILN_CUDA_ARRAY_INTERFACE_SYNC", "NUMBA_CUDA_ARRAY_INTERFACE_SYNC"):
        v = os.environ.get(name, "").strip()
        if v in ("0", "1"):
            return v == "1"
        if v:
            raise ValueError(f"{name} must be 0 or 1, not {v!r}")
    return True


def consumer_stream(desc, device, sync):
    """The stream an imported array keeps (0 when the interface names none), synchronized
    first when `sync` and sync_enabled()."""
    s = desc.get("stream")
    if s is None:
        return 0
    if isinstance(s, bool) or not isinstance(s, int):
        raise TypeError(f"__cuda_array_interface__['stream'] must be an int or None, not "
                        f"{type(s).__name__}")
    if s == 0:
        raise ValueError("__cuda_array_interface__['stream'] is 0, which the interface does not "
                         "allow (1 is the legacy default stream, 2 the per-thread one)")
    stream = _kiln.stream_of(device, s)
    if sync and sync_enabled():
        stream.synchronize()
    return stream
