"""``@kiln.jit`` and the Dispatcher it returns.

A Dispatcher is a C object underneath (kiln._kiln.DispatcherBase): indexing
it with a launch configuration and calling the result runs entirely in C on a
specialisation that exists.  Python runs only on a miss, in ``_compile_key``,
which hands the work to kiln._compile (imported then, not at ``import kiln``).
"""

import copyreg
import operator
import os

from . import _autotune, _kiln, _source
from ._extern import link_items
from ._types import Type, is_numba_arg_type, signature_text

# `kiln precompile` sets this to a list: compile(signature) then records (dispatcher,
# signature text) instead of building for this machine.
_precompiling = None

_VARIADIC = 0x04 | 0x08  # inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_JIT_OPTIONS = ("device", "fastmath", "debug", "lineinfo", "cache", "target", "max_registers",
                "mode", "inline", "forceinline", "opt", "launch_bounds", "lto", "link",
                "shared_memory_carveout")
_MODES = ("default", "reduce-overhead", "max-autotune")


# Numba's fastmath flags (LLVM's): a set of them is fastmath on, as kiln has one level
_FASTMATH_FLAGS = frozenset({"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"})


def _np_bool():
    """numpy.bool_ (a flag read from an array), without importing NumPy for it."""
    import sys

    np = sys.modules.get("numpy")
    return np.bool_ if np is not None else bool


def _fastmath(v):
    """fastmath=: a bool, or Numba's set (or dict) of LLVM flags, which turns kiln's one
    fast-math level on when not empty; anything else is Numba's ValueError."""
    if isinstance(v, (bool, int)) and not isinstance(v, float):
        return bool(v)
    if isinstance(v, (set, frozenset, dict)):
        bad = sorted(str(f) for f in v if f not in _FASTMATH_FLAGS)
        if bad:
            raise ValueError(f"Unrecognized fastmath flags: {', '.join(bad)} (kiln takes True, "
                             f"False or a set of {', '.join(sorted(_FASTMATH_FLAGS))})")
        return bool(v)
    raise ValueError(f"Unrecognized fastmath value: {v!r} (kiln takes True, False or a set of "
                     f"Numba's flags)")


def _args_of(text):
    """Numba's ``sig.args`` of compiled signature text such as "(float32[::1], int64)": a
    tuple of kiln type objects, equal to the ones a user builds (kiln's own text, read
    with kiln.types' names)."""
    from . import types
    from ._types import _bracket_arrays

    text = _bracket_arrays(text)
    inner = text[text.index("("):] if "(" in text else "(" + text + ")"
    names = {k: v for k, v in vars(types).items() if not k.startswith("_")}
    names["bool"] = types.bool_  # kiln's text spells a bool argument "bool"
    if "record" in text:  # recordN: the record dtype this process registered as N
        import re

        from ._types import Record

        for n in set(re.findall(r"\brecord(\d+)\b", text)):
            names["record" + n] = Record(_kiln.record_dtype(int(n)))
    val = eval(inner[:-1] + ",)" if inner.strip() != "()" else "()", {"__builtins__": {}}, names)
    return tuple(val)


def _launch_bounds(lb):
    """@jit(launch_bounds=...) as Numba takes it: an int or 1 to 3 positive ints, kept as
    three (0 where not given)."""
    if lb is None:
        return (0, 0, 0)
    t = (lb,) if isinstance(lb, int) else tuple(lb) if isinstance(lb, (tuple, list)) else None
    if t is None or not all(isinstance(b, int) and not isinstance(b, bool) for b in t):
        raise TypeError(f"launch_bounds must be an int or a tuple of ints, not {lb!r}")
    if len(t) > 3:
        raise ValueError(f"Got {len(t)} launch bounds: {t}. A maximum of three are supported: "
                         "(max_threads_per_block, min_blocks_per_sm, max_blocks_per_cluster)")
    if not t or any(b <= 0 for b in t):
        raise ValueError(f"launch bounds are positive ints, not {t}")
    return t + (0,) * (3 - len(t))


# @jit(shared_memory_carveout=...)'s names, as Numba's, for the percentages of the unified
# L1/shared memory that the driver prefers to give shared memory (-1: the driver's default)
_CARVEOUT_NAMES = {"default": -1, "MaxL1": 0, "MaxShared": 100}


def _carveout(c):
    """@jit(shared_memory_carveout=...) as Numba takes it: a percentage 0 to 100, -1 for
    the driver's default, or one of _CARVEOUT_NAMES; kept as the int (None: not set)."""
    if c is None:
        return None
    if isinstance(c, str):
        if c not in _CARVEOUT_NAMES:
            raise ValueError(f"Invalid carveout value: {c!r}; it is an int from -1 to 100 or "
                             f"one of {', '.join(map(repr, _CARVEOUT_NAMES))}")
        return _CARVEOUT_NAMES[c]
    if not isinstance(c, int) or isinstance(c, bool):
        raise TypeError(f"shared_memory_carveout must be an int or a str, not {c!r}")
    if not -1 <= c <= 100:
        raise ValueError(f"shared_memory_carveout must be between -1 and 100, not {c}")
    return c


# forall's threads per block when the caller gives none: a multiple of the warp that keeps
# every SM busy for any kernel that fits 256 threads' registers.
FORALL_BLOCK = 256


def _device_args(signature):
    if signature is None:
        raise TypeError("a device function is compiled for a signature: pass its argument "
                        "types, e.g. (int32, int32)")
    return signature


def _no_launch(*args):
    """What forall(0) returns: a launch of no threads runs nothing (CUDA rejects a grid of
    zero blocks)."""
    return None


def _check_target(target):
    if target not in ("auto", "cpu", "cuda"):
        raise ValueError(f"target must be 'auto', 'cpu' or 'cuda', not {target!r}")
    return target


def _sig_arg(signature, sig):
    """The signature an inspect_* method was given, by Numba's keyword (signature) or
    LANGUAGE.md's (sig); both at once is a TypeError."""
    if sig is None:
        return signature
    if signature is not None:
        raise TypeError("give the signature once: as signature= or as sig=, not both")
    return sig


class Dispatcher(_kiln.DispatcherBase):
    """A kiln kernel or device function (what ``kiln.jit`` returns).

    ``k[griddim, blockdim](*args)`` launches a kernel: griddim and blockdim are an int
    or a tuple of up to 3 ints; ``k[griddim, blockdim, stream]`` queues it on a stream
    and ``k[griddim, blockdim, stream, shared_bytes]`` also sets the dynamic shared
    memory.  The first launch with new argument types compiles a specialisation; later
    ones find it in C without running Python.  ``k.signatures`` lists what was
    compiled; ``k.inspect_types()`` and ``k.inspect_source()`` show the types of every
    variable and the generated code."""

    def __init__(self, py_func, signatures=(), device=False, fastmath=False, debug=False,
                 lineinfo=False, cache=True, target="auto", max_registers=None, mode="default",
                 inline=None, forceinline=None, opt=None, launch_bounds=None, lto=None, link=None,
                 shared_memory_carveout=None):
        code = getattr(py_func, "__code__", None)
        if code is None:
            raise TypeError(f"kiln.jit needs a Python function, not {type(py_func).__name__}")
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        super().__init__(tuple(names), py_func.__name__, bool(device))
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = getattr(py_func, "__qualname__", py_func.__name__)
        self.__doc__ = py_func.__doc__
        self.__module__ = py_func.__module__
        self.__wrapped__ = py_func
        if max_registers is not None and (not isinstance(max_registers, int) or max_registers <= 0):
            raise ValueError("max_registers must be a positive int")
        if max_registers is not None and max_registers > 255:  # a thread has at most 255
            raise ValueError(f"max_registers must be at most 255, not {max_registers}")
        for name, v in (("debug", debug), ("lineinfo", lineinfo), ("cache", cache)):
            if v is not None and not isinstance(v, (bool, _np_bool())):  # 'yes' is truthy
                raise TypeError(f"kiln.jit: {name} must be True or False, not {v!r}")
        if inline not in (None, True, False, "always", "never"):
            raise TypeError(f"kiln.jit: inline must be True, False, 'always' or 'never', not "
                            f"{inline!r}")
        if opt is not None and (isinstance(opt, float) or opt not in (True, False, 0, 1, 2, 3)):
            raise TypeError(f"kiln.jit: opt must be True, False or a level 0 to 3, not {opt!r}")
        self.options = {
            "fastmath": _fastmath(fastmath), "debug": bool(debug), "lineinfo": bool(lineinfo),
            "cache": bool(cache), "target": _check_target(target),
            "max_registers": max_registers or 0,
            "launch_bounds": _launch_bounds(launch_bounds),
            # CUDA C sources pasted into the kernel's program (_extern.py, Numba's link=)
            "link": link_items(link),
            # cuFuncSetAttribute on each GPU specialisation when it is loaded (_compile.build)
            "shared_memory_carveout": _carveout(shared_memory_carveout),
            # link-time optimisation when compiled code is linked (nvJitLink's -lto)
            "lto": lto is None or bool(lto),
        }
        if lto not in (None, True, False):
            raise TypeError(f"kiln.jit: lto must be True or False, not {lto!r}")
        if forceinline not in (None, True, False):
            raise TypeError(f"kiln.jit: forceinline must be True or False, not {forceinline!r}")
        self._explicit_cpu = target == "cpu"
        if mode not in _MODES:
            raise ValueError(f"kiln.jit: mode must be one of {', '.join(map(repr, _MODES))}, "
                             f"not {mode!r}")
        self.mode = mode
        # first-use costs paid on threads while the program goes on: the cache's database,
        # and NVRTC's first compile unless the kernel is for the CPU
        _kiln.open_ahead()
        if target != "cpu" and os.environ.get("KILN_TARGET") != "cpu":
            _kiln.warm_up()
        # what a launch's compile imports, imported now: a signal handler that launches a
        # kernel while the first launch is importing them would meet half a module
        from . import _compile, launchconfig  # noqa: F401

        self._sigs = []        # explicit signatures: [(text, argument key)]
        self._compiled = []    # [(signature text, key)] in the order they were built
        self._source = _source.snapshot(py_func)  # the file's lines now; text at first use
        self._device_sig = None
        self._specialized = False  # made by specialize(): it cannot be specialized again
        self.specializations = {}  # specialize()'s kernels, by signature text
        self._tuple_kernels = {}   # kernels of tuple arguments' leaves, by tuple shape
        if code.co_flags & _VARIADIC or code.co_kwonlyargcount:
            # *args, **kwargs, keyword-only parameters: no call could match them, so the
            # front end says so now, pointing at them
            from . import _compile

            _compile.refuse_parameters(self)
        if isinstance(signatures, (str,)) or not isinstance(signatures, (list, tuple)):
            signatures = [signatures]
        elif signatures and all(not isinstance(s, (str, list, tuple)) and
                                ("(" not in str(s) or is_numba_arg_type(s))
                                for s in signatures):
            signatures = [tuple(signatures)]
        texts = [signature_text(s) for s in signatures if s is not None]
        if device:
            for t in texts:
                if ";" in t:
                    raise TypeError(f"a signature is one 'ret(args)', not several: {t!r}")
                _kiln.parse_signature(t)  # report a bad signature now
            if texts:
                # each call from a kernel takes the signature that fits its arguments best
                self._device_sig = ";".join(texts)
        else:
            for t in texts:
                self.compile(t)

    def _compile_key(self, key, launcher=None, args=None):
        """The Entry for a type key (C calls this on a miss, with the launcher and the
        arguments): runs ``_compile_for_args`` with the launch's configuration current
        (kiln/launchconfig.py)."""
        from . import _compile

        if launcher is None:
            return _compile.entry_for_key(self, key)
        from . import launchconfig

        with launchconfig._current(launchconfig.LaunchConfig(self, launcher, args, key)) as cfg:
            entry = self._compile_for_args(*args)
        if not isinstance(entry, _kiln.Entry):
            raise TypeError(f"_compile_for_args of '{self.__name__}' must return the Entry it "
                            f"was given by the original method, not {type(entry).__name__}")
        if cfg._sensitive:
            self._lc_sensitive = True  # C keys this and later launches by their configuration
            if self._lookup(key) is None:
                self._insert(key, entry)  # other configurations find the code built
        return entry

    def _compile_for_args(self, *args, **kws):
        """Numba's compile hook: builds (or finds) the specialisation the launch compiling on
        this thread needs, and returns it.  Wrappers may replace it on the instance to see
        ``kiln.launchconfig.current_launch_config()``; it runs only within a launch."""
        from . import _compile, launchconfig

        cfg = launchconfig.current_launch_config()
        if cfg is None or cfg.dispatcher is not self:
            raise RuntimeError(f"_compile_for_args of '{self.__name__}' runs only within a "
                               f"launch of it that compiles; call the kernel or use compile()")
        return self._lookup(cfg._key) or _compile.entry_for_key(self, cfg._key)

    def mark_launch_config_sensitive(self):
        """Numba's: marks the compile in progress launch-config sensitive, so that this
        kernel's specialisations are kept per launch configuration from now on
        (kiln/launchconfig.py).  Only while a launch of this dispatcher compiles."""
        from . import launchconfig

        cfg = launchconfig.ensure_current_launch_config()
        if cfg.dispatcher is not self:
            raise RuntimeError("mark_launch_config_sensitive() must be called on the active "
                               "launch configuration's dispatcher")
        cfg._sensitive = True

    def _launch_args(self, launcher):
        from . import launchconfig

        return launchconfig._args_of(launcher)

    def _resolve_target(self):
        """The target of launches whose arguments are all on the host: 0 CPU, 1 CUDA."""
        t = target_of(self.options)
        if t == "auto":
            t = "cuda" if _gpu_usable() else "cpu"
        if t == "cuda" and not _gpu_usable():
            raise _kiln.CudaError(f"kernel '{self.__name__}' asks for target 'cuda', but no CUDA "
                                  f"GPU can be used: {_kiln.cuda_available()[1]}")
        return 1 if t == "cuda" else 0

    def compile(self, signature):
        """Compiles the kernel for an explicit signature (``"void(float32[::1], int64)"``)
        now; returns the loaded specialisation."""
        if _precompiling is not None:
            _precompiling.append((self, signature_text(signature)))
            return None
        from . import _compile

        return _compile.compile_signature(self, signature_text(signature))

    @property
    def signatures(self):
        """The argument types of every compiled specialisation, as signature text; a launch
        with tuple arguments shows them as Numba does (``UniTuple(float64 x 2)``)."""
        return [text for text, _ in self._compiled] + list(self._tuple_signatures())

    def _tuple_signatures(self):
        """{signature text with tuples: (kernel of the leaves, its signature text)} of the
        launches with tuple arguments (_launch_tuples)."""
        from ._types import split_top

        out = {}
        for shape, flat in getattr(self, "_tuple_kernels", {}).items():
            for text in flat.signatures:
                leaves = iter(split_top(text.strip()[1:-1]))
                out["(" + ", ".join(_shape_text(sh, leaves) for sh in shape) + ")"] = (flat, text)
        return out

    def _entry_for(self, signature):
        if signature is None:
            if not self._compiled:
                tuples = self._tuple_signatures()
                if tuples:  # launched with tuple arguments only: the last of those
                    flat, text = list(tuples.values())[-1]
                    return flat._entry_for(text)
                raise ValueError(f"'{self.__name__}' has not been compiled yet; call it or pass a signature")
            return self._lookup(self._compiled[-1][1])
        from . import _compile

        text = signature_text(signature)
        via = self._tuple_signatures().get(text)
        if via is not None:
            return via[0]._entry_for(via[1])
        return _compile.entry_for_signature(self, text)

    def inspect_types(self, signature=None, file=None, *, sig=None):
        """Prints each variable's type in every compiled specialisation (or the one of
        ``signature``) to ``file`` (default stdout), as Numba does: nothing when none is
        compiled yet; returns the text instead with ``file=False``.  ``sig`` is the same
        as ``signature`` (LANGUAGE.md's name; ``signature`` is Numba's)."""
        signature = _sig_arg(signature, sig)
        entries = ([self._entry_for(signature)] if signature is not None
                   else [self._lookup(key) for _, key in self._compiled]
                   + [f._entry_for(t) for f, t in self._tuple_signatures().values()])
        # Numba's annotation starts with the function's name and its argument types
        text = "".join(f"{self.__name__} {e.signature}\n{e.program.types}" for e in entries)
        if file is False:
            return text
        print(text, end="", file=file)
        return None

    def inspect_source(self, signature=None, *, sig=None):
        """The generated C (CPU) or CUDA C (GPU) source of a specialisation (``sig``: the
        same as ``signature``)."""
        signature = _sig_arg(signature, sig)
        return self._entry_for(signature).program.source

    def inspect_ptx(self, signature=None, *, sig=None):
        """The PTX of a specialisation (NVRTC compiles it again, to PTX; a CPU specialisation
        is translated for CUDA first, so its PTX is readable without a GPU; ``sig``: the
        same as ``signature``)."""
        signature = _sig_arg(signature, sig)
        from . import _compile

        return _compile.ptx_of(self, self._entry_for(signature))

    def inspect_asm(self, signature=None):
        """Numba's name for the PTX: with ``signature``, that specialisation's PTX; without,
        a dict from each compiled signature to its PTX."""
        if self._is_device:
            return self.compile_device(_device_args(signature)).ptx
        if signature is not None:
            return self.inspect_ptx(signature)
        return {text: self.inspect_ptx(text) for text in self.signatures}

    def inspect_llvm(self, signature=None):
        """kiln has no LLVM IR: the generated source it compiles instead (as
        inspect_source), for ``signature`` or, without one, a dict from each compiled
        signature to its source.  For a device function, the CUDA C of the function
        compiled alone (compile_device), which defines its exported symbol."""
        if self._is_device:
            return self.compile_device(_device_args(signature)).source
        if signature is not None:
            return self.inspect_source(signature)
        return {text: self.inspect_source(text) for text in self.signatures}

    def inspect_sass(self, signature=None):
        """The SASS of a specialisation (``nvdisasm`` of its cubin; a RuntimeError without
        nvdisasm); without ``signature``, a dict from each compiled signature to its SASS.
        A device function has no machine code of its own: a RuntimeError, as Numba's."""
        from . import _inspect

        if self._is_device:
            _inspect.refuse_sass(self)
        if signature is not None:
            return _inspect.sass_of(self, self._entry_for(signature))
        return {text: _inspect.sass_of(self, self._entry_for(text)) for text in self.signatures}

    def compile_device(self, args, return_type=None):
        """Compiles a device function alone for the argument types ``args`` and returns
        Numba's compile result (``cres.fndesc.mangled_name`` is its exported symbol;
        kiln's ``cres.source`` and ``cres.ptx``); see kiln/_inspect.py."""
        from . import _inspect

        text = signature_text(args if return_type is None else return_type(*args))
        argtext = text[text.index("("):] if "(" in text else text
        return _inspect.compile_device(self, text, _args_of(argtext))

    # ---- a GPU specialisation's resources (Numba's get_*; cuFuncGetAttribute) ----------

    def _resource(self, attr, what, signature):
        """The attribute of the specialisation for ``signature``; without one, of the only
        explicit signature, else a dict from each compiled signature's argument types (a
        tuple of kiln types, Numba's ``sig.args``) to its value."""
        if signature is None and not self._sigs:
            return {_args_of(text): self._resource(attr, what, text) for text, _ in self._compiled}
        entry = self._entry_for(signature)
        v = _kiln.entry_attribute(entry, attr)
        if v is None:
            raise RuntimeError(f"'{self.__name__}' {entry.signature} runs on the CPU target, "
                               f"which has no {what}; they are a GPU kernel's (target='cuda')")
        return v

    def get_regs_per_thread(self, signature=None):
        """Registers each thread of a GPU specialisation uses."""
        return self._resource(4, "registers", signature)

    def get_shared_mem_per_block(self, signature=None):
        """Bytes of static shared memory a block of a GPU specialisation uses."""
        return self._resource(1, "shared memory size", signature)

    def get_local_mem_per_thread(self, signature=None):
        """Bytes of local memory each thread of a GPU specialisation uses."""
        return self._resource(3, "local memory size", signature)

    def get_const_mem_size(self, signature=None):
        """Bytes of constant memory a GPU specialisation uses."""
        return self._resource(2, "constant memory size", signature)

    def get_max_threads_per_block(self, signature=None):
        """The largest block a GPU specialisation can be launched with."""
        return self._resource(0, "block size limit", signature)

    def inspect_lto_ptx(self, signature=None):
        """Numba's PTX after link-time optimisation: kiln's PTX, which is already the whole
        program (``lto`` changes nothing, see ``kiln.jit``)."""
        return self.inspect_asm(signature)

    @property
    def overloads(self):
        """Numba's view of the compiled specialisations: a dict from each one's argument
        types (signature text) to its loaded specialisation (for a device function, its
        explicit signatures, each to None: it is compiled into its callers)."""
        if self._is_device:  # compiled into each caller: its signatures are what it has
            return {t: None for t in (self._device_sig or "").split(";") if t}
        entries = [(text, self._lookup(key)) for text, key in self._compiled]
        entries += [(text, f._entry_for(t)) for text, (f, t) in self._tuple_signatures().items()]
        if self._lc_sensitive:  # Numba's kernels say launch_config_sensitive (_Sensitive)
            # one wrapper per live Entry, kept while it lives (entries cleared go with theirs)
            old = self.__dict__.get("_lc_views", {})
            views = {e: old.get(e) or _Sensitive(e) for _, e in entries if e is not None}
            self.__dict__["_lc_views"] = views
            entries = [(text, views.get(e, e)) for text, e in entries]
        return _Overloads(entries)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0, signature=None):
        """The most blocks of ``blockdim`` threads a cooperative launch (a kernel using
        ``kiln.cg``) may have, for a specialisation (the last compiled one, or the one of
        ``signature``): on the GPU, the blocks that can be resident at once (the occupancy
        API); on the CPU, KILN_CG_MAX_THREADS over the block's threads (docs/limits.md).
        Numba has it on ``overloads[sig]``, which kiln's entries have too."""
        return self._entry_for(signature).max_cooperative_grid_blocks(blockdim, dynsmemsize)

    def specialize(self, *args):
        """A new kernel compiled for these argument types only (type objects such as
        ``kiln.float32[::1]``, or values typed as a launch types them), as Numba's
        ``specialize``; the same types give the same kernel again (``specializations``)."""
        if self._sigs or self._specialized:
            raise RuntimeError(f"Dispatcher already specialized: '{self.__name__}' was compiled "
                               "for explicit signatures, so it cannot be specialized again")
        if self._is_device:
            raise RuntimeError("a device function cannot be specialized; its callers type it")
        try:
            text = "(" + ", ".join(str(a) if isinstance(a, Type) else
                                   _kiln.argtype_str(_kiln.key_of(a)) for a in args) + ")"
        except (TypeError, ValueError) as e:  # key_of knows no kernel: name this one
            raise type(e)(str(e).replace("kernel '?'", f"kernel '{self.__name__}'")) from None
        got = self.specializations.get(text)
        if got is None:
            options = dict(self.options, max_registers=self.options["max_registers"] or None,
                           launch_bounds=tuple(b for b in self.options["launch_bounds"] if b) or None)
            got = Dispatcher(self.py_func, [text], **options)
            got._specialized = True
            self.specializations[text] = got
        return got

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """The kernel configured to run ``ntasks`` threads (Numba's ``forall``):
        ``k.forall(n)(*args)`` launches ceil(n / tpb) blocks of ``tpb`` threads (default
        FORALL_BLOCK); no tasks launch nothing."""
        ntasks = _forall_int("forall takes a task count (an int)", ntasks)
        tpb = _forall_int("forall's tpb (threads per block) is an int", tpb)
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        if tpb < 0 or tpb > 1024:
            raise ValueError(f"forall's tpb is the threads per block, 1 to 1024 (0: kiln's "
                             f"choice), not {tpb}")
        if ntasks == 0:
            return _no_launch
        if not tpb and ntasks > FORALL_BLOCK and (_autotune.active() or (
                self.mode == "max-autotune" and _autotune.on())):
            return _TunedForall(self, ntasks, stream, sharedmem)
        tpb = tpb or min(FORALL_BLOCK, ntasks)
        return self[(ntasks + tpb - 1) // tpb, tpb, stream, sharedmem]

    def _launch_tuples(self, launcher, args):
        """A launch with tuple arguments (the Launcher calls this when one is a tuple): the
        tuples are flattened into their leaves, and a kernel of the leaves rebuilds them and
        calls this function as a device function (see _tuple_kernel)."""
        if self._sigs:
            raise TypeError(f"No matching definition for argument type(s) "
                            f"{', '.join(repr(typeof_or_name(a)) for a in args)}: kernel "
                            f"'{self.__name__}' was compiled for explicit signatures, which "
                            "hold no tuples")
        leaves = []
        shape = tuple(_flatten(a, leaves, 0) for a in args)
        flat = self._tuple_kernels.get(shape)
        if flat is None:
            flat = self._tuple_kernels[shape] = _tuple_kernel(self, shape)
        try:
            return flat[launcher.config](*leaves)
        except (TypeError, ValueError, OverflowError) as e:
            # "argument 't__1__0'" of the kernel of leaves is the user's t[1][0]
            msg = str(e) if len(e.args) == 1 else None
            if msg is None or "__" not in msg:
                raise
            import re
            for leaf, shown in flat._leaf_names.items():
                # t[1][0], or a namedtuple's field: opts.mode
                base = re.split(r"[\[.]", shown, maxsplit=1)[0]
                msg = msg.replace(f"argument '{leaf}'", f"argument '{base}' ({shown})")
            raise type(e)(msg) from None

    # ---- Numba's argument hints and extensions (kiln.args) ----------------------------

    @property
    def extensions(self):
        """Numba's argument hooks: objects whose ``prepare_args(ty, val, stream=, retr=)``
        returns the ``(ty, val)`` a launch passes instead, for each argument in turn (``val``
        may become an argument hint, ``kiln.In(val)``...; ``retr`` takes callables run after
        the launch).  A kernel with extensions launches through Python."""
        if type(self) is Dispatcher:
            # the launches of this kernel look at the list from now on (_HookedDispatcher)
            self.__class__ = _HookedDispatcher
        exts = getattr(self, "_extensions", None)
        if exts is None:
            exts = self._extensions = []
        return exts

    def _launch_hinted(self, launcher, args, hooks=False):
        """A launch whose arguments hold argument hints (kiln.In...) or Enum members, or that
        runs the kernel's extensions (hooks): each hint becomes the array the kernel gets, a
        member its value, the launch runs, and then the hints' copies back.  NotImplemented when there is nothing to
        convert (launch.c then raises its TypeError)."""
        from .args import ArgHint
        from ._cuda import _is_gpu_array

        exts = getattr(self, "_extensions", None) if hooks else None
        if not exts and not any(isinstance(a, ArgHint) or _enum_value(a) is not None
                                for a in args):
            return NotImplemented
        stream = launcher.config[2] or 0
        retr, conv = [], []
        for a in args:
            if exts:
                ty = _hint_type(a)
                for ext in exts:
                    ty, a = ext.prepare_args(ty, a, stream=stream, retr=retr)
            conv.append(a)
        plain = [a.value if isinstance(a, ArgHint) else a for a in conv]
        if any(isinstance(a, ArgHint) for a in plain):
            raise TypeError("an argument hint holds another hint")
        if any(_is_gpu_array(a) for a in plain):
            gpu = True
        else:
            gpu = self.options["target"] != "cpu" and self._resolve_target() == 1
        conv = [a._for_launch(retr, stream, gpu) if isinstance(a, ArgHint) else a for a in conv]
        # an Enum member with a number value is that value, as kernels read Color.red
        conv = [a if _enum_value(a) is None else _enum_value(a) for a in conv]
        launcher(*conv)
        for r in retr:
            r()
        return None

    def __reduce__(self):
        """pickle: by reference when the kernel's module holds it, else its function's
        code, source, globals and closure with the options and signatures (_pickle.py)."""
        from . import _pickle

        return _pickle.reduce_dispatcher(self, Dispatcher)

    def __repr__(self):
        kind = "device function" if self._is_device else "kernel"
        return f"<kiln {kind} {self.__qualname__}>"


def _reduce_launcher(launcher):
    from . import _pickle

    return _pickle.reduce_launcher(launcher)


# k[g, b] pickles as its kernel and configuration (Numba's configured launches do)
copyreg.pickle(_kiln.Launcher, _reduce_launcher)


def _forall_int(what, v):
    """An int argument of forall (a NumPy integer too, not a bool or a float)."""
    if isinstance(v, bool):
        raise TypeError(f"{what}, not bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what}, not {type(v).__name__}") from None


def _enum_value(a):
    """The value of an Enum member whose value is a number or a tuple of numbers (None
    otherwise): what a launch passes for it, as kernels read members of such enums as their
    values (Numba passes a member as its value too)."""
    import enum

    def number_or_tuple(v):
        if isinstance(v, tuple):
            return bool(v) and all(number_or_tuple(x) for x in v)
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if isinstance(a, enum.Enum) and number_or_tuple(a.value):
        if isinstance(a, int):  # an IntEnum member is an int: the launch tags its class
            return a
        if isinstance(a.value, int):  # so is another Enum's int value, through a stand-in
            return _enum_int(type(a))(a.value)
        return a.value
    return None


_ENUM_INTS = {}


def _enum_int(cls):
    """An int subclass standing for the Enum class cls at a launch: an int whose class the
    launch tags (args.c: an int subclass with _member_map_), so that `a is b` in a kernel
    tells members of two classes apart, as Numba's EnumMember types do."""
    got = _ENUM_INTS.get(cls)
    if got is None:
        got = _ENUM_INTS[cls] = type(cls.__name__, (int,), {"_member_map_": cls._member_map_,
                                                            "__module__": cls.__module__})
    return got


def _hint_type(a):
    """The kiln type an extension's prepare_args gets for an argument (Numba's ``ty``): the
    type of the value, of the hinted value for a hint; None for what kiln cannot type."""
    from .args import ArgHint

    try:
        return typeof_or_name(a.value if isinstance(a, ArgHint) else a)
    except Exception:  # noqa: BLE001  (a hook sees None for what has no kiln type)
        return None


class _HookedDispatcher(Dispatcher):
    """A Dispatcher whose ``extensions`` were asked for: its launches run them first, in
    Python (``k[config]`` gives a _HookedLauncher while the list is not empty)."""

    def __getitem__(self, config):
        launcher = super().__getitem__(config)
        if not getattr(self, "_extensions", None):
            return launcher
        return _HookedLauncher(self, launcher)


class _HookedLauncher:
    """``k[config]`` of a kernel with extensions: calling it runs them on the arguments."""

    def __init__(self, disp, launcher):
        self.dispatcher, self._launcher = disp, launcher

    @property
    def config(self):
        return self._launcher.config

    def __call__(self, *args):
        return self.dispatcher._launch_hinted(self._launcher, args, hooks=True)


class _Sensitive:
    """``overloads``' value for a specialisation of a launch-config sensitive kernel
    (kiln/launchconfig.py): its Entry, which says ``launch_config_sensitive``.  An Entry
    may serve several dispatchers of the same code, so the mark is the dispatcher's, not the
    Entry's (whose own ``launch_config_sensitive`` is always False)."""

    __slots__ = ("_entry",)
    launch_config_sensitive = True

    def __init__(self, entry):
        self._entry = entry

    def __getattr__(self, name):
        return getattr(self._entry, name)

    def __repr__(self):
        return f"<launch-config sensitive {self._entry!r}>"


class _Overloads(dict):
    """``Dispatcher.overloads``: signature text -> loaded specialisation, which Numba's code
    also indexes by a tuple of type objects (``overloads[(int32[:, ::1],)]``)."""

    def _text(self, key):
        try:
            return signature_text(key)
        except TypeError:
            return None

    def __missing__(self, key):
        text = None if isinstance(key, str) else self._text(key)
        if text is None or not dict.__contains__(self, text):
            raise KeyError(key)
        return dict.__getitem__(self, text)

    def __contains__(self, key):
        return dict.__contains__(self, key) or (
            not isinstance(key, str) and dict.__contains__(self, self._text(key)))

    def get(self, key, default=None):
        return self[key] if key in self else default


# ---- tuple arguments ------------------------------------------------------------------
#
# The launch path classifies each argument into 4 bytes of a type key (args.c), which has no
# room for a tuple's tree.  The compiler has tuples though (values, device-function
# arguments, indexing, len, unpacking, iteration), so a launch with tuple arguments runs a
# kernel of the tuples' leaves, written here as text:
#
#     def f(r, x__0, x__1, x__2__0, x__2__1):            # x = (a, 10, (4, 3))
#         _kiln_body(r, (x__0, x__1, (x__2__0, x__2__1)))
#
# where _kiln_body is the user's function as a device function; its diagnostics point at the
# user's lines.  The text is registered with linecache under a name of its own, where kiln
# reads sources.  One such kernel per shape of the tuples (lengths and nesting; the leaves'
# types are its specialisations as for any kernel); each launch flattens in Python (a few
# microseconds), so scalars and arrays stay the fast path.

_MAX_TUPLE_DEPTH = 16  # nesting of tuple arguments (docs/limits.md)
_MAX_TUPLE_LEAVES = 256  # scalars and arrays in one launch's tuple arguments (docs/limits.md)


def typeof_or_name(a):
    from ._types import typeof

    try:
        return typeof(a)
    except (ValueError, NotImplementedError):
        return type(a).__name__


def _flatten(value, leaves, depth):
    """The shape of an argument (None: a leaf; a tuple of shapes: a tuple), its leaves
    appended to `leaves`."""
    if not isinstance(value, tuple):
        leaves.append(value)
        if len(leaves) > _MAX_TUPLE_LEAVES:
            raise ValueError(f"tuple arguments hold more than {_MAX_TUPLE_LEAVES} values in "
                             "all (_MAX_TUPLE_LEAVES); pass arrays")
        return None
    if depth >= _MAX_TUPLE_DEPTH:
        raise ValueError(f"tuple arguments nest more than {_MAX_TUPLE_DEPTH} deep "
                         "(_MAX_TUPLE_DEPTH)")
    parts = tuple(_flatten(v, leaves, depth + 1) for v in value)
    if isinstance(getattr(type(value), "_fields", None), tuple):  # a namedtuple: its class too
        from ._compile import _namedtuple_fields

        if not _namedtuple_fields(type(value)):
            raise TypeError(f"a {type(value).__name__} (a namedtuple whose name or fields are "
                            "not identifiers) cannot be passed to a kernel; pass tuple(value)")
        return _Named(type(value), parts)
    return parts


def _shape_text(shape, leaves):
    """An argument's type text from its shape (_flatten) and its leaves' type texts, as Numba
    spells tuple types: UniTuple(float64 x 2), Tuple(float64, int64), Point(float64, int64)."""
    if shape is None:
        return next(leaves)
    parts = [_shape_text(s, leaves) for s in (shape.parts if isinstance(shape, _Named) else shape)]
    if isinstance(shape, _Named):
        return f"{shape.cls.__name__}({', '.join(parts)})"
    if parts and all(p == parts[0] for p in parts):
        return f"UniTuple({parts[0]} x {len(parts)})"
    return f"Tuple({', '.join(parts)})"


class _Named:
    """The shape of a namedtuple argument: its class and its fields' shapes."""

    __slots__ = ("cls", "parts")

    def __init__(self, cls, parts):
        self.cls, self.parts = cls, parts

    def __eq__(self, other):
        return isinstance(other, _Named) and self.cls is other.cls and self.parts == other.parts

    def __hash__(self):
        return hash((id(self.cls), self.parts))


def _tuple_kernel(disp, shape):
    """The kernel of the leaves of tuple arguments of this shape (see above)."""
    import linecache

    names = disp.py_func.__code__.co_varnames[:len(shape)]
    params, call = [], []

    shown = {}
    ns = {}

    def build(name, sh, path=""):
        if sh is None:
            params.append(name)
            if path:
                shown[name] = path
            return name
        base = path or name
        if isinstance(sh, _Named):  # remade in the kernel by its class (src/sema/namedtuple.c)
            # one global per class: its values are of one type, so a tuple of them is uniform
            cls = next((k for k, v in ns.items() if v is sh.cls), f"_kiln_nt{len(ns)}")
            ns[cls] = sh.cls
            fields = [build(f"{name}__{i}", s, f"{base}.{sh.cls._fields[i]}")
                      for i, s in enumerate(sh.parts)]
            return f"{cls}({', '.join(fields)})"
        parts = [build(f"{name}__{i}", s, f"{base}[{i}]") for i, s in enumerate(sh)]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    for name, sh in zip(names, shape):
        call.append(build(name, sh))
    fname = disp.py_func.__name__
    text = f"def {fname}({', '.join(params)}):\n    _kiln_body({', '.join(call)})\n"
    filename = f"<kiln: tuple arguments of {disp.__qualname__} #{len(disp._tuple_kernels)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    options = dict(disp.options, max_registers=disp.options["max_registers"] or None,
                   launch_bounds=tuple(b for b in disp.options["launch_bounds"] if b) or None)
    body = Dispatcher(disp.py_func, device=True, **options)
    ns["_kiln_body"] = body
    exec(compile(text, filename, "exec"), ns)
    flat = Dispatcher(ns[fname], mode=disp.mode, **options)
    flat._leaf_names = shown
    flat._grid_warned = True  # the kernel's own k[g, b] warned already
    return flat


class _TunedForall:
    """k.forall(n) inside a max-autotune step: the first call of each size bucket and argument
    types times the threads per block on copies of the arguments (a kernel may add into its
    arrays), then launches on the real ones (_autotune.py)."""

    def __init__(self, disp, n, stream, sharedmem):
        self.disp, self.n, self.stream, self.sharedmem = disp, n, stream, sharedmem

    def __call__(self, *args):
        from ._cuda import _is_gpu_array

        gpu = any(_is_gpu_array(a) for a in args)
        if gpu and not all(_contiguous(a) for a in args if _is_gpu_array(a)):
            t = min(FORALL_BLOCK, self.n)   # strided device arrays: not copied, not tuned
            return self.disp[(self.n + t - 1) // t, t, self.stream, self.sharedmem](*args)
        key = ("forall", self.disp, _kiln.key_of(*args), gpu, _autotune.bucket(self.n))
        cands = _autotune.GPU_THREADS if gpu else _autotune.CPU_THREADS

        def make_run():
            copies = [_copy_arg(a) for a in args]
            return lambda t: self.disp[(self.n + t - 1) // t, t, self.stream,
                                       self.sharedmem](*copies)

        def ident():
            import hashlib  # here: 3 ms of `import kiln` otherwise
            code = self.disp.py_func.__code__
            body = hashlib.sha1(code.co_code + repr(code.co_consts).encode()).hexdigest()[:12]
            return f"{self.disp.py_func.__module__}.{self.disp.__qualname__}:{body}:" \
                   f"{_kiln.key_of(*args).hex()}"

        sync = None
        if gpu:
            from ._cuda import synchronize as sync
        t = _autotune.choose(key, "forall-gpu" if gpu else "forall-cpu", ident,
                             "gpu" if gpu else "cpu", self.n, cands, make_run, sync,
                             default=FORALL_BLOCK)
        return self.disp[(self.n + t - 1) // t, t, self.stream, self.sharedmem](*args)


def _contiguous(a):
    from ._cuda import as_cuda_array

    d = as_cuda_array(a)
    return d.is_c_contiguous() or d.is_f_contiguous()


def _copy_arg(a):
    """A copy of an array argument for timing (scalars as they are)."""
    from ._cuda import DeviceArray, _is_gpu_array, as_cuda_array, device_array

    if _is_gpu_array(a):
        d = a if isinstance(a, DeviceArray) else as_cuda_array(a)
        c = device_array(d.shape, d.dtype, order="C" if d.is_c_contiguous() else "F")
        _kiln.copy("d2d", d.device, c._ptr, d._ptr, d.nbytes, 0)
        return c
    if hasattr(a, "__array_interface__") or isinstance(a, memoryview):
        import numpy as np

        return np.array(a, copy=True, order="K")
    return a


def jit(func_or_sig=None, *args, **options):
    """Makes a kernel or a device function of a Python function; returns a Dispatcher.

    ``@kiln.jit`` compiles at each launch with new argument types;
    ``@kiln.jit("void(float32[::1], int64)")`` (or a list of signatures, Numba's syntax)
    compiles those now and accepts only them; ``@kiln.jit(device=True)`` makes a device
    function, callable from kernels, that may return a scalar or a tuple.

    Options:

    - ``device``: a device function rather than a kernel.
    - ``fastmath``: approximate transcendental functions and division, denormals flushed.
    - ``debug``: bounds-checked indexing (IndexError naming the line, index and shape),
      ``assert``, ZeroDivisionError for division by zero (integer and float).
    - ``lineinfo``: source lines in NVIDIA's profilers.
    - ``cache``: use the compiled-kernel cache (default True).
    - ``target``: ``'auto'`` (default: GPU arrays run on the GPU, host arrays on the GPU
      when one is usable, else the CPU), ``'cpu'`` or ``'cuda'``.
    - ``max_registers``: at most this many registers per GPU thread.
    - ``launch_bounds``: ``max_threads`` or ``(max_threads, min_blocks_per_sm,
      max_blocks_per_cluster)``, CUDA's ``__launch_bounds__`` on the GPU entry (the compiler
      fits the registers to it; a launch of larger blocks fails with the driver's
      CUDA_ERROR_INVALID_VALUE); the CPU target ignores it.
    - ``shared_memory_carveout``: the share of the unified L1/shared memory the GPU
      should prefer to give shared memory: a percentage 0 to 100, -1 or ``'default'`` for
      the driver's choice, ``'MaxL1'`` (0) or ``'MaxShared'`` (100); a hint to the driver
      (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), which the CPU target ignores.
    - ``link``: CUDA C sources (``kiln.CUSource`` objects, ``.cu`` paths) pasted into the
      kernel's GPU program, and compiled device code (``.ptx``, ``.cubin``, ``.fatbin``,
      ``.ltoir``, ``.o``, ``.a`` paths, ``kiln.PTXSource`` ...) linked with it by nvJitLink,
      or a list of them, for external functions declared with ``kiln.declare_device``
      without ``link=`` (docs/language.md).
    - ``lto``: with compiled device code linked, whether nvJitLink optimises across it
      (default True; LTO-IR inputs need it): the external functions inline into the kernel.
    - ``mode``: ``'default'``; ``'max-autotune'`` times the threads per block of its
      ``forall(n)`` launches and keeps the fastest (docs/modes.md); ``'reduce-overhead'`` is
      accepted and is the default for one kernel (its launch path is already C: recording
      pays off for steps of several launches, ``kiln.compile``).

    ``inline``, ``forceinline`` and ``opt`` (Numba's) are accepted and change nothing: kiln
    compiles each kernel with everything it calls (CUDA C sources included) as one program,
    so what link-time optimisation would join is already joined (docs/language.md).  Unknown options are a TypeError."""
    bad = [k for k in options if k not in _JIT_OPTIONS]
    if bad:
        raise TypeError(f"kiln.jit got unknown option(s) {', '.join(bad)}; "
                        f"it takes {', '.join(_JIT_OPTIONS)}")
    if args:
        raise TypeError("kiln.jit takes the signatures as its one positional argument")
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        return Dispatcher(func_or_sig, **options)
    if isinstance(func_or_sig, (int, float, complex, bytes)) or (
            callable(func_or_sig) and not hasattr(func_or_sig, "__code__")
            and (type(func_or_sig).__module__ == "builtins"
                 or isinstance(func_or_sig, _kiln.DispatcherBase))):
        _not_a_function(func_or_sig)
    sigs = func_or_sig if func_or_sig is not None else ()

    def decorate(fn):
        if not (callable(fn) and hasattr(fn, "__code__")):
            _not_a_function(fn)
        return Dispatcher(fn, sigs, **options)

    return decorate


def _not_a_function(x):
    raise TypeError(f"kiln.jit compiles a Python function (a def), or takes its signatures; "
                    f"{x!r} is a {type(x).__name__}")


def is_available():
    """Whether the CUDA API can run kernels: a CUDA GPU can be used (else
    kiln.cuda_unavailable_reason() says why not), or KILN_TARGET=cpu puts the device API and
    launches on the host, where Numba's simulator also answers True."""
    from ._cuda import on_host

    return on_host() or _gpu_usable()


def _gpu_usable():
    """Whether a CUDA GPU can be used (kiln's own choices of target ask this)."""
    return _kiln.cuda_available()[0]


def cuda_unavailable_reason():
    """Why no CUDA GPU can be used ('' when one can)."""
    return _kiln.cuda_available()[1]


def synchronize():
    """Waits for all GPU work and reports errors recorded by kernels (CPU launches are
    synchronous)."""
    _kiln.synchronize()


def select_device(n):
    """Makes GPU n the device for new arrays and for launches with host arguments; returns
    it as a kiln.Device, as Numba's cuda.select_device does (with KILN_TARGET=cpu, device
    0 is the kiln.HostDevice)."""
    from ._cuda import Device, HostDevice, on_host

    if on_host():
        if n != 0:
            raise ValueError(f"device {n} does not exist (KILN_TARGET=cpu: the CPU target's "
                             f"device is 0)")
        return HostDevice()
    _kiln.select_device(n)
    return Device(n)


def target_of(options):
    """The target a launch of host arrays uses: the option, else $KILN_TARGET, else auto."""
    t = options["target"]
    if t == "auto":
        t = os.environ.get("KILN_TARGET", "auto") or "auto"
        if t not in ("auto", "cpu", "cuda"):
            raise ValueError(f"KILN_TARGET must be 'cpu', 'cuda' or 'auto', not {t!r}")
    return t
