# rejected: is None
import numpy as np
import kiln


@kiln.jit
def k(a):
    if a is None:
        pass


def main():
    k[1, 1](np.zeros(4))
