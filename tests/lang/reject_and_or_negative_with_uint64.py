# rejected: a negative Python int and a uint64 in and/or: no integer type holds both
import math

import numpy as np
import kiln


@kiln.jit
def k(o, u8, z, u64):
    o[0] = (u64[0] and -1) < 0


def main():
    k[1, 1](np.zeros(1), np.array([1], np.uint8), np.array([1j]), np.array([5], np.uint64))
