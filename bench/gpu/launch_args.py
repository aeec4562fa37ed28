"""Launch overhead by argument count on the GPU: each launcher called LAUNCHES times from a
plain loop in a function (no lambda), against the C loop of the same launcher's packed
arguments (the floor) and the whole launch path called from a C loop (kiln's own cost without
the interpreter's).

    PYTHONPATH=python python3 bench/gpu/launch_args.py

Besides its lines it prints each case's ratios as table rows, which bench/ab.py compares
between two builds (`AB_SCRIPT=launch_args.py bash bench/gpu/run.sh ab`).
"""
import statistics, time, numpy as np, kiln
N = 1024
LAUNCHES = 20000

@kiln.jit
def k0():
    pass

@kiln.jit
def k1(a):
    i = kiln.grid(1)
    if i < a.size:
        a[i] = 1.0

@kiln.jit
def k3(a, b, c):
    i = kiln.grid(1)
    if i < a.size:
        c[i] = a[i] + b[i]

@kiln.jit
def k5(a, b, c, x, n):
    i = kiln.grid(1)
    if i < n:
        c[i] = a[i] + b[i] * x



def python_loop(ln, args, count):
    """The launcher called count times from a Python loop in a function (locals, as a
    training step would); seconds per launch."""
    t = time.perf_counter()
    for _ in range(count):
        ln(*args)
    return (time.perf_counter() - t) / count


def main():
    from kiln import _kiln
    a, b, c = (kiln.device_array(N, np.float32) for _ in range(3))
    cases = {"k0": (k0, ()), "k1": (k1, (a,)), "k3": (k3, (a, b, c)), "k5": (k5, (a, b, c, 1.5, N)),
             "k5 ints": (k5, (a, b, c, 1.5, 7))}
    print("us per launch, median of 7 rounds of", LAUNCHES)
    print("floor: cuLaunchKernel from a C loop, arguments packed once; path: kiln's whole launch "
          "path from a C loop; kiln: the launcher called from a Python loop")
    for name, (k, args) in cases.items():
        ln = k[N // 256, 256]
        ln(*args)
        kiln.synchronize()
        fl, pl, kl = [], [], []
        for r in range(7):
            fl.append(ln._raw_launches(LAUNCHES, *args) * 1e6)
            kiln.synchronize()
            pl.append(ln._path_launches(LAUNCHES, *args) * 1e6)
            kiln.synchronize()
            kl.append(python_loop(ln, args, LAUNCHES) * 1e6)
            kiln.synchronize()
        f, p, k_ = statistics.median(fl), statistics.median(pl), statistics.median(kl)
        print(f"{name:8s} floor {f:.3f}  path {p:.3f} ({p / f:.3f}x)  kiln {k_:.3f} "
              f"({k_ / f:.3f}x, {k_ - f:.3f} over)")
        # rows bench/ab.py reads (run.sh ab with AB_SCRIPT=launch_args.py): ratios to the
        # floor of the same rounds, so that two processes' drift cancels
        print(f"| {name} path / floor | {p / f:.4f} |")
        print(f"| {name} kiln / floor | {k_ / f:.4f} |")
    ctx = statistics.median(_kiln._ctx_check_seconds(200000) for _ in range(5))
    print(f"the context check each launch makes (cuCtxGetCurrent): {ctx * 1e9:.1f} ns")


if __name__ == "__main__":
    main()
