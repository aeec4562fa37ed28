"""``kiln.types``: the type objects, under Numba's names (``numba.cuda.types`` after
``import kiln as cuda``): the scalar types (``float32``, ``int64``, ``boolean``...),
``void``, the classes ``Type``, ``Boolean``, ``Number``, ``Integer``, ``Float``,
``Complex``, ``Array``, ``Record``, ``UniTuple``, ``Tuple``, ``NamedTuple``, ``NamedUniTuple``, ``CPointer``,
the domains (``signed_domain``, ``unsigned_domain``, ``integer_domain``,
``real_domain``, ``complex_domain``, ``number_domain``), ``from_dtype`` and ``typeof``.  They live in
kiln._types (imported by ``import kiln``); this module only names them."""

from ._types import (  # noqa: F401
    Type, Void, Scalar, Boolean, Number, Integer, Float, Complex, Array, BaseTuple, UniTuple, Tuple,
    NamedTuple, NamedUniTuple, CPointer, Record, Signature, from_dtype, typeof,
    signed_domain, unsigned_domain, integer_domain, real_domain, complex_domain, number_domain,
    void, none, bool_, boolean, b1, int8, i1, byte, char, int16, i2, short, int32, i4, intc,
    int64, i8, intp, int_, long_, longlong, uint8, u1, uchar, uint16, u2, ushort, uint32, u4,
    uintc, uint64, u8, uintp, uint, ulong, ulonglong, float16, f2, half, float32, f4, single,
    float64, f8, double, float_, complex64, c8, csingle, complex128, c16, cdouble, complex_, bfloat16,
)
