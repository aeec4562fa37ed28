# literal_unroll() misused: each error names the line, with a caret
import numpy as np
import kiln
from kiln import literal_unroll

NOT_A_TUPLE = np.arange(3.0)
BIG = tuple(range(300))


@kiln.jit
def of_array(out):
    for x in literal_unroll(NOT_A_TUPLE):
        out[0] = x


@kiln.jit
def of_argument(out, n):
    for x in literal_unroll(n):
        out[0] = x


@kiln.jit
def runtime_length(out):
    t = out.shape            # a tuple, but known only once typed
    for x in literal_unroll(t):
        out[0] = x
    for x in literal_unroll(range(3)):
        out[0] = x


@kiln.jit
def too_many(out):
    for x in literal_unroll(BIG):
        out[0] = x


@kiln.jit
def not_in_a_loop(out):
    t = literal_unroll((1, 2))
    out[0] = t[0]


@kiln.jit
def rebinds(out):
    t = (1, 2.0)
    for x in literal_unroll(t):
        out[0] = x
        t = (3, 4.0)


def main():
    out = np.zeros(1)
    for k, args in [(of_array, (out,)), (of_argument, (out, 3)), (runtime_length, (out,)),
                    (too_many, (out,)), (not_in_a_loop, (out,)), (rebinds, (out,))]:
        try:
            k[1, 1](*args)
            print(k.__name__, "compiled")
        except kiln.CompileError as e:
            print("CompileError:", e)
