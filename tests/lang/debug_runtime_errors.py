# debug=True: bounds checks raise IndexError naming the file, line, index and shape;
# assert is checked; integer division by zero raises
import numpy as np
import kiln


@kiln.jit(debug=True)
def k(a, i, d):
    assert d != 7, "seven"
    a[i] = 10 // d


def attempt(*args):
    try:
        k[1, 1](*args)
        print("ok", args[0].tolist())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


def main():
    attempt(np.zeros(3, np.int64), 1, 3)
    attempt(np.zeros(3, np.int64), -1, 2)
    attempt(np.zeros(3, np.int64), 3, 1)
    attempt(np.zeros(3, np.int64), -4, 1)
    attempt(np.zeros(3, np.int64), 0, 0)
    attempt(np.zeros(3, np.int64), 0, 7)
