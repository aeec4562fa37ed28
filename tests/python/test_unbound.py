"""A local read where no assignment ran raises UnboundLocalError (src/sema/unbound.c).

syms.c marks the reads a path without an assignment may reach; each gets a run-time check
of a flag its assignments set.  An array read that way was a null pointer (a crash); a
number read zero.  Each kernel runs both ways, through the optimised build and tier 0
(libtcc), and KILN_CHECK_CUDA=1 compiles each for the GPU too.
"""
import numpy as np
import pytest

import kiln
from kiln import _kiln

TIERS = ["0"] + (["tcc"] if _kiln.tier_stats()["available"] else [])


@pytest.fixture(params=TIERS)
def tier(request, monkeypatch):
    monkeypatch.setenv("KILN_TIERS", request.param)
    return request.param


def unbound(k, *args, name, line=None):
    with pytest.raises(UnboundLocalError) as e:
        k[1, 1](*args)
    msg = str(e.value)
    assert f"cannot access local variable '{name}'" in msg, msg
    if line is not None:  # lines from the decorator's
        assert f"line {k.py_func.__code__.co_firstlineno + line}," in msg, msg
    return msg


def test_array_number_and_tuple_assigned_in_an_if(tier):
    @kiln.jit
    def arr(a, out, c):
        if c > 0:
            t = a
        out[0] = t[0]

    @kiln.jit
    def num(a, out, c):
        if c > 0:
            x = a[1] * 2
        out[0] = x

    @kiln.jit
    def tup(a, out, c):
        if c > 0:
            t = (a[0], a[2])
        out[0] = t[1]

    a = np.array([1.0, 2.0, 3.0])
    out = np.zeros(1)
    for k, want in ((arr, 1.0), (num, 4.0), (tup, 3.0)):
        k[1, 1](a, out, 1)
        assert out[0] == want
        out[0] = -7.0
        unbound(k, a, out, 0, name={arr: "t", num: "x", tup: "t"}[k], line=4)
        assert out[0] == -7.0  # the statement that read it never ran


def test_loop_variable_after_a_loop_that_did_not_run(tier):
    @kiln.jit
    def last(out, n):
        for i in range(n):
            out[1] += 1
        out[0] = i

    out = np.zeros(2, np.int64)
    last[1, 1](out, 5)
    assert list(out) == [4, 5]
    unbound(last, out, 0, name="i", line=4)


def test_loop_carried_first_value(tier):
    # assigned on the first round, read on the later ones: checked, never raised
    @kiln.jit
    def carry(a, out):
        for j in range(a.size):
            if j == 0:
                first = a[0]
            else:
                out[j] = a[j] - first

    a = np.arange(1.0, 9.0)
    out = np.zeros(8)
    carry[1, 1](a, out)
    assert np.array_equal(out[1:], a[1:] - 1.0)

    @kiln.jit
    def wrong(a, out):
        for j in range(a.size):
            if j == 3:
                first = a[0]
            else:
                out[j] = a[j] - first

    unbound(wrong, a, out, name="first", line=6)


def test_guarded_reads_raise_only_where_python_would(tier):
    # the read sits behind and/or, a conditional expression: the check tests the guard
    @kiln.jit
    def guarded(a, out, n):
        i = 0
        if n > 0:
            v = a[0]
            w = a
        out[0] = n > 0 and v > 0.5
        out[1] = n <= 0 or v < 0.5
        out[2] = v if n > 0 else -1.0
        out[3] = -1.0 if n <= 0 else w[1]
        out[4] = 2.0 if n <= 0 else (3.0 if i > 0 else v)

    a = np.array([1.0, 2.0])
    out = np.zeros(5)
    guarded[1, 1](a, out, 1)
    assert list(out) == [1.0, 0.0, 1.0, 2.0, 1.0]
    guarded[1, 1](a, out, 0)
    assert list(out) == [0.0, 1.0, -1.0, -1.0, 2.0]

    @kiln.jit
    def unguarded(a, out, n):
        if n > 0:
            v = a[0]
        out[0] = n < 0 or v > 0.5

    unbound(unguarded, a, out, 0, name="v", line=4)


def test_elif_and_while_conditions(tier):
    @kiln.jit
    def chain(a, out, n):
        if n > 5:
            t = a
        if n == 0:
            out[0] = 1.0
        elif t[0] > 0:
            out[0] = 2.0

    @kiln.jit
    def spin(a, out, n):
        k = 0
        while k < n:
            if k == 1:
                stop = a.size
            k += 1
            if k < 3:
                continue
            out[0] += 1
        while k < stop:
            k += 1
        out[1] = k

    a = np.ones(3)
    out = np.zeros(2)
    chain[1, 1](a, out, 0)
    assert out[0] == 1.0
    chain[1, 1](a, out, 6)
    assert out[0] == 2.0
    unbound(chain, a, out, 3, name="t", line=6)
    out[:] = 0
    spin[1, 1](a, out, 4)
    assert list(out) == [2.0, 4.0]
    unbound(spin, a, out, 1, name="stop", line=10)


def test_device_function_and_many_threads(tier):
    @kiln.jit(device=True)
    def pick(a, c):
        if c > 0:
            r = a[1]
        return r

    @kiln.jit
    def k(a, out, c):
        i = kiln.grid(1)
        if i < out.size:
            out[i] = pick(a, c - i)

    a = np.array([0.0, 5.0])
    out = np.zeros(64)
    k[2, 32](a, out, 100)
    assert (out == 5.0).all()
    with pytest.raises(UnboundLocalError, match="'r'.*not associated"):
        k[2, 32](a, out, 10)


def test_definitely_assigned_code_has_no_check():
    # the analysis must not tax code that assigns before every read
    @kiln.jit
    def clean(a, out, c):
        if c > 0:
            t = a[0]
        else:
            t = a[1]
        for j in range(3):
            u = t * j
            out[j] = u

    @kiln.jit
    def maybe(a, out, c):
        if c > 0:
            t = a[0]
        out[0] = t

    a = np.ones(2)
    out = np.zeros(3)
    clean[1, 1](a, out, 1)
    maybe[1, 1](a, out, 1)
    # the flag is a local named "<name>?set" (`?`: _x3F in C)
    assert "_x3Fset" not in clean.inspect_source(signature=clean.signatures[0])
    assert "t_x3Fset" in maybe.inspect_source(signature=maybe.signatures[0])


def test_update_of_a_variable_no_assignment_reaches(tier):
    # Numba-CUDA's test_ssa.test_undefined_var: `c += 1` where c has no value on any path
    # compiles (the update joins c's other assignments' type) and raises when it runs
    @kiln.jit
    def foo(result, n):
        if n:
            if n > 0:
                c = 0
            result[0] = c
        else:
            c += 1
            result[0] = c

    r = np.array([7])
    foo[1, 1](r, 1)
    assert r[0] == 0
    unbound(foo, r, 0, name="c", line=7)
    unbound(foo, r, -1, name="c", line=5)


def test_a_function_with_a_nested_def(tier):
    # a nested def kept every name whole (syms.c), and the analysis gave up: the array read
    # after the if was a null pointer.  A captured variable is read where the nested
    # function reads it, so the call that passes it is not checked.
    @kiln.jit
    def k(a, out, c):
        def inner(v):
            return v * s if c > 0 else v

        if c > 0:
            s = 2.0
            t = a
        out[1] = inner(3.0)
        out[0] = t[0]

    a = np.array([4.0])
    out = np.zeros(2)
    k[1, 1](a, out, 1)
    assert list(out) == [4.0, 6.0]
    unbound(k, a, out, 0, name="t", line=9)
    assert out[1] == 3.0


def test_hunted_cases(tier):
    # a continue in an inner loop's else continues the while: its condition is checked
    @kiln.jit
    def inner_else(out, c):
        n = 0
        go = False
        if c > 5:
            x = 1
        while n < 5 and (not go or x > 0):
            n += 1
            go = c > 0
            for j in range(1):
                pass
            else:
                continue
        out[1] = n

    out = np.zeros(2)
    unbound(inner_else, out, 1, name="x", line=6)

    # a nested function's captured array is checked at the call (a null pointer there)
    @kiln.jit
    def captured(out, a, c):
        if c > 0:
            t = a

        def first():
            return t[0]

        out[0] = first()

    a = np.array([3.0])
    captured[1, 1](out, a, 1)
    assert out[0] == 3.0
    unbound(captured, out, a, 0, name="t", line=8)

    # a while condition that reads what the body assigns compiles (it was refused)
    @kiln.jit
    def cond_reads_body(out, a):
        n = 0
        while n < 3 and (n == 0 or x > 0):
            x = a[n] - 2
            n += 1
        out[0] = n

    cond_reads_body[1, 1](out, np.array([1.0, 2.0, 3.0]))
    assert out[0] == 1


def test_past_the_analysis_limits_arrays_are_checked(tier):
    # 1500 locals: past syms.c's state limit, it gives up; a conditionally assigned array
    # read after the if was a null pointer (SIGSEGV).  Every local array read is checked.
    n = 1500
    src = ["def k(out, a, c):"]
    src += [f"    v{i} = a[0] + {i}" for i in range(n)]
    src += ["    if c > 0:", "        t = a", "    s = 0.0"]
    src += [f"    s += v{i}" for i in range(n)]
    src += ["    out[0] = s + t[0]"]
    ns = {}
    exec("\n".join(src) + "\n", ns)
    k = kiln.jit(ns["k"])
    a = np.array([1.0, 2.0])
    out = np.zeros(1)
    k[1, 1](out, a, 1)
    assert out[0] == n * 1.0 + n * (n - 1) // 2 + 1.0
    with pytest.raises(UnboundLocalError, match="'t'"):
        k[1, 1](out, a, 0)


def test_a_guard_is_not_retested_across_a_call(tier):
    # f changes what the guard reads before Python tests it: re-testing the guard ahead of
    # the statement raised where Python does not
    @kiln.jit(device=True)
    def flip(a):
        a[0] = -a[0]
        return 0.0

    @kiln.jit
    def k(out, a, c):
        if c > 2:
            x = 5.0
        out[1] = flip(a) + (x if a[0] > 0 else 1.0)

    out = np.zeros(2)
    k[1, 1](out, np.array([1.0]), 0)
    assert out[1] == 1.0


def test_print_of_a_string_variable_that_may_be_unassigned(tier):
    # print() writes a string variable as its literal; the read is still checked
    @kiln.jit
    def k(out, c):
        if c > 0:
            m = "a"
        print(m)

    out = np.zeros(1)
    unbound(k, out, 0, name="m", line=4)
