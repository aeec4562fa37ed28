# while, for over range with 1, 2 and 3 arguments, break, continue, else clauses
import numpy as np
import kiln


@kiln.jit
def k(out):
    s = 0
    for i in range(5):
        s += i
    out[0] = s
    s = 0
    for i in range(2, 10, 3):
        s += i
    out[1] = s
    s = 0
    for i in range(10, -1, -4):
        s += i
    out[2] = s
    n = 0
    while n < 100:
        n += 7
        if n % 2 == 0:
            continue
        if n > 50:
            break
    out[3] = n
    for i in range(3):
        pass
    else:
        out[4] = i
    while False:
        pass
    else:
        out[5] = 1
    for i in range(0):
        out[6] = 99


def main():
    out = np.zeros(7, np.int64)
    k[1, 1](out)
    print(out.tolist())
