# `is` and `is not` with None, True and False (Python's identity where a kernel has one): a
# bool against True/False is equality, a number is never True, None is only None; the
# device function returning nothing gives None.  Diffed against the same code run by Python.
import numpy as np
import kiln


@kiln.jit(device=True)
def nothing(x):
    x[0] = x[0]


@kiln.jit(device=True)
def flags(pred, n, out):
    out[0] = pred is True
    out[1] = pred is not True
    out[2] = pred is False
    out[3] = n is True           # an int is not the bool True
    out[4] = n is not False
    out[5] = n is None
    out[6] = None is None
    out[8] = pred is not None


@kiln.jit
def k(preds, ns, out):
    i = kiln.grid(1)
    if i < preds.size:
        p = preds[i] != 0
        flags(p, ns[i], out[i])
        out[i, 7] = nothing(out[i]) is None
        if p is True:
            out[i, 9] = 1


def main():
    preds = np.array([0, 1, 1, 0], np.int64)
    ns = np.array([1, 0, 5, -2], np.int64)
    out = np.zeros((4, 10), np.int64)
    k[1, 4](preds, ns, out)
    ref = np.zeros((4, 10), np.int64)
    for i in range(4):
        flags.py_func(bool(preds[i] != 0), int(ns[i]), ref[i])
        ref[i, 7] = 1  # a function that returns nothing returns None
        if bool(preds[i] != 0) is True:
            ref[i, 9] = 1
    print(out.tolist())
    print("same as Python:", (out == ref).all())
