"""Blocks as fibers on the CPU target (src/emit/rt_blocks.h); tests/lang/cpu_blocks.py has
the language side.  Here: what happens when the stacks cannot be mapped, and a block kernel
in a forked child (no OpenMP there: the serial path)."""
import os
import subprocess
import sys

import numpy as np

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")


def test_stacks_that_cannot_be_mapped_raise_memoryerror(tmp_path):
    # 1024 fibers with 256 KiB of local arrays each need about 330 MiB of address space;
    # with 64 MiB left under the process's limit the launch is refused cleanly
    script = '''
import resource, numpy as np, kiln
@kiln.jit
def k(a):
    s = kiln.shared.array(1024, kiln.float64)
    big = kiln.local.array(32768, kiln.float64)
    t = kiln.threadIdx.x
    big[t] = t
    s[t] = big[t]
    kiln.syncthreads()
    a[t] = s[1023 - t]
a = np.zeros(1024)
k[1, 1024](a)                       # compiled and run once with room to spare
assert a[0] == 1023.0
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (64 << 20), hard))
try:
    k[1, 1024](a)
    print("ran")
except MemoryError as e:
    print("MemoryError:", e)
'''
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_TARGET="cpu", KILN_TIERS="0",
               KILN_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("MemoryError: the CPU could not map"), p.stdout + p.stderr
    assert "use smaller blocks or fewer local arrays" in p.stdout


def test_block_kernel_in_a_forked_child():
    @kiln.jit
    def rev(a, out):
        s = kiln.shared.array(64, kiln.int64)
        t = kiln.threadIdx.x
        s[t] = a[kiln.grid(1)]
        kiln.syncthreads()
        out[kiln.grid(1)] = s[63 - t]

    a = np.arange(64 * 300, dtype=np.int64)   # 19200 threads: OpenMP in the parent
    out = np.zeros_like(a)
    rev[300, 64](a, out)
    want = a.reshape(300, 64)[:, ::-1].ravel()
    assert (out == want).all()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            out2 = np.zeros_like(a)
            rev[300, 64](a, out2)
            os.write(w, b"ok" if (out2 == want).all() else b"wrong")
        finally:
            os._exit(0)
    os.close(w)
    got = os.read(r, 16)
    os.waitpid(pid, 0)
    assert got == b"ok"
