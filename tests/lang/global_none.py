# A global None reads as the literal None: Numba's `alignment=ALIGN` with ALIGN = None (the
# default alignment), `if FLAG is None:` pruned when compiling, and a device function's
# None argument (its default's branch)
import numpy as np
import kiln

ALIGN = None
FLAG = None


@kiln.jit(device=True)
def plus(x, y=None):
    if y is None:
        return x
    return x + y


@kiln.jit
def k(o):
    a = kiln.local.array(4, np.float64, alignment=ALIGN)
    a[0] = 1.5
    if FLAG is None:
        o[0] = a[0]
    else:
        o[0] = -1.0
    o[1] = plus(2.0, FLAG)
    o[2] = plus(2.0, 1.0)


def main():
    o = np.zeros(3)
    k[1, 1](o)
    print(o.tolist())
