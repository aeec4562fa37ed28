"""Pickling kiln kernels (Numba's ``pickle.dumps(kernel)``): Dispatchers, configured
launches (``k[g, b]``) and vectorize functions.

A kernel whose module holds it under its qualified name is pickled by reference, as pickle
does for functions.  Any other (a kernel made inside a function, a closure) is pickled with
what rebuilds its Python function: the code object (``marshal``, so the same Python version
reads it back, as with Numba), the function's source text (kiln compiles from source: it is
registered with linecache under a file name of its own when rebuilt), the globals its code
names and its closure's values.  Modules among them are pickled by name; kiln kernels and
device functions among them are pickled the same way; other values must be picklable.  The
kernel is rebuilt with its options and explicit signatures and compiles again where it is
loaded (the cache finds what was already built)."""

import builtins
import itertools
import linecache
import marshal
import pickle
import sys
import types

_rebuilt = itertools.count()


class _Module:
    """A module among a function's globals, pickled by its name."""

    def __init__(self, name):
        self.name = name

    def load(self):
        import importlib

        return importlib.import_module(self.name)


def _by_reference(obj):
    """Whether pickle can find obj again as module.qualname."""
    mod = sys.modules.get(getattr(obj, "__module__", None) or "")
    qual = getattr(obj, "__qualname__", "")
    if mod is None or "<locals>" in qual:
        return False
    found = mod
    for part in qual.split("."):
        found = getattr(found, part, None)
    return found is obj


def _names(code):
    """The global names a code object and the code nested in it may read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _wrap(v):
    return _Module(v.__name__) if isinstance(v, types.ModuleType) else v


def _unwrap(v):
    return v.load() if isinstance(v, _Module) else v


def function_state(fn, text, first):
    """What rebuilds fn: its code, source text (from its first line), globals, closure."""
    code = fn.__code__
    g = fn.__globals__
    used = {n: _wrap(g[n]) for n in sorted(_names(code)) if n in g}
    cells = tuple(_wrap(c.cell_contents) for c in (fn.__closure__ or ()))
    return (marshal.dumps(code), text, first, fn.__name__, fn.__qualname__, fn.__module__,
            used, cells, fn.__defaults__)


def rebuild_function(state):
    """The function of function_state, its text registered with linecache."""
    blob, text, first, name, qualname, module, used, cells, defaults = state
    filename = f"<kiln: unpickled {module}.{qualname} #{next(_rebuilt)}>"
    lines = ["\n"] * (first - 1) + text.splitlines(True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    code = marshal.loads(blob).replace(co_filename=filename)
    g = {"__builtins__": builtins, "__name__": module}
    g.update((k, _unwrap(v)) for k, v in used.items())
    closure = tuple(types.CellType(_unwrap(v)) for v in cells) or None
    fn = types.FunctionType(code, g, name, defaults, closure)
    fn.__qualname__ = qualname
    fn.__module__ = module
    return fn


def reduce_dispatcher(disp, cls):
    """Dispatcher.__reduce__ (cls: kiln.Dispatcher): by reference when its module holds it,
    else rebuilt."""
    if _by_reference(disp):
        return disp.__qualname__
    from ._compile import dispatcher_source  # noqa: PLC0415  (kiln's layers: _compile below)

    text, _, first = dispatcher_source(disp)
    state = function_state(disp.py_func, text, first)
    if disp._is_device:
        sigs = [s for s in (disp._device_sig or "").split(";") if s]
    else:
        sigs = [t for t, _ in disp._sigs]
    o = disp.options
    options = dict(o, max_registers=o["max_registers"] or None,
                   launch_bounds=tuple(b for b in o["launch_bounds"] if b) or None)
    return rebuild_dispatcher, (cls, state, sigs, options, bool(disp._is_device), disp.mode)


def rebuild_dispatcher(cls, state, sigs, options, device, mode):
    return cls(rebuild_function(state), sigs, device=device, mode=mode, **options)


def reduce_launcher(launcher):
    """A configured launch: its kernel and configuration (on the default stream only)."""
    griddim, blockdim, stream, shared = launcher.config
    if stream is not None and stream != 0:
        raise pickle.PicklingError("a configured launch on a stream cannot be pickled (a "
                                   "stream belongs to its process); pickle the kernel and "
                                   "configure it again")
    if launcher.pre_launch_callbacks:  # Numba's words, which code may match
        raise pickle.PicklingError("Cannot pickle configured launches with pre-launch "
                                   "callbacks (kiln pickles a launch as its kernel and "
                                   "configuration; callbacks are host state)")
    return rebuild_launcher, (launcher.dispatcher, griddim, blockdim, shared)


def rebuild_launcher(disp, griddim, blockdim, shared):
    return disp[griddim, blockdim, 0, shared]


def reduce_vectorized(v, cls, signatures, options):
    """Vectorized.__reduce__ (cls: the class): its function, signatures and options."""
    from ._source import source_of

    text, _, first = source_of(v.py_func)
    return rebuild_vectorized, (cls, function_state(v.py_func, text, first), signatures,
                                options)


def rebuild_vectorized(cls, state, signatures, options):
    return cls(rebuild_function(state), signatures, **options)
