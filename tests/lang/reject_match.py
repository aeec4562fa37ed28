# rejected: match statements (a soft keyword: `match = ...` stays a name)
import numpy as np
import kiln


@kiln.jit
def named(o):
    match = o[0]
    o[1] = match


@kiln.jit
def k(o):
    match o[0]:
        case 1:
            o[1] = 2
        case _:
            o[1] = 3


def main():
    o = np.arange(3.0)
    named[1, 1](o)
    print(o.tolist())
    k[1, 1](o)
