# limits: the generated source is linear in the input.  `a or b or c ...` doubled with
# each operand (24 operands: out of memory), and a global tuple was written out whole
# at each use; sizes for n, 2n and 4n show the growth without timing anything.  Past
# KILN_MAX_SOURCE_BYTES (16 MiB) a kernel is refused with a CompileError naming it.
import linecache
import numpy as np
import kiln


def kernel(name, src, glb=None):
    fname = f"<{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"kiln": kiln}
    ns.update(glb or {})
    exec(compile(src, fname, "exec"), ns)
    return kiln.jit(ns["k"])


def size(k, *args):
    k[1, 1](*args)
    return len(k.inspect_source())


def linear(sizes):
    d1, d2 = sizes[1] - sizes[0], sizes[2] - sizes[1]
    return 0 < d1 and d2 <= 2.25 * d1


def main():
    a = np.zeros(4)
    sizes = []
    for n in (12, 24, 48):
        src = "def k(a, x, y):\n    a[0] = " + " or ".join(f"(x * {i})" for i in range(n)) + " or y\n"
        sizes.append(size(kernel(f"or{n}", src), a, 0.0, 7.0))
    print("or chain linear:", linear(sizes), "value:", a[0])
    sizes = []
    for n in (12, 24, 48):
        src = "def k(a, x, y):\n    a[0] = " + " and ".join(f"(x + {i})" for i in range(n)) + "\n"
        sizes.append(size(kernel(f"and{n}", src), a, 1.0, 7.0))
    print("and chain linear:", linear(sizes), "value:", a[0])
    sizes = []
    for n in (1000, 2000, 4000):
        uses = "".join(f"    a[{j % 4}] += T[i + {j}] + T[{j}]\n" for j in range(n // 100))
        src = "def k(a, i):\n" + uses + "    t = T\n    a[0] += t[i]\n"
        sizes.append(size(kernel(f"tuple{n}", src, {"T": tuple(range(n))}), a, 1))
    print("tuple linear:", linear(sizes))
    big = tuple(i * 0.1 for i in range(1_000_000))
    try:
        kernel("huge", "def k(a, i):\n    a[0] = T[i]\n", {"T": big})[1, 1](a, 1)
        print("huge ok")
    except kiln.CompileError as e:
        print("CompileError:", str(e).splitlines()[0])
