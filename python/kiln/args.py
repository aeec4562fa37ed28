"""Numba's argument hints (``numba.cuda.args``): ``kiln.In(a)``, ``kiln.Out(a)`` and
``kiln.InOut(a)`` wrap a host array passed to a kernel to say which way it is copied:

- ``In``: copied to the GPU before the launch and not back (what the kernel writes is lost);
- ``Out``: not copied in (the kernel sees uninitialised memory), copied back after;
- ``InOut``: both, as a plain host array is (kiln copies one back only if the kernel
  writes it).

A GPU array in a hint is passed as it is.  On the CPU target the kernel runs on the host
array itself, except that ``In`` gives it a copy, so that the caller's array is unchanged
there too.  ``wrap_arg(value, default=InOut)`` is ``value`` if it is a hint, else
``default(value)``: what a dispatcher's ``extensions`` (Numba's argument hooks, see
``kiln.jit``) use to change how a launch passes host arrays.

A hinted launch is converted in Python (kiln.Dispatcher._launch_hinted), off the C path of
plain launches."""

from . import _cuda


class ArgHint:
    """A host array with the direction it is copied in a launch (In, Out, InOut)."""

    copy_in = True
    copy_out = True

    def __init__(self, value):
        self.value = value

    def to_device(self, retr, stream=0):
        """The array the kernel gets on the GPU; appends to ``retr`` what copies it back
        after the launch (Numba's protocol)."""
        return self._for_launch(retr, stream, True)

    def _for_launch(self, retr, stream, gpu):
        import numpy as np

        v = self.value
        # a number (a NumPy scalar too; a 0-d array is copied) has no direction: an
        # extension may wrap every argument
        if _cuda._is_gpu_array(v) or isinstance(v, (bool, int, float, complex, np.generic)):
            return v
        if not gpu:
            if self.copy_out:
                return v
            return np.array(v, copy=True, order="K")
        if self.copy_in:
            d = _cuda.to_device(v, stream=stream)
        else:
            d = _cuda.device_array_like(v, stream=stream)
        if self.copy_out:
            retr.append(lambda: d.copy_to_host(v, stream=stream))
        return d

    def __repr__(self):
        return f"kiln.{type(self).__name__}({self.value!r})"


class In(ArgHint):
    """Copied to the GPU for the launch, not back."""

    copy_out = False


class Out(ArgHint):
    """Not copied to the GPU; copied back after the launch."""

    copy_in = False


class InOut(ArgHint):
    """Copied to the GPU for the launch and back after it."""


def wrap_arg(value, default=InOut):
    """``value`` if it is an argument hint, else ``default(value)``."""
    return value if isinstance(value, ArgHint) else default(value)
