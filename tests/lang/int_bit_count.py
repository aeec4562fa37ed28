# x.bit_count() on integers of every width: the 1 bits of |x|, as Python's int and NumPy's
# integer scalars count them (so -1 has one, and the most negative value of a width one)
import numpy as np
import kiln


@kiln.jit
def k(out, x, i):
    out[i] = x.bit_count()


def main():
    cases = [(np.uint8, [0, 1, 0xFF, 0xA5]), (np.uint16, [0xFFFF, 0x8001]),
             (np.uint32, [0xFFFFFFFF, 0x80000000]), (np.uint64, [2**64 - 1, 2**63 + 5]),
             (np.int8, [-1, -128, 127, 0]), (np.int16, [-32768, -3]),
             (np.int32, [-(2**31), -7, 12345]), (np.int64, [-(2**63), -1, 2**62 + 3])]
    for dt, vals in cases:
        out = np.zeros(len(vals), np.int64)
        for i, v in enumerate(vals):
            k[1, 1](out, dt(v), i)
        want = [int(v).bit_count() for v in vals]
        print(np.dtype(dt).name, out.tolist(), out.tolist() == want)
