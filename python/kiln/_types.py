"""Scalar types, array types and signatures, spelled as in Numba.

``kiln.float32`` is a scalar type; ``kiln.float32[::1]`` a C-contiguous 1-d
array type; ``kiln.void(kiln.float32[::1], kiln.int64)`` a signature.  Each
turns into the signature text the C core parses (``str(sig)``), so string
and object signatures are the same thing.  Inside kernels the same objects
are dtype constructors and the dtype argument of ``local.array``.
"""

_CODES = {
    "bool": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
    "uint32": 7, "uint64": 8, "float16": 9, "float32": 10, "float64": 11, "complex64": 12,
    "complex128": 13,
}
DTYPE_NAMES = {v: k for k, v in _CODES.items()}


def dtype_code(name):
    """The core's dtype code for a dtype name, or None."""
    return _CODES.get(name)


class Type:
    """Base of kiln's type objects."""

    __slots__ = ()

    def __call__(self, *args):
        if args and all(isinstance(a, Type) for a in args) or not args and isinstance(self, Void):
            return Signature(self, args)
        if len(args) == 1 and isinstance(args[0], (tuple, list)) and all(isinstance(a, Type) for a in args[0]):
            return Signature(self, tuple(args[0]))
        return self._convert(*args)

    def _convert(self, *args):
        raise TypeError(f"{self} cannot convert values")

    def __eq__(self, other):
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return str(self)


class Void(Type):
    __slots__ = ()

    def __str__(self):
        return "void"


class Scalar(Type):
    """A scalar type such as kiln.float32."""

    __slots__ = ("name", "code", "_kiln_name")

    def __init__(self, name):
        self.name = name
        self.code = _CODES[name]
        self._kiln_name = "kiln." + ("bool_" if name == "bool" else name)

    def __str__(self):
        return self.name

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if not idx or len(idx) > 8 or not all(isinstance(s, slice) for s in idx):
            raise TypeError(f"array types are written {self}[:] or {self}[:, ::1], up to 8 dimensions")
        contig = [i for i, s in enumerate(idx) if s.step == 1]
        for s in idx:
            if s.start is not None or s.stop is not None or s.step not in (None, 1):
                raise TypeError(f"array types use ':' and '::1' only, as in {self}[:, ::1]")
        if len(contig) > 1:
            raise TypeError("only one dimension can be marked contiguous (::1)")
        if not contig:
            layout = "A"
        elif contig[0] == len(idx) - 1:
            layout = "C"
        elif contig[0] == 0:
            layout = "F"
        else:
            raise TypeError("::1 must be on the first (F) or the last (C) dimension")
        return Array(self, len(idx), layout)

    def _convert(self, value=0):
        import numpy as np

        return np.dtype(self.name).type(value)

    @property
    def dtype(self):
        import numpy as np

        return np.dtype(self.name)

    @property
    def underlying_float(self):
        """A complex type's parts' type (Numba's name): complex64 -> float32."""
        if not self.name.startswith("complex"):
            raise AttributeError(f"{self} is not a complex type")
        return float32 if self.name == "complex64" else float64


class Array(Type):
    """An array type: dtype, number of dimensions, layout ('C', 'F' or 'A')."""

    __slots__ = ("dtype", "ndim", "layout")

    def __init__(self, dtype, ndim, layout="A"):
        self.dtype = dtype
        self.ndim = ndim
        self.layout = "C" if (ndim == 1 and layout == "F") else layout

    def __str__(self):
        dims = []
        for i in range(self.ndim):
            c = (self.layout == "C" and i == self.ndim - 1) or (self.layout == "F" and i == 0)
            dims.append("::1" if c else ":")
        return f"{self.dtype}[{', '.join(dims)}]"


class Signature:
    """A function signature: ``ret`` (the return type) and ``args`` (the argument types).

    Calling a type makes one, as in Numba: ``kiln.void(kiln.float32[::1], kiln.int64)``;
    ``kiln.jit`` and ``kiln.vectorize`` take it wherever they take signature text."""

    __slots__ = ("ret", "args")

    def __init__(self, ret, args):
        self.ret = ret
        self.args = tuple(args)

    def __str__(self):
        return f"{self.ret}({', '.join(str(a) for a in self.args)})"

    def __repr__(self):
        return f"<kiln signature {self}>"

    def __eq__(self, other):
        return isinstance(other, Signature) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def signature_text(sig):
    """Signature text from a string, a Signature, or a tuple of argument types."""
    if isinstance(sig, str):
        return sig
    if isinstance(sig, Signature):
        return str(sig)
    if isinstance(sig, (tuple, list)) and all(isinstance(a, Type) for a in sig):
        return "(" + ", ".join(str(a) for a in sig) + ")"
    text = str(sig)
    if "(" in text:  # a Numba signature object prints as "void(float32[::1])"
        return text
    raise TypeError(f"a signature is a string like 'void(float32[::1])', not {type(sig).__name__}")


void = none = Void()
bool_ = boolean = b1 = Scalar("bool")
int8 = i1 = byte = Scalar("int8")
int16 = i2 = Scalar("int16")
int32 = i4 = intc = Scalar("int32")
int64 = i8 = intp = int_ = Scalar("int64")
uint8 = u1 = Scalar("uint8")
uint16 = u2 = Scalar("uint16")
uint32 = u4 = uintc = Scalar("uint32")
uint64 = u8 = uintp = Scalar("uint64")
float16 = f2 = half = Scalar("float16")
float32 = f4 = single = Scalar("float32")
float64 = f8 = double = float_ = Scalar("float64")
complex64 = c8 = csingle = Scalar("complex64")
complex128 = c16 = cdouble = complex_ = Scalar("complex128")
