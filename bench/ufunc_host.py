"""Host cost of a kiln.vectorize call on kiln arrays, without a GPU: the fake driver
(tests/fake_cuda, built by `make build`) takes the launches, so what is timed is kiln's
own path (typing, the memoised flat launch, packing), plain, in kiln.compile's default
mode and in max-autotune after its search; beside it, the same expression as a kernel
launched with a reused launcher (the floor of kiln's own path) and as a kiln.fuse call
into a new array (the fake driver's allocation is a real malloc: that row is an upper
bound).

    KILN_CUDA_DRIVER=build/libkiln-fake-cuda.so PYTHONPATH=python .venv/bin/python bench/ufunc_host.py

Medians of 7 rounds of 20000 calls, ns per call."""
import statistics
import time

import numpy as np

import kiln


@kiln.vectorize
def poly(x, y):
    return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)


def main():
    n = 1 << 16
    rng = np.random.default_rng(0)
    a = kiln.to_device(rng.random(n, dtype=np.float32))
    b = kiln.to_device(rng.random(n, dtype=np.float32))
    out = kiln.device_array(n, np.float32)
    default = kiln.compile(lambda a, b, out: poly(a, b, out=out))
    tuned = kiln.compile(lambda a, b, out: poly(a, b, out=out), mode="max-autotune")
    plain = lambda a, b, out: poly(a, b, out=out)  # noqa: E731

    @kiln.jit
    def kpoly(o, x, y):
        i = kiln.grid(1)
        if i < o.size:
            o[i] = (x[i] * x[i] * 0.5 + y[i] * 3.0 - 1.0) * (x[i] - y[i])

    @kiln.fuse
    def fpoly(x, y):
        return (x * x * 0.5 + y * 3.0 - 1.0) * (x - y)

    launcher = kpoly[(n + 255) // 256, 256]
    kernel = lambda a, b, out: launcher(out, a, b)  # noqa: E731
    fused = lambda a, b, out: fpoly(a, b)  # noqa: E731
    for f in (tuned, default, plain, kernel, fused):  # the search, the memo
        f(a, b, out)

    def per_call(f, reps=20000):
        ts = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(reps):
                f(a, b, out)
            ts.append((time.perf_counter() - t0) / reps * 1e9)
        return statistics.median(ts)

    rows = [(name, per_call(f)) for name, f in
            (("kernel, launcher reused: launcher(out, a, b)", kernel),
             ("poly(a, b, out=out)", plain), ("kiln.compile(default)", default),
             ("kiln.compile(max-autotune)", tuned), ("kiln.fuse: fpoly(a, b)", fused))]
    print("| call, 2^16 float32 kiln arrays | ns per call |")
    print("| --- | ---: |")
    for name, v in rows:
        print(f"| {name} | {v:.0f} |")


if __name__ == "__main__":
    main()
