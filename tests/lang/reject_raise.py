# rejected: raise
import numpy as np
import kiln


@kiln.jit
def k(a):
    raise ValueError('no')


def main():
    k[1, 1](np.zeros(4))
