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


def run_cpu(tmp_path, script):
    """The script's output lines, run on the CPU target in a fresh process."""
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TARGET="cpu")
    p = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_zero_d_device_arrays_as_arguments_and_globals(tmp_path):
    assert run_cpu(tmp_path, SCRIPT) == [
        "85.5 7.0 ['(array(float32, 0d, C), array(float32, 0d, C))']",
        "too many indices for array: array is 0-dimensional, but 1 were indexed",
        "len() of unsized object (a 0-d array)",
    ]


NUMPY_SCRIPT = '''
import numpy as np, kiln

@kiln.jit
def k(out, x):
    out[()] = x[()] * 2

@kiln.jit
def acc(out, a):
    i = kiln.grid(1)
    if i < a.size:
        kiln.atomic.add(out, (), a[i])

@kiln.jit
def twice(out, s):
    out[0] = s * 2

o = np.zeros(())
k[1, 1](o, np.array(21.0))
print(o.tolist(), k.signatures)
o = np.zeros((), np.int64)
acc[4, 256](o, np.ones(1000, np.int64))
print(o.tolist())
o = np.zeros(1)
twice[1, 1](o, np.float32(3))          # a NumPy scalar is a value
print(o.tolist(), twice.signatures)
try:
    twice[1, 1](o, np.array(3.0))      # a 0-d array is an array, as in Numba
except kiln.CompileError as e:
    print([l for l in str(e).splitlines() if l.startswith("hint")][0])
'''


def test_zero_d_numpy_arrays_are_arrays_as_in_numba(tmp_path):
    """A 0-d NumPy array is passed as an array, written through as a[()] (Numba passes it
    so); a NumPy scalar, whose buffer is 0-d too, stays a value (hunt22 4)."""
    assert run_cpu(tmp_path, NUMPY_SCRIPT) == [
        "42.0 ['(array(float64, 0d, C), array(float64, 0d, C))']",
        "1000",
        "[6.0] ['(float64[::1], float32)']",
        "hint: a 0-d array's value is a[()]: use a[()] in the arithmetic",
    ]


def test_zero_d_signatures_read_back():
    """The text a 0-d array's launch lists, Numba's array(float64, 0d, C), is read back by
    every API that takes signatures (hunt29 6): inspect_* of all specialisations, compile,
    jit with it, specialize, and Array(dtype, 0, 'C') / float64[()] as type objects."""
    import numpy as np

    import kiln
    from kiln._dispatch import _args_of

    @kiln.jit
    def k(a, o):
        o[0] = a[()] + 1

    o = np.zeros(1)
    k[1, 1](np.array(2.0), o)
    sig = k.signatures[0]
    assert sig == "(array(float64, 0d, C), float64[::1])"
    assert len(k.inspect_llvm()) == 1 and "kiln_entry" in k.inspect_asm(sig)
    k.inspect_types(sig)
    assert k.specialize(np.array(1.0), o).signatures == [sig]
    k.compile(sig)
    j = kiln.jit(sig)(k.py_func)
    j[1, 1](np.array(5.0), o)
    assert o[0] == 6.0
    t = kiln.types.Array(kiln.float64, 0, "C")
    assert t == kiln.float64[()] and str(t) == "array(float64, 0d, C)"
    assert _args_of(sig) == (t, kiln.float64[::1])
    assert kiln.jit(kiln.void(t, kiln.float64[::1]))(k.py_func).signatures == [sig]
