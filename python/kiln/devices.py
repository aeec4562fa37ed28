"""Numba's ``cuda.devices``: ``get_context(devnum=None)``, the device's context (kiln's
``current_context``), and ``gpus``."""
from ._cuda import gpus  # noqa: F401
from ._ipc import current_context


def get_context(devnum=None):
    """The context of device devnum (the current device when None)."""
    return current_context(devnum)
