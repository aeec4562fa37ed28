"""Where kiln finds a function's text: lambdas given to reduce and vectorize (Numba's
examples write them so), and functions made by exec from a string."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

HERE = os.path.basename(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_reduce_lambda_as_numba_writes_it(rng):
    x = rng.uniform(-1, 1, 1000)
    sum_reduce = kiln.reduce(lambda a, b: a + b)
    assert np.isclose(sum_reduce(x), x.sum())


def test_vectorize_lambda_with_and_without_signatures(rng):
    x = rng.uniform(-1, 1, 100).astype(np.float32)
    double = kiln.vectorize(["float32(float32)"])(lambda x: x * 2)
    r = double(x)
    assert r.dtype == np.float32 and np.array_equal(r, x * 2)
    lazy = kiln.vectorize(lambda a, b: a - b)
    assert np.array_equal(lazy(x, x[::-1]), x - x[::-1])


def test_several_lambdas_on_one_line_are_told_apart():
    x = np.arange(1, 9, dtype=np.float64)
    add, mul, big = kiln.reduce(lambda a, b: a + b), kiln.reduce(lambda a, b: a * b), kiln.reduce(lambda a, b: max(a, b))
    assert (add(x), mul(x), big(x)) == (36.0, 40320.0, 8.0)


def test_lambda_in_a_call_spanning_lines():
    x = np.arange(10, dtype=np.int64)
    smallest = kiln.reduce(
        lambda a,
        b: min(a,
               b),
        )
    shifted = kiln.vectorize(["int64(int64, int64)"])(lambda p, q:
                                                       p + q * 10)
    assert smallest(x[::-1]) == 0
    assert np.array_equal(shifted(x, x), x * 11)


def test_lambda_error_points_at_the_lambdas_line_and_column():
    bad = kiln.reduce(lambda a, b: a + not_defined_anywhere)
    with pytest.raises(kiln.CompileError) as e:
        bad(np.ones(4))
    msg = str(e.value)
    line = test_lambda_error_points_at_the_lambdas_line_and_column.__code__.co_firstlineno + 1
    col = "    bad = kiln.reduce(lambda a, b: a + not_defined_anywhere)".index("not_defined") + 1
    assert f"{HERE}:{line}:{col}: error: name 'not_defined_anywhere' is not defined" in msg, msg


def test_lambda_called_from_a_kernel_is_a_device_function():
    twice = lambda v: v * 2  # noqa: E731
    @kiln.jit
    def k(a):
        i = kiln.grid(1)
        if i < a.size:
            a[i] = twice(a[i]) + 1
    a = np.arange(8.0)
    k[1, 8](a)
    assert np.array_equal(a, np.arange(8.0) * 2 + 1)


def _lambda_made_by_a_helper(body="a + b"):
    ns = {}
    exec(f"f = lambda a, b: {body}", ns)
    return ns["f"]


def _push_out_exec_texts():
    # more texts that define functions than kiln's audit hook keeps (EXEC_TEXTS, exectext.c)
    for i in range(300):
        exec(f"def filler_{i}(): pass", {})


def test_lambda_made_by_a_helper_is_found_in_the_texts_python_compiled():
    # the helper's frame is gone; the text is among those kiln's audit hook keeps
    assert kiln.reduce(_lambda_made_by_a_helper())(np.ones(3)) == 3.0


def test_lambda_without_source_says_to_use_def():
    f = _lambda_made_by_a_helper("a + 2 * b")
    _push_out_exec_texts()  # before kiln looks for the text (when the function is wrapped)
    r = kiln.reduce(f)
    with pytest.raises(kiln.CompileError) as e:
        r(np.ones(3))
    msg = str(e.value)
    assert "<string>:1: error: cannot find the source of this lambda" in msg
    assert "hint: define the function with def" in msg


def test_python_dash_c_kernels_and_lambdas():
    # `python -c TEXT`: the text is in sys.orig_argv
    code = ("import kiln, numpy as np\n@kiln.jit\ndef k(a):\n    a[0] = 7\n"
            "a = np.zeros(3)\nk[1, 1](a)\n"
            "print(a[0], kiln.reduce(lambda x, y: x + y)(np.arange(4.0)))\n")
    env = dict(os.environ, PYTHONPATH=os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["7.0", "6.0"]


def test_exec_text_decorated_inside_it():
    ns = {}
    exec("import kiln\n@kiln.jit\ndef k(a):\n    i = kiln.grid(1)\n"
         "    if i < a.size:\n        a[i] = i * 3\n", ns)
    a = np.zeros(5)
    ns["k"][1, 5](a)
    assert np.array_equal(a, np.arange(5) * 3.0)


def _vectorized_from_text(op):
    src = f"def fn(a, b):\n    return a {op} b\n"  # the same def line for every op
    d = {}
    exec(src, d)
    return kiln.vectorize(["float64(float64, float64)"])(d["fn"])


def test_exec_texts_with_the_same_def_line_are_told_apart():
    x, y = np.arange(4.0), np.full(4, 2.0)
    add, sub, mul = (_vectorized_from_text(op) for op in "+-*")
    assert np.array_equal(add(x, y), x + y)
    assert np.array_equal(sub(x, y), x - y)
    assert np.array_equal(mul(x, y), x * y)


def test_exec_lambda_on_the_texts_first_line():
    ns = {"kiln": kiln}
    exec("r = kiln.reduce(lambda a, b: a + b)", ns)
    assert ns["r"](np.arange(5.0)) == 10.0
    exec("r = kiln.reduce(lambda a, b: a + c)", ns)
    with pytest.raises(kiln.CompileError, match=r"<string>:1:34: error: name 'c' is not defined"):
        ns["r"](np.arange(5.0))


def _made_by_a_helper(value=1):
    ns = {}
    exec(f"def gone(a):\n    a[0] = {value}\n", ns)
    return ns["gone"]


def _kernels_made_by_a_helper(func):
    # as Numba's test_atomics makes its kernels: the text is formatted, exec'd into a dict
    # and only the functions leave the helper
    import textwrap

    fns = textwrap.dedent("""
    def first(res, ary):
        i = kiln.grid(1)
        {func}(res, 0, ary[i])

    def second(res, ary):
        {func}(res, 0, ary[0] * 2)
    """).format(func=func)
    ld = {}
    exec(fns, {"kiln": kiln}, ld)
    return ld["first"], ld["second"]


def test_exec_text_of_a_helper_that_returned_is_found():
    first, second = _kernels_made_by_a_helper("kiln.atomic.max")
    _, other = _kernels_made_by_a_helper("kiln.atomic.min")  # the same def lines, told apart
    res = np.zeros(1)
    kiln.jit(first)[1, 4](res, np.array([3.0, 9.0, 1.0, 4.0]))
    assert res[0] == 9.0
    kiln.jit(second)[1, 1](res, np.array([5.0]))
    assert res[0] == 10.0
    kiln.jit(other)[1, 1](res, np.array([1.0]))
    assert res[0] == 2.0
    k = kiln.jit(_made_by_a_helper(7))
    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == 7


def test_exec_text_gone_is_a_clear_error():
    f = _made_by_a_helper(3)
    _push_out_exec_texts()  # before kiln looks for the text (when the function is wrapped)
    k = kiln.jit(f)
    with pytest.raises(kiln.CompileError) as e:
        k[1, 1](np.zeros(1))
    msg = str(e.value)
    assert "<string>:1: error: cannot read the source of 'gone'" in msg
    assert "register the text with linecache" in msg


def test_a_kernel_typed_at_the_prompt_says_so():
    # python reading a program from stdin keeps no text of it, as the interactive prompt
    # does not (hunt7.md 4.6): the hint says where kernels can be defined
    prog = "import numpy as np, kiln\n@kiln.jit\ndef k(a):\n    a[0] = 1\n\nk[1, 1](np.zeros(1))\n"
    pydir = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
    env = dict(os.environ, PYTHONPATH=pydir, KILN_TARGET="cpu")
    p = subprocess.run([sys.executable, "-"], input=prog, capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode != 0
    assert "<stdin>:2: error: cannot read the source of 'k'" in p.stderr
    assert "typed at Python's interactive prompt keeps no source text" in p.stderr


def test_def_lines_are_read_as_the_pattern_reads_them():
    # _match_def replaces a regular expression (compiling it cost a cached kernel's first
    # call up to 1 ms): the same name and end as that pattern on written and random lines
    import random
    import re

    from kiln._source import _match_def

    pat = re.compile(r"\s*(?:async\s+)?def\s+([^\W\d]\w*)\s*\(")
    lines = ["def f(x):", "    def  g (", "async def h(a)", "asyncdef f(", "async  def\tk(",
             "def 1f(", "def _(", "def ｘ(", "def f²(", "def  (", "define(", "def f", "def\u3000f(",
             "\tdef f\t(x)", "def é(", "def f: pass", "    async\n def f(", "", "def", "defs(",
             "def f x(", "#def f(", "def ९(", "def a९(", "lambda: def f("]
    rng = random.Random(0)
    spaces = ["", " ", "\t", "  ", "\u00a0", "\u3000", "\n"]
    names = ["f", "_", "x1", "1x", "é", "ｘ", "f²", "९", "a९", "", "f x", "de"]
    for _ in range(20000):   # a def line's parts, each sometimes wrong or missing
        parts = [rng.choice(spaces), rng.choice(["", "", "async" + rng.choice(spaces)]),
                 rng.choice(["def", "def", "de", "Def", ""]), rng.choice(spaces),
                 rng.choice(names), rng.choice(spaces), rng.choice(["(", "(", ":", ""])]
        lines.append("".join(parts))
    assert sum(pat.match(line) is not None for line in lines) > 1000  # they do hold defs
    for line in lines:
        m = pat.match(line)
        got = _match_def(line)
        assert got == ((m.group(1), m.end()) if m else None), (line, got, m)
