# rejected: range() over floats
import numpy as np
import kiln


@kiln.jit
def k(a):
    for i in range(2.5):
        a[0] = i


def main():
    k[1, 1](np.zeros(4))
