# rejected, with a hint: a scalar argument (a NumPy scalar or a Python number) cannot be
# written through; the hint names a 0-d array, which can (a 0-d NumPy array is an array)
import numpy as np
import kiln


@kiln.jit
def k(out, x):
    kiln.atomic.add(out, 0, x)


def main():
    k[1, 1](np.float64(0), 2.0)
