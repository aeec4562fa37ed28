# rejected: shared memory on the CPU target
import numpy as np
import kiln


@kiln.jit
def k(a):
    s = kiln.shared.array(16, kiln.float64)
    s[0] = a[0]


def main():
    k[1, 1](np.zeros(4))
