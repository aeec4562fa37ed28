# debug=True: a runtime error stops the thread where it happens, as Numba's exceptions do:
# a store whose value or index check failed is skipped (never written to element 0, the
# safe index the check returns), and the thread's later statements do not run; the launch
# raises the first error.  One block of 4 threads, run in order on the CPU: once a thread
# has failed, the later threads stop at their first checked statement too.
import numpy as np
import kiln


@kiln.jit(debug=True, opt=False)
def divide(r, x, y):
    r[0] = y[0] / x[0]
    r[1] = y[0]


@kiln.jit(debug=True)
def store(r, n):
    i = kiln.grid(1)
    r[i + n] = 1.0
    r[i] = 2.0


@kiln.jit(debug=True)
def add(r, n):
    i = kiln.grid(1)
    r[i + n] += 1.0
    r[i] = 2.0


@kiln.jit(debug=True)
def unpack(r, n):
    i = kiln.grid(1)
    a, r[i + n] = 1, 5.0
    r[i] = 9.0


@kiln.jit(debug=True)
def int_div(r, d):
    i = kiln.grid(1)
    r[i] = 10 // (d - i)
    r[i + 4] = 7


def attempt(k, r, *args):
    try:
        k[1, 4](r, *args)
        print("ok", r.tolist())
    except (IndexError, ZeroDivisionError) as e:
        print(f"{type(e).__name__}: {e} -> {r.tolist()}")


def main():
    attempt(divide, np.zeros(2), np.zeros(1), np.ones(1))
    attempt(store, np.zeros(4), 2)
    attempt(add, np.zeros(4), 2)
    attempt(unpack, np.zeros(4), 2)
    attempt(int_div, np.zeros(8, np.int64), 2)
    attempt(store, np.zeros(4), 0)
