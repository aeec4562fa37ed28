"""kiln.fuse on the GPU, side by side in one run (issue 11): the issue's two expressions on
2^14 x 2^12 float32 arrays,

  rows:  np.sum(np.exp(-x*x/2) * np.where(y > 0, y, 0.1*y), axis=-1)   (a row reduction)
  chain: np.exp(x * y + 0.5) * x - y / 3.0                             (6 elementwise ops)

each as kiln.fuse (precise, and with fastmath=True: approximate exp and division, as
Triton's code from torch.compile uses), cupy.fuse, CuPy unfused (one kernel per operation), torch eager, and
torch.compile (default and max-autotune), next to the device-to-device copy ceiling of the
same run.  Every result is checked against NumPy float64 first.  Times are CUDA-event
medians (bench/gpu/timing.py) of BATCH calls back to back, divided by BATCH (a single call's
interval would also hold its own host work before the kernel starts); GB/s counts the bytes the expression must move at least
(x and y read once, the output written once), so a fused kernel at the ceiling reads 100%.
Then max-autotune against default for kiln.fuse at 3 sizes.

    PYTHONPATH=python python3 bench/gpu/fuse.py
"""
import statistics
import sys
import time

import numpy as np

import cupy as cp

from timing import copy_ceiling, gpu_time

import kiln

ROWS, COLS = 1 << 14, 1 << 12
REPS = 20
BATCH = 10   # calls per timed interval: the device's time in steady state, each call's host
             # work overlapping the kernels queued before it, as in a user's loop


def rows(x, y):
    return np.sum(np.exp(-x * x / 2) * np.where(y > 0, y, 0.1 * y), axis=-1)


def chain(x, y):
    return np.exp(x * y + 0.5) * x - y / 3.0


def bias(x, b):
    return np.exp(x * b + 0.5) * x - b / 3.0


def bias_cupy(x, b):
    return cp.exp(x * b + 0.5) * x - b / 3.0


def bias_torch(x, b):
    import torch
    return torch.exp(x * b + 0.5) * x - b / 3.0


def rows_cupy(x, y):
    return cp.sum(cp.exp(-x * x / 2) * cp.where(y > 0, y, 0.1 * y), axis=-1)


def chain_cupy(x, y):
    return cp.exp(x * y + 0.5) * x - y / 3.0


def rows_torch(x, y):
    import torch
    return torch.sum(torch.exp(-x * x / 2) * torch.where(y > 0, y, 0.1 * y), dim=-1)


def chain_torch(x, y):
    import torch
    return torch.exp(x * y + 0.5) * x - y / 3.0


def us_per_call(f, args, reps):
    """Median over 7 rounds of the microseconds per call of `reps` calls back to back."""
    f(*args)
    kiln.synchronize()
    med = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            f(*args)
        kiln.synchronize()
        med.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(med)


def to_host(r):
    if hasattr(r, "copy_to_host"):
        return r.copy_to_host()
    if isinstance(r, cp.ndarray):
        return cp.asnumpy(r)
    return r.detach().cpu().numpy()


def main():
    _, ceiling = copy_ceiling()
    info = kiln._kiln.cuda_info()
    dev = info["devices"][0] if info.get("devices") else ("?", "?")
    print(f"# kiln.fuse on the GPU: {dev[0]}, kiln {kiln.__version__}, cupy {cp.__version__}, "
          f"x, y {ROWS} x {COLS} float32; copy ceiling {ceiling:.0f} GB/s; CUDA-event medians of {REPS} "
          f"intervals of {BATCH} calls\n")
    rng = np.random.default_rng(1)
    xh = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    yh = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    x, y = cp.asarray(xh), cp.asarray(yh)
    impls = {
        "rows": {"kiln.fuse": kiln.fuse(rows), "kiln.fuse(fastmath=True)": kiln.fuse(rows, fastmath=True),
                 "cupy.fuse": cp.fuse(rows_cupy),
                 "CuPy unfused": rows_cupy},
        "chain": {"kiln.fuse": kiln.fuse(chain), "kiln.fuse(fastmath=True)": kiln.fuse(chain, fastmath=True),
                  "cupy.fuse": cp.fuse(chain_cupy),
                  "CuPy unfused": chain_cupy},
        "chain, b one row broadcast": {"kiln.fuse": kiln.fuse(bias),
                                       "kiln.fuse(fastmath=True)": kiln.fuse(bias, fastmath=True),
                                       "cupy.fuse": cp.fuse(bias_cupy),
                                       "CuPy unfused": bias_cupy},
    }
    try:
        import torch
        tx, ty = torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda")
        tb = torch.as_tensor(y[0], device="cuda")
        for name, f in (("rows", rows_torch), ("chain", chain_torch),
                        ("chain, b one row broadcast", bias_torch)):
            impls[name]["torch eager"] = f
            impls[name]["torch.compile"] = torch.compile(f)
            impls[name]["torch.compile max-autotune"] = torch.compile(f, mode="max-autotune")
    except Exception as e:  # a missing peer is reported, not fatal
        print(f"torch: n/a ({type(e).__name__}: {e})")
        tx = ty = None
    table = []
    for name, group in impls.items():
        bcast = name.startswith("chain, b")
        yy = yh[0] if bcast else yh
        fn = rows if name == "rows" else bias if bcast else chain
        want = fn(xh.astype(np.float64), yy.astype(np.float64))
        out_bytes = want.size * 4
        nbytes = xh.nbytes + yy.nbytes + out_bytes
        for label, f in group.items():
            if label.startswith("torch"):
                args = (tx, tb if bcast else ty)
            else:
                args = (x, y[0] if bcast else y)
            try:
                got = to_host(f(*args))
                tol = 2e-3 * (np.abs(want).max() if name == "rows" else 1.0)
                np.testing.assert_allclose(got, want, rtol=2e-3, atol=tol, err_msg=label)
                sec = gpu_time(lambda: [f(*args) for _ in range(BATCH)], REPS) / BATCH
                gbs = nbytes / sec / 1e9
                table.append((name, label, f"{sec * 1e3:.3f}", f"{gbs:.0f}", f"{gbs / ceiling:.0%}"))
            except Exception as e:
                table.append((name, label, "n/a", "", f"{type(e).__name__}: {str(e)[:90]}"))
        kiln_sec = next((float(r[2]) for r in table if r[0] == name and r[1] == "kiln.fuse"
                         and r[2] != "n/a"), None)
        if kiln_sec:
            table = [r if r[0] != name or r[2] == "n/a" else
                     r + (f"{float(r[2]) / kiln_sec:.2f}",) for r in table]
    print("| expression | implementation | ms | GB/s | of copy ceiling | its time / kiln's |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in table:
        print("| " + " | ".join(r) + (" |" if len(r) == 6 else " | |"))
    sys.stdout.flush()

    # ---- max-autotune against default: kiln.fuse at 3 sizes -------------------------------
    print("\n# max-autotune against default: kiln.fuse chain, float32, us per call (median)\n")
    print("| size | default us | max-autotune us | speed-up |")
    print("| --- | --- | --- | --- |")
    for bits in (16, 20, 24):
        n = 1 << bits
        a, b = cp.asarray(rng.random(n, dtype=np.float32)), cp.asarray(rng.random(n, dtype=np.float32))
        default = kiln.compile(kiln.fuse(chain))
        tuned = kiln.compile(kiln.fuse(chain), mode="max-autotune")
        tuned(a, b)
        reps = max(20, (1 << 26) // n)
        ts = {"default": us_per_call(default, (a, b), reps), "tuned": us_per_call(tuned, (a, b), reps)}
        print(f"| 2^{bits} | {ts['default']:.2f} | {ts['tuned']:.2f} | "
              f"{ts['default'] / ts['tuned']:.2f} |")
    sys.stdout.flush()

    # ---- max-autotune against default: fused row reductions of three shapes ---------------
    # one block per row: few long rows leave multiprocessors idle at the default 256
    # threads; the search times 128..1024 per block (docs/modes.md)
    print("\n# max-autotune against default: kiln.fuse rows (`rows` above), float32, "
          "us per call (median), GB/s of x and y read once\n")
    print("| shape | default us | max-autotune us | speed-up | default GB/s | tuned GB/s | choice |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for shape in ((64, 1 << 20), (1024, 1 << 16), (1 << 14, 1 << 12)):
        x = cp.asarray(rng.standard_normal(shape, dtype=np.float32))
        y = cp.asarray(rng.standard_normal(shape, dtype=np.float32))
        f_def, f_tun = kiln.fuse(rows), kiln.fuse(rows)
        default = kiln.compile(f_def)
        tuned = kiln.compile(f_tun, mode="max-autotune")
        want = to_host(default(x, y))
        got = to_host(tuned(x, y))
        assert np.allclose(got, want, rtol=1e-4, atol=1e-3), "tuned rows differ from default"
        ts = {"default": us_per_call(default, (x, y), 10), "tuned": us_per_call(tuned, (x, y), 10)}
        nbytes = 2 * x.nbytes
        choice = [v for k, v in kiln._autotune.kept()
                  if k.startswith("autotune|fuse-rows-gpu|") and f":rows{shape[0].bit_length()}|" in k]
        print(f"| {shape[0]} x {shape[1]} | {ts['default']:.1f} | {ts['tuned']:.1f} | "
              f"{ts['default'] / ts['tuned']:.2f} | {nbytes / ts['default'] / 1e3:.0f} | "
              f"{nbytes / ts['tuned'] / 1e3:.0f} | {choice[-1] if choice else '?'} |")
        sys.stdout.flush()
        del x, y


if __name__ == "__main__":
    main()
