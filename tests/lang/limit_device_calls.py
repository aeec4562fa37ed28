# limits: device functions calling device functions nest at most KILN_MAX_CALL_DEPTH
# (64) deep: sema types a callee while its caller is open on the C stack, so a chain
# took stack in proportion to its length (5,000 functions: over 2 MiB).  Along a
# chain, the callers' open expressions and blocks add up: at most
# KILN_MAX_EXPR_DEPTH + KILN_MAX_INDENT levels in all.
import importlib.util
import os
import tempfile
import numpy as np
import kiln


def module(name, text):
    d = tempfile.mkdtemp(prefix="kiln-lang-")
    path = os.path.join(d, name + ".py")
    with open(path, "w") as f:
        f.write("import kiln\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def chain(n, terms):
    """f0 calls f1 ... calls f{n-1}; each adds `terms` x's to its callee's value,
    the call at the bottom of the chain of +."""
    text = ""
    for i in range(n - 1):
        text += f"@kiln.jit(device=True)\ndef f{i}(x):\n    return f{i + 1}(x)"
        text += " + x" * terms + "\n\n"
    text += f"@kiln.jit(device=True)\ndef f{n - 1}(x):\n    return x\n\n"
    text += "@kiln.jit\ndef k(a, x):\n    a[0] = f0(x)\n"
    return text


def attempt(name, n, terms):
    m = module(name, chain(n, terms))
    a = np.zeros(1)
    try:
        m.k[1, 1](a, 1.0)
        print(name, "ok", a[0])
    except kiln.CompileError as e:
        lines = str(e).splitlines()
        print(name, "CompileError:", lines[0].split(".py:", 1)[1])


def main():
    attempt("short", 20, 3)
    attempt("long", 5000, 0)
    attempt("deep", 10, 150)
