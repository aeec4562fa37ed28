"""kiln.vectorize and kiln.reduce, built from ordinary kiln kernels.

A vectorized function becomes an elementwise kernel whose source is generated
here and registered with linecache, so it goes through the same front end,
cache and launch path as a user's kernel; the user's scalar function is its
device function, and errors in it point at the user's lines.  Broadcasting,
output allocation and NEP 50 typing of Python scalars happen here with NumPy.

A reduction is a kernel in which each block folds a contiguous chunk of the
array sequentially (the CPU's per-thread partials), then the partials are
folded by the same kernel.
"""

import functools
import hashlib
import linecache
import math
import operator
import os
import threading

from . import _autotune, _kiln
from ._cuda import (DTYPE_NAMES, DeviceArray, _code, _is_device_array, _is_gpu_array, as_cuda_array, launch_view,
                    device_array, mapped_array, on_host, to_device)
from ._dispatch import Dispatcher
from ._intrinsics import namespace as _KILN  # what `kiln.` means in the kernels written here
from ._types import signature_text

# host_work(why): a call did work on the host (a conversion, a copy through a temporary)
# that a reduce-overhead replay, which runs only the launches, would not repeat; a recording
# on this thread then runs eagerly with a PerformanceWarning saying why (no-op otherwise)
_host_work = _kiln.record_refuse

_REDUCE_SERIAL_BELOW = 1 << 15  # kiln.reduce on the CPU: smaller arrays fold in one pass
_CPUS = []  # os.cpu_count(), read once: glibc lists /sys/devices/system/cpu (~5 us a call)


def _cpus():
    if not _CPUS:
        _CPUS.append(os.cpu_count() or 1)
    return _CPUS[0]


_TUNE = _autotune.on()  # KILN_AUTOTUNE=0: max-autotune's steps launch with the default
_BUCKETS = 65         # _autotune.bucket of a size below 2**64
_counter = [0]
_BLOCK = 256          # threads per block of the GPU reduction
_BLOCKS_PER_SM = 8    # its blocks per multiprocessor: 2048 threads, a full H100/H200 SM;
                      # a multiple of the SMs, so that each SM does the same share
# accumulator dtypes that kiln.atomic.add takes: their reduction is one launch
_ONE_LAUNCH = frozenset(("int32", "uint32", "int64", "uint64", "float32", "float64"))


def _register_source(name, text):
    """Makes generated kernel text visible to kiln's source reader."""
    _counter[0] += 1
    filename = f"<kiln {name} #{_counter[0]}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    return filename


def _make_kernel(name, text, namespace, **options):
    filename = _register_source(name, text)
    code = compile(text, filename, "exec")
    exec(code, namespace)
    fn = namespace[name]
    k = Dispatcher(fn, **options)
    k._grid_warned = True  # kiln picks these grids; a small one is a small call, not a mistake
    return k


def _ident(name):
    """A function's name as part of an identifier ('<lambda>' is not one)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _np():
    import numpy

    return numpy


def _device(fn, options):
    if isinstance(fn, Dispatcher):
        return fn
    return Dispatcher(fn, device=True, **{k: v for k, v in options.items() if k in ("fastmath", "debug")})


def _infer(dev, dtypes, memo=None):
    """The NumPy dtype the scalar function returns for these argument dtypes; memo, when
    given, remembers it per dtypes (the function's globals are frozen at its first use, so
    the answer cannot change)."""
    if memo is None:
        return _infer_uncached(dev, tuple(dtypes))
    dtypes = tuple(dtypes)
    r = memo.get(dtypes)
    if r is None:
        r = memo[dtypes] = _infer_uncached(dev, dtypes)
    return r


def _infer_uncached(dev, dtypes):
    from . import _compile

    np = _np()
    key = b"".join(bytes([0, _kiln_code(np.dtype(d)), 0, 0]) for d in dtypes)
    text, filename, line = _compile.dispatcher_source(dev)
    ret = _kiln.infer_return(text, filename, line, key, _compile.resolve, dev.py_func)
    if not ret:
        raise _kiln.CompileError(f"{filename}:{line}: error: '{dev.__name__}' returns nothing; "
                                 "a vectorized or reduced function must return a value")
    from ._types import DTYPE_NAMES

    return np.dtype(DTYPE_NAMES[ret[1]])


def _kiln_code(dt):
    from ._types import dtype_code

    code = dtype_code(dt.name)
    if code is None:
        if dt.fields is not None:
            raise TypeError(f"kiln's ufuncs loop over scalars, not records (dtype {dt}); loop "
                            f"over a record array in a kiln.jit kernel instead")
        raise TypeError(f"kiln kernels do not support dtype {dt}")
    return code


class UnrecognizedOptionError(TypeError, KeyError):
    """An option kiln.vectorize does not know: a TypeError, as for any unknown keyword, and
    a KeyError, which Numba's vectorize raises ("Unrecognized options")."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


_VECTORIZE_OPTIONS = ("fastmath", "debug", "target", "cache", "identity", "nopython", "lineinfo")


class Vectorized(_kiln.UfuncBase):
    """The object ``@kiln.vectorize`` returns: call it like a NumPy ufunc.  Calling it
    runs UfuncBase's C (ufunc.c): a call it has memoised (kiln arrays of one shape in C
    order, on the default stream) launches from there; every other call comes to
    ``_call``."""

    def __reduce__(self):
        """pickle: the function (as a kernel's, _pickle.py), signatures and options."""
        from . import _pickle

        options = dict(self._options)
        if self._identity is not None:
            options["identity"] = self._identity
        return _pickle.reduce_vectorized(self, Vectorized, [t for t, _, _ in self._sigs],
                                         options)

    def __init__(self, func, signatures=(), **options):
        bad = [k for k in options if k not in _VECTORIZE_OPTIONS]
        if bad:
            raise UnrecognizedOptionError(
                f"kiln.vectorize got unknown option(s) {', '.join(bad)}; it takes "
                f"{', '.join(_VECTORIZE_OPTIONS)} (Unrecognized options: {', '.join(bad)})")
        if "nopython" in options:
            import warnings

            # Numba's words first: code filters on them
            warnings.warn("nopython kwarg for cuda target is redundant: kiln always compiles "
                          "ufuncs without Python objects", RuntimeWarning, stacklevel=3)
        self.py_func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self._options = {k: v for k, v in options.items() if k in ("fastmath", "debug", "lineinfo")}
        target = options.get("target", "auto")
        if target == "parallel":
            target = "cpu"
        if target == "cuda" and on_host():
            # Numba spells every GPU ufunc target='cuda'; KILN_TARGET=cpu runs those on the
            # CPU, as Numba's simulator does (docs/cpu-device-api.md)
            target = "cpu"
        self._options["target"] = target
        self._dev = _device(func, self._options)
        self._kernels = {}
        self._infer_memo = {}
        # self._fast (UfuncBase's): type key of (args, out) -> (flat kernel, result dtype,
        # its code, max-autotune's threads by size bucket: a list, None where not searched),
        # the memoised launch of ufunc.c and of _call_gpu_fast
        self._tune = _TUNE
        ident = options.get("identity")  # Numba's: 0, 1, None or "reorderable"
        self._identity = ident if isinstance(ident, (int, float)) else None
        self._reduction = None  # reduce()'s, made at its first use
        if isinstance(signatures, str):
            signatures = [signatures]
        self._sigs = []
        for s in signatures:
            text = signature_text(s)
            ret, key = _kiln.parse_signature(text)
            if len(key) // 4 != self._dev._nparams:
                raise TypeError(f"vectorize signature '{text}' has {len(key) // 4} argument"
                                f"{'' if len(key) // 4 == 1 else 's'} but '{self.__name__}' "
                                f"takes {self._dev._nparams}")
            _scalar_codes(text, [key[4 * i + 1] for i in range(len(key) // 4)], "kiln.vectorize")
            if not ret:
                # '(int16, int16)': the return type is the function's, as Numba infers it
                from ._types import DTYPE_NAMES

                out = _infer(self._dev, [_np().dtype(DTYPE_NAMES[key[4 * i + 1]])
                                         for i in range(len(key) // 4)], self._infer_memo)
                text = out.name + text
                ret, key = _kiln.parse_signature(text)
            _scalar_codes(text, [ret[1]], "kiln.vectorize")
            self._sigs.append((text, ret, key))
        if self._sigs:
            np = _np()
            from ._types import DTYPE_NAMES

            for text, ret, key in self._sigs:  # compile the common contiguous case now
                ins = [np.dtype(DTYPE_NAMES[key[4 * i + 1]]) for i in range(len(key) // 4)]
                self._checked(ins, None)  # a body that returns nothing: said at the function
                self._kernel("flat", ("a",) * len(ins), 1).compile(
                    self._flat_signature(np.dtype(DTYPE_NAMES[ret[1]]), ins))

    def _flat_signature(self, out, ins):
        args = [f"{out.name}[::1]"] + [f"{d.name}[::1]" for d in ins] + ["int64"]
        return "void(" + ", ".join(args) + ")"

    def _kernel(self, mode, roles, ndim):
        """The elementwise kernel for a mode ('flat' or 'nd'), the role of each input
        ('a' array, 's' scalar) and the number of dimensions."""
        k = self._kernels.get((mode, roles, ndim))
        if k is not None:
            return k
        name = f"__kiln_vectorize_{_ident(self.__name__)}"
        params = ", ".join(f"a{i}" for i in range(len(roles)))
        if mode == "flat":
            args = ", ".join(f"a{i}[i]" if r == "a" else f"a{i}" for i, r in enumerate(roles))
            body = (f"    i = kiln.grid(1)\n"
                    f"    if i < n:\n"
                    f"        out[i] = __kiln_f({args})\n")
        else:
            idx = ", ".join(f"i{d}" for d in range(ndim))
            lines = ["    i = kiln.grid(1)", "    if i < n:", "        r = i"]
            for d in range(ndim - 1, 0, -1):
                lines.append(f"        i{d} = r % out.shape[{d}]")
                lines.append(f"        r = r // out.shape[{d}]")
            lines.append("        i0 = r")
            args = ", ".join(f"a{i}[{idx}]" if r == "a" else f"a{i}" for i, r in enumerate(roles))
            lines.append(f"        out[{idx}] = __kiln_f({args})")
            body = "\n".join(lines) + "\n"
        sep = ", " if params else ""
        text = f"def {name}(out{sep}{params}, n):\n{body}"
        ns = {"kiln": _KILN, "__kiln_f": self._dev}
        k = _make_kernel(name, text, ns, **self._options)
        self._kernels[(mode, roles, ndim)] = k
        return k

    def _input_dtypes(self, args):
        """Arrays and scalars of the call, with the dtypes NEP 50 gives them, and the
        Python scalars among them as given (None for the others)."""
        np = _np()
        conv = []
        array_dtypes = []
        for a in args:
            if isinstance(a, np.generic):  # before float: np.float64 is a float too
                conv.append(a)
                array_dtypes.append(a.dtype)
            elif isinstance(a, (bool, int, float, complex)):
                conv.append(a)
            else:
                if not isinstance(a, np.ndarray):
                    _host_work(f"'{self.__name__}' converts a {type(a).__name__} argument to an "
                               "array on the host")
                arr = np.asarray(a)
                conv.append(arr)
                array_dtypes.append(arr.dtype)
        return _weak_typed(np, conv, array_dtypes)

    def _checked(self, want, ret):
        """(want, ret), once the function is known to return a value for these types: a
        body that returns nothing is an error at the function, not in kiln's loop around
        it (typed once per signature, memoised)."""
        _infer(self._dev, want, self._infer_memo)
        return want, ret

    def _choose_signature(self, ins, weak=None):
        """The signature the inputs take: an exact match first, then safe casts, then
        same-kind ones, as NumPy chooses a loop; then, as Numba's resolution, a Python
        scalar (weak: the originals, None for the others) matches any type that holds its
        value (3 an int64 or float64 parameter, 0.5 a float64 or complex128 one)."""
        np = _np()
        from ._types import DTYPE_NAMES

        sigs = [([np.dtype(DTYPE_NAMES[key[4 * i + 1]]) for i in range(len(key) // 4)],
                 np.dtype(DTYPE_NAMES[ret[1]])) for _, ret, key in self._sigs]
        for want, ret in sigs:  # an exact match first, as NumPy and Numba do
            if len(want) == len(ins) and all(x.dtype == w for x, w in zip(ins, want)):
                return self._checked(want, ret)
        if weak and any(v is not None for v in weak):
            # Numba-CUDA's rule: arrays of exactly the signature's types, Python scalars
            # converted to it (zero_suppress(int16 data, 15.0) is the int16 loop); taken
            # when one signature alone fits so
            fit = [(w, r) for w, r in sigs if len(w) == len(ins) and all(
                x.dtype == t if v is None else _converts(np, t, v)
                for x, t, v in zip(ins, w, weak))]
            if len(fit) == 1:
                return self._checked(*fit[0])
        for casting in ("safe", "same_kind"):  # then casts, as NumPy chooses a loop
            for want, ret in sigs:
                if len(want) == len(ins) and all(np.can_cast(x.dtype, w, casting)
                                                 for x, w in zip(ins, want)):
                    return self._checked(want, ret)
        for want, ret in sigs if weak and any(v is not None for v in weak) else ():
            if len(want) == len(ins) and all(
                    np.can_cast(x.dtype, w, "same_kind") if v is None else _holds(np, w, v)
                    for x, w, v in zip(ins, want, weak)):
                return self._checked(want, ret)
        have = ", ".join(str(x.dtype) for x in ins)
        listed = "\n  ".join(t for t, _, _ in self._sigs)
        raise TypeError(f"'{self.__name__}' was compiled for\n  {listed}\nand cannot take ({have})")

    def _call(self, *args, out=None, stream=0):
        """self(*args, out=, stream=) where UfuncBase's memoised launch did not take it."""
        tried = bool(args) and type(args[0]) is DeviceArray
        if tried:  # the memoised launch with a stream, or a size max-autotune has not seen
            fast = self._call_gpu_fast(args, out, stream)
            if fast is not None:
                return fast
        # device arrays (host-backed ones too, KILN_TARGET=cpu) in: a device array out
        if any(_is_device_array(a) for a in args) or (out is not None and _is_device_array(out)):
            return self._call_gpu(args, out, stream, tried)
        np = _np()
        ins, weak = self._input_dtypes(args)
        if len(ins) != self._dev._nparams:
            raise TypeError(f"'{self.__name__}' takes {self._dev._nparams} arguments but "
                            f"{len(ins)} were given")
        if self._sigs:
            want, out_dtype = self._choose_signature(ins, weak)
            if any(isinstance(x, np.ndarray) and x.dtype != w for x, w in zip(ins, want)):
                _host_work(f"'{self.__name__}' converts an input to its signature's dtype on "
                           "the host")
            ins = [x.astype(w, copy=False) if isinstance(x, np.ndarray) else
                   w.type(x if v is None else v) for x, w, v in zip(ins, want, weak)]
        else:
            out_dtype = _infer(self._dev, [x.dtype for x in ins], self._infer_memo)
        shapes = [x.shape for x in ins if isinstance(x, np.ndarray)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        # 0-d arrays and scalars alone give a NumPy scalar, as a NumPy ufunc does
        scalar_result = shape == () and out is None
        if out is None:
            # NumPy's order='K' where it is plain: F-ordered inputs of the full shape give an
            # F-ordered result
            full = [x for x in ins if isinstance(x, np.ndarray) and x.shape == shape]
            f = len(shape) > 1 and full and all(
                x.flags.f_contiguous and not x.flags.c_contiguous for x in full)
            result = np.empty(shape, out_dtype, order="F" if f else "C")
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError("out= must be a NumPy array")
            if out.shape != shape:
                raise ValueError(f"out= has shape {out.shape}, but the result has shape {shape}")
            # a temporary when the dtype differs, or when out overlaps an input other
            # than element for element (out=a[1:] with a[:-1]): NumPy's results
            same = out.dtype == out_dtype and not _overlaps(np, out, ins, shape)
            result = out if same else np.empty(shape, out_dtype)
            if not same:
                _host_work(f"'{self.__name__}' writes out= through a temporary that NumPy copies "
                           "on the host (out= of another dtype, or overlapping an input)")
        n = result.size
        if n:
            k, flat, threads = self._launch(result, ins, shape, n)
            if flat and shape and (out is None or result is out) and all(
                    type(a) is np.ndarray and a is x for a, x in zip(args, ins)) and (
                    out is None or type(out) is np.ndarray):
                self._memo(args if out is None else (*args, out), b"N", k, out_dtype, n,
                           threads, np.empty)
        if out is not None and result is not out:
            np.copyto(out, result, casting="same_kind")
            result = out
        if scalar_result:
            return result[()]
        return result

    def _types_and_output(self, ins, weak=None):
        """The inputs cast to a matching signature (if any) and the output dtype."""
        if self._sigs:
            want, out_dtype = self._choose_signature(ins, weak)
            return want, out_dtype
        return None, _infer(self._dev, [x.dtype for x in ins], self._infer_memo)

    def _call_gpu_fast(self, args, out, stream, first=None):
        """The common GPU call without NumPy: every argument (and out=, when given) a
        kiln.DeviceArray of one shape in C order, whose type key _call_gpu has seen before
        and memoised with its flat kernel and result dtype.  None: take _call_gpu.
        first: the caller's first array when args are views of another library's arrays
        (the result is then an array of that library, as _call_gpu makes it)."""
        if not args or type(args[0]) is not DeviceArray:  # a scalar first: _call_gpu
            return None
        shape = args[0].shape
        for a in args:
            if type(a) is not DeviceArray or a.shape != shape:
                return None
        if out is None:
            key = _kiln.key_of(*args) + b"D"
        elif type(out) is DeviceArray and out.shape == shape:
            key = _kiln.key_of(*args, out) + b"D"
        else:
            return None
        hit = self._fast.get(key)
        if hit is None:
            return None
        k, out_dtype, _, tuned, _ = hit
        n = 1
        for e in shape:
            n *= e
        t = _autotune.DEFAULT_THREADS
        if _autotune.active():   # max-autotune: the choice _call_gpu made for this size
            t = tuned[(n or 1).bit_length()]  # _autotune.bucket(n)
            if t is None:
                return None
        if n == 0:
            return None
        if first is not None:
            full = _allocate_like(first, shape, out_dtype)
            res = launch_view(full, stream)
        else:
            full = res = device_array(shape, out_dtype) if out is None else out
        if len(shape) != 1:
            res = _kiln.device_view(res, 0, (n,), (res.itemsize,))
            args = [_kiln.device_view(a, 0, (n,), (a.itemsize,)) for a in args]
        k[(n + t - 1) // t, t, stream](res, *args, n)
        return full

    def _memo_fast(self, args, out, shape, k, out_dtype, n, threads):
        """Remembers a flat call that _call_gpu_fast can repeat: kiln arrays in C order
        (and, in max-autotune, the threads chosen for its size bucket)."""
        if not shape or not all(type(a) is DeviceArray for a in args):
            return
        if out is not None and (type(out) is not DeviceArray or out.dtype != out_dtype):
            return
        self._memo(args if out is None else (*args, out), b"D", k, out_dtype, n, threads, None)

    def _memo(self, arrays, kind, k, out_dtype, n, threads, maker):
        """Keeps a flat launch for UfuncBase's C call (ufunc.c) and _call_gpu_fast: under
        the arrays' type key and kind (b"D" kiln arrays, b"N" NumPy arrays, whose results
        `maker` makes), when every array is in C order."""
        key = _kiln.key_of(*arrays)
        if not all(key[j] == ord("C") for j in range(3, len(key), 4)):
            return
        key += kind
        hit = self._fast.get(key)
        if hit is None or hit[0] is not k:
            try:
                code = _code(out_dtype)
            except TypeError:  # no device array of that dtype: only a NumPy result
                code = -1
            hit = self._fast[key] = (k, out_dtype, code, [None] * _BUCKETS, maker)
        if _autotune.active():
            hit[3][_autotune.bucket(n)] = threads

    def _call_gpu(self, args, out, stream, tried=False):
        """Device arrays in: the kernel runs on the GPU (on the CPU for host-backed arrays,
        KILN_TARGET=cpu); the result is an array of the kind of the first array argument
        (CuPy, PyTorch or kiln.DeviceArray).  tried: _call already looked for the
        memoised launch of these arguments."""
        fast = None if tried else self._call_gpu_fast(args, out, stream)
        if fast is not None:
            return fast
        if out is None and args and type(args[0]) is not DeviceArray:
            # CuPy or torch arrays: viewed in C, the same memoised launch as kiln arrays
            views = [a if type(a) is DeviceArray else _kiln.foreign_view(a, stream) for a in args]
            if None not in views:
                fast = self._call_gpu_fast(views, None, stream, first=args[0])
                if fast is not None:
                    return fast
        np = _np()
        if isinstance(out, np.ndarray) and not _is_device_array(out):
            # a host out= with device inputs: computed on the device, then copied into it,
            # as Numba's device ufuncs do ("if output is provided and it is a host array,
            # return host array")
            res = launch_view(self._call_gpu(args, None, stream), stream)
            if res.shape != out.shape or res.dtype != out.dtype:
                raise ValueError(f"out= must have shape {res.shape} and dtype {res.dtype}, "
                                 f"not {out.shape} and {out.dtype}")
            res.copy_to_host(out, stream=stream)
            return out
        first = next((a for a in args if _is_device_array(a)), out)
        conv, dtypes = [], []
        for a in args:
            if _is_device_array(a):
                d = launch_view(a, stream)
                conv.append(d)
                dtypes.append(d.dtype)
            elif isinstance(a, np.generic):
                conv.append(a)
                dtypes.append(a.dtype)
            elif isinstance(a, (bool, int, float, complex)):
                conv.append(a)
            else:
                d = to_device(np.asarray(a))
                conv.append(d)
                dtypes.append(d.dtype)
        ins, weak = _weak_typed(np, conv, dtypes)
        if len(ins) != self._dev._nparams:
            raise TypeError(f"'{self.__name__}' takes {self._dev._nparams} arguments but "
                            f"{len(ins)} were given")
        want, out_dtype = self._types_and_output(ins, weak)
        if want is not None:
            for i, (x, w) in enumerate(zip(ins, want)):
                if isinstance(x, DeviceArray) and x.dtype != w:
                    raise TypeError(f"'{self.__name__}' needs {w} for argument {i + 1} on the GPU, "
                                    f"not {x.dtype}; convert it first")
                if not isinstance(x, DeviceArray):
                    ins[i] = w.type(x if weak[i] is None else weak[i])
        shapes = [x.shape for x in ins if isinstance(x, DeviceArray)]
        shape = np.broadcast_shapes(*shapes)
        if out is not None:
            res = launch_view(out, stream)
            # out= comes back as given when it is an array of a library kiln knows (CuPy,
            # torch, JAX, kiln); another object with only __cuda_array_interface__ (a Numba
            # device array too) comes back as the kiln.DeviceArray viewing it, which has
            # copy_to_host, as Numba returns its own device array over any such out=
            known = isinstance(out, DeviceArray) or type(out).__module__.split(".")[0] in (
                "cupy", "torch", "jax", "jaxlib")
            res_obj = out if known else res
            if res.shape != shape or res.dtype != out_dtype:
                raise ValueError(f"out= must have shape {shape} and dtype {out_dtype}, "
                                 f"not {res.shape} and {res.dtype}")
        else:
            res_obj = _allocate_like(first, shape, out_dtype)
            res = launch_view(res_obj, stream)
        n = res.size
        if n == 0:
            return res_obj
        roles = tuple("a" if isinstance(x, DeviceArray) else "s" for x in ins)
        flat = res.is_c_contiguous() and all(not isinstance(x, DeviceArray) or
                                             (x.shape == shape and x.is_c_contiguous())
                                             for x in ins)
        if flat:
            k = self._kernel("flat", roles, 1)
            args2 = [x.reshape(n) if isinstance(x, DeviceArray) else x for x in ins]
        else:
            nd = max(len(shape), 1)
            shape1 = shape if shape else (1,)
            k = self._kernel("nd", roles, nd)
            args2 = [_broadcast_view(_kiln, x, shape1) if isinstance(x, DeviceArray) else x
                     for x in ins]

        def launch(threads, into):
            if flat:
                into = into.reshape(n)
            elif not shape:
                into = _kiln.device_view(into, 0, (1,), (into.itemsize,))
            k[(n + threads - 1) // threads, threads, stream](into, *args2, n)

        threads = _autotune.DEFAULT_THREADS
        if _autotune.active():   # timed on a scratch output: res keeps its contents
            types = _kiln.key_of(*ins)
            threads = _autotune.choose(
                ("vectorize-gpu", self, types, out_dtype, flat, res.device, _autotune.bucket(n)),
                "vectorize-gpu", lambda: self._ident(ins, out_dtype, flat), res.device, n,
                _autotune.GPU_THREADS,
                lambda: functools.partial(launch, into=device_array(shape, out_dtype)),
                _kiln.synchronize)
        if flat:   # the views of other libraries' arrays too: _call_gpu_fast takes those
            self._memo_fast(conv, out, shape, k, out_dtype, n, threads)
        launch(threads, res)
        return res_obj

    def _ident(self, ins, out_dtype, flat):
        """What a kept launch choice is for: this function's code, its types, the kernel."""
        code = getattr(self.py_func, "__code__", None)
        body = hashlib.sha1(code.co_code + repr(code.co_consts).encode()).hexdigest()[:12] \
            if code is not None else "?"
        types = ",".join(str(getattr(x, "dtype", type(x).__name__)) for x in ins)
        return (f"{self.py_func.__module__}.{self.__name__}:{body}:{types}->{out_dtype}:"
                f"{'flat' if flat else 'nd'}")

    def _launch(self, result, ins, shape, n):
        np = _np()
        flat = result.flags.c_contiguous and all(
            not isinstance(x, np.ndarray) or (x.shape == shape and x.flags.c_contiguous) for x in ins)
        roles = tuple("a" if isinstance(x, np.ndarray) else "s" for x in ins)
        if flat:
            k = self._kernel("flat", roles, 1)
            args = [x.reshape(-1) if isinstance(x, np.ndarray) else x for x in ins]
        else:
            nd = max(len(shape), 1)
            k = self._kernel("nd", roles, nd)
            args = [np.broadcast_to(x, shape) if isinstance(x, np.ndarray) else x for x in ins]
            args = [a.reshape(1) if isinstance(a, np.ndarray) and a.ndim == 0 else a for a in args]

        def launch(threads, into):
            into = into.reshape(-1) if flat else (into if into.ndim else into.reshape(1))
            k[(n + threads - 1) // threads, threads](into, *args, n)

        threads = _autotune.DEFAULT_THREADS
        if _autotune.active():   # timed on a scratch output: result keeps its contents
            types = _kiln.key_of(*ins)
            order = "F" if not flat and result.flags.f_contiguous and result.ndim > 1 else "C"
            threads = _autotune.choose(
                ("vectorize-cpu", self, types, result.dtype, flat, _autotune.bucket(n)),
                "vectorize-cpu", lambda: self._ident(ins, result.dtype, flat), "cpu", n,
                _autotune.CPU_THREADS,
                lambda: functools.partial(launch, into=np.empty(shape, result.dtype, order=order)),
                None)
        launch(threads, result)
        return k, flat, threads

    def reduce(self, arr, stream=0):
        """Numba's ``ufunc.reduce`` of a GPU ufunc: folds a 1-d array (NumPy, device or any
        GPU array) with this binary function into one scalar of the signature's result
        type, on the array's device (a tree: the function must be associative and
        commutative).  An empty array is the identity when ``identity=`` was given, else a
        ValueError, as NumPy's."""
        np = _np()
        if self._dev._nparams != 2:
            raise TypeError(f"reduce needs a binary ufunc; '{self.__name__}' takes "
                            f"{self._dev._nparams} arguments")
        if len(arr.shape) != 1:
            raise ValueError(f"reduce takes a 1-d array, not one of shape {tuple(arr.shape)}")
        dt = np.dtype(arr.dtype)
        if self._sigs:
            want, out_dtype = self._choose_signature([np.empty(0, dt), np.empty(0, dt)])
            if want[0] != dt:
                if _is_device_array(arr):
                    raise TypeError(f"'{self.__name__}'.reduce: the {dt} device array needs "
                                    f"its signature's {want[0]}; convert it first")
                arr = np.asarray(arr).astype(want[0])
        else:
            out_dtype = _infer(self._dev, [dt, dt], self._infer_memo)
        if arr.shape[0] == 0:
            if self._identity is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return out_dtype.type(self._identity)
        if self._reduction is None:
            self._reduction = Reduction(self.py_func, **{k: v for k, v in self._options.items()
                                                         if k in ("fastmath", "debug", "target")})
        return out_dtype.type(self._reduction(arr, stream=stream))

    def __repr__(self):
        return f"<kiln vectorized {self.__name__}>"


def _weak_typed(np, conv, dtypes):
    """NEP 50: a Python scalar (bool, int, float, complex; a NumPy scalar is not one) takes
    the kind of the arrays it meets (dtypes).  The typed values, and the Python scalars as
    given (None for the others), which a signature may still take as they are."""
    ins, weak = [], []
    for c in conv:
        if isinstance(c, (bool, int, float, complex)) and not isinstance(c, np.generic):
            try:
                dt = np.result_type(*dtypes, c) if dtypes else np.asarray(c).dtype
                if dt.kind == "O":  # past 64 bits with no array beside it (np.asarray: object)
                    raise OverflowError
                ins.append(dt.type(c))
            except OverflowError:  # an int no array type near it holds (2**63 by int64)
                if not dtypes:
                    raise TypeError(f"the Python int {c} does not fit 64 bits") from None
                raise TypeError(f"the Python int {c} is too large for the arrays of this call "
                                f"({', '.join(str(d) for d in dtypes)})") from None
            weak.append(c)
        else:
            ins.append(c)
            weak.append(None)
    return ins, weak


def _holds(np, w, v):
    """Whether a parameter of dtype w takes the Python scalar v: a bool anything, an int
    an integer type it fits in or any float or complex, a float a float or complex, a
    complex a complex."""
    if isinstance(v, bool):
        return w.kind in "biufc"
    if isinstance(v, int):
        if w.kind in "iu":
            info = np.iinfo(w)
            return info.min <= v <= info.max
        return w.kind in "fc"
    if isinstance(v, float):
        return w.kind in "fc"
    return w.kind == "c"


def _converts(np, w, v):
    """Whether a parameter of dtype w takes the Python scalar v by Numba-CUDA's conversion:
    as _holds, and a whole float an integer type it fits (15.0 an int16; 15.5 is refused
    rather than cut)."""
    if _holds(np, w, v):
        return True
    if isinstance(v, float) and w.kind in "iu" and v.is_integer():
        info = np.iinfo(w)
        return info.min <= v <= info.max
    return False


def _scalar_codes(text, codes, who):
    """Refuses a (gu)vectorize signature naming a record type (a dtype code of
    KILN_RECORD0, 32, and up): their loops read and write scalars."""
    if any(c >= 32 for c in codes):
        raise TypeError(f"{who} signatures take scalar types (bool, ints, floats, complex), and "
                        f"'{text}' names a record type (a structured dtype); loop over the record "
                        f"array in a kiln.jit kernel instead")


def _overlaps(np, out, ins, shape):
    """Whether writing out element by element could change an input element not yet
    read: out shares memory with an input array that is not the same elements in the
    same order (same start, item size and strides over the broadcast shape).  NumPy's
    ufuncs copy such inputs first; kiln computes into a temporary instead."""
    for x in ins:
        if not isinstance(x, np.ndarray) or not np.may_share_memory(out, x):
            continue
        if x.itemsize != out.itemsize or (
                x.__array_interface__["data"][0] != out.__array_interface__["data"][0]):
            return True
        xs = np.broadcast_to(x, shape).strides
        if any(n > 1 and a != b for n, a, b in zip(shape, xs, out.strides)):
            return True
    return False


def _allocate_like(first, shape, dtype):
    """A new GPU array of the library `first` comes from."""

    lib = type(first).__module__.split(".")[0]
    if lib == "cupy":
        import cupy

        return cupy.empty(shape, dtype)
    if lib == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, "bool" if dtype.name == "bool" else dtype.name),
                           device=first.device)
    return device_array(shape, dtype)


def _broadcast_view(_kiln, x, shape):
    """x seen with the broadcast shape: zero strides where it is broadcast."""
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    strides = [0] * lead + [0 if n == 1 and s != 1 else st
                            for n, s, st in zip(x.shape, shape[lead:], x.strides)]
    return _kiln.device_view(x, 0, tuple(shape), tuple(strides))


class Reduction:
    """The object ``kiln.reduce`` returns: ``r(array, size=None, res=None, init=None, stream=0)``."""

    def __init__(self, func, **options):
        bad = [k for k in options if k not in ("fastmath", "debug", "target")]
        if bad:
            raise TypeError(f"kiln.reduce got unknown option(s) {', '.join(bad)}")
        self.py_func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self._options = {k: v for k, v in options.items() if k in ("fastmath", "debug", "target")}
        self._dev = _device(func, self._options)
        if self._dev._nparams != 2:
            raise TypeError(f"kiln.reduce needs a function of two arguments; "
                            f"'{self.__name__}' takes {self._dev._nparams}")
        self._kernel = None
        self._gpu_kernels = {}
        self._acc = {}
        self._tls = threading.local()  # per thread: the GPU pass's scratch buffers
        self._grids = {}  # max-autotune's grid per (dtype, device, size bucket), once chosen
        self._init_default = None      # kiln.Reduce's is 0, as Numba's (see kiln.Reduce)

    def _get_kernel(self):
        if self._kernel is None:
            name = f"__kiln_reduce_{_ident(self.__name__)}"
            # a block's part folded as four quarters side by side (four chains of the
            # function in flight, not one), then the quarters in order: the array's
            # order is kept, only associativity is assumed
            text = (f"def {name}(a, part, n, chunk):\n"
                    f"    b = kiln.blockIdx.x\n"
                    f"    lo = b * chunk\n"
                    f"    hi = min(lo + chunk, n)\n"
                    f"    if lo < hi:\n"
                    f"        q = (hi - lo) // 4\n"
                    f"        if q >= 4:\n"
                    f"            m1 = lo + q\n"
                    f"            m2 = m1 + q\n"
                    f"            m3 = m2 + q\n"
                    f"            a0 = a[lo]\n"
                    f"            a1 = a[m1]\n"
                    f"            a2 = a[m2]\n"
                    f"            a3 = a[m3]\n"
                    f"            for j in range(1, q):\n"
                    f"                a0 = __kiln_f(a0, a[lo + j])\n"
                    f"                a1 = __kiln_f(a1, a[m1 + j])\n"
                    f"                a2 = __kiln_f(a2, a[m2 + j])\n"
                    f"                a3 = __kiln_f(a3, a[m3 + j])\n"
                    f"            for j in range(m3 + q, hi):\n"
                    f"                a3 = __kiln_f(a3, a[j])\n"
                    f"            part[b] = __kiln_f(__kiln_f(__kiln_f(a0, a1), a2), a3)\n"
                    f"        else:\n"
                    f"            acc = a[lo]\n"
                    f"            for j in range(lo + 1, hi):\n"
                    f"                acc = __kiln_f(acc, a[j])\n"
                    f"            part[b] = acc\n")
            self._kernel = _make_kernel(name, text, {"kiln": _KILN, "__kiln_f": self._dev},
                                        **self._options)
            self._kernel._par_threshold = 1
        return self._kernel

    @staticmethod
    def _first(a, size):
        """The first `size` elements of a 1-d array (all of them for None)."""
        if size is None:
            return a
        # an int or a NumPy integer (arr.shape arithmetic), not a bool or a float
        if isinstance(size, bool) or not hasattr(type(size), "__index__") or \
                operator.index(size) < 0:
            raise ValueError(f"size must be a non-negative int, not {size!r}")
        size = operator.index(size)
        return a[:size]

    def _empty(self, init, dt):
        """The reduction of no elements: init as the accumulator's type for dtype dt, as a
        call with elements returns it."""
        if init is None:
            raise ValueError(f"reduction '{self.__name__}' of an empty array with no init")
        return self._accumulator(dt).type(init)

    def _accumulator(self, dt):
        """The dtype of the running value: the array's dtype widened by what f returns."""
        np = _np()
        acc = self._acc.get(dt)
        if acc is None:
            acc = dt
            for _ in range(4):
                r = _infer(self._dev, [acc, dt])
                nxt = np.promote_types(acc, r)
                if nxt == acc:
                    break
                acc = nxt
            self._acc[dt] = acc
        return acc

    def _get_gpu_kernel(self, acc):
        """The GPU pass for accumulator dtype acc.  Each block folds its threads'
        grid-stride partials in shared memory and writes its partial; where atomics
        take acc (_ONE_LAUNCH), the last block to finish (a counter it increments after
        a fence) folds the blocks' partials and writes the result: one launch.  Its
        reads of the other blocks' partials are atomic adds of 0, which read at the L2
        cache that the partials' stores reached (a plain load could hit a stale L1
        line).  Otherwise the same kernel runs again on the partials in one block."""
        k = self._gpu_kernels.get(acc)
        if k is None:
            one = acc.name in _ONE_LAUNCH
            name = f"__kiln_reduce_gpu_{_ident(self.__name__)}"
            fold = (f"    s = {_BLOCK // 2}\n"
                    f"    while s > 0:\n"
                    f"        if tid < s and tid + s < cnt:\n"
                    f"            sm[tid] = __kiln_f(sm[tid], sm[tid + s])\n"
                    f"        kiln.syncthreads()\n"
                    f"        cnt = min(cnt, s)\n"
                    f"        s //= 2\n")
            text = (f"def {name}(a, part, count, out, n):\n"
                    f"    sm = kiln.shared.array({_BLOCK}, kiln.{acc.name})\n"
                    + (f"    last = kiln.shared.array(1, kiln.int32)\n" if one else "") +
                    f"    tid = kiln.threadIdx.x\n"
                    f"    i = kiln.grid(1)\n"
                    f"    stride = kiln.gridsize(1)\n"
                    f"    acc = a[i] if i < n else a[0]\n"
                    f"    j = i + stride\n"
                    # eight loads in flight per thread (2048 threads per SM: 64 KiB for
                    # float32): memory, not latency, limits the pass
                    f"    while j + 7 * stride < n:\n"
                    + "".join(f"        v{u} = a[j + {u} * stride]\n" for u in range(8)) +
                    f"        acc = __kiln_f(__kiln_f(__kiln_f(__kiln_f(acc, v0), v1), v2), v3)\n"
                    f"        acc = __kiln_f(__kiln_f(__kiln_f(__kiln_f(acc, v4), v5), v6), v7)\n"
                    f"        j += 8 * stride\n"
                    f"    while j < n:\n"
                    f"        acc = __kiln_f(acc, a[j])\n"
                    f"        j += stride\n"
                    f"    sm[tid] = acc\n"
                    f"    kiln.syncthreads()\n"
                    f"    cnt = min({_BLOCK}, n - kiln.blockIdx.x * {_BLOCK})\n"
                    + fold +
                    f"    if tid == 0:\n"
                    f"        part[kiln.blockIdx.x] = sm[0]\n")
            if one:
                text += (f"        kiln.threadfence()\n"
                         f"        last[0] = 1 if kiln.atomic.add(count, 0, 1) == kiln.gridDim.x - 1 else 0\n"
                         f"    kiln.syncthreads()\n"
                         f"    if last[0] == 1:\n"
                         f"        nb = kiln.gridDim.x\n"
                         f"        if tid < nb:\n"
                         f"            acc = kiln.atomic.add(part, tid, 0)\n"
                         f"            j = tid + {_BLOCK}\n"
                         f"            while j < nb:\n"
                         f"                acc = __kiln_f(acc, kiln.atomic.add(part, j, 0))\n"
                         f"                j += {_BLOCK}\n"
                         f"            sm[tid] = acc\n"
                         f"        kiln.syncthreads()\n"
                         f"        cnt = min({_BLOCK}, nb)\n"
                         + "\n".join("    " + ln if ln else ln for ln in fold.split("\n")) +
                         f"        if tid == 0:\n"
                         f"            out[0] = sm[0]\n"
                         f"            count[0] = 0\n")
            k = _make_kernel(name, text, {"kiln": _KILN, "__kiln_f": self._dev},
                             **{o: v for o, v in self._options.items() if o != "target"})
            self._gpu_kernels[acc] = k
        return k

    def _plan(self, code, device, stream):
        """What a call needs for an array dtype (kiln code), device and stream, made once
        per thread: the accumulator dtype and its code, whether the pass is one launch,
        the kernel, the most blocks, the partials, the result, the last-block counter
        (zero between calls: the last block resets it), the launchers by block count and
        a page-locked element for the result read on the host.
        A stream runs its work in order and each thread has its own, so reuse is safe;
        the per-call work is a dict lookup (the dtype's name and the launch
        configuration's parsing cost more than the launch itself)."""
        plans = getattr(self._tls, "plans", None)
        if plans is None:
            plans = self._tls.plans = {}
        key = (code, device, _kiln.stream_handle(stream))
        got = plans.get(key)
        if got is None:
            np = _np()
            acc = self._accumulator(np.dtype(DTYPE_NAMES[code]))
            acode = _code(acc)
            count = _kiln.device_empty((1,), _code(np.dtype(np.int32)), "C", device, stream)
            count.copy_to_device(np.zeros(1, np.int32), stream)
            grid = _kiln.device_attribute(device, 16) * _BLOCKS_PER_SM  # multiprocessors
            # a result read on the host is written by the pass's last block straight into
            # page-locked host memory mapped into the GPU's address space: the call then
            # only waits for its stream, with no copy queued behind the pass (a copy into
            # pageable memory, staged by the driver, cost more than the pass at 2^20)
            host = mapped_array((1,), acc)
            waiter = stream if stream else _kiln.default_stream(device)
            got = plans[key] = (acc, acode, acc.name in _ONE_LAUNCH, self._get_gpu_kernel(acc),
                                grid, _kiln.device_empty((grid,), acode, "C", device, stream),
                                _kiln.device_empty((1,), acode, "C", device, stream), count, {},
                                host, waiter)
        return got

    def _call_gpu(self, arr, size, res, init, stream):
        """A tree reduction: per-thread partials over a grid-stride loop, folded in shared
        memory per block, then the blocks' partials the same way in one block (the last
        block of the same launch where it can, _get_gpu_kernel).  The grid-stride order
        assumes the function is commutative as well as associative, as Numba's
        cuda.reduce does (the CPU reduction keeps the array's order)."""

        a = as_cuda_array(arr)
        if a.ndim != 1:
            if not a.is_c_contiguous():
                raise ValueError("reduce of a non-contiguous multi-dimensional GPU array: "
                                 "make it contiguous first")
            a = a.reshape(a.size)
        if size is not None:
            a = self._first(a, size)
        n = a.size
        if n == 0:
            result = self._empty(init, _np().dtype(a.dtype))
            if res is not None:  # asynchronous, as a call with elements
                launch_view(res, stream)[:1].copy_to_device(_np().array([result]), stream)
                return None
            return result
        acc, acode, one, k, grid, part, total, count, launchers, host, waiter = self._plan(
            a._dtype_code, a._device, stream)
        r = None
        if res is not None:
            r = launch_view(res, stream)
            if r._dtype_code != acode:
                raise TypeError(f"res has dtype {r.dtype}; the reduction's result is {acc}")
        if _autotune.active() and n > _BLOCK:  # the kept choice, else the search
            got = self._grids.get((a._dtype_code, a._device, n.bit_length()))
            grid = got if got is not None else self._tuned_grid(a, n, grid, one, k, part,
                                                                total, count, stream)
        blocks = min((n + _BLOCK - 1) // _BLOCK, grid)
        launch = launchers.get(blocks)
        if launch is None:
            launch = launchers[blocks] = k[blocks, _BLOCK, stream]
        # the result goes straight into res= (or the mapped host element) when nothing
        # follows the pass
        dest = total
        if init is None and r is not None and (one or blocks == 1):
            dest = r
        elif init is None and r is None and one:
            dest = host
        launch(a, part, count, dest, n)
        if not one:
            if blocks > 1:
                k[1, _BLOCK, stream](part, total, count, dest, blocks)
            else:
                _kiln.copy("d2d", dest._device, dest._ptr, part._ptr, acc.itemsize, stream)
        np = _np()
        if init is not None:
            pair = _kiln.device_empty((2,), acode, "C", a._device, stream)
            pair[:1].copy_to_device(np.array([init], acc), stream)
            _kiln.copy("d2d", pair._device, pair._ptr + acc.itemsize, dest._ptr, acc.itemsize, stream)
            k[1, _BLOCK, stream](pair, part, count, total, 2)
            if not one:
                _kiln.copy("d2d", total._device, total._ptr, part._ptr, acc.itemsize, stream)
            dest = total
        if r is not None:
            # like numba.cuda.reduce: the result stays on the GPU, the call is asynchronous
            if dest is not r:
                _kiln.copy("d2d", r._device, r._ptr, dest._ptr, acc.itemsize, stream)
            return None
        if dest is not host:
            _kiln.copy("d2h", dest._device, host, dest._ptr, acc.itemsize, stream)
        else:
            # a value on the host is not a GPU graph's to replay: a recording falls back
            # to eager (as the copy it replaces made it)
            _kiln.record_refuse("kiln.reduce reads its result on the host")
            waiter.synchronize()
        return host[0]

    def _tuned_grid(self, a, n, grid, one, k, part, total, count, stream):
        """max-autotune: the blocks of the GPU pass, timed among 1, 2, 4 and 8 per
        multiprocessor (a grid-stride pass computes the same for any grid, up to the order
        of the fold); the candidates write the plan's own result, never res=."""
        key = ("reduce-gpu", self, a._dtype_code, a._device, _autotune.bucket(n))
        got = _autotune._memo.get(key)      # the common case: no closures made
        if got is not None:
            return got
        sms = max(grid // _BLOCKS_PER_SM, 1)
        cands = tuple(sms * b for b in (1, 2, 4, 8) if b <= _BLOCKS_PER_SM)

        def make_run():
            def run(g):
                b = min((n + _BLOCK - 1) // _BLOCK, g)
                k[b, _BLOCK, stream](a, part, count, total, n)
                if not one and b > 1:
                    k[1, _BLOCK, stream](part, total, count, total, b)
            return run

        def ident():
            code = getattr(self.py_func, "__code__", None)
            body = hashlib.sha1(code.co_code + repr(code.co_consts).encode()).hexdigest()[:12] \
                if code is not None else "?"
            return f"{self.py_func.__module__}.{self.__name__}:{body}:{a.dtype}"

        got = _autotune.choose(key, "reduce-gpu", ident, a._device, n, cands, make_run,
                               _kiln.synchronize, default=grid, label="blocks")
        self._grids[(a._dtype_code, a._device, n.bit_length())] = got
        return got

    def __call__(self, arr, size=None, res=None, init=None, stream=0):
        if init is None:
            init = self._init_default
        if res is not None:  # numba.cuda.reduce's res: the result goes to res[0]
            shape = getattr(res, "shape", None)
            for attr in ("__cuda_array_interface__", "__array_interface__"):
                if shape is None and hasattr(res, attr):  # (an interface alone)
                    shape = getattr(res, attr, {}).get("shape")
            if shape is None or len(shape) == 0 or shape[0] < 1:
                raise ValueError("res= is an array of at least one element (the result goes "
                                 f"to res[0]), not {type(res).__name__} of shape {shape}")

        if not isinstance(arr, DeviceArray) and hasattr(type(arr), "__cuda_array_interface__"):
            # CuPy, torch, Numba arrays: viewed in C, the interface read once; a producer's
            # stream other than this call's is synchronized first (the CAI stream rule)
            view = _kiln.foreign_view(arr, stream)
            if view is not None:
                return self._call_gpu(view, size, res, init, stream)
        if _is_gpu_array(arr):
            return self._call_gpu(arr, size, res, init, stream)
        np = _np()
        a = np.asarray(arr)
        if a.ndim != 1 or not a.flags.c_contiguous:
            a = np.ascontiguousarray(a).reshape(-1)
        a = self._first(a, size)
        n = a.size
        if n == 0:
            result = self._empty(init, a.dtype)
            if res is not None:
                np.asarray(res)[0] = result  # (an array by its interface too)
                return None
            return result
        acc = self._accumulator(a.dtype)
        k = self._get_kernel()
        # one pass on the calling thread below _REDUCE_SERIAL_BELOW elements (an OpenMP
        # team's start and join cost more than the pass), else 8 chunks a processor
        chunks = 1 if n < _REDUCE_SERIAL_BELOW else min(n, max(1, _cpus() * 8))
        chunk = (n + chunks - 1) // chunks
        chunks = (n + chunk - 1) // chunk
        part = np.empty(chunks, acc)
        k[chunks, 1](a, part, n, chunk)
        if chunks > 1:
            total = np.empty(1, acc)
            k[1, 1](part, total, chunks, chunks)
            part = total
        if init is not None:
            pair = np.array([acc.type(init), part[0]], acc)
            total = np.empty(1, acc)
            k[1, 1](pair, total, 2, 2)
            part = total
        _kiln.record_refuse("kiln.reduce reads its result on the host")
        result = part[0]
        if res is not None:  # numba.cuda.reduce's contract: the result goes to res only
            np.asarray(res)[0] = result  # (an array by its interface too)
            return None
        return result

    def __repr__(self):
        return f"<kiln reduction {self.__name__}>"


__all__ = ["Vectorized", "Reduction", "math"]
