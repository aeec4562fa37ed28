"""kiln.fuse: a function of arrays becomes one kernel.

The C core does the work (kiln._kiln.fuse, src/sema/fuse.c and
src/emit/fuse_text.c): it types the function as NumPy would for the call's
argument types and writes one kernel in kiln's language, which is compiled,
cached and launched like any kernel (a Dispatcher made by _ufunc._make_kernel).
This module classifies a call's arguments into the key of a specialisation,
computes the output shapes with NumPy's broadcasting rules, allocates the
outputs and launches: the thin layer around the C launch path that
docs/modes.md measures.
"""

import hashlib
import os
import threading

from . import _autotune, _compile, _kiln, _source
from ._cuda import HOST, DeviceArray, _is_gpu_array, launch_view
from ._intrinsics import namespace as _KILN
from ._types import DTYPE_NAMES, _contiguous_strides, dtype_code
from ._ufunc import _make_kernel

_call_sig = _kiln.call_sig

_ARRAY, _SCALAR, _PYINT, _PYFLOAT, _PYBOOL, _ROW = 0, 1, 2, 3, 4, 5  # kiln_fuse_argkind
_MAP, _ROWS, _ALL = 0, 1, 2
_RED_NAMES = ("sum", "prod", "maximum", "minimum", "mean")
_GPU_BLOCK = 256      # threads per block of a GPU fused kernel (fuse_text.c FUSE_GPU_BLOCK)
_GPU_PARTIALS = 1024  # blocks of a GPU whole-array reduction's first phase
_ROWS_MIN_BLOCK, _ROWS_MAX_BLOCK = 128, 512  # a GPU row reduction's block (_rows_block)
_ROWS_FEW = 256       # rows that get 1024-thread blocks when long (_rows_block)
_GPU_GRID_Y = 65535   # CUDA's limit on a grid's y dimension (an elementwise kernel's rows)
_GPU_ROWS = 8         # rows per thread of a 2-D elementwise kernel with _GPU_MANY_BLOCKS
_GPU_MANY_BLOCKS = 8192  # blocks at one row per thread past which rows are shared out
_CPU_THREADS = 256    # threads per block of a CPU launch (the plan runs the grid as loops)
KILN_MAX_NDIM = 8  # dimensions of an array kernels take (include/kiln.h)
# plans one fused function keeps (argument types and layouts); past it they are dropped
# and made again as calls need them (docs/limits.md)
KILN_FUSE_MAX_PLANS = 64
_NUMPY_FUNCS = ("where", "sum", "prod", "product", "max", "amax", "min", "amin", "mean")

_codes = {}  # numpy dtype -> kiln dtype code
_numpy = []


def _np():
    if not _numpy:
        import numpy

        _numpy.append(numpy)
    return _numpy[0]


def _code_of(dt):
    c = _codes.get(dt)
    if c is None:
        if not dt.isnative:
            raise TypeError(f"kiln.fuse takes arrays in the machine's byte order, not {dt!r}: "
                            "convert with a.astype(a.dtype.newbyteorder('='))")
        c = dtype_code(dt.name)
        if c is None or dt.name == "float16":
            raise TypeError(f"kiln.fuse does not support dtype {dt}"
                            + ("; convert it first, e.g. x.astype(np.float32)"
                               if dt.name == "float16" else ""))
        _codes[dt] = c
    return c


_device_codes = {}  # a device array's dtype code -> kiln.fuse's (the same, once checked)


def _device_code(a):
    c = _code_of(a.dtype)
    _device_codes[a._dtype_code] = c
    return c


def _full_key(fused, key, vals):
    """A call's key with each array's (_ARRAY, code) completed by its number of
    dimensions and its extent-1 dimensions (a bit each), which the specialisation's
    broadcasting depends on."""
    full = []
    for i, (k, v) in enumerate(zip(key, vals)):
        if k[0] == _ARRAY:
            ones = 0
            d = 0
            for e in v.shape:
                if e == 1:
                    ones |= 1 << d
                d += 1
            if d > KILN_MAX_NDIM:
                raise TypeError(f"argument '{fused._param(i)}' of kiln.fuse function "
                                f"'{fused.__name__}' has {d} dimensions; kernels take at "
                                f"most {KILN_MAX_NDIM}")
            k = (_ARRAY, k[1], d, ones)
        full.append(k)
    return tuple(full)


def _resolve(fn, dotted):
    """_compile.resolve, but NumPy's Python-level functions that kiln.fuse knows
    (np.where, np.sum, ...) imported by name are named, not compiled."""
    found, value = _compile.lookup(fn, dotted)
    if not found:
        return ("missing",)
    np = _np()
    for name in _NUMPY_FUNCS:
        if value is getattr(np, name, None):
            return ("ns", "numpy." + name)
    return _compile.describe(value)


class _Spec:
    """One specialisation: the plan the core made and its kernel."""

    __slots__ = ("kind", "keepdims", "scalars", "ndim_out", "tuple", "outs", "reds", "groups",
                 "params", "kernel", "source", "dtypes", "zero_d", "extra", "all_arrays", "tuned")

    def __init__(self, plan, kernel, key):
        np = _np()
        self.kind = plan["kind"]
        self.keepdims = plan["keepdims"]
        self.ndim_out = plan["ndim_out"]
        self.tuple = plan["tuple"]
        # outputs: (dtype, arrays read outside reductions, loops whose reductions it reads)
        self.outs = [(np.dtype(DTYPE_NAMES[d]), _bits(m), _bits(g)) for d, m, g in plan["outs"]]
        # outputs of shape () that NumPy gives as scalars (ufuncs', reductions'); the others
        # (a 0-d argument, np.where, .astype, x += y) are 0-d arrays
        self.scalars = [bool(plan["scalars"] >> k & 1) for k in range(len(self.outs))]
        self.reds = [(np.dtype(DTYPE_NAMES[d]), op) for d, op, _, _ in plan["reds"]]
        # loops: (the arrays they reduce, the max/min reductions among theirs)
        groups = {}
        for _, op, m, g in plan["reds"]:
            arrs, names = groups.setdefault(g, (_bits(m), []))
            if op in (2, 3):
                names.append(_RED_NAMES[op])
        self.groups = [groups[g] for g in range(len(groups))]
        self.params = plan["params"].split()
        self.source = plan["source"]
        self.kernel = kernel
        # the launch's arguments in order: outputs, partials, the call's arguments (0-d
        # arrays as 1-element arrays), then the extents and counts named in extra
        self.dtypes = [dt for dt, _, _ in self.outs]
        self.zero_d = [i for i, k in enumerate(key) if k[0] == _ARRAY and k[2] == 0]
        self.extra = [p for p in self.params if not (p[0] in "oa" and p[1:].isdigit())
                      and not (p[0] == "p" and p[1:].isdigit())]
        arrs = set()
        for _, a, _ in self.outs:
            arrs.update(a)
        self.all_arrays = sorted(arrs)
        self.tuned = {}  # max-autotune's choices: (device, size bits) -> threads


def _row_roles(key):
    """Whether an elementwise call of this key may run as a flat call with row operands
    (KILN_FUSE_ROW): some arrays of two or more dimensions without an extent-1 one (the
    full arrays), every other array one row of them (extent 1 but in its last dimension)
    or of one element.  Each argument's role, or None: 1 full, 2 row, 0 as it is."""
    full = max([k[2] for k in key if k[0] == _ARRAY and k[3] == 0] or [0])
    if full < 2:
        return None
    roles = []
    for k in key:
        if k[0] != _ARRAY:
            roles.append(0)
            continue
        nd, ones = k[2], k[3]
        if nd > full:
            return None
        if ones == (1 << nd) - 1:      # one element (0-d included): broadcast as it is
            roles.append(0)
        elif nd == full and ones == 0:
            roles.append(1)
        elif ones == (1 << (nd - 1)) - 1:
            roles.append(2)
        else:
            return None
    return tuple(roles) if 2 in roles else None


def _flatten(key, vals, gpu):
    """An elementwise call whose arrays all have one shape of two or more dimensions, in C
    order, is the same call on their flat views: (flat key, each argument's flat length
    or None, shape, 0), else None.  The flat kernel is the one-dimensional loop (or
    grid), which walks memory straight through (the two-dimensional GPU grid ran the
    issue's 6-op chain at 40% of the copy ceiling)."""
    shape = None
    for k, v in zip(key, vals):
        if k[0] != _ARRAY:
            continue
        if shape is None:
            shape = v.shape
            if len(shape) < 2:
                return None
        elif v.shape != shape:
            return None
        if gpu is None:
            if not v.flags.c_contiguous:
                return None
        elif not isinstance(v, DeviceArray) or _kiln.key_of(v)[3] != 67:  # 'C'
            return None     # (a NumPy array in a GPU call is copied in by the launch)
    if shape is None:
        return None
    n = 1
    for e in shape:
        n *= e
    fkey = tuple(k if k[0] != _ARRAY else (_ARRAY, k[1], 1, 1 if n == 1 else 0) for k in key)
    return fkey, [n if k[0] == _ARRAY else None for k in key], shape, 0


def _row_flat(key, vals, roles):
    """A GPU elementwise call whose full arrays all have one shape in C order and whose
    row operands are contiguous rows of it, as a flat call (the shape of _flatten's
    answer, with the row length): the 1-D kernel reads each row operand at the
    position's column, and its wide entry reads full arrays and rows as 16-byte
    vectors (vecplan.h).  A row length that is not a multiple of 4 keeps the 2-D
    kernel, as the vectors would then straddle rows.  None when the call does not fit."""
    shape = None
    for k, r, v in zip(key, roles, vals):
        if k[0] == _ARRAY and (r != 0 or k[2] > 1) and not isinstance(v, DeviceArray):
            return None     # a NumPy array in a GPU call is copied in by the launch
        if r == 1:
            if shape is None:
                shape = v.shape
            elif v.shape != shape:
                return None
            if _kiln.key_of(v)[3] != 67:    # 'C'
                return None
    cols = shape[-1]
    if cols % 4 or cols == 0:
        return None
    n = 1
    for e in shape:
        n *= e
    if n == 0:
        return None
    fkey, lengths = [], []
    for k, r, v in zip(key, roles, vals):
        if r == 0 and k[0] == _ARRAY and k[2] > 1:  # one element, as 1-D
            fkey.append((_ARRAY, k[1], 1, 1))
            lengths.append(1)
        elif r == 0:
            fkey.append(k)
            lengths.append(None)
        elif r == 1:
            fkey.append((_ARRAY, k[1], 1, 0))
            lengths.append(n)
        else:
            if v.shape[-1] != cols or v.strides[-1] != v.itemsize:
                return None
            fkey.append((_ROW, k[1], 1, 0))
            lengths.append(cols)
    return tuple(fkey), lengths, shape, cols


def _views(lengths, vals, gpu):
    """The call's values with each array whose length is given as a flat view of that
    many elements from its first (a contiguous array's, or its leading row's)."""
    if gpu is None:
        return [v if n is None else v.reshape(n) for n, v in zip(lengths, vals)]
    return [v if n is None else _kiln.device_view(v, 0, (n,), (v.itemsize,))
            for n, v in zip(lengths, vals)]


def _map_config(out_shape, dims, t, cpu, extra):
    """(grid, block) of one launch over dims with t threads per block along the last
    dimension: an elementwise kernel on either target, a row reduction's grid on the CPU."""
    if not cpu:
        if len(out_shape) < 2:
            n = out_shape[0] if out_shape else 1
            return -(-n // t), t
        # y strides the rows; with enough blocks, each thread takes _GPU_ROWS of them, so
        # its loop's set-up (spans, the unrolled pass's bounds) is paid once per 8
        # elements, not per element: one row per thread ran the 6-op chain at 40% of the
        # copy ceiling, bound by those instructions
        gx, gy = -(-out_shape[-1] // t), extra["nz"]
        if gx * gy >= _GPU_MANY_BLOCKS:
            gy = -(-gy // _GPU_ROWS)
        return (gx, min(gy, _GPU_GRID_Y)), (t, 1)
    D = len(dims)
    if D == 0:
        return 1, 1
    if D == 1:
        return -(-dims[0] // t), t
    if D == 2:
        return (-(-dims[1] // t), dims[0]), (t, 1)
    if D == 3:
        return (-(-dims[2] // t), dims[1], dims[0]), (t, 1, 1)
    return (-(-dims[-1] // t), dims[-2], extra["nz"]), (t, 1, 1)


def _rows_block(rows, m):
    """Threads per block of a GPU row reduction (a block per row) of `rows` rows of m:
    about 16 elements per thread, from _ROWS_MIN_BLOCK to _ROWS_MAX_BLOCK threads, and
    1024 for a few long rows, which would otherwise leave multiprocessors idle.  On the
    H200 (bench/RESULTS.md, session 19) this was the fastest of 128..1024 threads, or
    within 3% of it, at each of 7 shapes from 64 x 2^20 to 262144 x 256, where the
    fixed 256 it replaces ran 65536 x 1024 9% slower, 262144 x 256 41% slower, 1024 x
    65536 9% slower and 64 x 2^20 2.9x slower than the best."""
    if rows <= _ROWS_FEW and m >= 16 * _ROWS_MAX_BLOCK:
        return 1024
    t = _ROWS_MIN_BLOCK
    while t < _ROWS_MAX_BLOCK and t * 16 < m:
        t *= 2
    return t


_SCALARS_CPU, _SCALARS_GPU = 1, 2  # a 0-d result: NumPy scalars on the host, 0-d on the GPU


class _Plan:
    """What a call of one argument signature does (Fused._prepare), executed by
    Fused._exec: spec's kernel over the values (flat views where `views` gives lengths),
    new outputs and partials, the extra arguments, one or two launchers, then the
    outputs shaped (`reshape`) or made scalars (`post`).  `tune` says what max-autotune
    needs to choose another block size, `tuned` keeps its launcher per device."""

    __slots__ = ("spec", "views", "outs", "parts", "zero_d", "extra", "launches", "tune",
                 "tuned", "reshape", "post")

    def __init__(self, spec):
        self.spec = spec
        self.views = None
        self.outs = self.parts = self.zero_d = self.extra = self.launches = ()
        self.tune = self.tuned = self.reshape = None  # tuned: device -> max-autotune's launcher
        self.post = 0


def _bits(mask):
    return [i for i in range(64) if mask >> i & 1]


def _bshape(np, shapes):
    first = shapes[0]
    for s in shapes:
        if s != first:
            return np.broadcast_shapes(*shapes)
    return first


class Fused:
    """The object ``@kiln.fuse`` returns: call it like the function."""

    def __init__(self, func, signatures=(), cache=True, fastmath=False):
        code = getattr(func, "__code__", None)
        if code is None:
            raise TypeError(f"kiln.fuse needs a Python function, not {type(func).__name__}")
        self.py_func = func
        self.__name__ = func.__name__
        self.__qualname__ = getattr(func, "__qualname__", func.__name__)
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func
        self._nparams = code.co_argcount
        if not isinstance(cache, bool):
            raise TypeError(f"kiln.fuse's cache= is True or False, not {cache!r}")
        from ._dispatch import _fastmath as _fastmath_option

        self._cache = cache
        self._fastmath = _fastmath_option(fastmath)  # the kernels' @kiln.jit(fastmath=...)
        self._source = _source.snapshot(func)
        self._specs = {}
        self._row_roles = {}  # key -> _row_roles(key)
        self._plans = {}  # (key, target, layout_sig) -> _Plan
        # call_sig(args) -> (_Plan, index of the GPU array that places the call or -1): the
        # plans of calls whose values are their arguments, found without forming the key
        self._fast = {}
        self._checked = set()  # KILN_CHECK_CUDA: kernel shapes compiled by NVRTC
        self._lock = threading.Lock()
        if isinstance(signatures, str):
            signatures = [signatures]
        if not isinstance(signatures, (list, tuple)):
            raise TypeError(f"kiln.fuse's signatures= is a signature string or a list of them, "
                            f"not {signatures!r}")
        from . import _dispatch

        for text in signatures:  # checked now; built now, or by kiln precompile
            key, layouts, text = self._signature(text)
            if _dispatch._precompiling is not None:
                _dispatch._precompiling.append((_Precompiled(self, key, layouts), text))
            else:
                for kernel, argkey in self._precompile_targets(key, layouts, "cpu"):
                    kernel.compile("void(" + _kiln.argtype_str(argkey) + ")")

    # ---- specialisation ------------------------------------------------------------------

    def _lower(self, key, target):
        text, filename, line = _compile.dispatcher_source(self)
        plan = _kiln.fuse(text, filename, line, key, target, _resolve, self.py_func)
        ns = {"kiln": _KILN, "math": __import__("math"), "numpy": _np()}
        opts = {"cache": self._cache, "target": "cuda" if target else "cpu",
                "fastmath": self._fastmath}
        kernel = _make_kernel(f"__kiln_fuse_{plan['name']}", plan["source"], ns, **opts)
        if plan["kind"] != _MAP:
            kernel._par_threshold = 1  # rows and partials loop: always worth the threads
        # KILN_CHECK_CUDA: a GPU call runs the CUDA text (target 1), checked by _check_cuda;
        # this kernel's CPU text is never compiled for CUDA
        kernel._cpu_only = not target
        # what `kiln cache ls` and `kiln precompile` name it: the user's function
        kernel.__module__ = self.__module__
        kernel.__qualname__ = f"{self.__qualname__}<fused>"
        return _Spec(plan, kernel, key)

    def _spec(self, key, target):
        spec = self._specs.get((key, target))
        if spec is None:
            with self._lock:
                spec = self._specs.get((key, target))
                if spec is None:
                    spec = self._specs[(key, target)] = self._lower(key, target)
        return spec

    # ---- calls ---------------------------------------------------------------------------

    def _param(self, i):
        """The name of parameter i (its number from 1 when it has none)."""
        import inspect
        try:
            return list(inspect.signature(self.py_func).parameters)[i]
        except (TypeError, ValueError, IndexError):
            return str(i + 1)

    def _too_large(self, i):
        raise OverflowError(f"argument '{self._param(i)}' of kiln.fuse function "
                            f"'{self.__name__}' is a Python int outside int64's range, in which "
                            "kiln.fuse passes Python ints; pass np.uint64(...) for a uint64 value")

    def _bind(self, args, kwargs):
        """The call's arguments in the function's order, as Python binds them (keywords,
        defaults); Python's TypeError when they do not fit."""
        import inspect
        try:
            bound = inspect.signature(self.py_func).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"'{self.__name__}': {e}") from None
        bound.apply_defaults()
        if bound.kwargs or len(bound.args) != self._nparams:
            raise TypeError(f"'{self.__name__}' takes {self._nparams} positional arguments "
                            "(kiln.fuse functions have no *args or **kwargs)")
        return bound.args

    def __call__(self, *args, **kwargs):
        fsig = None
        if not kwargs and len(args) == self._nparams:
            fsig = _call_sig(args)   # C: the types and layouts of kiln, NumPy and Python values
            hit = self._fast.get(fsig) if fsig is not None else None
            if hit is not None:
                return self._exec(hit[0], list(args), args[hit[1]] if hit[1] >= 0 else None)
        if kwargs or len(args) != self._nparams:
            args = self._bind(args, kwargs)
        np = _np()
        ndarray = np.ndarray
        key = []    # arrays as (_ARRAY, dtype code): layout_sig says their shapes
        vals = []
        gpu = None
        for a in args:
            t = type(a)
            if t is ndarray:
                key.append((_ARRAY, _code_of(a.dtype)))
            elif t is DeviceArray and a._device != HOST:
                if gpu is None:
                    gpu = a
                c = _device_codes.get(a._dtype_code)
                key.append((_ARRAY, c if c is not None else _device_code(a)))
            elif t is float:
                key.append((_PYFLOAT, 11, 0, 0))
            elif t is bool:
                key.append((_PYBOOL, 0, 0, 0))
            elif t is int:
                if not -(1 << 63) <= a < (1 << 63):
                    self._too_large(len(vals))
                key.append((_PYINT, 4, 0, 0))
            elif isinstance(a, np.generic):
                key.append((_SCALAR, _code_of(a.dtype), 0, 0))
            else:
                if _is_gpu_array(a):
                    a = launch_view(a)          # fused kernels run on the default stream
                    if gpu is None:
                        gpu = a
                else:
                    a = np.asarray(a)
                key.append((_ARRAY, _code_of(a.dtype)))
            vals.append(a)
        key = tuple(key)
        target = 0 if gpu is None else 1
        sig = _kiln.layout_sig(vals)
        plan = self._plans.get((key, target, sig)) if sig is not None else None
        if plan is None:
            plan = self._prepare(_full_key(self, key, vals), target, vals, gpu)
            if sig is not None:
                if len(self._plans) >= KILN_FUSE_MAX_PLANS:
                    self._plans.clear()
                    self._fast.clear()
                self._plans[(key, target, sig)] = plan
        if fsig is not None and sig is not None and all(v is a for v, a in zip(vals, args)):
            if len(self._fast) >= KILN_FUSE_MAX_PLANS:
                self._fast.clear()
            where = next((i for i, v in enumerate(vals) if v is gpu), -1) if gpu is not None else -1
            self._fast[fsig] = (plan, where)
        return self._exec(plan, vals, gpu)

    def _spec_for(self, key, target, vals):
        spec = self._specs.get((key, target))
        if spec is None:
            spec = self._spec(key, target)
            if not target and os.environ.get("KILN_CHECK_CUDA") == "1":
                self._check_cuda(spec, key, vals)
        return spec

    # ---- plans: what a call does, decided once per argument types and layouts ------------

    def _prepare(self, key, target, vals, gpu):
        """The plan of a call: which kernel runs on which views of the arguments, the
        outputs it writes and the launches, all of which the argument types, shapes and
        strides decide (layout_sig), so later calls like it only execute the plan."""
        spec = self._spec_for(key, target, vals)
        if spec.kind == _MAP and len(key) > 0:
            flat = _flatten(key, vals, gpu)
            if flat is None and gpu is not None:
                roles = self._row_roles.get(key, False)
                if roles is False:
                    roles = self._row_roles[key] = _row_roles(key)
                if roles is not None:
                    flat = _row_flat(key, vals, roles)
            if flat is not None:
                fkey, lengths, shape, cols = flat
                fvals = _views(lengths, vals, gpu)
                fspec = self._spec_for(fkey, target, fvals)
                n = 1
                for e in shape:
                    n *= e
                plan = self._plan(fspec, fvals, gpu, (n,), None, cols)
                plan.views = lengths
                plan.reshape = (shape, [_contiguous_strides(shape, dt.itemsize, False)
                                        for dt in fspec.dtypes])
                return plan
        out_shape, inners = self._shapes(spec, vals)
        return self._plan(spec, vals, gpu, out_shape, inners, 0)

    def _plan(self, spec, vals, gpu, out_shape, inners, cols):
        """The outputs, partials, extra arguments and launches of spec over vals."""
        p = _Plan(spec)
        shape1 = out_shape if out_shape else (1,)
        p.outs = [(shape1, dt, _code_of(dt)) for dt in spec.dtypes]
        if not out_shape:
            p.post = _SCALARS_CPU if gpu is None else _SCALARS_GPU
        n = 1
        for e in out_shape:
            n *= e
        if not n:
            return p
        extra = {"cols": cols}
        threads = _CPU_THREADS if gpu is None else _GPU_BLOCK
        if spec.kind == _ALL:
            totals = []
            for g, sh in enumerate(inners):
                sh = sh if sh else (1,)
                t = 1
                for d, e in enumerate(sh):
                    extra[f"s{g}_{d}"] = e
                    t *= e
                totals.append(t)
                extra[f"total{g}"] = t
            most = max(totals)
            if gpu is None:
                nparts = max(1, min(most, (os.cpu_count() or 1) * 8))
            else:
                nparts = max(1, min(-(-most // _GPU_BLOCK), _GPU_PARTIALS))
            p.parts = [((nparts,), dt, _code_of(dt)) for dt, _ in spec.reds]
            for g, t in enumerate(totals):
                extra[f"chunk{g}"] = -(-t // nparts)
            extra["np"] = nparts
        elif spec.kind == _ROWS:
            for g, sh in enumerate(inners):
                extra[f"m{g}"] = sh[-1] if sh else 1
        if "nz" in spec.params:  # positions of the dimensions the grid folds into one
            nz = 1
            for s in (out_shape[:-1] if gpu is not None else out_shape[:-2]):
                nz *= s
            extra["nz"] = nz
        p.zero_d = spec.zero_d
        p.extra = [0 if q == "phase" else extra[q] for q in spec.extra]
        k = spec.kernel
        if spec.kind == _ALL:
            threads = 1 if gpu is None else _GPU_BLOCK
            p.launches = [k[extra["np"], threads], k[1, threads]]
            return p
        dims = out_shape if spec.kind == _MAP else out_shape[:len(out_shape) - spec.keepdims]
        if spec.kind == _MAP or gpu is None:
            p.launches = [k[_map_config(out_shape, dims, threads, gpu is None, extra)]]
            if spec.kind == _MAP:
                p.tune = ("map", out_shape, dims, extra)
            return p
        rows = 1
        for s in dims:
            rows *= s
        m = max([v for q, v in extra.items() if q[0] == "m"] or [1])  # row length
        threads = _rows_block(rows, m)
        p.launches = [k[rows, threads]]
        p.tune = ("rows", out_shape, rows, m, threads)
        return p

    def _at_function(self, e):
        """Exception e of the fused kernel (x ** y with a negative integer y) with its
        place in the generated kernel replaced by the fused function's file and line."""
        import re
        msg = str(e.args[0]) if len(e.args) == 1 else None
        m = re.match(r"<kiln __kiln_fuse_\w* #\d+>:\d+: ", msg) if msg else None
        if m is None:
            return e
        code = getattr(self.py_func, "__code__", None)
        # the function's last line: its return statement, which the fused kernel computes
        line = max((ln for _, _, ln in code.co_lines() if ln is not None),
                   default=code.co_firstlineno) if code else 0
        where = f"{code.co_filename}:{line}" if code else "<unknown>"
        try:
            return type(e)(f"{where}: in kiln.fuse function '{self.__name__}': {msg[m.end():]}")
        except Exception:  # an exception type that takes other arguments: as it was
            return e

    def _exec(self, p, vals, gpu):
        """Runs plan p on a call's values: views, new outputs, the launches."""
        spec = p.spec
        if p.views is not None:
            vals = _views(p.views, vals, gpu)
        if gpu is None:
            np = _np()
            outs = [np.empty(s, dt) for s, dt, _ in p.outs]
            parts = [np.empty(s, dt) for s, dt, _ in p.parts]
        else:  # on the first GPU array's device
            dev = gpu._device
            outs = [_kiln.device_empty(s, c, "C", dev, 0) for s, _, c in p.outs]
            parts = [_kiln.device_empty(s, c, "C", dev, 0) for s, _, c in p.parts]
        if p.launches:
            argv = outs + parts + vals
            for i in p.zero_d:
                argv[len(outs) + len(parts) + i] = vals[i].reshape(1)
            argv += p.extra
            try:
                if p.tune is not None and _autotune.active():
                    dev = "cpu" if gpu is None else gpu._device
                    tuned = p.tuned
                    launch = tuned.get(dev) if tuned is not None else None
                    if launch is None:  # the search once per device, then its launcher
                        if tuned is None:
                            tuned = p.tuned = {}
                        launch = tuned[dev] = self._tuned_launcher(p, argv, vals, dev, gpu)
                    launch(*argv)
                else:
                    p.launches[0](*argv)
                    if len(p.launches) > 1:  # a whole-array reduction's phase 1
                        argv[-1] = 1
                        p.launches[1](*argv)
            except (ValueError, ArithmeticError) as e:
                raise self._at_function(e) from None
        if p.reshape is not None:
            shape, strides = p.reshape
            if gpu is None:
                outs = [o.reshape(shape) for o in outs]
            else:
                outs = [_kiln.device_view(o, 0, shape, st) for o, st in zip(outs, strides)]
        elif p.post == _SCALARS_CPU:
            if any(spec.scalars):
                _kiln.record_refuse(f"kiln.fuse function '{self.__name__}' returns NumPy "
                                    "scalars, read on the host")
            outs = [o[0] if s else o.reshape(()) for o, s in zip(outs, spec.scalars)]
        elif p.post == _SCALARS_GPU:
            outs = [o.reshape(()) if hasattr(o, "reshape") else o for o in outs]
        return tuple(outs) if spec.tuple else outs[0]

    def _tuned_launcher(self, p, argv, vals, dev, gpu):
        """max-autotune: the launcher with the block size the search keeps for this size.
        An elementwise kernel indexes with grid(), so any block size computes the same; a
        row reduction's block per row folds whatever its size (the fold reads blockDim):
        few long rows leave multiprocessors idle at 256 threads, which the search sees.
        Timed on these outputs (new arrays, the caller's only once this call returns)."""
        spec, k = p.spec, p.spec.kernel
        cpu = gpu is None
        if p.tune[0] == "map":
            _, out_shape, dims, extra = p.tune
            size = 1
            for e in out_shape:
                size *= e
            tkey = (dev, size.bit_length())
            got = spec.tuned.get(tkey)   # the common case: one dict look-up
            if got is None:
                got = spec.tuned[tkey] = _autotune.choose(
                    ("fuse", self, spec, dev, len(out_shape), _autotune.bucket(size)),
                    "fuse-cpu" if cpu else "fuse-gpu",
                    lambda: self._ident(spec, vals, out_shape),
                    dev, size, _autotune.CPU_THREADS if cpu else _autotune.GPU_THREADS,
                    lambda: lambda t: k[_map_config(out_shape, dims, t, cpu, extra)](*argv),
                    None if cpu else _kiln.synchronize, _CPU_THREADS if cpu else _GPU_BLOCK)
            return k[_map_config(out_shape, dims, got, cpu, extra)]
        _, out_shape, rows, m, default = p.tune
        tkey = (dev, "rows", rows.bit_length(), m.bit_length())
        got = spec.tuned.get(tkey)
        if got is None:
            got = spec.tuned[tkey] = _autotune.choose(
                ("fuse-rows", self, spec, dev, rows.bit_length(), m.bit_length()),
                "fuse-rows-gpu",
                lambda: f"{self._ident(spec, vals, out_shape)}:rows{rows.bit_length()}", dev,
                rows * m, _autotune.GPU_THREADS,
                lambda: lambda t: k[rows, t](*argv), _kiln.synchronize, default)
        return k[rows, got]

    def _shapes(self, spec, vals):
        """The shape every output has and, for reductions, the shape each loop reduces."""
        np = _np()
        if spec.kind == _MAP:  # the common case first: every array of one shape
            arrs = spec.all_arrays
            shape = vals[arrs[0]].shape
            for i in arrs:
                if vals[i].shape != shape:
                    break
            else:
                return shape, None
        inners = []
        reduced = []
        for arrs, maxmin in spec.groups:
            s = _bshape(np, [vals[i].shape for i in arrs])
            inners.append(s)
            if spec.kind == _ROWS:
                reduced.append(s[:-1] + ((1,) if spec.keepdims and s else ()))
                size = s[-1] if s else 1
            else:
                reduced.append((1,) * len(s) if spec.keepdims else ())
                size = 1
                for e in s:
                    size *= e
            if maxmin and size == 0:
                raise ValueError(f"zero-size array to reduction operation {maxmin[0]} "
                                 "which has no identity")
        out = None
        for _, arrs, groups in spec.outs:
            shapes = [reduced[g] for g in groups] + [vals[i].shape for i in arrs]
            s = _bshape(np, shapes) if len(shapes) > 0 else ()
            if out is None:
                out = s
            elif s != out:
                raise ValueError(f"'{self.__name__}' returns values of shapes {out} and {s}: "
                                 "kiln.fuse writes its outputs in one kernel, of one shape")
        return out, inners

    def _ident(self, spec, vals, out_shape):
        """What a kept launch choice is for: the function's code, the types, the kernel."""
        types = tuple(spec.dtypes) + tuple(getattr(v, "dtype", type(v)) for v in vals) \
            + (f"{len(out_shape)}d",)
        code = self.py_func.__code__
        body = hashlib.sha1(code.co_code + repr(code.co_consts).encode()).hexdigest()[:12]
        return (f"{self.__module__}.{self.__qualname__}:{body}:"
                f"{','.join(str(t) for t in types)}:{spec.kernel.__name__}")

    def _check_cuda(self, cpu, key, vals):
        """KILN_CHECK_CUDA=1 (the test suite): the CUDA kernel of this specialisation, for
        these arguments' layouts, compiled by NVRTC for sm_80 and sm_90; once per shape of
        kernel (elementwise, rows or whole; keepdims; one loop or several; dimensions past
        three), since dtypes, layouts and broadcasting only change conversions and index
        formulas, which the kernel tests compile for every dtype and layout."""
        shape = (cpu.kind, cpu.keepdims, len(cpu.groups) > 1, cpu.ndim_out > 3)
        if shape in self._checked:
            return
        self._checked.add(shape)
        spec = self._spec(key, 1)
        layouts = ["C" if getattr(v, "flags", None) is None or v.flags.c_contiguous else
                   "F" if v.flags.f_contiguous else "A" for v in vals]
        _compile.check_cuda(spec.kernel, _kernel_argkey(spec, key, layouts))

    # ---- explicit signatures and kiln precompile -----------------------------------------

    def _signature(self, text):
        """A signature "(float32[:, ::1], float64)" as the fuse key and the arrays' layouts:
        arrays with no extent-1 dimension; int64, float64 and bool scalars are Python's."""
        text = text.strip()
        if not text.startswith("void"):
            text = "void" + (text if text.startswith("(") else f"({text})")
        _, argkey = _kiln.parse_signature(text)
        if len(argkey) // 4 != self._nparams:
            raise TypeError(f"signature '{text}' has {len(argkey) // 4} arguments but "
                            f"'{self.__name__}' takes {self._nparams}")
        key, layouts = [], []
        for i in range(0, len(argkey), 4):
            arr, dt, nd, lay = argkey[i:i + 4]
            if arr:
                key.append((_ARRAY, dt, nd, 0))
            else:
                kind = {4: _PYINT, 11: _PYFLOAT, 0: _PYBOOL}.get(dt, _SCALAR)
                key.append((kind, dt, 0, 0))
            layouts.append(chr(lay) if arr else "C")
        return tuple(key), layouts, text

    def _precompile_targets(self, key, layouts, kind):
        """[(kernel, its argument key)] of a signature for `kind` ("cpu" or "cuda"): the
        kernels a call of it runs.  An elementwise signature whose arrays all have one
        number of dimensions (two or more) in C order runs flat (_flatten); on the GPU,
        one with row operands runs the row path (_row_flat), or the signature's own
        kernel when the row length is not a multiple of 4: both are built."""
        target = 0 if kind == "cpu" else 1
        spec = self._spec(key, target)
        own = (spec.kernel, _kernel_argkey(spec, key, layouts))
        arrays = [(k, lay) for k, lay in zip(key, layouts) if k[0] == _ARRAY]
        if spec.kind != _MAP or not arrays or any(lay != "C" for _, lay in arrays):
            return [own]
        if len({k[2] for k, _ in arrays}) == 1 and arrays[0][0][2] >= 2:
            fkey = tuple(k if k[0] != _ARRAY else (_ARRAY, k[1], 1, 0) for k in key)
            fspec = self._spec(fkey, target)
            return [(fspec.kernel, _kernel_argkey(fspec, fkey, layouts))]
        roles = _row_roles(key) if target else None
        if roles is None:
            return [own]
        fkey = tuple((_ARRAY, k[1], 1, 1) if r == 0 and k[0] == _ARRAY and k[2] > 1
                     else (_ARRAY, k[1], 1, 0) if r == 1 else (_ROW, k[1], 1, 0) if r == 2 else k
                     for k, r in zip(key, roles))
        fspec = self._spec(fkey, target)
        return [(fspec.kernel, _kernel_argkey(fspec, fkey, layouts)), own]

    def __repr__(self):
        return f"<kiln fused {self.__name__}>"


def _kernel_argkey(spec, key, layouts):
    """The generated kernel's argument key for a call of this key with these layouts."""
    argkey = []
    for p in spec.params:
        c = p[0]
        if c == "o":
            dt = spec.outs[int(p[1:])][0]
            argkey.append(bytes([1, _code_of(dt), max(spec.ndim_out, 1), ord("C")]))
        elif c == "p" and p[1:].isdigit():
            argkey.append(bytes([1, _code_of(spec.reds[int(p[1:])][0]), 1, ord("C")]))
        elif c == "a" and p[1:].isdigit():
            kind, dt, nd, _ = key[int(p[1:])]
            if kind in (_ARRAY, _ROW):
                argkey.append(bytes([1, dt, max(nd, 1), ord(layouts[int(p[1:])])]))
            elif kind in (_SCALAR, _PYBOOL):
                argkey.append(bytes([0, dt, 0, 0]))
            else:
                argkey.append(bytes([0, 4 if kind == _PYINT else 11, 0, 0]))
        else:
            argkey.append(bytes([0, 4, 0, 0]))
    return b"".join(argkey)


class _Precompiled:
    """What `kiln precompile` builds for one signature of a fused function: the CPU
    kernel for the cpu target, the CUDA kernel for cuda targets."""

    def __init__(self, fused, key, layouts):
        self._fused, self._key, self._layouts = fused, key, layouts
        self.__qualname__ = fused.__qualname__

    def precompile_targets(self, kind):
        return self._fused._precompile_targets(self._key, self._layouts, kind)


__all__ = ["Fused"]
