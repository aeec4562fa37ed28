# rejected: lambda
import numpy as np
import kiln


@kiln.jit
def k(a):
    f = lambda x: x + 1
    a[0] = f(1)


def main():
    k[1, 1](np.zeros(4))
