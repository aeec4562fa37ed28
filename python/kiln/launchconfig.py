"""The launch configuration of the compile a launch triggers (Numba-CUDA's
``numba.cuda.launchconfig``).

A launch that needs a new specialisation calls its dispatcher's ``_compile_for_args(*args)``
with the launch's configuration current on the calling thread; code that runs during that
compile (a wrapper of ``_compile_for_args``, a hook) reads it here.  It is ``None`` at any
other time, on any other thread, and during a launch that finds its specialisation.

While it is current, ``config.dispatcher.mark_launch_config_sensitive()`` marks the kernel
launch-config sensitive: its specialisation (``Entry.launch_config_sensitive``) and every
later one are kept per grid, block and dynamic shared memory as well as per argument types,
so the next launch with another configuration compiles (calls ``_compile_for_args``) again.
kiln's own code never depends on the configuration, so such a compile may find the code it
already built; what changes is that the hooks see each configuration.
"""
import contextlib
from _thread import _local  # threading.local, without importing threading (0.65 ms)
from types import MethodType

_local = _local()


class LaunchConfig:
    """The configuration of a launch that is compiling: ``dispatcher``, ``args`` (the
    launch's arguments), ``griddim`` and ``blockdim`` (3-tuples), ``stream`` (the stream
    object, None for the default stream) and ``sharedmem`` (dynamic shared bytes)."""

    __slots__ = ("dispatcher", "args", "griddim", "blockdim", "stream", "sharedmem",
                 "_launcher", "_key", "_sensitive")

    def __init__(self, dispatcher, launcher, args, key):
        self.dispatcher = dispatcher
        self.args = args
        self.griddim = launcher.griddim
        self.blockdim = launcher.blockdim
        _, _, self.stream, self.sharedmem = launcher.config
        self._launcher = launcher
        self._key = key
        self._sensitive = False

    def __repr__(self):
        return (f"LaunchConfig({self.dispatcher.__name__}, griddim={self.griddim}, "
                f"blockdim={self.blockdim}, sharedmem={self.sharedmem})")


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def current_launch_config():
    """The configuration of the launch compiling on this thread, or None."""
    s = _stack()
    return s[-1] if s else None


def ensure_current_launch_config():
    """The configuration of the launch compiling on this thread; RuntimeError without one."""
    cfg = current_launch_config()
    if cfg is None:
        raise RuntimeError("No launch config set for this thread: a launch configuration is "
                           "current only while a launch compiles its kernel")
    return cfg


@contextlib.contextmanager
def capture_compile_config(dispatcher):
    """Within the block, records in the yielded dict's ``"config"`` the configuration of a
    launch of ``dispatcher`` that compiles (None if every launch finds its code)."""
    if dispatcher is None:
        raise TypeError("capture_compile_config needs a dispatcher")
    record = {"config": None}
    missing = object()
    had = dispatcher.__dict__.get("_compile_for_args", missing)
    original = dispatcher._compile_for_args

    def wrapped(self, *args, **kws):
        record["config"] = current_launch_config()
        return original(*args, **kws)

    dispatcher._compile_for_args = MethodType(wrapped, dispatcher)
    try:
        yield record
    finally:
        if had is missing:
            del dispatcher._compile_for_args
        else:
            dispatcher._compile_for_args = had


@contextlib.contextmanager
def _current(cfg):
    """Makes cfg current on this thread for the block (the dispatcher's miss path)."""
    s = _stack()
    s.append(cfg)
    try:
        yield cfg
    finally:
        s.pop()


def _args_of(launcher):
    """Launcher.args: this thread's arguments while a launch through launcher compiles."""
    for cfg in reversed(_stack()):
        if cfg._launcher is launcher:
            return cfg.args
    return None


__all__ = ["LaunchConfig", "current_launch_config", "ensure_current_launch_config",
           "capture_compile_config"]
