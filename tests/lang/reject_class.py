# rejected: classes
import numpy as np
import kiln


@kiln.jit
def k(a):
    class P:
        pass


def main():
    k[1, 1](np.zeros(4))
