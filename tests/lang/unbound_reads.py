# a local read where no assignment ran: UnboundLocalError at run time (src/sema/unbound.c)
import numpy as np
import kiln


@kiln.jit
def k(out, a, c):
    if c > 0:
        t = a
        x = a[0] * 2
    for j in range(c):
        last = j
    k2 = 0
    while k2 < 3 and (k2 == 0 or y > 0):
        y = a[k2] - 2
        k2 += 1
    out[0] = t[1] + x + last + k2
    out[1] = c > 0 and x > 0


def main():
    a = np.array([1.0, 2.0, 3.0])
    out = np.zeros(2)
    k[1, 1](out, a, 2)
    print(out.tolist())
    try:
        k[1, 1](out, a, 0)
    except UnboundLocalError as e:
        print("UnboundLocalError:", str(e).split(": ", 1)[1])
