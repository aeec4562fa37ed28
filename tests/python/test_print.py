"""print() in kernels: one printf per call on both targets (sema_print.c, emit_print.c).
The CPU's lines are flushed at once, so they sit among the program's own output in order;
tier 0 (tcc) prints the same.  What cannot be printed is a CompileError at its argument."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")

SCRIPT = '''
import sys
import numpy as np
import kiln

@kiln.jit
def show(a, flags):
    i = kiln.grid(1)
    if i < a.size:
        print(i, "hop! 100%", a[i], flags[i], (i, (2.5, True)), (7,), ("s",), "tab\\there")

@kiln.jit
def empty():
    print()

MODE = "fast 50%"

@kiln.jit(device=True)
def named(kind):
    print("kind", kind, MODE)

@kiln.jit
def strs():
    named("relu")  # string constants: the global's and the parameter's text

@kiln.jit
def dims():
    t = (kiln.blockIdx.x, 0)
    print(kiln.threadIdx, *(t[0], kiln.blockDim))

print("before", flush=True)
strs[1, 1]()
show[1, 3](np.array([0.5, -1.25, 3.0]), np.array([True, False, True]))
empty[1, 1]()
print("after", flush=True)
dims[2, (2, 1, 2)]()
'''


def run(env_extra):
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_TARGET="cpu", **env_extra)
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


@pytest.mark.parametrize("tiers", ["0", "tcc"])
def test_print_writes_python_s_layout_in_order(tiers):
    lines = run({"KILN_TIERS": tiers})
    # a Dim3 prints as Numba prints it, the tuple (x, y, z)
    dims = [f"({x}, 0, {z}) {b} (2, 1, 2)" for b in range(2) for z in range(2) for x in range(2)]
    assert sorted(lines[-8:]) == sorted(dims), lines[-8:]
    lines = lines[:-8]
    assert lines[0] == "before" and lines[-1] == "after" and lines[-2] == ""
    assert lines[1] == "kind relu fast 50%"
    body = sorted(lines[2:-2])
    want = [f"{i} hop! 100% {v:f} {f} ({i}, (2.500000, True)) (7,) ('s',) tab\there"
            for i, (v, f) in enumerate(((0.5, True), (-1.25, False), (3.0, True)))]
    assert body == want


def compile_error(tmp_path, src):
    ns = {"kiln": kiln, "np": np}
    path = str(tmp_path / "_print_case.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(src))
    exec(compile(textwrap.dedent(src), path, "exec"), ns)
    with pytest.raises(kiln.CompileError) as e:
        ns["k"][1, 1](np.zeros(40))
    return str(e.value)


@pytest.mark.parametrize("body, msg", [
    ('print(f"x={a[0]}")', "f-strings are not supported in kernels"),
    ('print(a[0], sep=",")', "print() takes no keyword arguments in kernels"),
    ("print(a)", "print() of array(float64, 1d, C) is not supported in kernels"),
    ("print(" + ", ".join(f"a[{i}]" for i in range(33)) + ")",
     "print() of 33 values; a kernel's print() takes at most 32"),
])
def test_what_cannot_be_printed_is_refused_at_its_line(tmp_path, body, msg):
    text = compile_error(tmp_path, f"""
        @kiln.jit
        def k(a):
            {body}
        """)
    assert msg in text and "_print_case.py:4" in text, text


def test_the_gpu_s_print_formats_are_in_constant_memory():
    # as Numba-CUDA's (get_const_mem_size counts them): a __constant__ array per print()
    from kiln import _compile, _kiln

    @kiln.jit
    def show(val, flag):
        if flag:
            print(val, "x", (1, 2.5))
            print(val)

    _, argkey = _kiln.parse_signature("void(int64, boolean)")
    src = _compile._translate(show, argkey, 1, 90).source
    assert '__constant__ char kfmt0_[] = "%lld x (%lld, %f)\\n";' in src
    assert '__constant__ char kfmt1_[] = "%lld\\n";' in src
    for arch in (80, 90):
        ptx = _kiln.nvrtc_compile(src, (0, 0, 0), arch, True)[0].decode()
        assert ".const .align 1 .b8 kfmt0_[19]" in ptx and ".const .align 1 .b8 kfmt1_[6]" in ptx
        assert "cvta.const.u64" in ptx


def test_string_escapes_print_as_python_prints_them(tmp_path):
    # \u, \U, octal, \a \b \f \v and \0 were printed as their source text, and \0 cut the line
    src = textwrap.dedent('''
        import numpy as np
        import kiln

        @kiln.jit
        def k(a):
            print("A\\u2603B", "G\\u00e9H", "\\101\\x41", "\\a\\b\\f\\v\\0z", r"\\n raw", "50%",
                  "\\U0001F600")

        k[1, 1](np.zeros(1))
        ''')
    path = tmp_path / "escapes.py"
    path.write_text(src)
    env = dict(os.environ, PYTHONPATH=PYDIR, KILN_TARGET="cpu")
    got = subprocess.run([sys.executable, str(path)], env=env, capture_output=True,
                         timeout=120).stdout
    want = "A\u2603B G\u00e9H AA \a\b\f\v\0z \\n raw 50% \U0001F600\n".encode()
    assert got == want, got
    text = compile_error(tmp_path, '''
        @kiln.jit
        def k(a):
            print("\\N{SNOWMAN}")
        ''')
    assert "\\N{...} escapes are not supported" in text, text


TABLE = np.arange(8192, dtype=np.float64)  # 64 KiB: all of a GPU's constant memory


def test_print_formats_count_against_constant_memory():
    # the formats are __constant__ arrays beside kiln.const.array_like's: together past
    # 64 KiB, ptxas refused the module; kiln says so at the print
    from kiln import _compile, _kiln

    @kiln.jit
    def full(a):
        c = kiln.const.array_like(TABLE)
        a[0] = c[5]
        print("hello")

    _, argkey = _kiln.parse_signature("void(float64[:])")
    with pytest.raises(kiln.CompileError, match=r"come to 65543 bytes, over the 65536 bytes"):
        _compile._translate(full, argkey, 1, 90)
    _compile._translate(full, argkey, 0, 0)  # the CPU has no such limit
