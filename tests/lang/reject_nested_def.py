# rejected: nested functions
import numpy as np
import kiln


@kiln.jit
def k(a):
    def helper(x):
        return x
    a[0] = helper(1)


def main():
    k[1, 1](np.zeros(4))
