# `is` and `is not` between two typed numbers, with Numba's meaning (Python's identity of
# numbers is CPython's caching, not a value): of one type, `is` is ==, so members of one
# IntEnum or Enum with int values, passed as arguments (their ints), are identical when
# equal; members of two classes never, whatever their values (Size.small is not Color.red
# nor Other.one, as in Python); of two types (int32 and int64, float32 and float64) never.  A Python number (a
# literal) is still refused: it has no type to compare.
import enum

import numpy as np
import kiln


THREE = 3


class Color(enum.Enum):
    red = 1
    green = 2


class Size(enum.IntEnum):
    small = 1
    large = 1000


class Other(enum.IntEnum):
    one = 1


def k(a, b, x32, out):
    out[0] = a is b
    out[1] = a is not b
    out[2] = a is x32            # int64 and int32: never
    out[3] = x32 is not a
    out[4] = np.float32(1.0) is np.float32(1.0)


def literal(out, a):
    out[0] = a is THREE


def main():
    kernel = kiln.jit(k)
    for a, b in ((Color.red, Color.red), (Color.red, Color.green), (Size.large, Size.large),
                 (Size.small, Size.large), (Size.small, Color.red), (Size.small, Other.one)):
        out = np.zeros(6, np.int64)
        kernel[1, 1](a, b, np.int32(a.value), out)
        print(a.name, b.name, out[:5].tolist())
    try:
        kiln.jit(literal)[1, 1](np.zeros(1), 3)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split("error: ")[1])
