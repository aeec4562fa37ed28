"""NumPy structured dtypes (records) as kernels see them.

The C extension (_ext/records.c) names each distinct structured dtype by a small id in
launch type keys and keeps its layout for the compiler; the first time it meets a dtype it
asks ``describe`` here for the layout, which also refuses what kernels cannot take.  The
layout is NumPy's own: each field's offset and the itemsize as the dtype says (aligned with
``align=True`` or packed), never recomputed.
"""

from ._types import dtype_code

MAX_NDIM = 8  # dimensions of a record field (KILN_MAX_NDIM, include/kiln.h)


def _field_align(code, size):
    """The alignment a field's scalar type needs: its size (a complex number's part's)."""
    return size // 2 if code in (12, 13) else size


# NumPy's datetime units, in its order; a datetime64/timedelta64 dtype's unit code is
# 1 + the index of its unit here, plus 32 times its count (datetime64[2D]: 2 days)
TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")
# the unit code of a dtype without a unit (np.datetime64("NaT")): scalars only, which
# match any unit (args.c); arrays and device arrays of it are refused
GENERIC_UNIT = 1


def time_unit(dt):
    """The unit code of a datetime64 or timedelta64 dtype (0 for other dtypes): kernels
    take them as int64 counts of that unit, so the arguments of one call must share it."""
    if dt.kind not in "Mm":
        return 0
    unit, count = __import__("numpy").datetime_data(dt)
    if unit == "generic":
        return GENERIC_UNIT
    if unit not in TIME_UNITS:
        raise TypeError(f"{dt} has no unit; kernels take datetime64 and timedelta64 "
                        "with a unit (datetime64[D], timedelta64[ns]...)")
    return 1 + TIME_UNITS.index(unit) + 32 * int(count)


def _chars_field(name, ft, off):
    """A NumPy fixed-width string (bytes 'S', unicode 'U') as a field: a 1-d subarray of
    its code units (uint8, uint32 UCS-4) marked with its kind (src/sema/chars.h)."""
    code, unit = (5, 1) if ft.kind == "S" else (7, 4)
    if ft.kind == "U" and not ft.isnative:
        raise TypeError(f"field '{name}' has a non-native byte order")
    return (name, code, off, (ft.itemsize // unit,), ord(ft.kind))


def describe(dtype):
    """(itemsize, alignment, ((name, dtype code, offset, shape), ...), time unit) of a
    structured dtype; TypeError for one kernels cannot take.  The alignment is what the
    fields at offsets their type's alignment divides need of a record's address.  A
    datetime64 or timedelta64 dtype is registered the same way, as 8 bytes without
    fields and its unit code (time_unit): device arrays keep its dtype, kernels see
    int64 (args.c)."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.kind in "Mm":
        if not dt.isnative:
            raise TypeError(f"{dt} has a non-native byte order")
        return (8, 8, (), time_unit(dt))
    if dt.itemsize == 0:  # np.dtype([]), 'S0', a field of shape (0,): nothing to index
        raise TypeError(f"{dt} has elements of 0 bytes, which kernels cannot take")
    if dt.kind in "SU" and dt.fields is None:  # a string: a record of one unnamed field
        return (int(dt.itemsize), 1, (_chars_field("", dt, 0),), 0)
    if dt.fields is None:
        raise TypeError(f"{dt} is not a structured dtype")
    fields = []
    align = 1
    for name in dt.names:
        ft, off = dt.fields[name][:2]
        shape = ()
        if ft.subdtype is not None:
            ft, shape = ft.subdtype
        if len(shape) > MAX_NDIM:
            raise TypeError(f"field '{name}' is an array of {len(shape)} dimensions; record "
                            f"fields have at most {MAX_NDIM}")
        if ft.fields is not None:
            raise TypeError(f"field '{name}' is itself a record; kernels take records of "
                            "scalars and arrays of scalars")
        if ft.kind in "SU":
            if shape:
                raise TypeError(f"field '{name}' is an array of strings; kernels take one "
                                "string per field")
            if not name.isidentifier():
                raise TypeError(f"field name {name!r} is not a Python identifier")
            fields.append(_chars_field(name, ft, int(off)))
            continue
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
    return (int(dt.itemsize), align, tuple(fields), 0)
