# rejected: the truth value of an array
import numpy as np
import kiln


@kiln.jit
def k(a):
    while a:
        pass


def main():
    k[1, 1](np.zeros(4))
