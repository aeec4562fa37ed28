"""The shape of the code: the package's modules and the extension's files call one way.

Python: every import among kiln's modules, at module level or inside functions
(``from . import X``, ``from .X import``, ``import kiln``), forms no cycle, and the
package keeps its order: _compile <- _dispatch <- _ufunc <- _fuse <- __init__.
C: no file of python/kiln/_ext/ is over 800 lines; each file's includes (its
calls, since every cross-file function is declared in its file's header) go only
to files listed after it in the map atop state.h, so no file calls into one that
calls back into it."""
import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "python", "kiln")
EXT = os.path.join(PKG, "_ext")
MAX_LINES = 800


def imports_of(text, mods):
    """The modules of kiln that a module's text imports, anywhere in it; the
    package is '__init__', the extension '_kiln'."""
    deps = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .X import y
                deps.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import X, Y
                deps.update(a.name for a in node.names)
            elif node.level == 0 and node.module and node.module.split(".")[0] == "kiln":
                parts = node.module.split(".")
                deps.add("__init__")  # importing kiln.X runs kiln/__init__ first
                if len(parts) > 1:
                    deps.add(parts[1])
                else:  # from kiln import X: X too, when it is a module
                    deps.update(a.name for a in node.names if a.name in mods)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "kiln":
                    deps.add("__init__")
                    if len(parts) > 1:
                        deps.add(parts[1])
    return deps


def python_imports():
    """{module: {modules of kiln it imports}} for python/kiln/*.py."""
    mods = {f[:-3] for f in os.listdir(PKG) if f.endswith(".py")}
    graph = {}
    for m in mods:
        with open(os.path.join(PKG, m + ".py"), encoding="utf-8") as f:
            graph[m] = imports_of(f.read(), mods) - {m}
    return graph


def find_cycle(graph):
    """A cycle as a list of nodes, or None."""
    state = {}

    def visit(n, path):
        state[n] = 1
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                return path[path.index(d):] + [d] if d in path else [n, d]
            if d not in state:
                c = visit(d, path + [d])
                if c:
                    return c
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n, [n])
            if c:
                return c
    return None


def test_the_package_imports_one_way():
    g = python_imports()
    assert find_cycle(g) is None, f"import cycle: {' -> '.join(find_cycle(g))}"
    assert not g["_compile"] & {"_dispatch", "_ufunc", "__init__", "__main__"}, g["_compile"]
    assert not g["_dispatch"] & {"_ufunc", "__init__", "__main__"}, g["_dispatch"]
    assert not g["_ufunc"] & {"_fuse", "__init__", "__main__"}, g["_ufunc"]
    assert not g["_fuse"] & {"__init__", "__main__"}, g["_fuse"]
    assert {"_ufunc", "_compile"} <= g["_fuse"]
    assert {"_dispatch", "_compile"} <= g["_ufunc"]
    assert "_compile" in g["_dispatch"]


def test_the_checker_sees_lazy_and_absolute_imports():
    text = ("from . import _kiln\n"
            "def f():\n"
            "    from ._ufunc import Vectorized\n"
            "    import kiln\n"
            "    from kiln import cache\n")
    assert imports_of(text, {"_ufunc", "cache"}) == {"_kiln", "_ufunc", "__init__", "cache"}
    assert find_cycle({"a": {"b"}, "b": {"__init__"}, "__init__": {"a"}}) is not None
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def ext_files():
    return sorted(f for f in os.listdir(EXT) if f.endswith((".c", ".h")))


def test_no_extension_file_is_over_800_lines():
    long = {}
    for f in ext_files():
        with open(os.path.join(EXT, f), encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            long[f] = n
    assert not long, f"over {MAX_LINES} lines: {long}"


def layer_order():
    """The files in the order of the map atop state.h, top (module.c) first."""
    with open(os.path.join(EXT, "state.h"), encoding="utf-8") as f:
        head = f.read().split("*/", 1)[0]
    return re.findall(r"^ \*\s+(\w+)\.[ch]\s", head, re.M)  # a types-only header may be listed


def test_extension_calls_run_one_way():
    order = layer_order()
    rank = {name: i for i, name in enumerate(order)}
    units = {f.rsplit(".", 1)[0] for f in ext_files() if f.endswith(".c")}
    assert units <= set(order), f"files missing from state.h's map: {units - set(order)}"
    headers_only = {f[:-2] for f in ext_files() if f.endswith(".h")} - units  # types only
    files = set(ext_files())
    bad = []
    for f in ext_files():
        unit = f.rsplit(".", 1)[0]
        with open(os.path.join(EXT, f), encoding="utf-8") as fh:
            text = fh.read()
        for inc in re.findall(r'^#include "(\w+)\.h"', text, re.M):
            if inc == unit or inc in headers_only or inc + ".h" not in files:
                continue  # its own header, types only, or the core's (kiln.h)
            if inc not in rank:
                bad.append(f"{f} includes {inc}.h, which no file of the map owns")
            elif rank[inc] <= rank[unit]:
                bad.append(f"{f} includes {inc}.h: a call upwards")
        if f.endswith(".c"):
            # a function of another file declared here would bypass its header
            for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*\b(ext_\w+)\([^;{)]*\)\s*;",
                                 text, re.M):
                bad.append(f"{f} declares {m.group(1)} itself")
    assert not bad, "\n".join(bad)
