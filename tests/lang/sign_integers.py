# np.sign on every integer dtype at its extremes, in a kernel and in kiln.fuse: an unsigned
# value past the signed range (uint64 >= 2**63) is positive, not -1 (huntE 01).
import numpy as np
import kiln


@kiln.jit
def signs(o, x):
    i = kiln.grid(1)
    if i < x.size:
        o[i] = np.sign(x[i])


fsign = kiln.fuse(lambda x: np.sign(x))


def main():
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(dt)
        x = np.array([0, 1, info.max, info.min, info.max // 2 + 1], dt)
        o = np.zeros_like(x)
        signs[1, 8](o, x)
        f = fsign(x)
        print(np.dtype(dt).name, o.tolist(), np.array_equal(o, np.sign(x)),
              f.dtype == np.sign(x).dtype and np.array_equal(f, np.sign(x)))

