import atexit
import os
import shutil
import signal
import sys
import tempfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# KILN_TEST_PYDIR: another build of the package (make test-san-py uses the ASan+UBSan one)
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(os.path.dirname(HERE), "python")
sys.path.insert(0, PYDIR)

# Every run starts with an empty kernel cache of its own (and never touches ~/.cache).
_CACHE = tempfile.mkdtemp(prefix="kiln-test-cache-")
os.environ["KILN_CACHE_DIR"] = _CACHE
os.environ.pop("KILN_REMOTE_CACHE", None)
# The suite checks the optimised builds (their stats, errors and float results): a first
# call builds at once, as with KILN_TIERS=0.  tests/python/test_tiers.py turns tiers on.
os.environ.setdefault("KILN_TIERS", "0")
atexit.register(shutil.rmtree, _CACHE, True)
# The tests launch small grids on purpose: the low-occupancy warning stays off (kiln's
# default) even where the environment turns it on; test_fake_driver's test turns it on.
os.environ["KILN_LOW_OCCUPANCY_WARNINGS"] = "0"

# A suite started in the background by a shell without job control (`cmd &`) inherits SIGINT
# ignored, and so would every child it starts: Python then installs no KeyboardInterrupt
# handler, and the Ctrl-C tests could not work.  Children get the default back (an ignored
# signal stays ignored across exec; a handled one does not).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def rng():
    """Fresh random inputs on every run; the seed is printed on failure."""
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"random seed: {seed}")
    return np.random.default_rng(seed)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
ALL_DTYPES = [np.bool_] + INT_DTYPES + FLOAT_DTYPES


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return rng.uniform(-100, 100, shape).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def layouts(a):
    """The same values as C, F, strided and negatively strided arrays (2-d a)."""
    big = np.empty((a.shape[0] * 2, a.shape[1] * 3), a.dtype)
    strided = big[::2, ::3]
    strided[...] = a
    neg = np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    return {"C": np.ascontiguousarray(a), "F": np.asfortranarray(a), "strided": strided,
            "negative": neg}
