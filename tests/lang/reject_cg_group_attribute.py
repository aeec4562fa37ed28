# rejected: a grid group has one method, sync(); anything else is named as such
import numpy as np
import kiln


@kiln.jit
def k(a):
    g = kiln.cg.this_grid()
    a[0] = g.size


def main():
    k[1, 1](np.zeros(4))
