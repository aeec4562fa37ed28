# Dead branches decided by comparisons, `not`, `and`/`or` and conditional expressions of
# frozen globals are not typed, as Numba prunes them (hunt31): a guarded division by a
# constant zero, a guarded negative shift, a tuple stored only in a dead branch.  The value
# of `x if C else y` and `A and B` with a known C or A is the operand Python gives.  Also
# a conditional whose condition is a conditional with constant-false arms, which libtcc
# 0.9.27 miscompiled (the statements after it did not run on tier 0).
import numpy as np
import kiln

N = 0
TOTAL = 100
SHIFT = -2
FAST = True
SAFE = True
MODE = 0


@kiln.jit
def k(a, x, done):
    i = kiln.grid(1)
    if i < x.size:
        if N > 0:
            a[i, 0] = TOTAL // N
        if not N:
            a[i, 1] = 1
        else:
            a[i, 1] = TOTAL // N
        a[i, 2] = TOTAL // N if N > 0 else -1
        a[i, 3] = (TOTAL << SHIFT) if SHIFT >= 0 else (TOTAL >> -SHIFT)
        a[i, 4] = N > 0 and TOTAL // N
        a[i, 5] = N == 0 or TOTAL // N
        if 0 < N < 3:
            a[i, 6] = (1, 2)
        else:
            a[i, 6] = 7
        a[i, 7] = 1 if (not FAST if x[i] > 0 else not SAFE) else 2
        a[i, 8] = 3 if (MODE == 1 if x[i] > 0 else MODE == 2) else 4
        done[i] = 1


@kiln.jit
def k2(a, b):
    i = kiln.grid(1)
    if i < a.shape[0]:
        # a chain stops at its first False link: what follows is never typed (hunt32)
        if 0 < N <= TOTAL // N:
            a[i, 0] = 1
        a[i, 1] = SHIFT >= 0 <= (TOTAL << SHIFT)
        # a while loop whose condition is a False constant: its body is never typed
        while N > 0:
            a[i, 2] = TOTAL // N
        else:
            a[i, 2] = 5
        while FAST and not SAFE:
            a[i, 3] = (1, 2)


@kiln.jit(device=True)
def maybe(x):
    if x > 0:
        return x


@kiln.jit
def provisional(a, b):
    # `r is None` is known only in the last typing pass of the loop (r changes below):
    # +(...), `and` and `x if c else y` of it must not be pruned in an earlier one
    r = 1
    for i in range(a.size):
        b[i, 0] = 7 if +(r is None) else 8
        b[i, 1] = +(r is None) and 5
        if +(r is None):
            b[i, 2] = 10
        else:
            b[i, 2] = 20
        r = maybe(a[i])


def main():
    x = np.array([-1.0, 0.0, 2.5])
    a = np.zeros((3, 9), np.int64)
    done = np.zeros(3, np.int64)
    k[1, 3](a, x, done)
    print(a.tolist())
    print(done.tolist())
    a2 = np.zeros((2, 4), np.int64)
    k2[1, 2](a2, np.zeros(1))
    print(a2.tolist())
    b = np.zeros((4, 3), np.int64)
    provisional[1, 1](np.array([-1.0, 2.0, -3.0, 4.0]), b)
    print(b.tolist())
