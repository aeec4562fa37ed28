# limits: local arrays are per thread, at most KILN_MAX_LOCAL_BYTES (256 KiB) for a
# kernel and, per call, its device functions.  40 arrays of 256 KiB overflowed the
# thread stack (a crash); at the limit, a kernel runs on OpenMP's worker threads.
import linecache
import numpy as np
import kiln


def forty_arrays():
    """40 local arrays of 256 KiB each, every one written and read."""
    src = "def forty(a):\n    i = kiln.grid(1)\n    s = 0.0\n"
    for j in range(40):
        src += f"    l{j} = kiln.local.array(32768, kiln.float64)\n"
        src += f"    l{j}[(i * {j + 1}) % 32768] = {j}.0\n    s += l{j}[(i * {j + 1}) % 32768]\n"
    src += "    a[i] = s\n"
    linecache.cache["<forty>"] = (len(src), None, src.splitlines(True), "<forty>")
    ns = {"kiln": kiln}
    exec(compile(src, "<forty>", "exec"), ns)
    return kiln.jit(ns["forty"])


@kiln.jit(device=True)
def scratch(i):
    t = kiln.local.array(20000, kiln.float64)
    t[i % 20000] = i
    return t[i % 20000]


@kiln.jit
def twice(a):
    i = kiln.grid(1)
    a[i] = scratch(i) + scratch(i + 1)


@kiln.jit
def too_big(a):
    t = kiln.local.array((512, 512, 2), kiln.float32)
    a[0] = t[0, 0, 0]


@kiln.jit
def at_limit(a):
    i = kiln.grid(1)
    if i < a.size:
        lo = kiln.local.array(16384, kiln.float64)
        hi = kiln.local.array(16384, kiln.float64)
        lo[i % 16384] = i
        hi[16383 - i % 16384] = 1.0
        a[i] = lo[i % 16384] + hi[16383 - i % 16384]


def attempt(k, a, grid, block):
    try:
        k[grid, block](a)
        print(k.__name__, "ok")
    except kiln.CompileError as e:
        print(f"{k.__name__} CompileError: {e}")


def main():
    a = np.zeros(1 << 15)
    attempt(forty_arrays(), a, 1, 32)
    attempt(twice, a, 1, 32)
    attempt(too_big, a, 1, 1)
    # 32,768 threads: over the parallel threshold, so on OpenMP worker threads
    attempt(at_limit, a, 128, 256)
    print(bool((a == np.arange(a.size) + 1.0).all()))
