# for x in literal_unroll(t): the body once per item, each with the item's own type
import numpy as np
import kiln
from kiln import literal_unroll
from kiln.misc.special import literal_unroll as numba_literal_unroll

ARRAYS = (
    np.arange(4, dtype=np.float64),
    np.arange(6, dtype=np.int32).reshape(2, 3),
    np.arange(5, dtype=np.float32)[::-1],      # a negative-stride view, captured by value
    np.asfortranarray(np.arange(6.0).reshape(3, 2)),
)
MIXED = (3, 2.5, True, np.int8(-4))


@kiln.jit
def sums(out):
    i = 0
    for a in literal_unroll(ARRAYS):
        out[i] = np.sum(a) + a.ndim * 1000 + a.max() * 100
        i += 1


@kiln.jit
def scalars(out):
    s = 0.0
    for x in numba_literal_unroll(MIXED):
        y = x * 2            # y is its own variable per item: int64, float64, int64, int8
        s += y
    out[0] = s


@kiln.jit
def args(out, t):
    i = 0
    for v in literal_unroll(t):
        out[i] = v[v.size - 1]
        i += 1
    out[len(t)] = t[0][0] + len(t)


@kiln.jit
def jumps(out, t):
    i = 0
    for v in literal_unroll(t):
        i += 1
        if v.size == 2:
            continue         # the next item
        out[i] = v[0]
        if v.size == 5:
            break            # out of the whole loop
    else:
        out[0] = -1.0        # no break
    out[9] = i


@kiln.jit
def nested(out):
    k = 0
    for a in literal_unroll((np.float32(1.5), 2)):
        for b in literal_unroll((ARRAYS[0], ARRAYS[2])):
            out[k] = a + b[1]
            k += 1
    for i in range(2):       # an ordinary loop around an unrolled one
        for x in literal_unroll((i, i * 0.5)):
            out[4 + k % 4] += x
            k += 1


@kiln.jit(device=True)
def total(t):
    s = 0.0
    for a in literal_unroll(t):
        for v in a:          # a loop over each copy's own array (its own variable)
            s += v
    return s


@kiln.jit
def inner_loops(out):
    out[0] = total((ARRAYS[0], ARRAYS[2], ARRAYS[0][::2]))


@kiln.jit
def literal_items(out, a):
    n = 0
    for p in literal_unroll((a, a[::2], a.reshape(2, 2))):   # items evaluated once
        out[n] = p.size
        n += 1
    for q, r in literal_unroll(((1, 2.0), (3, 4.0))):         # tuple targets unpack
        out[n] = q * r
        n += 1


@kiln.jit
def plain_loop(out, t):
    s = 0                    # a homogeneous tuple still loops without literal_unroll
    for v in t:
        s += v
    out[0] = s


def main():
    out = np.zeros(4)
    sums[1, 1](out)
    print("sums", out.tolist())
    print("want", [np.sum(a) + a.ndim * 1000 + a.max() * 100 for a in ARRAYS])
    out = np.zeros(1)
    scalars[1, 1](out)
    print("scalars", out[0])
    t = (np.arange(3.0), np.arange(4, dtype=np.int16).reshape(2, 2)[:, ::-1].ravel().copy(),
         np.ones((2, 3), order="F")[0])
    out = np.zeros(4)
    args[1, 1](out, t)
    print("args", out.tolist())
    for t in [(np.ones(3), np.zeros(2), np.full(5, 7, np.int64), np.ones(1)),
              (np.ones(3), np.zeros(2))]:
        out = np.zeros(10)
        jumps[1, 1](out, t)
        print("jumps", out.tolist())
    out = np.zeros(8)
    nested[1, 1](out)
    print("nested", out.tolist())
    out = np.zeros(1)
    inner_loops[1, 1](out)
    print("inner_loops", out[0], "want", np.sum(ARRAYS[0]) + np.sum(ARRAYS[2]) + np.sum(ARRAYS[0][::2]))
    out = np.zeros(5)
    literal_items[1, 1](out, np.arange(4.0))
    print("literal_items", out.tolist())
    out = np.zeros(1)
    plain_loop[1, 1](out, (1, 2, 3))
    print("plain_loop", out[0])
