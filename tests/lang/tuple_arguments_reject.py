# tuple arguments the kernel cannot take: the error names the user's line
import numpy as np
import kiln


@kiln.jit
def loop_mixed(r, t):
    s = 0.0
    for v in t:
        s += v
    r[0] = s


def main():
    r = np.zeros(1)
    try:
        loop_mixed[1, 1](r, (1, 2.5))
    except kiln.CompileError as e:
        print("CompileError:", e)
    try:
        loop_mixed[1, 1](r, ("a", 1))
    except TypeError as e:
        print("TypeError:", e)
    deep = 1
    for _ in range(20):
        deep = (deep,)
    loop_mixed[1, 1](r, deep)
