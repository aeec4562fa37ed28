"""Scalar types, array types and signatures, spelled as in Numba.

``kiln.float32`` is a scalar type; ``kiln.float32[::1]`` a C-contiguous 1-d
array type; ``kiln.void(kiln.float32[::1], kiln.int64)`` a signature.  Each
turns into the signature text the C core parses (``str(sig)``), so string
and object signatures are the same thing.  Inside kernels the same objects
are dtype constructors and the dtype argument of ``local.array``.

Numba's type classes are here too, under its names (public as ``kiln.types``,
which is what ``numba.cuda.types`` becomes after ``import kiln as cuda``):
``Type`` (the base), ``Boolean``, ``Number``, ``Integer``, ``Float``,
``Array(dtype, ndim, layout)``, ``UniTuple(dtype, count)``, ``Tuple(types)``,
``NamedTuple``/``NamedUniTuple``, ``CPointer(dtype)``, the domains
(``signed_domain``...), ``from_dtype`` and ``typeof``.  A type's ``str`` is
kiln's signature text; its ``repr`` is Numba's (``Array(float64, 1, 'C', False,
aligned=True)``), which is what Numba's messages print.  Tuple types and
CPointer(dtype) is ``dtype*`` in signature text: a kernel argument passed as an
integer address.  Tuple types describe values on the host (``typeof``); the C
core's signature text has no tuples, so a signature that holds one is refused
when a kernel is compiled for it (_dispatch.py says how tuple arguments are passed).
"""

_CODES = {
    "bool": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
    "uint32": 7, "uint64": 8, "float16": 9, "float32": 10, "float64": 11, "complex64": 12,
    "complex128": 13, "bfloat16": 14,
}
DTYPE_NAMES = {v: k for k, v in _CODES.items()}


def dtype_code(name):
    """The core's dtype code for a dtype name, or None."""
    return _CODES.get(name)


class Type:
    """Base of kiln's type objects (Numba's ``types.Type``): ``Type(name)``; calling a
    type with argument types makes a signature with it as the return type."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __call__(self, *args):
        if all(isinstance(a, Type) for a in args):  # no arguments too, as Numba's
            return Signature(self, args)
        if len(args) == 1 and isinstance(args[0], (tuple, list)) and all(isinstance(a, Type) for a in args[0]):
            return Signature(self, tuple(args[0]))
        return self._convert(*args)

    def _convert(self, *args):
        raise TypeError(f"{self} cannot convert values")

    @property
    def key(self):
        """The type itself (Numba's key of a type)."""
        return self

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return str(self)


class Void(Type):
    __slots__ = ()

    def __init__(self):
        super().__init__("void")

    def __repr__(self):
        return "none"


class Scalar(Type):
    """A scalar type such as kiln.float32 (Boolean, Integer or Float below)."""

    __slots__ = ("code", "_kiln_name")

    def __new__(cls, name=None):
        if cls is Scalar:  # Scalar("int32") makes the class Numba gives that dtype
            cls = (Boolean if name == "bool" else Float if "float" in name else
                   Complex if name.startswith("complex") else Integer)
        return object.__new__(cls)

    def __init__(self, name):
        super().__init__(name)
        self.code = _CODES[name]
        self._kiln_name = "kiln." + ("bool_" if name == "bool" else name)

    def __getitem__(self, idx):
        if idx == ():  # float64[()]: a 0-d array (Numba prints it array(float64, 0d, C))
            return Array(self, 0, "C")
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

    def _convert(self, value):
        return self.dtype.type(value)

    @property
    def dtype(self):
        import numpy as np

        if self.name == "bfloat16":  # NumPy has none: ml_dtypes' (what JAX and others use)
            try:
                import ml_dtypes
            except ImportError:
                raise TypeError("bfloat16 has no NumPy dtype; on the host it is ml_dtypes."
                                "bfloat16 (pip install ml_dtypes). In kernels it needs nothing."
                                ) from None
            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.name)

    @property
    def underlying_float(self):
        """A complex type's parts' type (Numba's name): complex64 -> float32."""
        if not self.name.startswith("complex"):
            raise AttributeError(f"{self} is not a complex type")
        return float32 if self.name == "complex64" else float64

    @property
    def bitwidth(self):
        return 8 if self.code == 0 else 8 * self.dtype.itemsize

    def __repr__(self):
        return "bool" if self.name == "bool" else self.name


class Boolean(Scalar):
    __slots__ = ()


class Number(Scalar):
    __slots__ = ()


class Integer(Number):
    __slots__ = ()

    @property
    def signed(self):
        return self.name.startswith("int")


class Float(Number):
    __slots__ = ()


class Complex(Number):
    __slots__ = ()


class Record(Type):
    """A record type (Numba's ``types.Record``): ``kiln.from_dtype(dt)`` of a NumPy
    structured dtype.  ``rec[:]`` is an array of such records; ``rec`` alone in a signature
    is one record, passed by reference (a ``numpy.void`` or ``numpy.record``).  Its text is
    ``recordN``, N the id this process gave the dtype (kiln/_records.py)."""

    __slots__ = ("dtype", "code")

    def __init__(self, dtype):
        import numpy as np

        from . import _kiln

        dt = np.dtype(dtype)
        self.dtype = dt
        rid = _kiln.record_id(dt)
        self.code = 32 + rid
        Type.__init__(self, f"record{rid}")

    __getitem__ = Scalar.__getitem__

    def __eq__(self, other):
        return isinstance(other, Record) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"Record({self.dtype})"


class Array(Type):
    """An array type: ``Array(dtype, ndim, layout)``, layout 'C', 'F' or 'A' (any
    strides); ``kiln.float32[:, ::1]`` is ``Array(float32, 2, 'C')``."""

    __slots__ = ("dtype", "ndim", "layout", "readonly")

    def __init__(self, dtype, ndim, layout="A", readonly=False, aligned=True):
        if not isinstance(dtype, (Scalar, Record)):
            raise TypeError(f"Array(dtype, ndim, layout): dtype is a scalar type such as "
                            f"kiln.float32, not {dtype!r}")
        if not isinstance(ndim, int) or not 0 <= ndim <= 8:
            raise ValueError(f"Array(dtype, ndim, layout): ndim is 0 to 8, not {ndim!r}")
        if layout not in ("C", "F", "A"):
            raise ValueError(f"Array(dtype, ndim, layout): layout is 'C', 'F' or 'A', not {layout!r}")
        self.dtype = dtype
        self.ndim = ndim
        self.layout = "C" if (ndim <= 1 and layout == "F") or ndim == 0 else layout
        self.readonly = bool(readonly)
        Type.__init__(self, self._text())

    def _text(self):
        if self.ndim == 0:  # as Numba and kiln's signatures print it (brackets cannot)
            return f"array({self.dtype}, 0d, C)"
        dims = []
        for i in range(self.ndim):
            c = (self.layout == "C" and i == self.ndim - 1) or (self.layout == "F" and i == 0)
            dims.append("::1" if c else ":")
        return f"{self.dtype}[{', '.join(dims)}]"

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        return Array(dtype or self.dtype, ndim or self.ndim, layout or self.layout,
                     self.readonly if readonly is None else readonly)

    def __eq__(self, other):
        return isinstance(other, Array) and (self.dtype, self.ndim, self.layout, self.readonly) == (
            other.dtype, other.ndim, other.layout, other.readonly)

    def __hash__(self):
        return hash((self.name, self.readonly))

    def __repr__(self):
        return f"Array({self.dtype!r}, {self.ndim}, '{self.layout}', {self.readonly}, aligned=True)"


class BaseTuple(Type):
    """A tuple type (host side: what ``typeof`` gives a tuple)."""

    __slots__ = ("types",)

    @property
    def count(self):
        return len(self.types)

    def __len__(self):
        return len(self.types)

    def __getitem__(self, i):
        return self.types[i]

    def __iter__(self):
        return iter(self.types)

    def __eq__(self, other):
        return type(self) is type(other) and self.name == other.name


class UniTuple(BaseTuple):
    """``UniTuple(dtype, count)``: a tuple of ``count`` values of one type."""

    __slots__ = ("dtype",)

    def __init__(self, dtype, count):
        self.dtype = dtype
        self.types = (dtype,) * count
        Type.__init__(self, f"UniTuple({dtype!r} x {count})")


class Tuple(BaseTuple):
    """``Tuple(types)``: a tuple of values of these types (a UniTuple when they are
    all the same type and there is at least one, as in Numba)."""

    __slots__ = ()

    def __new__(cls, types=()):
        types = tuple(types)
        if cls is Tuple and types and all(t == types[0] for t in types):
            return UniTuple(types[0], len(types))
        return object.__new__(cls)

    def __init__(self, types=()):
        self.types = tuple(types)
        Type.__init__(self, f"Tuple({', '.join(repr(t) for t in self.types)})")


class NamedUniTuple(UniTuple):
    """A namedtuple of values of one type: ``NamedUniTuple(dtype, count, cls)``."""

    __slots__ = ("instance_class",)

    def __init__(self, dtype, count, cls):
        super().__init__(dtype, count)
        self.instance_class = cls
        self.name = f"{cls.__name__}({', '.join(repr(t) for t in self.types)})"

    @property
    def fields(self):
        return tuple(self.instance_class._fields)


class NamedTuple(Tuple):
    """A namedtuple of values of these types: ``NamedTuple(types, cls)``."""

    __slots__ = ("instance_class",)

    def __new__(cls, types=(), klass=None):
        return object.__new__(cls)

    def __init__(self, types, cls):
        super().__init__(types)
        self.instance_class = cls
        self.name = f"{cls.__name__}({', '.join(repr(t) for t in self.types)})"

    @property
    def fields(self):
        return tuple(self.instance_class._fields)


class CPointer(Type):
    """``CPointer(dtype)``: a raw pointer to elements of dtype (Numba's).  In a signature
    (text ``uint8*``) the kernel's argument is an integer address and the kernel indexes
    it ``x[i]``, with no extent (docs/language.md, "Pointer arguments")."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype
        Type.__init__(self, f"{dtype!r}*")

    def __repr__(self):
        return f"CPointer({self.dtype!r})"


class Signature:
    """A function signature: ``ret`` (the return type) and ``args`` (the argument types).

    Calling a type makes one, as in Numba: ``kiln.void(kiln.float32[::1], kiln.int64)``;
    ``kiln.jit`` and ``kiln.vectorize`` take it wherever they take signature text."""

    __slots__ = ("ret", "args")

    def __init__(self, ret, args):
        self.ret = ret
        self.args = tuple(args)

    @property
    def return_type(self):
        """The return type (Numba's name for ``ret``)."""
        return self.ret

    def __str__(self):
        return f"{self.ret}({', '.join(str(a) for a in self.args)})"

    def __repr__(self):
        return f"<kiln signature {self}>"

    def __eq__(self, other):
        return isinstance(other, Signature) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def _check_core_types(types):
    for t in types:
        if isinstance(t, BaseTuple):
            raise TypeError(
                f"{t!r} in a signature: kiln signatures take scalar, array and pointer types; "
                "a tuple argument is typed at the launch (leave it out of explicit signatures)")
        if isinstance(t, CPointer) and not isinstance(t.dtype, Scalar):
            raise TypeError(f"{t!r} in a signature: a pointer points to a scalar type "
                            "(CPointer(uint8))")


def _is_numba(obj):
    return type(obj).__module__.startswith("numba.")


def _numba_type_text(t):
    """kiln's text of a Numba type object (``from numba import float32, void``): scalars,
    arrays of them and pointers, which is what kiln signatures hold."""
    cls = type(t).__name__
    if cls in ("Integer", "Float", "Boolean", "Complex"):
        return "bool" if cls == "Boolean" else str(t)
    if cls in ("NoneType", "Omitted") and str(t) == "none":
        return "void"
    if cls == "Array" and _is_numba(t.dtype) and 1 <= t.ndim <= 8:
        dims = [":"] * t.ndim
        if t.layout == "C":
            dims[-1] = "::1"
        elif t.layout == "F":
            dims[0] = "::1"
        return f"{_numba_type_text(t.dtype)}[{', '.join(dims)}]"
    if cls == "CPointer":
        return f"{_numba_type_text(t.dtype)}*"
    raise TypeError(f"the Numba type {t} has no kiln signature form: kiln signatures hold "
                    "scalars, arrays of them and pointers (leave other arguments out of the "
                    "signature; the launch types them)")


def is_numba_arg_type(obj):
    """Whether obj is a Numba type object that is not a signature (``float32[::1]``)."""
    return _is_numba(obj) and not hasattr(obj, "return_type")


def _numba_signature_text(sig):
    args = ", ".join(_numba_type_text(a) for a in sig.args)
    ret = sig.return_type
    if type(ret).__name__ in ("UniTuple", "Tuple"):  # a device function returning a tuple
        return f"({args})"
    return f"{_numba_type_text(ret)}({args})"


_ARRAY_TEXT = None  # re: Numba's "array(float64, 2d, C)" spelling of an array type


def _bracket_arrays(text):
    """Text with Numba's spelling of array types, "array(float64, 2d, C)" (how Numba and
    kiln print a 0-d array's type, which brackets cannot), in bracket form: "float64[:, ::1]",
    and "float64[()]" for 0 dimensions, which kiln's signature parser reads."""
    global _ARRAY_TEXT
    if "array(" not in text:
        return text
    if _ARRAY_TEXT is None:
        import re

        _ARRAY_TEXT = re.compile(r"\barray\(\s*(\w+)\s*,\s*(\d+)d\s*,\s*([CFA])\s*\)")

    def brackets(m):
        dt, nd, layout = m.group(1), int(m.group(2)), m.group(3)
        if nd == 0:
            return f"{dt}[()]"
        dims = [":"] * nd
        if layout == "C":
            dims[-1] = "::1"
        elif layout == "F":
            dims[0] = "::1"
        return f"{dt}[{', '.join(dims)}]"

    return _ARRAY_TEXT.sub(brackets, text)


def signature_text(sig):
    """Signature text from a string, a Signature, or a tuple of argument types (kiln's, or
    Numba's type objects), in the form kiln's parser reads."""
    return _bracket_arrays(_signature_text(sig))


def _signature_text(sig):
    if _is_numba(sig):
        if hasattr(sig, "return_type") and hasattr(sig, "args"):
            return _numba_signature_text(sig)
        return "(" + _numba_type_text(sig) + ")"
    if isinstance(sig, (tuple, list)) and sig and any(_is_numba(a) for a in sig):
        return "(" + ", ".join(_numba_type_text(a) if _is_numba(a) else str(a) for a in sig) + ")"
    if isinstance(sig, str):
        if "\0" in sig:  # C reads the text up to its first NUL: the rest would be dropped
            raise ValueError(f"a signature holds no NUL characters: {sig!r}")
        return sig
    if isinstance(sig, Signature):
        if isinstance(sig.ret, BaseTuple):
            # a device function returning a tuple (Numba's UniTuple(float32, 2)(float32)):
            # the arguments are typed, the tuple returned is the one the body builds
            _check_core_types(sig.args)
            return "(" + ", ".join(str(a) for a in sig.args) + ")"
        _check_core_types((sig.ret,) + sig.args)
        return str(sig)
    if isinstance(sig, (tuple, list)) and all(isinstance(a, Type) for a in sig):
        _check_core_types(sig)
        return "(" + ", ".join(str(a) for a in sig) + ")"
    if isinstance(sig, (tuple, list)):  # an element that is no kiln type: say which
        for i, a in enumerate(sig):
            if isinstance(a, Type):
                continue
            what = (f"{a.__module__}.{a.__name__} (a NumPy scalar class)"
                    if isinstance(a, type) and a.__module__ == "numpy" else repr(a))
            hint = (f"; write kiln.{a.__name__} or '{a.__name__}'"
                    if isinstance(a, type) and a.__module__ == "numpy" else "")
            raise TypeError(f"signature element {i + 1} is {what}, not a kiln type{hint}")
    text = str(sig)
    if "(" in text:  # a Numba signature object prints as "void(float32[::1])"
        return text
    raise TypeError(f"a signature is a string like 'void(float32[::1])', not {type(sig).__name__}")


void = none = Void()
bool_ = boolean = b1 = Scalar("bool")
int8 = i1 = byte = char = Scalar("int8")
int16 = i2 = short = Scalar("int16")
int32 = i4 = intc = Scalar("int32")
int64 = i8 = intp = int_ = long_ = longlong = Scalar("int64")
uint8 = u1 = uchar = Scalar("uint8")
uint16 = u2 = ushort = Scalar("uint16")
uint32 = u4 = uintc = Scalar("uint32")
uint64 = u8 = uintp = uint = ulong = ulonglong = Scalar("uint64")
float16 = f2 = half = Scalar("float16")
float32 = f4 = single = Scalar("float32")
float64 = f8 = double = float_ = Scalar("float64")
complex64 = c8 = csingle = Scalar("complex64")
complex128 = c16 = cdouble = complex_ = Scalar("complex128")
# bfloat16: float32's upper half (NumPy has no such dtype: ml_dtypes.bfloat16 is one)
bfloat16 = Scalar("bfloat16")

# Numba's groups of scalar types
signed_domain = frozenset([int8, int16, int32, int64])
unsigned_domain = frozenset([uint8, uint16, uint32, uint64])
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset([float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = integer_domain | real_domain | complex_domain


def from_dtype(dtype):
    """The scalar type of a NumPy dtype (``from_dtype(np.float32)`` is ``kiln.float32``),
    the record type of a structured dtype (Record); a NotImplementedError for dtypes
    kernels do not take (strings, datetimes...)."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.fields is not None:  # a structured dtype: a record type
        return Record(dt)
    code = _CODES.get(dt.name) if dt.fields is None and dt.kind in "biufc" else None
    if dt.name == "bfloat16" and dt.itemsize == 2:  # ml_dtypes.bfloat16 (kind 'V')
        code = _CODES["bfloat16"]
    if code is None and dt.kind in "Mm":
        raise NotImplementedError(f"kiln has no type for NumPy dtype {dt!r}: kernels take "
                                  "datetime64 and timedelta64 arrays and scalars as they are, "
                                  "as int64 counts of their unit (signatures spell them int64)")
    if code is None:
        raise NotImplementedError(f"kiln has no type for NumPy dtype {dt!r}; kernels take "
                                  "bool, int8..int64, uint8..uint64, float16..float64, complex64 and "
                                  "complex128")
    return _BY_CODE[code]


_BY_CODE = {}
for _t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
           float64, complex64, complex128, bfloat16):
    _BY_CODE[_t.code] = _t
del _t


def _array_type(dtype, ndim, c_contig, f_contig, readonly=False):
    layout = "C" if c_contig else "F" if f_contig else "A"
    if ndim == 0:
        raise ValueError("kiln has no type for 0-d arrays; pass the scalar (a[()])")
    return Array(from_dtype(dtype), ndim, layout, readonly)


def _contiguous_strides(shape, itemsize, fortran):
    """The byte strides of a C (or Fortran) contiguous array of this shape."""
    out, step = [], itemsize
    for n in (shape if fortran else reversed(shape)):
        out.append(step)
        step *= n
    return tuple(out if fortran else reversed(out))


def typeof(value):
    """The type kiln gives a value passed to a kernel, as Numba's ``typeof``: Python int
    int64, float float64, bool boolean, NumPy scalars and arrays their dtype (arrays with
    their layout, 'C' when C-contiguous, 'F' when Fortran-contiguous, else 'A'), device
    and foreign GPU arrays alike, tuples a UniTuple or Tuple, namedtuples a NamedUniTuple
    or NamedTuple.  A ValueError for values kernels do not take."""
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    if isinstance(value, tuple):
        types = tuple(typeof(v) for v in value)
        fields = getattr(type(value), "_fields", None)
        if isinstance(fields, tuple):
            if types and all(t == types[0] for t in types):
                return NamedUniTuple(types[0], len(types), type(value))
            return NamedTuple(types, type(value))
        return Tuple(types)
    import numpy as np

    if isinstance(value, np.generic):
        return from_dtype(value.dtype)
    if isinstance(value, np.ndarray):
        return _array_type(value.dtype, value.ndim, value.flags.c_contiguous,
                           value.flags.f_contiguous, not value.flags.writeable)
    cai = getattr(value, "__cuda_array_interface__", None)
    if isinstance(cai, dict):
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        c = f = True
        if strides is not None:
            c = strides == _contiguous_strides(shape, dt.itemsize, False)
            f = strides == _contiguous_strides(shape, dt.itemsize, True)
        else:
            f = sum(n > 1 for n in shape) <= 1
        return _array_type(dt, len(shape), c, f)
    try:
        view = memoryview(value)
    except TypeError:
        raise ValueError(f"kiln cannot type a {type(value).__name__}: kernels take NumPy "
                         "arrays, GPU arrays, ints, floats, bools, NumPy scalars and tuples "
                         "of them") from None
    return typeof(np.asarray(view))


# ---- Numba's type annotation of a compiled specialisation (Entry._type_annotation) -------

class TypeAnnotation:
    """What Numba's ``overload._type_annotation`` gives the tests that read it: ``typemap``,
    each variable's type as a kiln type object (an array's ``.dtype`` its scalar type), and
    ``text``, the lines ``inspect_types`` prints."""

    __slots__ = ("typemap", "text")

    def __init__(self, typemap, text):
        self.typemap = typemap
        self.text = text

    def __repr__(self):
        return f"<kiln type annotation of {len(self.typemap)} variables>"


_PY_SCALARS = {"Python int": "int64", "Python float": "float64", "Python complex": "complex128"}


def split_top(text):
    """text split at its commas outside brackets ((), [], {}), each part stripped; an empty
    last part (a trailing comma) is dropped.  Signatures, type names and parameter lists."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return parts + [tail] if tail else parts


def _type_of_name(name):
    """The kiln type object of a type as sema names it ("array(int32, 1d, C)", "float32",
    "Python int", "tuple(int64, float64)"), or the name itself when it has none."""
    name = name.strip()
    if name.startswith("readonly "):
        name = name[len("readonly "):]
    name = _PY_SCALARS.get(name, name)
    scalar = globals().get("bool_" if name == "bool" else name)
    if isinstance(scalar, Scalar):
        return scalar
    if name.startswith("array(") and name.endswith(")"):
        parts = split_top(name[6:-1])
        if len(parts) == 3 and parts[1].endswith("d"):
            dt = _type_of_name(parts[0])
            if isinstance(dt, Scalar):
                return Array(dt, int(parts[1][:-1]), parts[2])
    if name.startswith("tuple(") and name.endswith(")"):
        items = [_type_of_name(p) for p in split_top(name[6:-1])]
        if all(isinstance(t, Type) for t in items):
            if items and all(t == items[0] for t in items):
                return UniTuple(items[0], len(items))
            return Tuple(items)
    return name


def type_annotation(program):
    """The TypeAnnotation of a specialisation's Program (its inspect_types text)."""
    text = program.types
    typemap = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("kernel ") or line.startswith("device "):
            if "(" in line and ")" in line:  # the parameters: "kernel f(x: T, y: U) -> R"
                params = line[line.index("(") + 1:line.rindex(")")]
                for p in split_top(params):
                    if ": " in p:
                        n, t = p.split(": ", 1)
                        typemap.setdefault(n.strip(), _type_of_name(t))
            continue
        if ": " in line:
            n, t = line.split(": ", 1)
            typemap[n.strip()] = _type_of_name(t)
    return TypeAnnotation(typemap, text)
