# rejected: globals of unsupported types
import numpy as np
import kiln

CONFIG = {"x": 1}


@kiln.jit
def k(a):
    a[0] = CONFIG['x']


def main():
    k[1, 1](np.zeros(4))
