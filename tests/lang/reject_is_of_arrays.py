# rejected: `is` between two arrays (or numbers): kernels have identity only for None, True
# and False (`a is None` is a constant: an array is never None)
import numpy as np
import kiln


@kiln.jit
def k(a, b):
    if a is None:
        pass
    if a is b:
        a[0] = 1


def main():
    k[1, 1](np.zeros(4), np.zeros(4))
