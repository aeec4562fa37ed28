# rejected: print
import numpy as np
import kiln


@kiln.jit
def k(a):
    print(a[0])


def main():
    k[1, 1](np.zeros(4))
