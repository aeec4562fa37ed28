# rejected: Python's built-in functions kernels do not have (sum, isinstance, getattr...)
# are named as built-ins, with what kernels call instead (hunt31: "global 'sum' is a
# 'builtin_function_or_method'" read as if the user had made a global)
import numpy as np
import kiln


@kiln.jit
def k(a):
    t = (1.0, 2.0)
    a[0] = sum(t)


def main():
    k[1, 1](np.zeros(4))
