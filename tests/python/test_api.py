"""The Python API as LANGUAGE.md gives it: Numba-style files, import cost, inspection."""
import os
import subprocess
import sys

import numpy as np

import kiln

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_py(code):
    env = dict(os.environ, PYTHONPATH=os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_numba_style_file_runs_after_changing_the_import():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "numba_files"))
    try:
        import examples
        assert examples.run() == "ok"
    finally:
        sys.path.pop(0)


def test_import_kiln_does_not_import_numpy_or_the_compiler():
    r = run_py("import sys, kiln; print('numpy' in sys.modules, 'kiln._compile' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
    # nor the standard library's slow imports (10 of `import kiln`'s 17 ms once): each is
    # imported where it is used
    heavy = ("statistics", "hashlib", "re", "threading", "contextlib", "enum")
    r = run_py(f"import sys; before = set(sys.modules); import kiln; "
               f"print([m for m in {heavy!r} if m in sys.modules and m not in before])")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_memoryview_and_buffer_arguments():
    @kiln.jit
    def k(a, out):
        i = kiln.grid(1)
        if i < len(a):
            out[i] = a[i] * 2
    import array
    a = array.array("d", [1.0, 2.0, 3.0])
    out = bytearray(24)
    k[1, 4](a, memoryview(out).cast("d"))
    assert np.frombuffer(out).tolist() == [2.0, 4.0, 6.0]


def test_numpy_scalar_arguments_keep_their_dtype():
    @kiln.jit
    def k(out, s):
        out[0] = s * 3
    out = np.zeros(1, np.float32)
    k[1, 1](out, np.float32(1.5))
    assert "s: float32" in k.inspect_types(file=False)
    k[1, 1](out, np.int16(2))
    assert len(k.signatures) == 2


def test_inspect_types_and_signatures():
    @kiln.jit
    def k(a, n):
        i = kiln.grid(1)
        if i < n:
            a[i] = i * 0.5
    k[1, 8](np.zeros(8, np.float32), 8)
    assert k.signatures == ["(float32[::1], int64)"]
    text = k.inspect_types(file=False)
    assert "kernel k(a: array(float32, 1d, C), n: int64)" in text
    assert "    i: int64" in text
    src = k.inspect_source("(float32[::1], int64)")
    assert "kiln_body" in src
    # every specialisation, as Numba prints each overload; nothing before the first
    k[1, 8](np.zeros(8), 8)
    text = k.inspect_types(file=False)
    assert text.count("kernel k(") == 2 and "a: array(float64, 1d, C)" in text
    assert "a: array(float64" not in k.inspect_types("(float32[::1], int64)", file=False)

    @kiln.jit
    def fresh(a):
        a[0] = 1
    assert fresh.inspect_types(file=False) == "" and fresh.inspect_types() is None  # (hunt22 5)


def test_type_objects_build_signatures():
    sig = kiln.void(kiln.float32[::1], kiln.float64[:, ::1], kiln.int64)
    assert str(sig) == "void(float32[::1], float64[:, ::1], int64)"
    assert str(kiln.float32[::1, :]) == "float32[::1, :]"

    @kiln.jit(sig)
    def k(a, b, n):
        a[0] = b[0, 0] + n
    a = np.zeros(2, np.float32)
    k[1, 1](a, np.ones((2, 2)), 3)
    assert a[0] == 4


def test_intrinsics_on_the_host_say_where_they_belong():
    import pytest
    with pytest.raises(TypeError, match="can only be used inside a kiln kernel"):
        kiln.grid(1)


def test_closures_and_nested_kernels():
    factor = 7

    @kiln.jit
    def k(a):
        a[0] = factor

    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == 7


def test_plain_python_helper_becomes_a_device_function():
    def helper(x):
        return x * x + 1

    @kiln.jit
    def k(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = helper(a[i])

    a = np.arange(5.0)
    k[1, 8](a)
    assert a.tolist() == [1.0, 2.0, 5.0, 10.0, 17.0]
