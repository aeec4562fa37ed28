"""kiln.libdevice's functions as data (Numba's ``numba.cuda.libdevicefuncs``):
``functions`` maps each ``__nv_NAME`` to ``(return type, [arg(name, ty, is_ptr)...])``, where
a pointer parameter's ``ty`` is the type it points to (the function stores a result there),
and ``create_signature(retty, args)`` gives the signature kernels see: the non-pointer
arguments in, the result and each pointer's value out (a tuple when more than one)."""
from collections import namedtuple

from . import _types
from ._libdevice_table import TABLE

arg = namedtuple("arg", ("name", "ty", "is_ptr"))

_TYPES = {"v": _types.void, "i": _types.int32, "u": _types.uint32, "l": _types.int64,
          "m": _types.uint64, "f": _types.float32, "d": _types.float64}


def _entry(ret, params, outs):
    args = [arg(f"a{k}", _TYPES[c], bool(outs >> k & 1)) for k, c in enumerate(params)]
    return _TYPES[ret], args


functions = {f"__nv_{name}": _entry(r, p, o) for name, r, p, o in TABLE}


def create_signature(retty, args):
    """The signature of a libdevice function as kernels call it: its pointer parameters'
    values join the result (a ``Tuple``, or a ``UniTuple`` when of one type)."""
    outs = [a.ty for a in args if a.is_ptr]
    if retty != _types.void:
        outs.insert(0, retty)
    if not outs:
        ret = _types.void
    elif len(outs) == 1:
        ret = outs[0]
    else:
        ret = _types.Tuple(outs)
    return _types.Signature(ret, [a.ty for a in args if not a.is_ptr])
