# fuzz finding compile-unbound-tuple-self-assign: a tuple whose first element is a
# name poisoned by its own failed assignment hid the next element's error, and the
# emitter met the undefined name (the process aborted)
import numpy as np
import kiln


@kiln.jit
def k(out):
    y = y, n
    out[0] = 1


def main():
    k[1, 1](np.zeros(1))
