"""Start-up on the CPU target, against Numba, in fresh processes.

    make bench-startup      (or: PYTHONPATH=python .venv/bin/python bench/startup.py;
                             BENCH_LIBS=kiln for kiln's rows alone, BENCH_RUNS=n samples)

Every sample is a new Python process with a cache directory of its own:

- import: ``import kiln`` (``import numba``) alone, in a process that imported nothing else;
- cold first call: NumPy already imported, the library imported, then the kernel defined and
  called once with an empty cache (a compile);
- warm first call: the same in a new process whose cache already holds the kernel
  (kiln's disk tier; Numba's ``cache=True`` files);
- the demo's cold first call: examples/demo.py's Black-Scholes (a device function, 2^22
  float32 options), inputs made before the clock, so the first call runs 4M threads too
  (Numba: the same code under ``njit(parallel=True)`` with ``prange``).

"First call" runs from just after the library's import to the kernel's return, so it holds
the decorator, argument typing, the cache lookup, loading and the launch.  Tables give medians
of ``RUNS`` samples in milliseconds.  Byte code is written (PYTHONDONTWRITEBYTECODE unset), as
it is for an installed package.
"""
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

RUNS = int(os.environ.get("BENCH_RUNS", "11"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPORT = """
import time
t0 = time.perf_counter()
import {lib}
t1 = time.perf_counter()
print((t1 - t0) * 1e3)
"""

KILN_CALL = """
import time, numpy as np
import kiln
t0 = time.perf_counter()

@kiln.jit
def saxpy(out, x, y, a):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

x = np.ones(1 << 16, np.float32); y = np.ones_like(x); out = np.empty_like(x)
saxpy[(x.size + 255) // 256, 256](out, x, y, np.float32(2))
t1 = time.perf_counter()
assert out[0] == 3
print((t1 - t0) * 1e3)
"""

NUMBA_CALL = """
import time, numpy as np
import numba
t0 = time.perf_counter()

@numba.njit(parallel=True, cache=True)
def saxpy(out, x, y, a):
    for i in numba.prange(out.size):
        out[i] = a * x[i] + y[i]

x = np.ones(1 << 16, np.float32); y = np.ones_like(x); out = np.empty_like(x)
saxpy(out, x, y, np.float32(2))
t1 = time.perf_counter()
assert out[0] == 3
print((t1 - t0) * 1e3)
"""


# The demo's kernel (examples/demo.py): Black-Scholes on 2^22 float32 options, the
# inputs made before the clock starts; the first call then also runs 4M threads.
BS_INPUTS = """
import time, math, numpy as np
n = 1 << 22
rng = np.random.default_rng(0)
price = rng.uniform(5.0, 30.0, n).astype(np.float32)
strike = rng.uniform(1.0, 100.0, n).astype(np.float32)
t = rng.uniform(0.25, 10.0, n).astype(np.float32)
call = np.empty(n, np.float32); put = np.empty(n, np.float32)
r, v = np.float32(0.02), np.float32(0.30)
"""

KILN_BS = BS_INPUTS + """
import kiln
t0 = time.perf_counter()

@kiln.jit(device=True)
def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    ret = 0.3989422804014327 * math.exp(-0.5 * d * d) * (K * (0.31938153 + K * (
        -0.356563782 + K * (1.781477937 + K * (-1.821255978 + K * 1.330274429)))))
    if d > 0:
        ret = 1.0 - ret
    return ret

@kiln.jit
def black_scholes(call, put, price, strike, t, r, v):
    i = kiln.grid(1)
    if i < price.size:
        s, x, tt = price[i], strike[i], t[i]
        sqrt_t = math.sqrt(tt)
        d1 = (math.log(s / x) + (r + 0.5 * v * v) * tt) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        exp_rt = math.exp(-r * tt)
        call[i] = s * cnd(d1) - x * exp_rt * cnd(d2)
        put[i] = x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))

black_scholes[n // 256, 256](call, put, price, strike, t, r, v)
t1 = time.perf_counter()
assert abs(call[0]) < 100
print((t1 - t0) * 1e3)
"""

NUMBA_BS = BS_INPUTS + """
import numba
t0 = time.perf_counter()

@numba.njit(cache=True)
def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * abs(d))
    ret = 0.3989422804014327 * math.exp(-0.5 * d * d) * (K * (0.31938153 + K * (
        -0.356563782 + K * (1.781477937 + K * (-1.821255978 + K * 1.330274429)))))
    if d > 0:
        ret = 1.0 - ret
    return ret

@numba.njit(parallel=True, cache=True)
def black_scholes(call, put, price, strike, t, r, v):
    for i in numba.prange(price.size):
        s, x, tt = price[i], strike[i], t[i]
        sqrt_t = math.sqrt(tt)
        d1 = (math.log(s / x) + (r + 0.5 * v * v) * tt) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        exp_rt = math.exp(-r * tt)
        call[i] = s * cnd(d1) - x * exp_rt * cnd(d2)
        put[i] = x * exp_rt * (1.0 - cnd(d2)) - s * (1.0 - cnd(d1))

black_scholes(call, put, price, strike, t, r, v)
t1 = time.perf_counter()
assert abs(call[0]) < 100
print((t1 - t0) * 1e3)
"""


def sample(code, cache_dir, workdir, extra_env=None):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    # every library's cache in the sample's own directory
    for var in ("KILN_CACHE_DIR", "NUMBA_CACHE_DIR", "CUPY_CACHE_DIR", "TRITON_CACHE_DIR"):
        env[var] = cache_dir
    env.update(extra_env or {})
    script = os.path.join(workdir, "kernel_script.py")  # caches key on the file: keep one
    with open(script, "w") as f:
        f.write(textwrap.dedent(code))
    p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                       cwd=workdir, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"sample failed:\n{p.stderr[-2000:]}")
    return float(p.stdout.strip().splitlines()[-1])


def measure(code, warm, runs=None, extra_env=None):
    """Median ms over fresh processes, each with a fresh cache (filled first when warm);
    None when the library is missing or the sample fails."""
    out = []
    try:
        for _ in range(runs or RUNS):
            work = tempfile.mkdtemp(prefix="kiln-bench-")
            cache = os.path.join(work, "cache")
            try:
                if warm:
                    sample(code, cache, work, extra_env)  # fills the cache
                out.append(sample(code, cache, work, extra_env))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except RuntimeError as e:
        print(f"(a sample failed: {str(e)[-300:]})", file=sys.stderr)
        return None
    return statistics.median(out)


def compile_bytecode():
    """Byte code for kiln exists before the first sample, as for an installed package."""
    subprocess.run([sys.executable, "-c", "import kiln, kiln._compile, kiln.cache"],
                   env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python"),
                        "PYTHONDONTWRITEBYTECODE": ""}, check=True)


def fmt(v):
    return f"{v:.1f}" if v is not None else "n/a"


def main():
    compile_bytecode()
    env = {"KILN_TARGET": "cpu"}
    # BENCH_LIBS=kiln: kiln's rows alone (Numba's cells n/a), for reruns of its figures
    peer = (lambda *a, **k: None) if os.environ.get("BENCH_LIBS") == "kiln" else measure
    rows = [
        ("import", measure(IMPORT.format(lib="kiln"), False),
         peer(IMPORT.format(lib="numba"), False), "< 30"),
        ("cold first call (empty cache)", measure(KILN_CALL, False, extra_env=env),
         peer(NUMBA_CALL, False), ""),
        ("warm first call (new process, disk cache)", measure(KILN_CALL, True, extra_env=env),
         peer(NUMBA_CALL, True), "< 5"),
        ("cold first call, the demo's Black-Scholes on 2^22 (compile + run)",
         measure(KILN_BS, False, extra_env=env), peer(NUMBA_BS, False), "< 30"),
    ]
    print(f"Start-up, CPU target: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; medians of {RUNS} fresh "
          "processes, ms\n")
    print("| | kiln | Numba (njit parallel, cache=True) | Numba / kiln | budget |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, k, n, budget in rows:
        ratio = f"{n / k:.0f}x" if n is not None and k else "n/a"
        print(f"| {name} | {fmt(k)} | {fmt(n)} | {ratio} | {budget} |")
    print()
    print(json.dumps({name: [k, n] for name, k, n, _ in rows}))


if __name__ == "__main__":
    main()
