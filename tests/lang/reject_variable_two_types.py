# rejected: a variable with two types where one use may see either (a name rebound where
# no use sees both values is two variables: rebinding.py)
import numpy as np
import kiln


@kiln.jit
def k(a):
    v = 1
    if a[0] > 0:
        v = (1, 2)
    w = v
    a[0] = 0


def main():
    k[1, 1](np.zeros(4))
