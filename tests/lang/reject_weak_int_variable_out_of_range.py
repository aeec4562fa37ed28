# rejected: a variable only ever assigned Python int constants meets a typed integer one of
# them does not fit (NumPy 2 raises OverflowError, as for the literal itself)
import numpy as np
import kiln


@kiln.jit
def k(o, u8):
    z = 300
    o[0] = u8[0] + z


def main():
    k[1, 1](np.zeros(1, np.int64), np.array([1], np.uint8))
