"""kiln.compile: a step of host code that launches kiln kernels, run in a mode.

``mode="default"`` runs the step as it is; ``mode="max-autotune"`` runs it with the launches
whose configuration kiln chooses tuned (``_autotune.py``).  ``mode="reduce-overhead"`` records the launches
of the step's first call for each guard (the arrays' types, shapes, strides, devices and
overlaps; the scalars' types and values; other arguments by equality or identity) and replays
the record on later calls with the same guard, without running the step's Python: on the GPU
as one CUDA graph whose kernel nodes take the new arguments' pointers in place, on the CPU as
the list of prepared launches.  The guard, the record and the replay are C (``_kiln.Record``,
python/kiln/_ext/record.c); this file only decides what each argument is guarded by, what the
result is made of, and says once why a step runs eagerly.  docs/modes.md is the user's account.
"""
import functools
import inspect
import numbers
import sys
import threading
import types
import warnings

from . import _autotune, _kiln

_tune_call = _kiln.tune_call  # fn(*args) with this thread in a max-autotune step (tunedepth.c)

MODES = ("default", "reduce-overhead", "max-autotune")
MAX_RECORDS = 8  # records kept per compiled step (one per guard); more guards run eagerly

# Arguments guarded by equality: immutable values
_EQUAL = (str, bytes, type(None))


def _kinds(args):
    """Per argument: 'a' (an array or a number, classified in C), 'e' (compared with ==),
    'i' (compared by identity); or None and the reason the step cannot be recorded."""
    out = []
    for i, a in enumerate(args):
        t = type(a)
        if t in (int, float, bool) or _is_array_or_number(a):
            out.append("a")
        elif isinstance(a, _EQUAL) or _is_dtype(a):
            out.append("e")
        elif isinstance(a, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType,
                            functools.partial)) or t.__module__.startswith("kiln"):
            out.append("i")
        else:
            return None, (f"argument {i + 1} is a {t.__name__}; a replay guards arrays, numbers, "
                          "strings, dtypes, functions and kiln's own objects")
    return "".join(out), None


def _is_array_or_number(a):
    if isinstance(a, (numbers.Number,)):
        return True
    return any(hasattr(a, n) for n in ("__array_interface__", "__cuda_array_interface__",
                                        "__dlpack__")) or isinstance(a, memoryview)


def _is_dtype(a):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(a, np.dtype)


def _may_share(x, y):
    """Whether the arrays x and y (host, or kiln's device arrays) may share memory: their
    address ranges overlap.  x is contiguous (_fresh_maker took it)."""
    import numpy as np
    from ._cuda import DeviceArray
    if isinstance(x, np.ndarray):
        return isinstance(y, np.ndarray) and np.may_share_memory(x, y)
    if isinstance(x, DeviceArray) and isinstance(y, DeviceArray):
        return x._ptr < y._ptr + max(y.alloc_size, 1) and y._ptr < x._ptr + max(x.nbytes, 1)
    return False


def _fresh_maker(x):
    """A callable that makes an array like x (same type, shape, dtype and layout), or None."""
    from ._cuda import DeviceArray, device_array
    if isinstance(x, DeviceArray):
        if x.is_c_contiguous() or x.is_f_contiguous():
            order = "C" if x.is_c_contiguous() else "F"
            return functools.partial(device_array, x.shape, x.dtype, order=order)
        return None
    flags = getattr(x, "flags", None)
    if flags is None or not (flags.c_contiguous or flags.f_contiguous):
        return None
    import numpy as np
    if type(x) is not np.ndarray:
        return None
    # an array that owns its memory, or a view of all of one (a reshape, as kiln.fuse
    # returns its 2-D results): a new array of the view's shape holds the same bytes
    base = x if flags.owndata else x.base
    if type(base) is not np.ndarray or not base.flags.owndata or base.nbytes != x.nbytes or \
            base.__array_interface__["data"][0] != x.__array_interface__["data"][0]:
        return None
    return functools.partial(np.empty, x.shape, x.dtype, order="C" if flags.c_contiguous else "F")


class Compiled(_kiln.StepBase):
    """The object kiln.compile returns: call it as the step itself.  StepBase's C call
    (tunedepth.c) runs a default step as fn and a max-autotune step as fn inside
    tune_call; a reduce-overhead step comes to _call."""

    def __init__(self, fn, mode, max_records):
        if mode not in MODES:
            raise ValueError(f"kiln.compile: mode must be one of {', '.join(map(repr, MODES))}, "
                             f"not {mode!r}")
        if not callable(fn):
            raise TypeError(f"kiln.compile takes a function, not {type(fn).__name__}")
        if not isinstance(max_records, int) or max_records < 0:
            raise ValueError("kiln.compile: max_records is a number of records, 0 or more")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._how = MODES.index(mode)
        self.max_records = max_records
        self._records = []
        self._lock = threading.Lock()
        self._warned = set()
        try:
            sig = inspect.signature(fn)
            self._sig = sig
            self._names = tuple(p.name for p in sig.parameters.values()
                                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
            self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               for p in sig.parameters.values())
        except (TypeError, ValueError):
            self._sig, self._names, self._simple = None, (), False

    def __repr__(self):
        return f"<kiln.compile {getattr(self.fn, '__qualname__', self.fn)!r} mode={self.mode!r}>"

    @property
    def records(self):
        """The records kept (reduce-overhead), one per guard seen."""
        return list(self._records)

    def _warn(self, why):
        if why in self._warned:
            return
        self._warned.add(why)
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        warnings.warn(f"kiln.compile(mode='reduce-overhead'): '{name}' runs eagerly for these "
                      f"arguments: {why}", _kiln.PerformanceWarning, stacklevel=4)

    @property
    def mode(self):
        """"default", "reduce-overhead" or "max-autotune"."""
        return MODES[self._how]

    def _call(self, *args, **kwargs):
        """A reduce-overhead step's call (StepBase calls the others' fn itself)."""
        if self.mode == "max-autotune":  # this thread's launches are tuned while fn runs
            return _tune_call(self.fn, *args, **kwargs)
        if self.mode != "reduce-overhead":
            return self.fn(*args, **kwargs)
        if kwargs:
            if not self._simple or self._sig is None:
                return self.fn(*args, **kwargs)
            bound = self._sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        for r in self._records:
            out = r.replay(args)
            if out is not NotImplemented:
                # Ellipsis: the guard holds, but the step runs itself (docs/modes.md)
                return self.fn(*args) if out is Ellipsis else out
        if _kiln.recording():   # inside another step's recording: its launches go there
            return self.fn(*args)
        return self._record(args)

    def _record(self, args):
        if len(self._records) >= self.max_records:
            self._warn(f"more than {self.max_records} different guards (shapes, dtypes, "
                       "strides, devices or scalar values); raise max_records=")
            return self.fn(*args)
        kinds, why = _kinds(args)
        if kinds is None:
            self._warn(why)
            return self.fn(*args)
        names = tuple(self._names[i] if i < len(self._names) else f"arg{i}"
                      for i in range(len(args)))
        rec = _kiln.record_begin(tuple(args), names, getattr(self.fn, "__name__", "step"), kinds)
        if rec is None:             # another thread is recording: run this call as it is
            return self.fn(*args)
        try:
            result = self.fn(*args)
        except BaseException:
            _kiln.record_end([], (), "the step raised")
            raise
        res, fresh, why = self._result_spec(args, result)
        why = _kiln.record_end(res, fresh, why)
        with self._lock:
            if len(self._records) < self.max_records:
                self._records.append(rec)
        if why is not None:
            self._warn(why)
        return result

    def _result_spec(self, args, result):
        """How a replay rebuilds the result: argument indices, -1 for None, -2-k for the k-th
        array the step made and returns (made anew at each replay)."""
        items = list(result) if type(result) is tuple else [result]
        res, fresh = [], []
        for x in items:
            if x is None:
                res.append(-1)
                continue
            idx = next((i for i, a in enumerate(args) if a is x), None)
            if idx is not None:
                res.append(idx)
                continue
            # an array returned twice ((out, out)) is one array at each replay too
            idx = next((k for k, (made, _) in enumerate(fresh) if made is x), None)
            if idx is not None:
                res.append(-2 - idx)
                continue
            mk = _fresh_maker(x)
            if mk is None:
                return [], (), (f"it returns a {type(x).__name__} that is neither an argument "
                                "nor a whole array it made")
            # a view of an argument (x.reshape(...)) is the argument's memory, which a replay
            # writes in place, and two views of one array would be two arrays at a replay
            if any(_may_share(x, a) for a in args) or any(_may_share(x, m) for m, _ in fresh):
                return [], (), ("it returns a view of an argument or two views of one array, "
                                "which a replay cannot make again")
            fresh.append((x, mk))
            res.append(-1 - len(fresh))
        return (res if type(result) is tuple else tuple(res)), tuple(fresh), None


def compile(fn=None, *, mode="default", max_records=MAX_RECORDS):
    """kiln.compile(fn, mode=...): fn is host code that launches kiln kernels, vectorize,
    reduce and fuse functions.  mode: "default", "reduce-overhead" or "max-autotune"
    (docs/modes.md).  Usable as a decorator, with or without arguments."""
    if fn is None:
        return lambda f: Compiled(f, mode, max_records)
    return Compiled(fn, mode, max_records)
