# Enum members by name (Color["red"], as Numba reads them) in kernels and vectorize bodies, and
# Enum members as kernel arguments (passed as their values, as kernels read members)
import enum

import numpy as np
import kiln


class Color(enum.Enum):
    red = 1
    green = 2


class Planet(enum.Enum):  # tuple values: a member argument is its tuple
    EARTH = (5.976e24, 6.37814e6)
    MARS = (6.421e23, 3.3972e6)


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


@kiln.jit
def by_name(out):
    out[0] = Color.red == Color.green
    out[1] = Color["red"] == Color["green"]
    out[2] = Color["green"] == Color.green
    out[3] = RequestError["internal_error"] - 500


@kiln.vectorize("int64(int64)")
def classify(x):
    if x != RequestError.not_found:
        return RequestError["internal_error"]
    return RequestError.dummy


@kiln.jit
def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a == Color.green


@kiln.jit
def identical(a, b, out):  # Numba's meaning: of one type, `is` is ==
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


@kiln.jit
def gravity(p, out):
    out[0] = 6.673e-11 * p[0] / (p[1] * p[1])


def main():
    out = np.zeros(4, np.int64)
    by_name[1, 1](out)
    print(out.tolist())
    print(classify(np.array([2, 404, 500, 404], dtype=np.int64)).tolist())
    for a, b in ((Color.red, Color.red), (Color.red, Color.green),
                 (RequestError.not_found, RequestError.not_found)):
        got = np.zeros(3, np.bool_)
        compare[1, 1](a, b, got)
        print(a.name, b.name, got.tolist())
    for a, b in ((Planet.EARTH, Planet.EARTH), (Planet.EARTH, Planet.MARS),
                 (Color.red, Color.red), (Color.red, Color.green)):
        got = np.zeros(4, np.bool_)
        identical[1, 1](a, b, got)
        print(a.name, b.name, got.tolist(), got.tolist() == [a == b, a != b, a is b, a is not b])
    g = np.zeros(1)
    gravity[1, 1](Planet.EARTH, g)
    print(round(float(g[0]), 4))
    try:
        kiln.jit("void(int64[:])")(bad)
    except kiln.CompileError as e:
        print(str(e).splitlines()[0].split(": error: ")[1])


def bad(out):
    out[0] = Color["blue"]
