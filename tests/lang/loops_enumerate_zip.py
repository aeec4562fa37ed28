# for loops over arrays, tuples, enumerate() (with a start) and zip(), nested either way,
# over range() inside them (negative steps too), with break/continue/else: each is the
# range() loop it is rewritten into, so the values are Python's
import numpy as np
import kiln

WEIGHTS = (1.0, 2.5, 3.0)
INTS = (1, 2, 3)


@kiln.jit
def k(x, y, out):
    for i, v in enumerate(x):
        out[i] = v * 10 + i
    c = 0
    for xv, yv in zip(x, y):
        c += xv * yv
    out[5] = c
    for i, (xv, yv) in enumerate(zip(x, y), 1):
        out[6] += i * xv
    for (i, xv), yv in zip(enumerate(x), y):
        out[7] += i + xv + yv
    for i, j in enumerate(range(10, 0, -3)):
        out[8] += i * j
    for i, w in enumerate(WEIGHTS):
        out[9] += i * w
    for a, b in zip(INTS, WEIGHTS):
        out[10] += a * b
    for v in x:
        if v == 8:
            break
        out[11] += v
    else:
        out[11] = -1
    for v in y:
        if v % 2 == 0:
            continue
        out[12] += v
    else:
        out[12] += 100
    for a, b, r in zip(x, y, range(3)):  # the shortest decides
        out[13] += r
    for e in range(0):
        out[14] = e
    for p in range(2):
        for v in x:
            if v < 8:
                break
            out[14] += p * v


def main():
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    out = np.zeros(15)
    k[1, 1](x, y, out)
    want = np.zeros(15)
    for i, v in enumerate(x):
        want[i] = v * 10 + i
    want[5] = sum(a * b for a, b in zip(x, y))
    want[6] = sum(i * xv for i, (xv, yv) in enumerate(zip(x, y), 1))
    want[7] = sum(i + xv + yv for (i, xv), yv in zip(enumerate(x), y))
    want[8] = sum(i * j for i, j in enumerate(range(10, 0, -3)))
    want[9] = sum(i * w for i, w in enumerate(WEIGHTS))
    want[10] = sum(a * b for a, b in zip(INTS, WEIGHTS))
    want[11] = 10 + 9
    want[12] = 1 + 3 + 5 + 100
    want[13] = 0 + 1 + 2
    want[14] = 10 + 9 + 8
    print(out.tolist())
    print("matches Python:", (out == want).all())
    print(k.inspect_types(file=False), end="")
