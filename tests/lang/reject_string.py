# rejected: strings
import numpy as np
import kiln


@kiln.jit
def k(a):
    a[0] = 'text'


def main():
    k[1, 1](np.zeros(4))
