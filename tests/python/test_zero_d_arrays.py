"""0-d device arrays in kernels (Numba's test_device_array_capture test_zero_dimensional):
as arguments and as globals captured by address, read and written as a[()], with
a.ndim 0, a.size 1 and a.shape ().  Under KILN_TARGET=cpu device arrays are host memory,
so this runs here; test_gpu_numba_gaps.py runs the same on the GPU."""
import os
import subprocess
import sys

PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "python")

SCRIPT = '''
import numpy as np, kiln
G = kiln.to_device(np.array(42.0, np.float32))

@kiln.jit
def k(out, x):
    out[()] = G[()] * 2.0 + x[()] + out.size + out.ndim + len(out.shape)
    G[()] = 7.0

out = kiln.device_array((), dtype=np.float32)
x = kiln.to_device(np.array(0.5, np.float32))
k[1, 1](out, x)
print(out.copy_to_host().tolist(), G.copy_to_host().tolist(), k.signatures)

@kiln.jit
def bad(out):
    out[0] = 1.0

try:
    bad[1, 1](out)
except kiln.CompileError as e:
    print(str(e).splitlines()[0].split("error: ")[1][:70])

@kiln.jit
def unsized(out):
    for v in out:
        out[()] = v

try:
    unsized[1, 1](out)
except kiln.CompileError as e:
    print(str(e).splitlines()[0].split("error: ")[1][:70])
'''


def test_zero_d_device_arrays_as_arguments_and_globals(tmp_path):
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TARGET="cpu")
    p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "85.5 7.0 ['(array(float32, 0d, C), array(float32, 0d, C))']",
        "too many indices for array: array is 0-dimensional, but 1 were indexed",
        "len() of unsized object (a 0-d array)",
    ], p.stdout
