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


def main():
    x = np.array([-1.0, 0.0, 2.5])
    a = np.zeros((3, 9), np.int64)
    done = np.zeros(3, np.int64)
    k[1, 3](a, x, done)
    print(a.tolist())
    print(done.tolist())
