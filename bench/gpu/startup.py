"""Start-up on the GPU against CuPy (cupyx.jit), Numba-CUDA and Triton, in fresh processes.

    PYTHONPATH=python python3 bench/gpu/startup.py      (bench/gpu/run.sh startup)

Each sample is a new process with fresh cache directories (bench/startup.py has the
method).  The CUDA context and the 2^16 float32 device arrays are made first; "first
call" then runs from defining a saxpy kernel to the end of its synchronised first
launch, so it holds the decorator, compiling or loading the kernel and the launch.
Medians in ms.  BENCH_RUNS sets the number of samples (default 5).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import startup  # noqa: E402  (bench/startup.py)

RUNS = int(os.environ.get("BENCH_RUNS", "5"))

KILN = """
import time, numpy as np
import kiln
h = np.ones(1 << 16, np.float32)
x = kiln.to_device(h); y = kiln.to_device(h); out = kiln.device_array(h.size, np.float32)
kiln.synchronize()
t0 = time.perf_counter()

@kiln.jit
def saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

saxpy[(h.size + 255) // 256, 256](out, x, y, np.float32(2))
kiln.synchronize()
t1 = time.perf_counter()
assert out.copy_to_host()[0] == 3
print((t1 - t0) * 1e3)
"""

CUPY = """
import time, numpy as np
import cupy as cp
from cupyx import jit
x = cp.ones(1 << 16, cp.float32); y = cp.ones_like(x); out = cp.empty_like(x)
cp.cuda.Device().synchronize()
t0 = time.perf_counter()

@jit.rawkernel()
def saxpy(out, x, y, a, n):
    i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if i < n:
        out[i] = a * x[i] + y[i]

saxpy(((x.size + 255) // 256,), (256,), (out, x, y, cp.float32(2), cp.int32(x.size)))
cp.cuda.Device().synchronize()
t1 = time.perf_counter()
assert float(out[0]) == 3
print((t1 - t0) * 1e3)
"""

NUMBA = """
import time, numpy as np
np.row_stack = np.vstack
from numba import cuda
h = np.ones(1 << 16, np.float32)
x = cuda.to_device(h); y = cuda.to_device(h); out = cuda.device_array(h.size, np.float32)
cuda.synchronize()
t0 = time.perf_counter()

@cuda.jit(cache=True)
def saxpy(out, x, y, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

saxpy[(h.size + 255) // 256, 256](out, x, y, np.float32(2))
cuda.synchronize()
t1 = time.perf_counter()
assert out.copy_to_host()[0] == 3
print((t1 - t0) * 1e3)
"""

TRITON = """
import time
import torch, triton
import triton.language as tl
x = torch.ones(1 << 16, device="cuda"); y = torch.ones_like(x); out = torch.empty_like(x)
torch.cuda.synchronize()
t0 = time.perf_counter()

@triton.jit
def saxpy(out_ptr, x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, a * tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

saxpy[((x.numel() + 255) // 256,)](out, x, y, 2.0, x.numel(), BLOCK=256)
torch.cuda.synchronize()
t1 = time.perf_counter()
assert out[0].item() == 3
print((t1 - t0) * 1e3)
"""

PEERS = [("kiln", KILN, "kiln"), ("CuPy (cupyx.jit)", CUPY, "cupy"),
         ("Numba-CUDA (cache=True)", NUMBA, "numba.cuda"), ("Triton", TRITON, "triton")]


def main():
    startup.compile_bytecode()
    table = {}
    for name, code, module in PEERS:
        imp = startup.measure(startup.IMPORT.format(lib=module), False, RUNS)
        cold = startup.measure(code, False, RUNS)
        warm = startup.measure(code, True, RUNS)
        table[name] = (imp, cold, warm)
        print(f"{name}: import {startup.fmt(imp)}, cold {startup.fmt(cold)}, "
              f"warm {startup.fmt(warm)} ms", file=sys.stderr, flush=True)
    print(f"Start-up on the GPU, medians of {RUNS} fresh processes, ms\n")
    print("| | import | cold first call | warm first call (disk cache) |")
    print("| --- | ---: | ---: | ---: |")
    for name, (imp, cold, warm) in table.items():
        print(f"| {name} | {startup.fmt(imp)} | {startup.fmt(cold)} | {startup.fmt(warm)} |")
    print("| budget (kiln) | < 30 | < 150 | < 5 |")
    print()
    print(json.dumps(table))


if __name__ == "__main__":
    main()
