"""NumPy structured dtypes (records) as kernels see them.

The C extension (_ext/records.c) names each distinct structured dtype by a small id in
launch type keys and keeps its layout for the compiler; the first time it meets a dtype it
asks ``describe`` here for the layout, which also refuses what kernels cannot take.  The
layout is NumPy's own: each field's offset and the itemsize as the dtype says (aligned with
``align=True`` or packed), never recomputed.
"""

from ._types import dtype_code


def _field_align(code, size):
    """The alignment a field's scalar type needs: its size (a complex number's part's)."""
    return size // 2 if code in (12, 13) else size


def describe(dtype):
    """(itemsize, alignment, ((name, dtype code, offset, shape), ...)) of a structured
    dtype; TypeError for one kernels cannot take.  The alignment is what the fields at
    offsets their type's alignment divides need of a record's address."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.fields is None:
        raise TypeError(f"{dt} is not a structured dtype")
    fields = []
    align = 1
    for name in dt.names:
        ft, off = dt.fields[name][:2]
        shape = ()
        if ft.subdtype is not None:
            ft, shape = ft.subdtype
        if ft.fields is not None:
            raise TypeError(f"field '{name}' is itself a record; kernels take records of "
                            "scalars and arrays of scalars")
        if not ft.isnative:
            raise TypeError(f"field '{name}' has a non-native byte order")
        code = dtype_code(ft.name)
        if code is None:
            raise TypeError(f"field '{name}' has dtype {ft}; record fields are bool, int, "
                            "float or complex")
        if not name.isidentifier():
            raise TypeError(f"field name {name!r} is not a Python identifier")
        a = _field_align(code, ft.itemsize)
        if off % a == 0 and dt.itemsize % a == 0:
            align = max(align, a)
        fields.append((name, code, int(off), tuple(int(d) for d in shape)))
    return (int(dt.itemsize), align, tuple(fields))
