# Enum members in kernels (Numba's test_enums.py cases): IntEnum members are ints (implicit
# and explicit coercion, arithmetic, comparison); members of an Enum with int values are their
# values; the classes are read by attribute.  Diffed against the same code run by Python.
import enum
import numpy as np
import kiln


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


class Shape(enum.IntEnum):
    circle = 1
    unknown = -1


def coerce(x, out):
    if x > RequestError.internal_error:
        out[0] = x - RequestError.not_found
    else:
        out[0] = x + Shape.circle
    out[1] = kiln.int16(Shape.unknown) * 3
    out[2] = Color.red == Color.green
    out[3] = Color.blue != Color.red
    out[4] = Color.blue == Color.blue


def main():
    k = kiln.jit(coerce)
    for x in (300, 450, 550):
        got = np.zeros(5, np.int32)
        want = np.zeros(5, np.int32)
        k[1, 1](x, got)
        want[0] = x - RequestError.not_found if x > RequestError.internal_error else x + Shape.circle
        want[1] = int(Shape.unknown) * 3
        want[2:] = [Color.red == Color.green, Color.blue != Color.red, Color.blue == Color.blue]
        print(x, got.tolist(), (got == want).all())
