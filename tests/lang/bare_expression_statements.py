# Expression statements that only name something (a module, a type, None, a constant) are
# evaluated and dropped, as in Python; a tuple that holds a function has no value in a
# kernel and is reported.  (The fuzzer found the first kind crashing.)  A function named
# without its call (`cuda.syncthreads`, a device function) is an error: Python drops it
# too, so the barrier silently never happens (hunt31 8).
import math

import numpy as np
import kiln


@kiln.jit(device=True)
def dev(x):
    return x + 1


@kiln.jit
def k(out):
    math
    np.float32
    kiln.threadIdx
    None
    ...
    1
    out[0] = dev(1.0)


@kiln.jit
def bad(out):
    (dev, 1)
    out[0] = 1


@kiln.jit
def uncalled(out):
    kiln.syncthreads
    dev
    math.sqrt
    out[0] = 1


def main():
    out = np.zeros(1)
    k[1, 1](out)
    print(out.tolist())
    for f in (bad, uncalled):
        try:
            f[1, 1](out)
        except kiln.CompileError as e:
            print(str(e).replace(__file__, "FILE"))
