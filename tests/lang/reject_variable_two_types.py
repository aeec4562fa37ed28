# rejected: a variable with two types
import numpy as np
import kiln


@kiln.jit
def k(a):
    v = 1
    v = (1, 2)
    a[0] = 0


def main():
    k[1, 1](np.zeros(4))
