# rejected: reading a local before assigning it
import numpy as np
import kiln


@kiln.jit
def k(a):
    a[0] = total
    total = 1


def main():
    k[1, 1](np.zeros(4))
