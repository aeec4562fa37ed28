# rejected: float indices
import numpy as np
import kiln


@kiln.jit
def k(a):
    a[0.5] = 1


def main():
    k[1, 1](np.zeros(4))
