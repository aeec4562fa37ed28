# identifiers are NFKC-normalised as Python does (PEP 3131): `ﬁ` (U+FB01) and `fi`
# are one variable, fullwidth letters are ASCII names, parameters and globals too;
# a character that no identifier may hold is a CompileError.  (kiln read `ﬁ` as a
# second variable: a silent wrong result.)
import linecache
import numpy as np
import kiln

ｓｃａｌｅ = 3


@kiln.jit
def k(a, ｘ):
    fi = 1
    ﬁ = 2
    a[0] = fi * 100 + x * 10 + scale


def main():
    a = np.zeros(1, np.int64)
    k[1, 1](a, 4)
    print(a[0])
    print(k.inspect_types(file=False), end="")
    src = "def bad(a):\n    x\u2192y = 1\n"
    linecache.cache["<bad>"] = (len(src), None, src.splitlines(True), "<bad>")
    ns = {}
    exec(compile("def bad(a):\n    pass\n", "<bad>", "exec"), ns)
    try:
        kiln.jit(ns["bad"])[1, 1](a)
    except kiln.CompileError as e:
        print("CompileError:", e)
