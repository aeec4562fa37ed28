# rejected: lists, with a hint to preallocate a local array
import numpy as np
import kiln


@kiln.jit
def k(a):
    x = [1, 2, 3]
    a[0] = x[0]


def main():
    k[1, 1](np.zeros(4))
