# rejected: print of an array (print writes numbers, bools, string literals and tuples)
import numpy as np
import kiln


@kiln.jit
def k(a):
    print("a is", a)


def main():
    k[1, 1](np.zeros(4))
