# rejected: math.isnan of a complex number (Python's TypeError; cmath.isnan takes one)
import math

import numpy as np
import kiln


@kiln.jit
def k(o, u8, z, u64):
    o[0] = math.isnan(z[0])


def main():
    k[1, 1](np.zeros(1), np.array([1], np.uint8), np.array([1j]), np.array([5], np.uint64))
