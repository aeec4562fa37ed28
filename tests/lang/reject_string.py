# rejected: strings
import numpy as np
import kiln


@kiln.jit
def k(a):
    s = 'text'


def main():
    k[1, 1](np.zeros(4))
