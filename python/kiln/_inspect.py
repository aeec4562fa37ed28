"""Inspection of code kiln does not keep: a device function compiled on its own
(``Dispatcher.compile_device``, ``inspect_asm`` / ``inspect_llvm`` of a device function) and
a kernel's SASS (``inspect_sass``).

A kernel inlines the device functions it calls into its own program, so a device function
has no code of its own until it is compiled alone.  ``compile_device(args)`` does that as
``kiln.compiler.compile(..., device=True)`` does: the generated CUDA C exports the function
as an ``extern "C" __device__`` symbol and NVRTC compiles it to relocatable PTX.  The symbol
is the function's name and its argument types (``foo__int32__int32``), so each signature has
its own; Numba calls it ``cres.fndesc.mangled_name``.  kiln has no LLVM IR:
``inspect_llvm`` gives the generated CUDA C, where the symbol is defined.  The arch is the
current GPU's, else sm_90 (as inspect_ptx's).

``inspect_sass`` compiles the specialisation's CUDA C to a cubin for the arch inspect_ptx
uses and disassembles it with the CUDA toolkit's ``nvdisasm`` (found on PATH or under
CUDA_HOME / CUDA_PATH / /usr/local/cuda); without it, a RuntimeError says so, as Numba's.
"""

import os
import re
import shutil
import subprocess
import tempfile

from . import _kiln

_NOT_C = re.compile(r"[^A-Za-z0-9_]+")


class FunctionDescriptor:
    """Numba's ``cres.fndesc``, as much of it as names the compiled function."""

    def __init__(self, qualname, mangled_name, args):
        self.qualname = qualname
        self.mangled_name = mangled_name
        self.llvm_func_name = mangled_name
        self.argtypes = args

    def __repr__(self):
        return f"<function descriptor {self.mangled_name!r}>"


class DeviceCompileResult:
    """What ``compile_device`` returns (Numba's compile result): ``signature`` (the return
    type called with the argument types), ``fndesc``, ``return_type``, and kiln's
    ``source`` (CUDA C) and ``ptx`` of the function compiled alone."""

    def __init__(self, disp, args, source, ptx, resty, symbol):
        self.signature = resty(*args)
        self.return_type = resty
        self.argtypes = args
        self.fndesc = FunctionDescriptor(disp.__qualname__, symbol, args)
        self.source = source
        self.ptx = ptx

    def __repr__(self):
        return f"<compiled device function {self.fndesc.mangled_name}{self.argtypes!r}>"


def _symbol(disp, argkey):
    """The C symbol of the function compiled for these argument types."""
    types = _kiln.argtype_str(argkey)
    parts = [_NOT_C.sub("_", t.strip()).strip("_") for t in types.split(",") if t.strip()]
    return "__".join([disp.__name__] + parts)


def compile_device(disp, text, args):
    """``Dispatcher.compile_device``: the compile result of device function ``disp`` for
    signature ``text`` (argument types, maybe a return type), whose argument types are the
    tuple ``args``; compiled once per signature."""
    from . import _compile

    if not disp._is_device:
        raise RuntimeError(f"'{disp.__name__}' is a kernel; compile_device compiles device "
                           "functions (kiln.jit(device=True)); use compile(signature)")
    _, argkey = _kiln.parse_signature(text)
    store = getattr(disp, "_device_results", None)
    if store is None:
        store = disp._device_results = {}
    if argkey in store:
        return store[argkey]
    symbol = _symbol(disp, argkey)
    arch = (_compile._arch_of(_kiln.current_device()) if _compile.cuda_available()
            else _compile._PTX_ARCH_WITHOUT_GPU)
    source, code, resty = _compile.build_exported(disp, text, symbol, arch)
    cres = DeviceCompileResult(disp, args, source, code.rstrip(b"\0").decode(), resty, symbol)
    store[argkey] = cres
    return cres


def refuse_sass(disp):
    """Numba's error for inspect_sass of a device function, with kiln's reason."""
    raise RuntimeError("Cannot inspect SASS of a device function: it has no machine code of "
                       f"its own ('{disp.__name__}' is inlined into the kernels that call it); "
                       "inspect_asm(signature) gives its PTX")


def _nvdisasm():
    found = shutil.which("nvdisasm")
    if found:
        return found
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and os.access(os.path.join(root, "bin", "nvdisasm"), os.X_OK):
            return os.path.join(root, "bin", "nvdisasm")
    if os.access("/usr/local/cuda/bin/nvdisasm", os.X_OK):
        return "/usr/local/cuda/bin/nvdisasm"
    return None


def sass_of(disp, entry):
    """The SASS of a kernel's specialisation, as ``nvdisasm -gi -c`` prints it."""
    from . import _compile

    tool = _nvdisasm()
    if tool is None:
        raise RuntimeError("nvdisasm was not found: inspect_sass needs the CUDA toolkit's "
                           "nvdisasm on PATH (or under CUDA_HOME); inspect_asm() gives the PTX")
    source, arch, name = _compile.cuda_source_of(disp, entry)
    image, is_ptx, _, _ = _kiln.nvrtc_compile(source, _compile._nvrtc_options(disp), arch,
                                              False, name, disp.options["cache"], 0,
                                              *_compile._links(disp, source))
    if is_ptx:
        raise RuntimeError(f"NVRTC gave PTX rather than a cubin for sm_{arch}, so there is no "
                           "SASS to disassemble; inspect_asm() gives the PTX")
    with tempfile.TemporaryDirectory(prefix="kiln-sass-") as d:
        path = os.path.join(d, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(bytes(image))
        done = subprocess.run([tool, "-gi", "-c", path], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nvdisasm failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout
