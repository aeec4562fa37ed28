# rejected: global
import numpy as np
import kiln


@kiln.jit
def k(a):
    global N
    N = 3


def main():
    k[1, 1](np.zeros(4))
