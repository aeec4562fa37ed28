# an elif chain is walked with a loop in every pass (they recursed once per elif,
# tests/c's translate_long_elif_chain has 100,000): 300 branches compile and pick the
# right one, `else if` at one level of C.  (gcc -O3 and NVRTC take time beyond
# linear on long chains, about 90 s of gcc for 3,000: docs/limits.md.)
import linecache
import numpy as np
import kiln


def main():
    n = 300
    src = "def k(a, x):\n    if x == 0:\n        a[0] = 0\n"
    src += "".join(f"    elif x == {i}:\n        a[0] = {i * 10}\n" for i in range(1, n))
    src += "    else:\n        a[0] = -1\n"
    fname = "<elif chain>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {}
    exec(compile("def k(a, x):\n    pass\n", fname, "exec"), ns)
    k = kiln.jit(ns["k"])
    a = np.zeros(1, np.int64)
    for x in (0, 1, 123, n - 1, n, -5):
        k[1, 1](a, x)
        print(x, a[0])
