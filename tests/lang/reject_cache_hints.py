# rejected: cache-hinted loads and stores given a float index (Numba's words: "float64 is
# not a valid index"), too many indices ("Expected 1 indices, got 2"), a scalar for a 2-D
# array ("Expected 2 indices, got a scalar"), a wrong argument
# count, a bool array, a number where the array goes
import numpy as np
import kiln


@kiln.jit
def float_index(x):
    v = kiln.ldcs(x, 1.0)


@kiln.jit
def two_indices(x):
    v = kiln.ldcs(x, (1, 2))


@kiln.jit
def scalar_for_2d(x):
    v = kiln.ldcs(x, 1)


@kiln.jit
def no_index(x):
    v = kiln.ldcg(x)


@kiln.jit
def bools(b):
    kiln.stcs(b, 0, True)


@kiln.jit
def number(x):
    v = kiln.ldca(5, 0)


def main():
    for k, a in ((float_index, np.zeros(4)), (two_indices, np.zeros(4)), (scalar_for_2d, np.zeros((2, 2))),
                 (no_index, np.zeros(4)),
                 (bools, np.zeros(4, bool)), (number, np.zeros(4))):
        try:
            k[1, 1](a)
        except kiln.CompileError as e:
            print(f"CompileError: {e}")
