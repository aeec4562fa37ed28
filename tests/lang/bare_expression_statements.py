# Expression statements that only name something (a module, a device function, a type,
# None, a constant) are evaluated and dropped, as in Python; a tuple that holds a function
# has no value in a kernel and is reported.  (The fuzzer found the first kind crashing.)
import math

import numpy as np
import kiln


@kiln.jit(device=True)
def dev(x):
    return x + 1


@kiln.jit
def k(out):
    dev
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


def main():
    out = np.zeros(1)
    k[1, 1](out)
    print(out.tolist())
    try:
        bad[1, 1](out)
    except kiln.CompileError as e:
        print(str(e).replace(__file__, "FILE"))
