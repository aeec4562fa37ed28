# rejected: iterating over an array
import numpy as np
import kiln


@kiln.jit
def k(a):
    for x in a:
        pass


def main():
    k[1, 1](np.zeros(4))
