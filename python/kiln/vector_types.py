"""CUDA's vector types in kernels: ``kiln.float32x4``, ``kiln.int2``, ... (Numba's
``cuda.float32x4`` and ``numba.cuda.vector_types``).

A vector type is 1 to 4 lanes of one integer or float type, made in a kernel from
scalars and smaller vectors of the same lane type (``kiln.float32x4(v2, 1.0, 2.0)``) and
read as ``v.x``, ``v.y``, ``v.z``, ``v.w``.  Its name is ``<type>x<n>`` for int8 ...
uint64, float32 and float64; CUDA's names (``char``, ``short``, ``int``, ``long``,
``longlong``, their ``u`` forms, ``float``, ``double``, with the count: ``float4``,
``uchar2``) are aliases of the same objects.  On the host each is a marker the compiler
recognises by its ``_kiln_name`` (src/sema/vector.c has the same names).

``vector_types`` maps each name (``"float32x4"``) to its description, as Numba's module
of the same name does: ``name``, ``base_type`` (the lane type, ``kiln.float32``),
``attr_names``, ``num_elements`` and ``user_facing_object`` (``kiln.float32x4``).
"""

from . import _types
from ._intrinsics import _Intrinsic

__all__ = ["vector_types", "VectorType"]

_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64")
# CUDA's names of the lane types, as NumPy's C types are on Linux (long is 64 bits)
_ALIASES = {"char": "int8", "short": "int16", "int": "int32", "long": "int64",
            "longlong": "int64", "uchar": "uint8", "ushort": "uint16", "uint": "uint32",
            "ulong": "uint64", "ulonglong": "uint64", "float": "float32", "double": "float64"}
_LANES = ("x", "y", "z", "w")


class VectorConstructor(_Intrinsic):
    """``kiln.float32x4`` and the rest: called in a kernel, it makes a vector; ``aliases``
    lists CUDA's names of the same type (``["float4"]``)."""

    __slots__ = ("aliases", "name")

    def __init__(self, name):
        super().__init__("kiln." + name)
        self.name = name
        self.aliases = []

    def __repr__(self):
        return f"<kiln vector type {self.name}>"


class VectorType:
    """One vector type: its name, lane type and lanes, and the object kernels call."""

    __slots__ = ("name", "base_type", "attr_names", "user_facing_object")

    def __init__(self, name, base_type, attr_names, user_facing_object):
        self.name = name
        self.base_type = base_type
        self.attr_names = attr_names
        self.user_facing_object = user_facing_object

    @property
    def num_elements(self):
        return len(self.attr_names)

    def __repr__(self):
        return self.name


vector_types = {}
_exports = {}  # kiln's attributes: every name and alias (kiln/__init__.py)
for _base in _BASES:
    for _n in range(1, 5):
        _name = f"{_base}x{_n}"
        _ctor = VectorConstructor(_name)
        vector_types[_name] = VectorType(_name, getattr(_types, _base), _LANES[:_n], _ctor)
        _exports[_name] = _ctor
for _alias, _base in _ALIASES.items():
    for _n in range(1, 5):
        _ctor = vector_types[f"{_base}x{_n}"].user_facing_object
        _ctor.aliases.append(f"{_alias}{_n}")
        _exports[f"{_alias}{_n}"] = _ctor
del _base, _n, _name, _ctor, _alias
