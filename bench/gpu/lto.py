"""Link-time optimisation of external device code (issue 14): a kernel calling a small
external device function 64 times per element, the function given as a CUDA C source, as
LTO-IR and as PTX (NVRTC's relocatable output of the same source), linked by kiln with and
without LTO and by Numba-CUDA the same ways.  ms per launch over 2^22 float32 elements,
CUDA-event medians of 20 runs; every variant's result is checked against kiln's .cu one.

    PYTHONPATH=python python3 bench/gpu/lto.py
"""
import os
import sys
import tempfile

import numpy as np
import cupy as cp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import gpu_time  # noqa: E402

import kiln  # noqa: E402
from kiln import _kiln  # noqa: E402

SRC = ('extern "C" __device__ int step(float *out, float x, float k) '
       '{ *out = x * 0.999f + k * 1e-3f; return 0; }\n')
N = 1 << 22
ITERS = 64

cc = kiln.get_current_device().compute_capability
arch = cc[0] * 10 + cc[1]
tmp = tempfile.mkdtemp(prefix="kiln-lto-")
files = {}
for ext, output in (("ptx", 1), ("ltoir", 2)):
    code, _, _, _ = _kiln.nvrtc_compile(SRC, (0, 0, 0), arch, True, "step", False, output)
    files[ext] = os.path.join(tmp, "step." + ext)
    with open(files[ext], "wb") as f:
        f.write(bytes(code).rstrip(b"\0") if ext == "ptx" else bytes(code))
files["cu"] = os.path.join(tmp, "step.cu")
with open(files["cu"], "w") as f:
    f.write(SRC)

x = cp.asarray(np.random.default_rng(0).random(N, dtype=np.float32))
rows = []


def kiln_variant(link, lto):
    step = kiln.declare_device("step", "float32(float32, float32)", link=link)

    def body(out, x):
        i = kiln.grid(1)
        if i < x.size:
            acc = x[i]
            for k in range(ITERS):
                acc = step(acc, kiln.float32(k))
            out[i] = acc

    k = kiln.jit(lto=lto)(body)
    out = cp.empty_like(x)
    blocks = (N + 255) // 256
    return (lambda: k[blocks, 256](out, x)), out


def numba_variant(link, lto):
    if not hasattr(np, "row_stack"):  # numba-cuda still names it; NumPy 2.x removed it
        np.row_stack = np.vstack
    from numba import cuda, float32
    step = cuda.declare_device("step", float32(float32, float32), link=[link])

    @cuda.jit(link=[link], lto=lto)
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            acc = x[i]
            for j in range(ITERS):
                acc = step(acc, float32(j))
            out[i] = acc

    out = cp.empty_like(x)
    blocks = (N + 255) // 256
    return (lambda: k[blocks, 256](out, x)), out


want = None
variants = [("kiln", ".cu source (one NVRTC program)", kiln_variant, files["cu"], True),
            ("kiln", "LTO-IR, LTO", kiln_variant, files["ltoir"], True),
            ("kiln", "PTX, no LTO", kiln_variant, files["ptx"], False),
            ("Numba-CUDA", ".cu source, LTO", numba_variant, files["cu"], True),
            ("Numba-CUDA", "LTO-IR, LTO", numba_variant, files["ltoir"], True),
            ("Numba-CUDA", "PTX, no LTO", numba_variant, files["ptx"], False)]
for who, how, make, link, lto in variants:
    try:
        run, out = make(link, lto)
        run()
        cp.cuda.Device().synchronize()
        got = cp.asnumpy(out)
        if want is None:
            want = got
        np.testing.assert_allclose(got, want, rtol=1e-5)
        ms = gpu_time(run, 20) * 1e3
        rows.append((who, how, f"{ms:.3f}"))
    except Exception as e:  # a peer that cannot do it is a row that says why
        rows.append((who, how, f"n/a ({type(e).__name__}: {str(e).splitlines()[0][:90]})"))
    print(rows[-1], file=sys.stderr, flush=True)

base = float(rows[0][2])
print(f"# LTO of external device code: {ITERS} calls per element, 2^22 float32, "
      f"{kiln.get_current_device().name}\n")
print("| implementation | linked as | ms | / kiln .cu |")
print("| --- | --- | ---: | ---: |")
for who, how, ms in rows:
    ratio = f"{float(ms) / base:.2f}" if not ms.startswith("n/a") else ""
    print(f"| {who} | {how} | {ms} | {ratio} |")
