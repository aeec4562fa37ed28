# rejected: keyword-only parameters (after a bare '*'), said as such, not as *args
import numpy as np
import kiln


@kiln.jit(device=True)
def scaled(x, *, factor=2.0):
    return x * factor


@kiln.jit
def k(o):
    o[0] = scaled(1.0)


def main():
    k[1, 1](np.zeros(1))
