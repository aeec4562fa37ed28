"""kiln.guvectorize: generalized ufuncs (Numba's guvectorize), built from a kiln kernel.

The user's function works on the *core* dimensions of its arguments, which a layout
string names (``'(m,n),(n,p)->(m,p)'``); a call loops it over the remaining, leading
*loop* dimensions.  Here, in Python, a call binds the core dimensions, checks them,
picks the signature, allocates the outputs and makes every argument a strided view
of shape ``loop + core`` (zero strides where an input is broadcast).  The kernel,
generated as text and registered with linecache like vectorize's, gives each thread
one point of the loop and calls the user's function as a device function with the
arguments indexed at that point: fewer indices than dimensions give views of the core
dimensions, all of them a scalar (a ``()`` core argument of scalar type).  So the
same front end, cache and launch path serve it on the CPU and the GPU, and errors in
the function point at the user's lines.

Loop dimensions broadcast as Numba-CUDA's do: an input whose loop dimensions hold one
element is "pinned" (the same core for every point of the loop), the others broadcast
as NumPy's shapes do.  A ``()`` core argument declared as a 1-D array (``int32[:]``,
Numba's old spelling of a scalar) sees a one-element view.
"""

import re

from . import _autotune, _kiln
from ._cuda import (DeviceArray, _is_device_array, as_cuda_array, launch_view, on_host, to_device)
from ._intrinsics import namespace as _KILN
from ._types import DTYPE_NAMES, signature_text
from ._ufunc import (_allocate_like, _device, _holds, _host_work, _ident, _make_kernel, _np,
                     _scalar_codes)

# options guvectorize takes: Numba's for the CUDA target ('cache', 'identity' and
# 'nopython' are accepted; nopython must be True, as Numba checks)
_OPTIONS = frozenset(("target", "nopython", "cache", "identity", "fastmath", "debug", "lineinfo",
                      "max_blocksize", "writable_args", "forceobj"))
_DIM = re.compile(r"[A-Za-z_]\w*|\d+")


def parse_layout(layout):
    """'(m,n),(n,p)->(m,p)' -> ((('m','n'), ('n','p')), (('m','p'),)); a ValueError that
    says what is wrong otherwise."""
    if not isinstance(layout, str):
        raise TypeError(f"a gufunc layout is a string like '(m,n),(n,p)->(m,p)', "
                        f"not {type(layout).__name__}")
    sides = layout.split("->")
    if len(sides) != 2:
        raise ValueError(f"gufunc layout {layout!r} needs exactly one '->' between the inputs "
                         f"and the outputs")
    groups = []
    for side, what in zip(sides, ("input", "output")):
        found = re.findall(r"\(([^()]*)\)", side)
        rest = re.sub(r"\([^()]*\)", "", side)
        if rest.replace(",", "").strip() or rest.count(",") != max(len(found) - 1, 0):
            raise ValueError(f"gufunc layout {layout!r}: its {what}s {side.strip()!r} are not "
                             f"a comma-separated list of '(dims)' groups")
        if not found:
            raise ValueError(f"gufunc layout {layout!r} has no {what}s")
        side_groups = []
        for g in found:
            dims = tuple(d.strip() for d in g.split(",")) if g.strip() else ()
            for d in dims:
                if not _DIM.fullmatch(d):
                    raise ValueError(f"gufunc layout {layout!r}: {d!r} in ({g}) is not a "
                                     f"dimension name or size")
            side_groups.append(dims)
        groups.append(tuple(side_groups))
    return groups[0], groups[1]


def _parse_signature(sig, ins, outs, layout):
    """The argument types of one signature as (dtype, is_array, ndim) per argument; checked
    against the layout."""
    np = _np()
    text = signature_text(sig)
    ret, key = _kiln.parse_signature(text)
    _scalar_codes(text, ([ret[1]] if ret else []) + [key[4 * i + 1] for i in range(len(key) // 4)],
                  "kiln.guvectorize")
    if ret:
        name = DTYPE_NAMES[ret[1]] + ("[...]" if ret[0] else "")
        raise TypeError(f"guvectorized functions cannot return values: signature {text!r} "
                        f"specifies {name} return type; write results into the output arguments "
                        f"and declare the return type void")
    args = [(np.dtype(DTYPE_NAMES[key[4 * i + 1]]), bool(key[4 * i]), key[4 * i + 2])
            for i in range(len(key) // 4)]
    cores = ins + outs
    if len(args) != len(cores):
        raise TypeError(f"signature {text!r} has {len(args)} argument(s), but layout {layout!r} "
                        f"has {len(cores)} ({len(ins)} input(s), {len(outs)} output(s))")
    for i, ((dt, is_array, ndim), core) in enumerate(zip(args, cores)):
        what = f"argument {i + 1} of signature {text!r}"
        group = "(" + ",".join(core) + ")"
        if i >= len(ins) and not is_array:
            raise TypeError(f"{what} is an output and must be an array, not the scalar {dt}")
        if not is_array and core:
            raise TypeError(f"{what} is the scalar {dt}, but its layout {group} has "
                            f"{len(core)} core dimension(s)")
        if is_array and ndim != len(core) and not (ndim == 1 and not core):
            raise TypeError(f"{what} is a {ndim}-D array, but its layout {group} has "
                            f"{len(core)} core dimension(s)")
    return text, args


def _plural(n, word):
    return f"{n} {word}{'s' if n != 1 else ''}"


class GUVectorized:
    """The object ``@kiln.guvectorize(sigs, layout)`` returns: call it like a NumPy gufunc,
    ``f(*inputs, out=None, stream=0)`` or ``f(*inputs, *outputs, stream=0)``."""

    def __init__(self, func, signatures, layout, **options):
        bad = [k for k in options if k not in _OPTIONS]
        if bad:
            raise TypeError("The following target options are not supported: "
                            + ", ".join(repr(k) for k in bad))
        if not options.get("nopython", True):
            raise TypeError("nopython flag must be True")
        self.py_func = func
        self.__name__ = getattr(func, "__name__", "gufunc")
        self.__doc__ = func.__doc__
        self.signature = layout
        self._ins, self._outs = parse_layout(layout)
        self.nin, self.nout = len(self._ins), len(self._outs)
        self.nargs = self.nin + self.nout
        if isinstance(signatures, str) or not isinstance(signatures, (list, tuple)):
            signatures = [signatures]
        self._sigs = [_parse_signature(s, self._ins, self._outs, layout) for s in signatures]
        self.is_dynamic = not self._sigs
        mb = options.get("max_blocksize")
        if mb is not None and (not isinstance(mb, int) or isinstance(mb, bool) or not 1 <= mb <= 1024):
            raise ValueError(f"max_blocksize is the most threads a block may have, an int from 1 "
                             f"to 1024, not {mb!r}")
        self.max_blocksize = mb
        self._writable = _writable_inputs(options.get("writable_args", ()), func, self.nin)
        self._options = {k: v for k, v in options.items() if k in ("fastmath", "debug", "lineinfo")}
        target = options.get("target", "auto")
        if target == "parallel" or (target == "cuda" and on_host()):
            target = "cpu"  # as kiln.vectorize: KILN_TARGET=cpu runs GPU ufuncs on the CPU
        self._options["target"] = target
        self._dev = None
        self._kernels = {}

    @property
    def ufunc(self):
        """Numba's gufunc objects carry their ufunc; kiln's is the object itself."""
        return self

    @property
    def types(self):
        """NumPy's spelling of the signatures' loops: 'ff->f'."""
        out = []
        for _, args in self._sigs:
            chars = [dt.char for dt, _, _ in args]
            out.append("".join(chars[:self.nin]) + "->" + "".join(chars[self.nin:]))
        return out

    @property
    def ntypes(self):
        return len(self._sigs)

    def _kernel(self, nloop):
        """The loop kernel for arguments with nloop leading loop dimensions."""
        k = self._kernels.get(nloop)
        if k is not None:
            return k
        if self._dev is None:
            self._dev = _device(self.py_func, self._options)
        name = f"__kiln_guvectorize_{_ident(self.__name__)}"
        params = [f"a{i}" for i in range(self.nargs)]
        lines = [f"def {name}({', '.join(params)}, n):", "    i = kiln.grid(1)",
                 "    if i < n:", "        r = i"]
        for d in range(nloop - 1, 0, -1):
            lines.append(f"        i{d} = r % a0.shape[{d}]")
            lines.append(f"        r = r // a0.shape[{d}]")
        lines.append("        i0 = r")
        idx = ", ".join(f"i{d}" for d in range(nloop))
        lines.append(f"        __kiln_f({', '.join(f'{p}[{idx}]' for p in params)})")
        text = "\n".join(lines) + "\n"
        k = _make_kernel(name, text, {"kiln": _KILN, "__kiln_f": self._dev}, **self._options)
        self._kernels[nloop] = k
        return k

    # ---- a call --------------------------------------------------------------------------

    def _split(self, args, out):
        """The inputs and the outputs (None where to allocate) of a call."""
        nin, nout = self.nin, self.nout
        if len(args) not in (nin, nin + nout):
            raise TypeError(f"'{self.__name__}': this gufunc accepts {_plural(nin, 'positional argument')} "
                            f"(the inputs) or {_plural(nin + nout, 'positional argument')} "
                            f"(the inputs and outputs). Got {_plural(len(args), 'positional argument')}.")
        if len(args) == nin + nout:
            if out is not None:
                raise ValueError("cannot specify argument 'out' as both positional and keyword")
            return list(args[:nin]), list(args[nin:])
        if out is None:
            return list(args), [None] * nout
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(outs) != nout:
            raise ValueError(f"'{self.__name__}' has {_plural(nout, 'output')}, but out= gives "
                             f"{len(outs)}")
        return list(args), outs

    def _choose(self, dtypes, weak=()):
        """The signature for these input dtypes: exact first, then safe casts, then within
        a kind, as NumPy's ufuncs choose loops; then one that holds the Python scalars
        (weak: as given, None for the others) as they are, as Numba's resolution does."""
        np = _np()
        for casting in ("no", "safe", "same_kind"):
            for text, args in self._sigs:
                if all(np.can_cast(d, a[0], casting) for d, a in zip(dtypes, args)):
                    return args
        for text, args in self._sigs if any(v is not None for v in weak) else ():
            if all(np.can_cast(d, a[0], "same_kind") if v is None else _holds(np, a[0], v)
                   for d, a, v in zip(dtypes, args, weak)):
                return args
        listed = "\n  ".join(t for t, _ in self._sigs)
        have = ", ".join(str(d) for d in dtypes)
        raise TypeError(f"'{self.__name__}' was compiled for\n  {listed}\nand cannot take "
                        f"inputs ({have})")

    def __call__(self, *args, out=None, stream=0):
        np = _np()
        ins, outs = self._split(args, out)
        for j, o in enumerate(outs):
            if o is not None and not isinstance(o, np.ndarray) and not _is_device_array(o):
                raise TypeError(f"'{self.__name__}': output {j + 1} must be a NumPy array or a "
                                f"device array, not {type(o).__name__}")
        device = any(_is_device_array(a) for a in ins + outs if a is not None)
        first = next((a for a in ins + outs if a is not None and _is_device_array(a)), None)
        # the inputs as arrays: Python scalars typed next to the arrays as NumPy 2 does
        conv = []
        for a in ins:
            if _is_device_array(a):
                conv.append(launch_view(a, stream))
            elif isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic):
                conv.append(a)
            else:
                if not isinstance(a, np.ndarray):
                    _host_work(f"'{self.__name__}' converts a {type(a).__name__} argument to "
                               "an array on the host")
                conv.append(np.asarray(a))
        weak = [c if isinstance(c, (bool, int, float, complex)) else None for c in conv]
        known = [c.dtype for c in conv if not isinstance(c, (bool, int, float, complex))]
        try:
            conv = [np.asarray(c, np.result_type(*known, c) if known else None)
                    if isinstance(c, (bool, int, float, complex)) else c for c in conv]
        except OverflowError:  # an int no array type near it holds (2**63 by int64)
            raise TypeError(f"'{self.__name__}': a Python int argument is too large for the "
                            f"arrays of this call ({', '.join(map(str, known))})") from None
        for c in conv:
            if not isinstance(c, DeviceArray):
                _check_dtype(c.dtype)
        if self._sigs:
            types = self._choose([c.dtype for c in conv], weak)
            # a Python scalar the signature took as it is: converted from its own value
            conv = [c if v is None else np.asarray(v, t[0]) for c, v, t in zip(conv, weak, types)]
        else:
            missing = [i + 1 for i, o in enumerate(outs) if o is None]
            if missing:
                raise TypeError(f"'{self.__name__}' is a dynamic gufunc (no signatures): pass its "
                                f"outputs, as the dtypes of output(s) {missing} cannot be inferred")
            types = [(c.dtype, bool(core), len(core))
                     for c, core in zip(conv, self._ins)]
            types += [(np.dtype(getattr(o, "dtype", None) or launch_view(o, stream).dtype), True,
                       len(core)) for o, core in zip(outs, self._outs)]
        for i, (c, (dt, _, _)) in enumerate(zip(conv, types)):
            if c.dtype == dt:
                continue
            if isinstance(c, DeviceArray):
                raise TypeError(f"'{self.__name__}': input {i + 1} is a device array of {c.dtype}, "
                                f"but the signature takes {dt}, and a device array does not "
                                f"support .astype() here; convert it first")
            _host_work(f"'{self.__name__}' converts input {i + 1} to its signature's dtype on "
                       "the host")
            conv[i] = c.astype(dt)
        loop, bound = self._bind(conv)
        shapes = []
        # an output with only __cuda_array_interface__ (no .shape) is measured through its view
        shaped = [o if o is None or hasattr(o, "shape") else launch_view(o, stream) for o in outs]
        for j, (o, core) in enumerate(zip(shaped, self._outs)):
            if o is not None:
                o_shape = tuple(o.shape)
                lead = len(o_shape) - len(core)
                if lead < 0:
                    raise ValueError(f"'{self.__name__}': output {j + 1} has shape {o_shape}, fewer "
                                     f"dimensions than its layout ({','.join(core)})")
                self._bind_core(bound, core, o_shape[lead:], f"output {j + 1}")
            shape = []
            for d in core:
                if d.isdigit():
                    shape.append(int(d))
                elif d in bound:
                    shape.append(bound[d][0])
                else:
                    raise ValueError(f"'{self.__name__}': core dimension '{d}' of output {j + 1} "
                                     f"appears in no input of layout {self.signature!r}, so its size "
                                     f"is unknown; pass the output")
            shape = loop + tuple(shape)
            if o is not None and tuple(o.shape) != shape:
                raise ValueError(f"'{self.__name__}': output {j + 1} has shape {tuple(o.shape)}, "
                                 f"but the loop and core dimensions make it {shape}")
            shapes.append(shape)
        if device:
            return self._call_device(conv, outs, types, loop, shapes, first, stream)
        return self._call_host(conv, outs, types, loop, shapes)

    def _bind_core(self, bound, core, shape, what):
        for d, n in zip(core, shape):
            if d.isdigit():
                if int(d) != n:
                    raise ValueError(f"'{self.__name__}': {what} has core dimension {n} where "
                                     f"layout {self.signature!r} fixes {d}")
            elif d not in bound:
                bound[d] = (n, what)
            elif bound[d][0] != n:
                raise ValueError(f"'{self.__name__}': core dimension '{d}' is {bound[d][0]} in "
                                 f"{bound[d][1]} but {n} in {what} (layout {self.signature!r})")

    def _bind(self, conv):
        """The loop shape of the inputs and their core dimensions' sizes by name."""
        np = _np()
        bound, loops = {}, []
        for i, (c, core) in enumerate(zip(conv, self._ins)):
            lead = c.ndim - len(core)
            if lead < 0:
                raise ValueError(f"'{self.__name__}': input {i + 1} has {c.ndim} dimension(s), "
                                 f"fewer than the {len(core)} of its layout ({','.join(core)})")
            self._bind_core(bound, core, tuple(c.shape)[lead:], f"input {i + 1}")
            loops.append(tuple(c.shape)[:lead])
        free = [lp for lp in loops if _prod(lp) != 1]
        if not free:
            return loops[0], bound
        try:
            return tuple(np.broadcast_shapes(*free)), bound
        except ValueError:
            raise ValueError(f"'{self.__name__}': the inputs' loop dimensions "
                             f"{', '.join(str(lp) for lp in loops)} do not broadcast together "
                             f"(core layout {self.signature!r})") from None

    def _views(self, arrays, types, loop):
        """Each argument's (shape, strides) as the kernel sees it: loop + core dimensions,
        zero strides where broadcast, a one-element core for a '()' array argument."""
        loop1 = loop or (1,)
        cores = self._ins + self._outs
        got = []
        for x, core, (dt, is_array, ndim) in zip(arrays, cores, types):
            shape, strides = tuple(x.shape), tuple(x.strides)
            lead = len(shape) - len(core)
            src, src_st = shape[:lead], strides[:lead]
            st = []
            off = lead - len(loop1)
            for j, n in enumerate(loop1):
                k = j + off
                st.append(src_st[k] if 0 <= k and src[k] == n and n != 1 else 0)
            v_shape, v_st = loop1 + shape[lead:], tuple(st) + strides[lead:]
            if is_array and not core:  # Numba's old spelling of a scalar: int32[:] for ()
                v_shape, v_st = v_shape + (1,), v_st + (x.itemsize,)
            got.append((v_shape, v_st))
        return got

    def _warn_one_point(self, arrays):
        """Numba's low-occupancy warning, where it matters: a loop of one point runs the
        whole core on one thread (a scalar call, with cores of one element, is not work)."""
        cores = [_prod(x.shape[x.ndim - len(c):]) for x, c in zip(arrays, self._ins + self._outs)]
        if max(cores) > 1 and min(cores) > 0:  # an empty core is no work either
            import warnings

            warnings.warn(f"'{self.__name__}': Grid size 1 will likely result in under-utilization "
                          f"due to low occupancy: the loop dimensions of this call hold one point, "
                          f"so one thread runs all of it (cores of up to {max(cores)} elements); "
                          f"give the inputs leading loop dimensions", _kiln.PerformanceWarning,
                          stacklevel=4)

    def _launch(self, k, views, n, stream):
        t = min(_autotune.DEFAULT_THREADS, self.max_blocksize or _autotune.DEFAULT_THREADS)
        try:
            if stream:
                k[(n + t - 1) // t, t, stream](*views, n)
            else:
                k[(n + t - 1) // t, t](*views, n)
        except (TypeError, ValueError) as e:
            msg = _gufunc_words(str(e), self.__name__, self.nin)
            if msg == str(e):
                raise
            raise type(e)(msg) from None

    def _call_host(self, conv, outs, types, loop, shapes):
        np = _np()
        results, temps = [], []
        for j, (o, shape) in enumerate(zip(outs, shapes)):
            dt = types[self.nin + j][0]
            if o is None:
                r = np.empty(shape, dt)
            elif not isinstance(o, np.ndarray):
                raise TypeError(f"'{self.__name__}': output {j + 1} must be a NumPy array or a "
                                f"device array, not {type(o).__name__}")
            elif o.dtype != dt:
                if not np.can_cast(dt, o.dtype, "same_kind"):
                    raise TypeError(f"'{self.__name__}': output {j + 1} is an array of {o.dtype}, "
                                    f"but the signature writes {dt}, which NumPy does not cast "
                                    f"to {o.dtype} (casting='same_kind')")
                r = np.empty(shape, dt)
                temps.append((o, r))
                _host_work(f"'{self.__name__}' writes output {j + 1} through a temporary that "
                           "NumPy copies on the host (an output of another dtype)")
            else:
                r = o
            results.append(r)
        # an input sharing memory with an output is read from a copy, as NumPy's gufuncs do:
        # a core loop may read elements another point (or itself) has already written
        shared = [isinstance(x, np.ndarray) and any(np.may_share_memory(x, r) for r in results)
                  for x in conv]
        if any(shared):
            _host_work(f"'{self.__name__}' reads an input that shares memory with an output "
                       "from a copy made on the host")
        conv = [x.copy() if s else x for x, s in zip(conv, shared)]
        arrays = conv + results
        n = _prod(loop)
        if n == 1:
            self._warn_one_point(arrays)
        if n:
            views = []
            for i, (x, (shape, st)) in enumerate(zip(arrays, self._views(arrays, types, loop))):
                writable = i >= self.nin or i in self._writable
                if x.shape == shape and x.strides == st:  # the array as it is (as_strided: 5 us)
                    if not writable:
                        x = x.view()
                        x.flags.writeable = False
                    views.append(x)
                else:
                    views.append(np.lib.stride_tricks.as_strided(x, shape, st,
                                                                 writeable=writable))
            self._launch(self._kernel(len(loop or (1,))), views, n, 0)
        for o, r in temps:
            np.copyto(o, r, casting="same_kind")
        final = [o if o is not None else r for o, r in zip(outs, results)]
        if not loop and all(f.ndim == 0 for f in final):
            final = [f[()] for f in final]
        return final[0] if self.nout == 1 else tuple(final)

    def _call_device(self, conv, outs, types, loop, shapes, first, stream):
        np = _np()
        conv = [c if isinstance(c, DeviceArray) else to_device(np.ascontiguousarray(c), stream)
                for c in conv]
        objs, results = [], []
        for j, (o, shape) in enumerate(zip(outs, shapes)):
            dt = types[self.nin + j][0]
            if o is None:
                obj = _allocate_like(first, shape, dt)
                objs.append(obj)
                results.append(launch_view(obj, stream))
                continue
            if not _is_device_array(o):
                raise TypeError(f"'{self.__name__}': output {j + 1} is a host array while the "
                                f"inputs are on the device; pass a device array")
            r = launch_view(o, stream)
            if r.dtype != dt:
                raise TypeError(f"'{self.__name__}': output {j + 1} is a device array of {r.dtype}, "
                                f"but the signature writes {dt}")
            lib = type(o).__module__.split(".")[0]
            objs.append(o if isinstance(o, DeviceArray) or lib in ("cupy", "torch") else r)
            results.append(r)
        conv = [_apart(x, results, stream) for x in conv]
        arrays = conv + results
        n = _prod(loop)
        if n == 1:
            self._warn_one_point(arrays)
        if n:
            views = [_kiln.device_view(x, 0, shape, st)
                     for x, (shape, st) in zip(arrays, self._views(arrays, types, loop))]
            self._launch(self._kernel(len(loop or (1,))), views, n, stream)
        return objs[0] if self.nout == 1 else tuple(objs)

    def __repr__(self):
        return f"<kiln gufunc {self.__name__} {self.signature}>"


def _writable_inputs(spec, func, nin):
    """writable_args (Numba's option): the inputs, by index or parameter name, the function
    may write; their memory is passed writable (a copy made for a cast stays the copy's)."""
    if isinstance(spec, (int, str)):
        spec = (spec,)
    if not isinstance(spec, (tuple, list, set, frozenset)):
        raise TypeError(f"writable_args is a tuple of input indices or names, not {spec!r}")
    code = getattr(func, "__code__", None)
    names = code.co_varnames[:code.co_argcount] if code is not None else ()
    out = set()
    for a in spec:
        if isinstance(a, str) and not names:  # the options' check before the function
            continue
        if isinstance(a, str) and a in names[:nin]:
            out.add(names.index(a))
        elif isinstance(a, int) and not isinstance(a, bool) and 0 <= a < nin:
            out.add(a)
        else:
            raise ValueError(f"writable_args names the gufunc's inputs (0 to {nin - 1}, or their "
                             f"parameter names); {a!r} is not one")
    return frozenset(out)


_KERNEL_ARG = None  # re: "argument 'a3' of kernel '__kiln_guvectorize_f'"


def _gufunc_words(msg, name, nin):
    """A launch error of the loop kernel in the gufunc's own words: 'input 2 of gufunc
    'f'' for "argument 'a1' of kernel '__kiln_guvectorize_f''."""
    global _KERNEL_ARG
    if _KERNEL_ARG is None:
        import re

        _KERNEL_ARG = re.compile(r"argument 'a(\d+)' of kernel '__kiln_guvectorize_\w*'")

    def words(m):
        i = int(m.group(1))
        what = f"input {i + 1}" if i < nin else f"output {i - nin + 1}"
        return f"{what} of gufunc '{name}'"

    return _KERNEL_ARG.sub(words, msg)


def _apart(x, outs, stream):
    """x, or a copy of it when its bytes meet an output's (the device arrays' spans on one
    device), as the host path copies an input that shares memory with an output."""
    lo, hi = x._span
    a, b = x._ptr + lo, x._ptr + hi
    for r in outs:
        rlo, rhi = r._span
        if r._device == x._device and a < r._ptr + rhi and r._ptr + rlo < b:
            return to_device(x.copy_to_host(), stream)
    return x


def _prod(shape):
    n = 1
    for e in shape:
        n *= e
    return n


_dtypes_ok = set()  # dtypes _check_dtype took: NumPy computes dt.name in Python (2 us)


def _check_dtype(dt):
    if dt in _dtypes_ok:
        return
    from ._types import dtype_code

    if dtype_code(dt.name) is not None:
        _dtypes_ok.add(dt)
    else:
        if dt.fields is not None:
            raise TypeError(f"kiln's ufuncs loop over scalars, not records (dtype {dt}); loop "
                            f"over a record array in a kiln.jit kernel instead")
        raise TypeError(f"kiln kernels do not support dtype {dt}")


def guvectorize(signatures, layout=None, **options):
    """The decorator kiln.guvectorize returns (see kiln.guvectorize)."""
    if layout is None:  # guvectorize('(n)->(n)'): a dynamic gufunc, compiled per call
        if not isinstance(signatures, str) or "->" not in signatures:
            raise TypeError("kiln.guvectorize takes (signatures, layout) or a layout string "
                            "like '(m,n),(n,p)->(m,p)'")
        signatures, layout = [], signatures
    ins, outs = parse_layout(layout)
    sigs = signatures if isinstance(signatures, (list, tuple)) and not (
        signatures and not isinstance(signatures[0], (str, list, tuple))
        and "(" not in str(signatures[0])) else [signatures]
    for s in sigs:  # bad signatures and options are errors at decoration, as in Numba
        _parse_signature(s, ins, outs, layout)
    GUVectorized(lambda: None, (), layout, **options)

    def decorate(fn):
        if not callable(fn):
            raise TypeError(f"kiln.guvectorize decorates a Python function, not {fn!r}")
        return GUVectorized(fn, sigs, layout, **options)

    return decorate


__all__ = ["GUVectorized", "guvectorize", "parse_layout"]
