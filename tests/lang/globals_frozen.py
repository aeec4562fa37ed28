# globals are frozen at compile time: ints, floats, bools, NumPy scalars, tuples,
# other kiln functions, modules' attributes
import numpy as np
import kiln

N = 4
SCALE = 0.5
ON = True
TYPED = np.int16(7)
SHAPE = (2, 3)


@kiln.jit(device=True)
def twice(x):
    return 2 * x


@kiln.jit
def k(out, x):
    t = kiln.local.array(SHAPE, kiln.float32)
    t[1, 2] = x[0] * SCALE
    out[0] = t[1, 2] + N + ON + TYPED + twice(SHAPE[1]) + np.pi


def main():
    out = np.zeros(1, np.float32)
    k[1, 1](out, np.array([3.0], np.float32))
    print(out.tolist())
    print(k.inspect_types(file=False), end="")
