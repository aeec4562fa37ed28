# limits: nesting.  10,000 nested parentheses, brackets, calls, subscripts, unary
# operators, conditional expressions or `**` overflowed the C stack (a crash); each
# is now a CompileError at the level KILN_MAX_NESTING names, and a chain of 10,000
# operators one at KILN_MAX_EXPR_DEPTH.  Blocks nest at most KILN_MAX_INDENT deep.
# Python refuses such sources itself, so kiln is given them through linecache.
import linecache
import numpy as np
import kiln


def kernel(name, src):
    """A kernel whose text, as kiln reads it, is src; its def line is valid Python."""
    fname = f"<{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"kiln": kiln}
    exec(compile(src.split("\n", 1)[0] + "\n    pass\n", fname, "exec"), ns)
    return kiln.jit(ns["k"])


def attempt(name, src, *args):
    try:
        kernel(name, src)[1, 1](*args)
        print(name, "ok", args[0].tolist())
    except kiln.CompileError as e:
        head = str(e).splitlines()
        print(name, "CompileError:", head[0])
        print("   ", head[-1])


def line(expr):
    return "def k(a, x):\n    a[0] = " + expr + "\n"


def main():
    a, n = np.zeros(1), 10000
    attempt("parens", line("(" * n + "x" + ")" * n), a, 1.0)
    attempt("subscripts", line("a[" * n + "0" + "]" * n), a, 1.0)
    attempt("calls", line("abs(" * n + "x" + ")" * n), a, 1.0)
    attempt("minus", line("-" * n + "x"), a, 1.0)
    attempt("not", line("not " * n + "x"), a, 1.0)
    attempt("power", line("x ** " * n + "x"), a, 1.0)
    attempt("conditional", line("x if x else " * n + "x"), a, 1.0)
    attempt("sum", line(" + ".join(["x"] * n)), a, 1.0)
    attempt("or", line(" or ".join(["x"] * n)), a, 1.0)
    # at the limits: 200 parentheses (as in CPython), a sum of 999 terms
    attempt("parens-200", line("(" * 200 + "x" + ")" * 200), a, 1.0)
    attempt("sum-999", line(" + ".join(["x"] * 999)), a, 1.0)
    blocks = "def k(a, x):\n" + "".join(" " * i + "if x:\n" for i in range(1, 150))
    attempt("blocks", blocks + " " * 150 + "a[0] = x\n", a, 1.0)
