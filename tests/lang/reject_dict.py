# rejected: dicts and sets
import numpy as np
import kiln


@kiln.jit
def k(a):
    d = {'a': 1}
    s = {1, 2}


def main():
    k[1, 1](np.zeros(4))
