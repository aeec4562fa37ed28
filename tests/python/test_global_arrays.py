"""Global NumPy arrays captured as constants (tests/lang/global_arrays.py has the language
side): a new process whose global array holds other values must not get the kernel another
process compiled with the old ones from the disk cache."""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")

SCRIPT = '''
import os, sys
import numpy as np
import kiln
TABLE = np.array([float(v) for v in os.environ["TABLE"].split(",")])

@kiln.jit
def k(out):
    i = kiln.grid(1)
    if i < TABLE.size:
        out[i] = TABLE[i] * 2

out = np.zeros(TABLE.size)
k[1, 32](out)
print(",".join(str(v) for v in out), kiln.cache.stats()["compiles"])
'''


def run(tmp_path, table):
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TARGET="cpu", TABLE=table, PYTHONDONTWRITEBYTECODE="1")
    env.pop("KILN_REMOTE_CACHE", None)
    (tmp_path / "k.py").write_text(SCRIPT)
    p = subprocess.run([sys.executable, "k.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    values, compiles = p.stdout.split()
    return [float(v) for v in values.split(",")], int(compiles)


def test_changed_global_array_is_a_new_kernel_across_processes(tmp_path):
    first, c1 = run(tmp_path, "1,2,3")
    again, c2 = run(tmp_path, "1,2,3")
    changed, c3 = run(tmp_path, "5,6,7")
    assert first == again == [2.0, 4.0, 6.0] and c1 >= 1 and c2 == 0  # the disk cache's hit
    assert changed == [10.0, 12.0, 14.0] and c3 >= 1                 # not the old kernel


def test_global_array_limit_and_dtypes_say_what_is_wrong():
    import kiln
    from kiln import _compile

    BIG = np.zeros(_compile.MAX_CONST_ARRAY_BYTES // 8 + 1)
    WORDS = np.array(["a", "b"])

    @kiln.jit
    def big(out):
        out[0] = BIG[0]

    @kiln.jit
    def words(out):
        out[0] = WORDS[0]

    import pytest
    with pytest.raises(kiln.CompileError, match=r"global 'BIG' is a NumPy array of 1048584 bytes, "
                                                r"over the 1048576 bytes"):
        big[1, 1](np.zeros(1))
    with pytest.raises(kiln.CompileError, match=r"global 'WORDS' is a NumPy array of dtype <U1"):
        words[1, 1](np.zeros(1))


def test_global_device_array_is_captured_by_address(tmp_path):
    # Numba's rule (test_globals' second doc example): a global device array is read (and
    # written) where it lies at each launch; its later contents are seen.  Under
    # KILN_TARGET=cpu device arrays are host memory, so this runs here.
    script = '''
import numpy as np, kiln
PRICES = kiln.to_device(np.array([10.0, 25.0, 5.0], dtype=np.float32))
GRID = kiln.to_device(np.arange(6, dtype=np.int64).reshape(2, 3))

@kiln.jit
def totals(q, out):
    i = kiln.grid(1)
    if i < out.size:
        out[i] = q[i] * PRICES[i] + GRID[1, i] + GRID.shape[0]
        PRICES[i] += 1

q = kiln.to_device(np.ones(3, np.float32))
out = kiln.device_array(3, np.float32)
totals[1, 32](q, out)
print(out.copy_to_host().tolist(), PRICES.copy_to_host().tolist())
PRICES.copy_to_device(np.array([20.0, 50.0, 10.0], dtype=np.float32))
totals[1, 32](q, out)
print(out.copy_to_host().tolist(), PRICES.copy_to_host().tolist())
T = kiln.to_device(np.zeros((4, 4)))[:, 1]

@kiln.jit
def strided(o):
    o[0] = T[0]

try:
    strided[1, 1](np.zeros(1))
except kiln.CompileError as e:
    print(str(e).splitlines()[0].split("error: ")[1][:60])
'''
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_CACHE_DIR=str(tmp_path / "cache"),
               KILN_TARGET="cpu")
    p = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "[15.0, 31.0, 12.0] [11.0, 26.0, 6.0]",
        "[25.0, 56.0, 17.0] [21.0, 51.0, 11.0]",
        "global 'T' is a kiln device array that is not C-contiguous (",
    ], p.stdout
