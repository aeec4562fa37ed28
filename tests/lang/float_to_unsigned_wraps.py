# A negative float converted to an unsigned integer wraps through int64, as NumPy's astype
# does on the CPU (C leaves it undefined, and gcc's code and tier 0's differed); in-range
# values, and uint64 values past 2**63, convert exactly
import numpy as np
import kiln


@kiln.jit
def k(o64, o32, o8, f):
    i = kiln.grid(1)
    if i < f.size:
        o64[i] = np.uint64(f[i])
        o32[i] = np.uint32(f[i])
        o8[i] = np.uint8(f[i])


def main():
    f = np.array([-2.5, -1e10, -1.9, -129.0, 3.7, 2.0**63 + 2.0**12, 255.0])
    o64 = np.zeros(f.size, np.uint64)
    o32 = np.zeros(f.size, np.uint32)
    o8 = np.zeros(f.size, np.uint8)
    k[1, 32](o64, o32, o8, f)
    with np.errstate(all="ignore"):
        want64 = f.astype(np.uint64)
        want32 = f.astype(np.int64).astype(np.uint32)
        want8 = f.astype(np.int64).astype(np.uint8)
    # NumPy's float -> uint64 of a value past 2**63 is exact; below 0 it wraps
    print("uint64:", (o64 == want64).all(), "uint32:", (o32 == want32).all(),
          "uint8:", (o8 == want8).all())
