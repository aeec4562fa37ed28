"""The compile path: source text, frozen globals, translate, build, load.

Imported at the first compilation, not at ``import kiln``.  The work itself is
the C core's (kiln._kiln.translate, cpu_build, cpu_entry); this module only
finds a function's source text, answers the core's questions about global
names, and decides which specialisation a call needs.
"""

import atexit
import builtins
import enum
import os
import sys
import types

from . import _cuda, _kiln, _obs, _source
from ._source import source_of
from ._types import DTYPE_NAMES, Record, Scalar, dtype_code
from ._extern import ExternFunction, link_texts, linked_inputs

CompileError = _kiln.CompileError

# Interpreter exit (atexit runs in reverse order): the optimising builds still running get
# a moment to finish and be stored, then are stopped (tier.c); then the disk hits this
# process counted (kept in memory: a write would cost a warm start milliseconds) go into
# kiln.db.  Registered here, at the first compilation.
atexit.register(_kiln.cache_flush)
atexit.register(_kiln.tier_shutdown)

_BUILTINS = {"abs", "min", "max", "int", "float", "bool", "round", "range", "len", "enumerate",
             "zip", "reversed", "complex", "pow", "print", "divmod"}
_BUILTIN_OBJECTS = {id(getattr(builtins, n)): n for n in _BUILTINS}
_TARGET_CODE = {"cpu": 0, "cuda": 1}


# ---- source ----------------------------------------------------------------------

def dispatcher_source(disp):
    """(text, file name, first line) of a dispatcher's function, from the snapshot of
    its file taken when it was wrapped (kiln/_source.py), read once."""
    src = disp._source
    if src is None or isinstance(src, _source.Snapshot):
        src = disp._source = source_of(disp.py_func, src)
    return src


# ---- globals ------------------------------------------------------------------------

def _numpy():
    return sys.modules.get("numpy")


def _namedtuple_fields(cls):
    """Whether cls is a namedtuple class whose name and fields the compiler can spell."""
    fields = getattr(cls, "_fields", None)
    return (isinstance(fields, tuple) and all(isinstance(f, str) and f.isidentifier()
                                              for f in fields)
            and cls.__name__.isidentifier())


def describe(v):
    """What the C core needs to know about a global value (see kiln_value)."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        if -(1 << 63) <= v < (1 << 63):
            return ("int", v)
        if 0 <= v < (1 << 64):  # a uint64 constant, as such a literal is in a kernel
            return ("scalar", dtype_code("uint64"), v)
        return ("other", "an int too large for 64 bits")
    if isinstance(v, float):
        return ("float", v)
    if isinstance(v, str):  # a string constant (src/sema/strings.c)
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return ("other", "a str that is not valid UTF-8 (it holds a lone surrogate)")
        return ("str", v)
    if isinstance(v, complex):
        return ("complex", v.real, v.imag)
    if isinstance(v, tuple):
        return ("tuple", tuple(describe(x) for x in v))
    if isinstance(v, enum.Enum):
        # an IntEnum member is an int (above); another Enum's member with an int value is
        # that value, as Numba types members of int-valued enums (comparisons between
        # members of two classes with equal values are then equal: docs/language.md)
        if isinstance(v.value, int) and not isinstance(v.value, bool):
            return describe(v.value)
        return ("other", f"a member of enum {type(v).__name__} whose value is not an int")
    if isinstance(v, type) and issubclass(v, tuple) and _namedtuple_fields(v):
        # a namedtuple class: called in kernels, it makes a named tuple (src/sema/namedtuple.c)
        return ("module", f"namedtuple:{v.__name__}:{','.join(v._fields)}")
    if isinstance(v, type) and issubclass(v, enum.Enum):  # members: Color.red, Color["red"]
        return ("module", "enum")
    if isinstance(v, type) and issubclass(v, BaseException):  # `raise v(...)` in a kernel
        return ("other", "an exception class", _exception_key(v))
    if isinstance(v, types.ModuleType):
        name = v.__name__
        if name in ("math", "cmath", "numpy", "builtins"):
            return ("ns", name)
        if name in ("kiln", "numba.cuda"):
            return ("ns", "kiln")
        kn = getattr(v, "_kiln_name", None)  # kiln.libdevice: a namespace of intrinsics
        if name.startswith("kiln.") and isinstance(kn, str):
            return ("ns", kn)
        return ("module",)
    if isinstance(v, _kiln.DeviceArrayBase):  # a global device array: by address
        return _describe_device_array(v)
    if isinstance(v, ExternFunction):  # kiln.declare_device: CUDA C the kernel calls
        return v._describe()
    cai = _foreign_cai(v)
    if cai is not None:  # a CuPy, torch, JAX... array: by address, as a kiln device array
        return _describe_cai(cai)
    if isinstance(v, _kiln.DispatcherBase):  # a kiln kernel or device function
        text, filename, line = dispatcher_source(v)
        links = link_texts(v.options.get("link", ())) if v._is_device else ()
        return ("function", v.py_func, text, filename, line, bool(v._is_device), v._device_sig,
                links)
    name = getattr(v, "_kiln_name", None)
    if isinstance(name, str):
        return ("ns", name)
    if any(c.__name__ == "FFI" and c.__module__.startswith("cffi") for c in type(v).__mro__):
        return ("ns", "cffi")  # ffi.from_buffer(array) in a kernel (Numba's cffi support)
    if isinstance(v, types.FunctionType):
        # a plain Python function called from a kernel is compiled as a device function
        text, filename, line = source_of(v)
        return ("function", v, text, filename, line, True, None)
    if (type(v).__module__.startswith("numba.") and
            isinstance(getattr(v, "py_func", None), types.FunctionType)):
        # a Numba dispatcher (@numba.jit, @njit, Numba's own @cuda.jit(device=True)) that a
        # kernel calls: Numba-CUDA compiles its Python function as a device function, and
        # so does kiln (its Numba options and signatures are Numba's business)
        text, filename, line = source_of(v.py_func)
        return ("function", v.py_func, text, filename, line, True, None)
    if isinstance(v, types.BuiltinFunctionType):
        mod = getattr(v, "__module__", None)
        if mod in ("math", "cmath"):
            return ("ns", mod + "." + v.__name__)
        if mod in ("operator", "_operator"):  # operator.add ...: binary operators as values
            return ("ns", "operator." + v.__name__)
        if id(v) in _BUILTIN_OBJECTS:
            return ("ns", "builtins." + _BUILTIN_OBJECTS[id(v)])
    if id(v) in _BUILTIN_OBJECTS:
        return ("ns", "builtins." + _BUILTIN_OBJECTS[id(v)])
    np = _numpy()
    if np is not None:
        if isinstance(v, np.ufunc):
            return ("ns", "numpy." + v.__name__)
        if isinstance(v, np.generic):
            code = dtype_code(v.dtype.name)
            if code is None:
                return ("other", f"numpy.{type(v).__name__}")
            return ("scalar", code, v.item())
        if isinstance(v, type) and issubclass(v, np.generic):
            code = dtype_code(np.dtype(v).name)
            return ("dtype", code) if code is not None else ("other", v.__name__)
        if isinstance(v, np.dtype) and v.fields is not None:  # a record type
            return _describe_record_type(v)
        if isinstance(v, np.dtype):
            code = dtype_code(v.name)
            return ("dtype", code) if code is not None else ("other", str(v))
        if isinstance(v, np.ndarray):
            return _describe_array(np, v)
    if isinstance(v, Record):  # kiln.from_dtype of a structured dtype
        return ("dtype", v.code)
    mod = type(v).__module__ or ""
    if mod.startswith("numba"):
        code = dtype_code(str(v))
        if code is not None:
            return ("dtype", code)
    return ("other", type(v).__qualname__)


def _describe_record_type(dt):
    """A structured dtype as a global (the dtype of kiln.shared.array...): its record id."""
    try:
        return ("dtype", 32 + _kiln.record_id(dt))
    except TypeError as e:
        return ("other", f"a structured dtype kernels cannot take ({e})")


# A global NumPy array is captured as a constant when the kernel compiles (as Numba does):
# its elements are written into the program, so changing the array later changes nothing
# for the compiled kernel, and a new process that sees other values compiles anew (the
# source, and so the cache key, holds them).  Up to MAX_CONST_ARRAY_BYTES
# (KILN_MAX_CONST_ARRAY_BYTES in src/compiler.h): a larger table belongs in an argument.
MAX_CONST_ARRAY_BYTES = 1 << 20


def _describe_array(np, v):
    code = dtype_code(v.dtype.name)
    if v.dtype.fields is not None:  # an array of records: their bytes, NumPy's layout
        rt = _describe_record_type(v.dtype)
        if rt[0] != "dtype":
            return rt
        code = rt[1]
        if v.ndim == 0:
            return ("other", "a NumPy record (pass records as arguments)")
    if code is None:
        return ("other", f"a NumPy array of dtype {v.dtype} (global arrays kernels read are "
                         "of bool, int, float and complex dtypes)")
    if not v.dtype.isnative:  # the values, in the order the kernel reads them
        v = v.astype(v.dtype.newbyteorder("="))
    if v.ndim == 0:
        return ("scalar", code, v.item())
    if v.nbytes > MAX_CONST_ARRAY_BYTES:
        return ("other", f"a NumPy array of {v.nbytes} bytes, over the {MAX_CONST_ARRAY_BYTES} "
                         "bytes of a global array captured as a constant")
    return ("array", code, tuple(int(d) for d in v.shape),
            np.ascontiguousarray(v).tobytes())


# A global kiln device array is captured by address, as Numba captures a global device
# array: the kernel reads and writes the array's memory as it is at each launch (its
# address and shape are the constants; the address is in the source, so in the cache key).
def _describe_device_array(v):
    if not v.is_c_contiguous():
        return ("other", "a kiln device array that is not C-contiguous (global device "
                         "arrays are captured by address as C-order arrays); pass it as an "
                         "argument")
    return ("devarray", v._dtype_code, tuple(int(d) for d in v.shape), int(v._ptr),
            int(v._device))


def _foreign_cai(v):
    """The __cuda_array_interface__ dict of a foreign GPU array global, or None (NumPy
    arrays, classes and objects without one)."""
    if isinstance(v, type):
        return None
    try:
        cai = getattr(v, "__cuda_array_interface__", None)
    except Exception:  # a property that fails: not a usable GPU array
        return None
    return cai if isinstance(cai, dict) else None


def _describe_cai(cai):
    np = _numpy()
    try:
        shape = tuple(int(d) for d in cai["shape"])
        dt = np.dtype(cai["typestr"])
        ptr = int(cai["data"][0])
        strides = cai.get("strides")
    except (KeyError, TypeError, ValueError, IndexError):
        return ("other", "an object whose __cuda_array_interface__ is malformed")
    code = dtype_code(dt.name) if dt.isnative else None
    if code is None:
        return ("other", f"a GPU array of dtype {dt}, which kernels cannot take")
    if strides is not None:
        expect, step = [], dt.itemsize
        for d in reversed(shape):
            expect.append(step)
            step *= max(d, 1)
        if tuple(int(x) for x in strides) != tuple(reversed(expect)):
            return ("other", "a GPU array that is not C-contiguous (global GPU arrays are "
                             "captured by address as C-order arrays); pass it as an argument")
    try:  # CAI has no device: the memory is on the current one (Numba assumes the same)
        device = 0 if _cuda.on_host() else int(_kiln.current_device())
    except Exception:  # no usable driver: a GPU ordinal all the same (a CPU compile refuses it)
        device = 0
    return ("devarray", code, shape, ptr, device)


# ---- exceptions raised in kernels ----------------------------------------------------------
#
# A kernel's `raise E("text")` records the raise site in the launch's error record (kiln.h's
# KILN_ERR_RAISE); after the launch the host raises E built here.  The class is found by a
# key that the compiled program keeps: its module and qualified name, registered when a
# kernel that raises it is compiled (a class the program's process has not seen since, as
# after loading a kernel compiled elsewhere, is looked up by that name).

_EXCEPTIONS = {}


def _exception_key(cls):
    key = f"{cls.__module__}.{cls.__qualname__}"
    _EXCEPTIONS[key] = cls
    return key


def _exception_class(key):
    cls = _EXCEPTIONS.get(key)
    if cls is None:
        import importlib

        mod, _, name = key.rpartition(".")
        try:
            cls = importlib.import_module(mod)
            for part in name.split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError):
            cls = None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return RuntimeError, f"(the kernel raised {key}, which cannot be found) "
    return cls, ""


def user_exception(site, line, thread, block):
    """The exception a kernel's raise site (sema_raise.c's fields) raised, as Numba words
    it: "In function 'f', file F, line N, tid=[x, y, z] ctaid=[x, y, z]: message"."""
    import ast

    _, key, func, file, args = site.split("\x1f", 4)
    cls, lost = _exception_class(key)
    values = tuple(ast.literal_eval("(" + a + ")") for a in args.split("\x1e")) if args else ()
    tid = [thread & 0x1FFFFF, (thread >> 21) & 0x1FFFFF, (thread >> 42) & 0x1FFFFF]
    ctaid = [block & 0x7FFFFFFF, (block >> 31) & 0xFFFF, (block >> 47) & 0xFFFF]
    where = (f"{lost}In function '{func}', file {file}, line {line}, "
             f"tid={tid} ctaid={ctaid}")
    try:
        if not values:
            return cls(where)
        if isinstance(values[0], str):  # the message, after where it was raised
            return cls(f"{where}: {values[0]}", *values[1:])
        exc = cls(*values)          # other arguments stay as they were: where is a note
        exc.add_note(where)
        return exc
    except Exception as e:  # noqa: BLE001  (the class cannot be built from these arguments)
        return RuntimeError(f"{where}: the kernel raised {key}{values!r}, which could not be "
                            f"built on the host: {type(e).__name__}: {e}")


def lookup(fn, dotted):
    """(True, value) of a dotted global name as seen by function fn, or (False, None)."""
    parts = dotted.split(".")
    head = parts[0]
    code = fn.__code__
    found = False
    value = None
    if code.co_freevars and fn.__closure__:
        try:
            i = code.co_freevars.index(head)
        except ValueError:
            i = -1
        if i >= 0:
            try:
                value = fn.__closure__[i].cell_contents
                found = True
            except ValueError:
                return False, None
    if not found:
        g = fn.__globals__
        if head in g:
            value = g[head]
            found = True
        else:
            b = g.get("__builtins__", builtins)
            bd = b if isinstance(b, dict) else vars(b)
            if head in bd:
                value = bd[head]
                found = True
    if not found:
        return False, None
    for p in parts[1:]:
        try:
            value = getattr(value, p)
        except AttributeError:
            return False, None
    return True, value


def resolve(fn, dotted):
    """The value of a dotted global name as seen by function fn, described."""
    found, value = lookup(fn, dotted)
    return describe(value) if found else ("missing",)


# ---- targets --------------------------------------------------------------------------

_OPTS_TARGET = {"cpu": 0, "cuda": 1}
_CHECK_ARCHS = (80, 90)


def cuda_available():
    return _kiln.cuda_available()[0]


def cuda_unavailable_reason():
    return _kiln.cuda_available()[1]


def _arch_of(device):
    return _kiln.cuda_info()["devices"][device][1]


# cuFuncSetAttribute's CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, for
# @jit(shared_memory_carveout=...)
_CARVEOUT_ATTR = 9

# ---- compilation ---------------------------------------------------------------------

def _translate(disp, argkey, target, arch=0, export=(), tier0=False):
    """The Program of a specialisation.  The options tuple is (target, fastmath, debug,
    lineinfo, max_registers, arch, 3 launch bounds, export, @jit(link=...)'s source texts,
    tier0) and export: (C symbol, return dtype + 1 or 0) to translate the function as an
    exported device function (kiln.compiler); tier0: the CPU program also gets tier 0's
    vector entry (Program.tier0_source), written only when tier 0 may run it."""
    text, filename, first = dispatcher_source(disp)
    o = disp.options
    opts = (target, o["fastmath"], o["debug"], o["lineinfo"], o["max_registers"], arch,
            *o["launch_bounds"], *(export or (None, 0)),
            link_texts(o.get("link", ())) if target == 1 else (), tier0)
    return _kiln.translate(text, filename, first, argkey, opts, resolve, disp.py_func)


def refuse_parameters(disp):
    """Raises the front end's CompileError for the parameters of a def line that kernels
    cannot have (*args, **kwargs, keyword-only): translating reaches the def line first."""
    text, filename, first = dispatcher_source(disp)
    _kiln.translate(text, filename, first, b"", (0, 0, 0, 0, 0, 0), resolve, disp.py_func)
    raise CompileError(f"{filename}:{first}: error: '{disp.__name__}' has *args, **kwargs or "
                       "keyword-only parameters, which kernels do not support")


def _nvrtc_options(disp):
    o = disp.options
    return (o["fastmath"], o["lineinfo"], o["max_registers"])


def _links(disp, source):
    """nvrtc_compile's links and lto for a translated GPU program's source: the compiled
    device code it names (_extern.py), with link-time optimisation unless lto=False
    (LTO-IR needs it)."""
    links = linked_inputs(source)
    lto = disp.options.get("lto", True) or any(k == 3 for k, _, _ in links)
    return links, lto


def _cache_name(disp, argkey):
    """What `kiln cache ls` shows for a specialisation."""
    return f"{disp.__module__}.{disp.__qualname__}({_kiln.argtype_str(argkey)})"


def check_cuda(disp, argkey, archs=_CHECK_ARCHS):
    """Translates for CUDA and compiles with NVRTC for each arch (no GPU needed);
    raises CompileError on any NVRTC error.  Returns [(arch, cache key, hit)]."""
    done = []
    for arch in archs:
        prog = _translate(disp, argkey, 1, arch)
        _, _, ckey, hit = _kiln.nvrtc_compile(prog.source, _nvrtc_options(disp), arch, False,
                                              _cache_name(disp, argkey), disp.options["cache"],
                                              0, *_links(disp, prog.source))
        done.append((arch, ckey, hit))
    return done


def build_cpu(disp, argkey, prog=None):
    """Translates for the CPU (unless prog is given) and builds (or finds in the cache) the
    optimised shared object; returns (program, blob, cache key, hit)."""
    if prog is None:
        prog = _translate(disp, argkey, 0)
    blob, ckey, hit = _kiln.cpu_build(prog.source, _cache_name(disp, argkey),
                                      disp.options["cache"])
    return prog, blob, ckey, hit


def tiers():
    """KILN_TIERS: 1 (the default) tiered CPU builds, 0 none (the optimising build on the
    first call), 2 for KILN_TIERS=tcc: tier 0 alone (tests: every kernel through libtcc)."""
    v = os.environ.get("KILN_TIERS", "1") or "1"
    if v not in ("0", "1", "tcc"):
        raise ValueError(f"KILN_TIERS must be 0, 1 or tcc, not {v!r}")
    return 2 if v == "tcc" else int(v)


_TIER0 = []


def _tier0_built():
    """Whether kiln was built with libtcc (tier 0 may run a kernel); asked once."""
    if not _TIER0:
        _TIER0.append(_kiln.tier_stats()["available"])
    return _TIER0[0]


def cpu_entry(disp, argkey, key, sig):
    """The Entry of a CPU specialisation: the optimised build when a cache tier has it,
    else tier 0's code with the optimising build on a worker thread (tier.c), else (tiers
    off, or tier 0 cannot build the kernel) the optimising build now."""
    mode = tiers()
    prog = _translate(disp, argkey, 0, tier0=bool(mode) and _tier0_built())
    if mode:
        entry = _kiln.cpu_tiered_entry(prog, key, sig, _cache_name(disp, argkey),
                                       disp.options["cache"], mode == 2)
        if entry is not None:
            return entry
    _, blob, _, _ = build_cpu(disp, argkey, prog)
    return _kiln.cpu_entry(prog, blob, key, sig)


def build(disp, key):
    """Translates, builds (or finds in the cache) and loads the kernel for a type key
    (argument types, then the target and the device); returns the Entry."""
    argkey, target, device = key[:-2], key[-2], key[-1]
    sig = "(" + _kiln.argtype_str(argkey) + ")"
    qualname = f"{disp.__module__}.{disp.__qualname__}"
    _, filename, first = dispatcher_source(disp)
    loc = f"{filename}:{first}"
    if _obs.log_enabled(_obs.LOG_RECOMPILE):
        why = _obs.recompile_reason(disp.py_func.__code__.co_varnames, key, [k for _, k in disp._compiled if k != key])
        if why:
            _kiln.obs_log(_obs.LOG_RECOMPILE,
                          f"kiln recompile: {qualname}{sig} ({loc}): {why}")
    # the compile's stages and cache look-ups are collected on this thread (obs.c)
    _kiln.obs_begin(qualname, sig, loc)
    image = None
    try:
        if target == 1:
            arch = _arch_of(device)
            prog = _translate(disp, argkey, 1, arch)
            image, _, _, _ = _kiln.nvrtc_compile(prog.source, _nvrtc_options(disp), arch, False,
                                                 _cache_name(disp, argkey), disp.options["cache"],
                                                 0, *_links(disp, prog.source), device)
            entry = _kiln.cuda_entry(prog, image, key, sig, device, disp.options["debug"])
            carveout = disp.options.get("shared_memory_carveout")
            if carveout is not None:
                _kiln.entry_set_attribute(entry, _CARVEOUT_ATTR, carveout)
        else:
            entry = cpu_entry(disp, argkey, key, sig)
    except _kiln.CompileError as e:
        _kiln.obs_end()
        before = [s for s, k in disp._compiled if k != key]
        if not before or not e.args or not isinstance(e.args[0], str):
            raise
        # a kernel that ran before and fails for new argument types: say which types
        more = f" and {len(before) - 3} more" if len(before) > 3 else ""
        err = _kiln.CompileError(f"{e.args[0]}\nnote: while compiling '{disp.__name__}' for "
                                 f"{sig}; it compiled before for {', '.join(before[:3])}{more}")
        if hasattr(e, "diagnostics"):
            err.diagnostics = e.diagnostics
        raise err.with_traceback(e.__traceback__) from None
    except BaseException:
        _kiln.obs_end()
        raise
    _kiln.obs_register(entry, qualname, sig, loc)
    if _obs._dump_dir is not None:
        _obs.dump(qualname, key, f"cuda-sm{_arch_of(device)}" if target == 1 else "cpu",
                  entry.program.source, image,
                  entry.program.tier0_source if target != 1 else None)
    if (target != 1 and os.environ.get("KILN_CHECK_CUDA") == "1"
            and not getattr(disp, "_cpu_only", False)):
        check_cuda(disp, argkey)
    if (sig, key) not in disp._compiled:  # threads racing on a first call build it each
        disp._compiled.append((sig, key))
    return entry


# The arch whose PTX inspect_asm shows for a CPU specialisation when no GPU can be used: the
# newest of the archs CI compiles every kernel for (_CHECK_ARCHS).
_PTX_ARCH_WITHOUT_GPU = max(_CHECK_ARCHS)


def cuda_source_of(disp, entry):
    """(CUDA C source, arch, cache name) of a specialisation.  A CUDA one's own source; a CPU
    one (same argument types) is translated for CUDA first, for the current GPU's arch, or
    sm_90 without a GPU, so a kernel's code can be read on a machine that runs it on the CPU."""
    key = next((k for _, k in disp._compiled if disp._lookup(k) is entry), None)
    if key is None:  # a launch with tuple arguments: its kernel of the leaves has it
        for flat in getattr(disp, "_tuple_kernels", {}).values():
            if any(flat._lookup(k) is entry for _, k in flat._compiled):
                return cuda_source_of(flat, entry)
        raise ValueError(f"'{disp.__name__}' has no such specialisation")
    if key[-2] == 1:
        source, arch = entry.program.source, _arch_of(key[-1])
    else:
        arch = (_arch_of(_kiln.current_device()) if cuda_available()
                else _PTX_ARCH_WITHOUT_GPU)
        source = _translate(disp, key[:-2], 1, arch).source
    return source, arch, _cache_name(disp, key[:-2])


def ptx_of(disp, entry):
    """The PTX of a specialisation (its CUDA C compiled again, to PTX: cuda_source_of)."""
    source, arch, name = cuda_source_of(disp, entry)
    ptx, _, _, _ = _kiln.nvrtc_compile(source, _nvrtc_options(disp), arch, True, name,
                                       disp.options["cache"])
    return ptx.rstrip(b"\0").decode()


# kiln_nvrtc_output (kiln.h): a whole program, relocatable PTX, LTO-IR
_NVRTC_RELOCATABLE, _NVRTC_LTOIR = 1, 2


def build_exported(disp, sig, name, arch, output="ptx"):
    """A Dispatcher's function compiled alone for the CUDA target (its options), a device
    function exported as the C symbol ``name``: (the generated CUDA C, NVRTC's output
    bytes, the return type).  kiln.compiler.compile's work, and
    Dispatcher.compile_device's (_inspect.py)."""
    from ._types import signature_text, void

    def _return_type(code):
        return _numba_type(code) if code else None

    pyfunc, device = disp.py_func, bool(disp._is_device)
    text = signature_text(sig)
    ret, argkey = _kiln.parse_signature(text)
    if len(argkey) // 4 != disp._nparams:
        raise TypeError(f"signature '{text}' has {len(argkey) // 4} arguments but "
                        f"'{pyfunc.__name__}' takes {disp._nparams}")
    if ret and (len(ret) != 4 or ret[:1] == b"\x01"):
        raise TypeError(f"signature '{text}': a compiled function returns a scalar or nothing")
    if not device and ret:
        raise TypeError(f"kernel '{pyfunc.__name__}' must have void return type but got "
                        f"{_return_type(ret)!r} (signature '{text}')")
    source, filename, first = dispatcher_source(disp)
    export = (name, ret[1] + 1 if ret else 0) if device else ()
    prog = _translate(disp, argkey, 1, arch, export)
    # a device function no kernel calls survives only in relocatable code
    kind = _NVRTC_LTOIR if output == "ltoir" else _NVRTC_RELOCATABLE if device else 0
    code, _, _, _ = _kiln.nvrtc_compile(prog.source, _nvrtc_options(disp), arch, True,
                                        _cache_name(disp, argkey), True, kind)
    if not device:
        resty = None
    elif ret:
        resty = _return_type(ret)
    else:
        resty = _return_type(_kiln.infer_return(source, filename, first, argkey, resolve,
                                                pyfunc))
        if resty is not None and text.lstrip().startswith(("void", "none")):
            raise TypeError(f"'{pyfunc.__name__}' returns {resty}, but signature '{text}' "
                            f"declares that it returns nothing (Numba: No conversion from "
                            f"{resty} to none)")
    return prog.source, code, resty if resty is not None else void


def _conversion(call, sig):
    """What a call's argument of type `call` costs to pass to a signature's `sig` (both
    4-byte argtypes): 0 exact, 1 a promotion (a wider int of the same signedness, float32
    to float64, an array to one of any layout), 2 safe (no value lost: an int to a wider
    int of the other signedness or to a float, bool to a number), 3 unsafe (a float to an
    int, a narrower type); None when it cannot be passed (Numba's ranking of conversions)."""
    c_arr, c_dt, c_nd, c_lay = call
    s_arr, s_dt, s_nd, s_lay = sig
    if c_arr != s_arr:
        return None
    if s_lay == _PTR or c_lay == _PTR:  # a pointer takes an integer address (ext_pack checks it)
        return 0 if not c_arr and c_lay == 0 and _kind_bits(c_dt)[0] in (1, 2) else None
    if c_arr:
        if c_nd != s_nd or (s_lay != ord("A") and s_lay != c_lay):
            return None
        if c_dt != s_dt:
            # an int array where the signature has the other signedness of one width: its
            # elements read as that type's bit patterns, as explicit int scalars are and as
            # Numba-CUDA launches it (unsafe: ranked last); any other dtype cannot pass
            ck, cbits = _kind_bits(c_dt)
            sk, sbits = _kind_bits(s_dt)
            return 3 if {ck, sk} == {1, 2} and cbits == sbits else None
        return 0 if s_lay == c_lay else 1
    if c_dt == s_dt:
        return 0
    ck, cbits = _kind_bits(c_dt)
    sk, sbits = _kind_bits(s_dt)
    if ck == 0:
        return 2 if sk else 0
    if sk == 0:
        return 3
    if ck == sk:
        return 1 if sbits > cbits else 3
    if sk >= 3 and ck < sk:  # an int to a float, a float to a complex: safe, as Numba ranks it
        return 2
    if ck >= 3:
        return 3
    return 2 if (ck == 2 and sk == 1 and sbits > cbits) else 3


_PTR = ord("P")  # a pointer's layout byte (KILN_LAYOUT_PTR)
_KINDS = (("bool", 0), ("int", 1), ("uint", 2), ("float", 3), ("complex", 4))


def _kind_bits(code):
    """(kind, bits) of a dtype code: kind 0 bool, 1 int, 2 uint, 3 float, 4 complex."""
    name = DTYPE_NAMES.get(code, "")
    kind = max((k for prefix, k in _KINDS if name.startswith(prefix)), default=0)
    digits = name.lstrip("abcdefghijklmnopqrstuvwxyz_")
    return kind, int(digits) if digits.isdigit() else 8


def _numba_type(argtype):
    """The kiln type object of a 4-byte argtype (its repr is Numba's spelling)."""
    from ._types import Array, CPointer, Record, _BY_CODE

    is_arr, dt, nd, lay = argtype
    if lay == _PTR:
        return CPointer(_BY_CODE[dt])
    if dt >= 32:  # a record (ndim 0) or an array of them
        rec = Record(_kiln.record_dtype(dt - 32))
        return Array(rec, nd, chr(lay)) if nd else rec
    return Array(_BY_CODE[dt], nd, chr(lay)) if is_arr else _BY_CODE[dt]


def _types_repr(argkey):
    return ", ".join(repr(_numba_type(argkey[i:i + 4])) for i in range(0, len(argkey), 4))


def _best_signature(disp, argkey):
    """The explicit signature a call takes: the one whose conversions rank best (fewest
    unsafe, then safe, then promotions), as Numba chooses; a TypeError naming the
    signatures when two rank the same or none fits."""
    n = len(argkey) // 4
    ranked = []
    for text, skey in disp._sigs:
        if len(skey) != len(argkey):
            continue
        costs = [_conversion(argkey[4 * i:4 * i + 4], skey[4 * i:4 * i + 4]) for i in range(n)]
        if None in costs:
            continue
        ranked.append(((costs.count(3), costs.count(2), costs.count(1)), text, skey))
    if not ranked:
        listed = "\n  ".join(t for t, _ in disp._sigs)
        raise TypeError(f"No matching definition for argument type(s) {_types_repr(argkey)}: "
                        f"kernel '{disp.__name__}' was compiled for\n  {listed}\n"
                        f"and cannot take ({_kiln.argtype_str(argkey)})")
    best = min(r[0] for r in ranked)
    tied = [r for r in ranked if r[0] == best]
    if len(tied) > 1:
        lines = "\n".join(f"({_types_repr(k)}) -> none" for _, _, k in tied)
        raise TypeError(
            f"Ambiguous overloading for {disp.py_func!r} ({_types_repr(argkey)}):\n{lines}\n"
            f"kiln: these signatures of '{disp.__name__}' fit the arguments equally well; pass "
            "arguments of one signature's exact types (np.float32(x)...)")
    return tied[0][2]


def entry_for_key(disp, key):
    """The Entry a call with this type key runs (C calls this on a miss)."""
    if disp._sigs:
        argkey, tail = key[:-2], key[-2:]
        full = _best_signature(disp, argkey) + tail
        entry = disp._lookup(full)
        if entry is None:  # another thread may insert first: keep the table's
            entry = disp._insert(full, build(disp, full))
        return entry
    return build(disp, key)


def compile_signature(disp, text):
    ret, argkey = _kiln.parse_signature(text)
    if len(argkey) // 4 != disp._nparams:
        raise TypeError(f"signature '{text}' has {len(argkey) // 4} arguments but "
                        f"'{disp.__name__}' takes {disp._nparams}")
    if ret and not disp._is_device:
        raise TypeError(f"kernel '{disp.__name__}' returns nothing, but signature '{text}' "
                        "has a return type; write void(...)")
    target = disp._resolve_target()
    key = argkey + bytes([target, _kiln.current_device() if target else 0])
    entry = disp._lookup(key)
    if entry is None:  # another thread may insert first: keep the table's
        entry = disp._insert(key, build(disp, key))
    if all(k != argkey for _, k in disp._sigs):
        disp._sigs.append((text, argkey))
    return entry


def _untagged(argkey):
    """argkey without enum classes: an integer scalar's ndim byte is its IntEnum class's tag
    (args.c), which a signature's text does not spell."""
    b = bytearray(argkey)
    for i in range(0, len(b) - 3, 4):
        if b[i] == 0 and b[i + 3] == 0:
            b[i + 2] = 0
    return bytes(b)


def entry_for_signature(disp, text):
    _, argkey = _kiln.parse_signature(text)
    for _, key in reversed(disp._compiled):
        if key[:-2] == argkey or _untagged(key[:-2]) == argkey:
            return disp._lookup(key)
    raise ValueError(f"'{disp.__name__}' has no specialisation for {text}; "
                     f"compiled: {', '.join(disp.signatures) or 'none'}")


def dtype_name(code):
    return DTYPE_NAMES[code]


__all__ = ["source_of", "resolve", "describe", "build", "Scalar"]
