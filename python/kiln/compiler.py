"""Numba's compiler entry points: a Python function and a signature to PTX or LTO-IR text,
without launching anything (``numba.cuda.compiler`` as kiln spells it).

``compile_ptx`` and ``compile`` translate the function for the CUDA target as a kernel
launch does, then have NVRTC compile the generated CUDA C to PTX (or, for ``compile`` with
``output='ltoir'``, to LTO-IR with ``-dlto``).  A kernel becomes the same ``kiln_entry``
entry point a launch loads.  A device function (``device=True``) becomes a C symbol,
``extern "C" __device__`` and named after the Python function (or ``abi_info['abi_name']``),
which code in another module calls as an ordinary C function: kiln has one calling
convention, so Numba's ``abi='numba'`` and ``abi='c'`` give the same symbol.  Neither needs a
GPU: without one, the arch is the current GPU's only when there is one, else
DEFAULT_CC.  The work is _compile's; this file checks the options and names the results.
"""

from . import _kiln
from ._dispatch import Dispatcher
from ._extern import _C_NAME

# The compute capability compile_ptx targets without cc= when no GPU can be used: the
# newest of the archs CI compiles every kernel for, as inspect_ptx uses.
DEFAULT_CC = (9, 0)

_ABIS = ("numba", "c")
_OUTPUTS = ("ptx", "ltoir")


def _arch(cc):
    """cc (a (major, minor) tuple, or None for the current GPU's or DEFAULT_CC) as
    major * 10 + minor."""
    if cc is None:
        from . import _compile

        if _compile.cuda_available():
            return _compile._arch_of(_kiln.current_device())
        cc = DEFAULT_CC
    if (not isinstance(cc, tuple) or len(cc) not in (2, 3)
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in cc[:2])):
        raise ValueError(f"cc is a compute capability (major, minor), such as (9, 0), not {cc!r}")
    if len(cc) == 3:
        raise NotImplementedError(
            f"cc={cc!r}: kiln compiles for sm_{cc[0]}{cc[1]}, not for arch-specific targets "
            f"(sm_{cc[0]}{cc[1]}{cc[2]}); pass cc=({cc[0]}, {cc[1]})")
    return cc[0] * 10 + cc[1]


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi="c", abi_info=None, output="ptx", forceinline=False,
            launch_bounds=None):
    """Compiles ``pyfunc`` for ``sig`` (signature text, a Signature, or a tuple of argument
    types) and returns ``(code, return_type)``: PTX text for ``output='ptx'``, LTO-IR bytes
    for ``output='ltoir'``.  ``device=True`` (the default here) makes a device function
    exported as the C symbol ``abi_info['abi_name']`` or the function's ``__name__``;
    ``device=False`` a kernel (``kiln_entry``), whose return type is ``void``.  ``cc`` is
    the compute capability; without it, the current GPU's or DEFAULT_CC.  ``debug``,
    ``lineinfo``, ``fastmath`` and ``launch_bounds`` are ``kiln.jit``'s; ``opt`` and
    ``forceinline`` are accepted and ignored (NVRTC always optimises; device functions are
    inlined into their callers in the same module)."""
    if output not in _OUTPUTS:
        raise NotImplementedError(f"Unsupported output type: {output}; kiln writes "
                                  f"{' or '.join(map(repr, _OUTPUTS))}")
    if abi not in _ABIS:
        raise NotImplementedError(f"Unsupported ABI: {abi}; kiln takes 'numba' or 'c'")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels: pass device=True "
                                  "or abi='numba'")
    # a kiln.jit function: its Python function, and its own link= sources (@jit(link=...))
    link = pyfunc.options.get("link") if isinstance(pyfunc, Dispatcher) else None
    if isinstance(pyfunc, Dispatcher):  # its own debug= and fastmath=, unless given here
        debug = pyfunc.options.get("debug") if debug is None else debug
        fastmath = fastmath or bool(pyfunc.options.get("fastmath"))
    pyfunc = getattr(pyfunc, "py_func", pyfunc)
    if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
        raise TypeError(f"compile needs a Python function, not {type(pyfunc).__name__}")
    if abi_info is not None and not isinstance(abi_info, dict):
        raise TypeError(f"abi_info is a dict such as {{'abi_name': 'f'}}, not {abi_info!r}")
    name = (abi_info or {}).get("abi_name") or pyfunc.__name__
    if not isinstance(name, str):
        raise TypeError(f"abi_info['abi_name'] is the symbol's name, a str, not {name!r}")
    if device and not _C_NAME.match(name):
        raise ValueError(f"the device function's symbol {name!r} is not a C identifier; pass "
                         "abi_info={'abi_name': NAME}")
    arch = _arch(cc)
    from . import _compile

    disp = Dispatcher(pyfunc, device=device, fastmath=fastmath, debug=bool(debug),
                      lineinfo=lineinfo, target="cuda", launch_bounds=launch_bounds, link=link)
    _, code, resty = _compile.build_exported(disp, sig, name, arch, output)
    if output == "ptx":
        return code.rstrip(b"\0").decode(), resty
    return bytes(code), resty


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False, cc=None,
                opt=None, abi="numba", abi_info=None, forceinline=False, launch_bounds=None):
    """Numba's ``compile_ptx``: ``(ptx, return_type)`` of ``pyfunc`` for ``sig``, a kernel
    unless ``device=True``.  The options are ``compile``'s."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info, output="ptx",
                   forceinline=forceinline, launch_bounds=launch_bounds)


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None, output="ptx",
                               forceinline=False, launch_bounds=None):
    """``compile`` for the current GPU's compute capability (DEFAULT_CC without a GPU)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=None, opt=opt, abi=abi, abi_info=abi_info,
                   output=output, forceinline=forceinline, launch_bounds=launch_bounds)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None):
    """``compile_ptx`` for the current GPU's compute capability (DEFAULT_CC without a
    GPU)."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=None, opt=opt, abi=abi, abi_info=abi_info,
                       forceinline=forceinline, launch_bounds=launch_bounds)


__all__ = ["compile", "compile_ptx", "compile_for_current_device",
           "compile_ptx_for_current_device", "DEFAULT_CC"]
