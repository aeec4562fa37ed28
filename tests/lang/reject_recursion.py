# rejected: recursion
import numpy as np
import kiln


@kiln.jit(device=True)
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


@kiln.jit
def k(a):
    a[0] = fact(5)


def main():
    k[1, 1](np.zeros(4))
