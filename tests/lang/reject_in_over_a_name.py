# rejected: `in` over anything but a tuple written out (a tuple variable here)
import numpy as np
import kiln

T = (1, 2)


@kiln.jit
def k(o):
    o[0] = o[1] in T


def main():
    k[1, 1](np.zeros(2))
