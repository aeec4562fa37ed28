# an integer to a negative integer power is an error (LANGUAGE.md), with or without
# debug=True: it gave 0 without debug; now a ValueError naming the line, as NumPy
# raises for np.int64(2) ** -1
import numpy as np
import kiln


@kiln.jit
def k(a, b, n):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = b[i] ** n


@kiln.jit
def k_unsigned(a, b, n):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = b[i] ** n


def attempt(k, *args):
    try:
        k[1, 4](*args)
        print("ok", args[0].tolist())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


def main():
    b = np.array([2, 3, -2, 1], np.int64)
    attempt(k, np.zeros(4, np.int64), b, 3)
    attempt(k, np.zeros(4, np.int64), b, -1)
    attempt(k, np.zeros(4, np.int32), b.astype(np.int32), np.int32(-2))
    attempt(k, np.zeros(4), b.astype(np.float64), -1)
    attempt(k_unsigned, np.zeros(4, np.uint32), b.astype(np.uint32) % 4, np.uint32(2))
