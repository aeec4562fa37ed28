# rejected: a tuple as a condition
import numpy as np
import kiln


@kiln.jit
def k(a):
    if (1, 2):
        a[0] = 1


def main():
    k[1, 1](np.zeros(4))
