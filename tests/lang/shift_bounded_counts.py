# Shifts whose count sema bounds below the width (`s & 31`, `(32 - r) & 31`) are C's own
# shifts, in the unsigned type of the width (a rotate the C compiler can see); counts it
# cannot bound keep the range check (a count past the width gives 0, a negative one...
# as Numba).  Every integer dtype, negative values too, diffed against Python's ints.
import numpy as np
import kiln


@kiln.jit
def rotl(out, x, c):
    i = kiln.grid(1)
    if i < x.size:
        s = x[i]
        r = c[i] & 7
        out[i, 0] = s << r
        out[i, 1] = s >> r
        out[i, 2] = (s << r) | (s >> ((8 - r) & 7))


def reference(x, c, dt):
    bits = np.iinfo(dt).bits
    mask = (1 << bits) - 1

    def wrap(v):
        v &= mask
        return v - (1 << bits) if np.iinfo(dt).min < 0 and v >> (bits - 1) else v

    rows = []
    for s, cc in zip(x.tolist(), c.tolist()):
        r = cc & 7
        left = wrap(s << r)
        right = s >> r
        rows.append([left, right, wrap(left | (s >> ((8 - r) & 7)))])
    return np.array(rows, dt)


def main():
    rng = np.random.default_rng(3)
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        info = np.iinfo(dt)
        x = np.concatenate([rng.integers(info.min, info.max, 61, dtype=dt, endpoint=True),
                            np.array([info.min, info.max, 0, 1], dt)])
        c = rng.integers(0, 1000, x.size).astype(dt)
        out = np.zeros((x.size, 3), dt)
        rotl[1, 128](out, x, c)
        print(np.dtype(dt).name, np.array_equal(out, reference(x, c, dt)))
