"""A function's source text, as it was when the function was defined.

kiln compiles a function from its file's text, starting at the code object's
first line.  A file edited after import would put other text there (another
function, or this one changed), and kiln would compile that under the old
name.  So the decorators take a snapshot of the file's lines when they wrap a
function (``snapshot``: one stat, and one read per file while the file stays
the same), and the compiler reads from the snapshot.  Whatever the lines come
from, ``source_of`` checks that the line the code object names starts the
``def`` of this function with its parameters, and refuses otherwise.  Two kinds
of function have no def line of their own: a lambda (the core gets an
equivalent def, "lambdas" below) and a function made by exec from a string
(its text is looked for in the frames that may still hold it, "text given to
exec" below).

Imports nothing of kiln, so the decorators can use it at ``import kiln``.
"""

import os
import sys

from ._types import split_top

_files = {}  # file name -> ((mtime_ns, size, inode), Snapshot) of the latest snapshot


def _match_def(line):
    """(name, index just past its "(") when line starts a def, as the pattern
    ``\\s*(?:async\\s+)?def\\s+([^\\W\\d]\\w*)\\s*\\(`` matches it, else None.  By hand:
    compiling that pattern cost a cached kernel's first call 0.3 to 1 ms."""
    s = line.lstrip()
    if s.startswith("async") and s[5:6].isspace():
        s = s[5:].lstrip()
    if not (s.startswith("def") and s[3:4].isspace()):
        return None
    s = s[3:].lstrip()
    n = 0
    while n < len(s) and (s[n].isalnum() or s[n] == "_"):  # \w
        n += 1
    if n == 0 or s[0].isdecimal():  # [^\W\d]
        return None
    rest = s[n:].lstrip()
    if not rest.startswith("("):
        return None
    return s[:n], len(line) - len(rest) + 1


def _file_lines(filename):
    """A source file's lines, read directly (UTF-8, PEP 3120); None when linecache
    must do it: text it holds (notebook cells, registered sources), another
    encoding, or no such file.  linecache imports tokenize and re, about 15 ms
    that a warm start need not pay."""
    lc = sys.modules.get("linecache")
    if lc is not None and filename in lc.cache:
        return None
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = data[:400].split(b"\n", 2)[:2]
    if any(b"coding" in line and line.lstrip().startswith(b"#") for line in head):
        return None
    try:
        return data.decode("utf-8").splitlines(True)
    except UnicodeDecodeError:
        return None


def _linecache_lines(filename, module_globals=None):
    import linecache

    linecache.checkcache(filename)
    return linecache.getlines(filename, module_globals)


class Snapshot:
    """The lines of a function's file when the function was wrapped."""

    __slots__ = ("lines",)

    def __init__(self, lines):
        self.lines = lines


def snapshot(fn):
    """The lines of fn's file now, shared by every function of the file while it
    stays unchanged; None when there is nothing to keep (no code, no file)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    lc = sys.modules.get("linecache")
    if lc is not None and filename in lc.cache:  # notebook cells, registered text
        lines = lc.cache[filename][2]
        return Snapshot(lines) if lines else None
    if filename.startswith("<"):  # text given to exec or compile: this function's own
        lines = _exec_lines(code)
        return Snapshot(lines) if lines else None
    try:
        st = os.stat(filename)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _files.get(filename)
    if hit is not None and hit[0] == key:
        return hit[1]
    lines = _file_lines(filename)
    if lines is None:
        lines = _linecache_lines(filename, getattr(fn, "__globals__", None))
    if not lines:
        return None
    snap = Snapshot(lines)
    _files[filename] = (key, snap)
    return snap


def _params(lines, at):
    """The parameter names of the def that starts at lines[at], or None when its
    text is not simple enough to read here."""
    text = lines[at]
    start = _match_def(text)[1] - 1
    depth, i, j, buf = 0, at, start, []
    while i < len(lines) and i < at + 200:
        s = lines[i]
        while j < len(s):
            c = s[j]
            if c in "\"'#":
                return None  # strings or comments in the parameter list: do not guess
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    names = []
                    for part in split_top("".join(buf)[1:]):
                        name = part.split(":")[0].split("=")[0].strip().lstrip("*").strip()
                        if name and name != "/":
                            names.append(name)
                    return names
            buf.append(c)
            j += 1
        i, j = i + 1, 0
    return None


def _check(fn, lines, first, filename):
    """Raises CompileError unless lines, from line `first`, hold the def of fn
    (after its decorators) with fn's parameters."""
    code = fn.__code__
    at = first - 1
    found = None
    while at < len(lines) and at < first - 1 + 200:
        m = _match_def(lines[at])
        if m:
            found = m[0]
            break
        at += 1
    if found and not found.isascii():
        # Python keeps names in their NFKC form (PEP 3131): `ｘ` in the text is `x`
        import unicodedata

        found = unicodedata.normalize("NFKC", found)
    ok = found == code.co_name  # also false when the file is now shorter
    if ok:
        names = _params(lines, at)
        if names is not None and not all(n.isascii() for n in names):
            import unicodedata

            names = [unicodedata.normalize("NFKC", n) for n in names]
        n = code.co_argcount + code.co_kwonlyargcount
        n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        ok = names is None or sorted(names) == sorted(code.co_varnames[:n])
    if ok:
        return
    if found == code.co_name:
        now = "has other parameters"
    elif found:
        now = f"starts 'def {found}'"
    elif first <= len(lines):
        now = "holds no def"
    else:
        now = "is past the file's end"
    from . import _kiln

    raise _kiln.CompileError(
        f"{filename}:{first}: error: the source of '{fn.__qualname__}' changed since it was "
        f"imported: line {first} now {now}\n"
        "hint: re-import the module (importlib.reload) or restart Python")


def source_of(fn, snap=None):
    """(text from the function's first line on, file name, first line), from the
    snapshot taken when fn was wrapped, else the latest snapshot of its file (a
    plain function beside kernels), else the file now; checked.  The file name is the
    one diagnostics show (shown_path)."""
    text, filename, first = _source_of(fn, snap)
    return text, shown_path(filename), first


def shown_path(filename):
    """A file name as kiln's core takes it: a path that is not UTF-8 (bytes Python holds
    as surrogate escapes) has those bytes written \\xNN, so it reaches the core's
    diagnostics, traces and keys as text; any other name is unchanged."""
    try:
        filename.encode("utf-8")
        return filename
    except UnicodeEncodeError:
        return filename.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _source_of(fn, snap):
    code = fn.__code__
    filename = code.co_filename
    if snap is None:  # a plain function: the snapshot of its file, if a kernel there took one
        hit = _files.get(filename)
        snap = hit[1] if hit is not None else None
    lines = snap.lines if snap is not None else None
    exec_text = filename.startswith("<")
    if lines is None and exec_text:
        lines = _linecache_lines(filename, getattr(fn, "__globals__", None)) or _exec_lines(code)
    if lines is None:
        lines = _file_lines(filename)
        if lines is None:
            lines = _linecache_lines(filename, getattr(fn, "__globals__", None))
    first = code.co_firstlineno
    if not lines and code.co_name == "<lambda>":
        raise _no_lambda(fn, filename, "Python keeps no text for it")
    if not lines:
        from . import _kiln

        hint = ("a function typed at Python's interactive prompt keeps no source text, which "
                "kiln compiles: put it in a file (python -i file.py), or use IPython or a "
                "notebook, which keep it"
                if filename == "<stdin>" else
                "kiln compiles functions defined in files, notebooks or linecache-registered text"
                if not exec_text else
                "kiln finds the text given to exec while a caller's frame holds it (a local "
                "variable or a constant); wrap the function where the text is, define it in a "
                "file, or register the text with linecache under a unique file name given to "
                "compile()")
        raise _kiln.CompileError(
            f"{filename}:{first}: error: cannot read the source of '{fn.__qualname__}'\n"
            f"hint: {hint}")
    if code.co_name == "<lambda>":
        return _lambda_source(fn, lines, filename)
    _check(fn, lines, first, filename)
    return "".join(lines[first - 1:]), filename, first


# ---- lambdas ---------------------------------------------------------------------
#
# A lambda has no def line for the core's parser to start at, and several may share a
# line.  Its own code object says where its body is (co_positions: line and column of
# each instruction), the file's syntax tree says where each lambda on that line starts
# and ends, and the lambda is the one whose body holds every position of its code.
# The core then compiles an equivalent def whose body sits at the lambda body's lines
# and columns, so a diagnostic's line and caret point into the user's lambda:
#
#     line n-1:  def _lambda(a, b): return (
#     line n:                       a + b)        <- the body, blanked before its column

_LAMBDA_NAME = "_lambda"  # the def's name in diagnostics ('<lambda>' is not an identifier)


def _no_lambda(fn, filename, why):
    from . import _kiln

    line = fn.__code__.co_firstlineno
    return _kiln.CompileError(
        f"{filename}:{line}: error: cannot find the source of this lambda: {why}\n"
        "hint: define the function with def (in a file) and pass that")


def _char_col(text, col):
    """The character column of a UTF-8 byte offset (ast and co_positions count bytes)."""
    return len(text.encode("utf-8")[:col].decode("utf-8", "replace"))


def _lambda_node(fn, tree):
    """The ast.Lambda of fn: on its first line, with a body that holds every source
    position of its code (the smallest such, for lambdas inside lambdas)."""
    import ast

    code = fn.__code__
    first = code.co_firstlineno
    cands = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == first]
    # RESUME and the implicit return carry the first line, column 0 to 0: not the body's
    pos = [(l, c, el, ec) for l, el, c, ec in code.co_positions()
           if None not in (l, el, c, ec) and (l, c) != (el, ec)]
    if pos:
        def holds(n):
            b = n.body
            return all((b.lineno, b.col_offset) <= (l, c) and (el, ec) <= (b.end_lineno,
                       b.end_col_offset) for l, c, el, ec in pos)
        cands = [n for n in cands if holds(n)]
    else:  # python -X no_debug_ranges: the parameter names must tell
        names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        cands = [n for n in cands if [a.arg for a in n.args.posonlyargs + n.args.args
                                      + n.args.kwonlyargs] == names]
    if not cands:
        return None
    span = lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset)
    return min(cands, key=span) if pos else (cands[0] if len(cands) == 1 else None)


def _lambda_source(fn, lines, filename):
    """(text of a def equivalent to lambda fn, file name, its first line): the body at
    its own lines and columns (see above)."""
    import ast

    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError) as e:
        raise _no_lambda(fn, filename, f"its file does not parse now ({e.msg if hasattr(e, 'msg') else e})")
    node = _lambda_node(fn, tree)
    if node is None:
        raise _no_lambda(fn, filename, f"line {fn.__code__.co_firstlineno} holds no lambda "
                         "that matches it (the file changed, or several lambdas alike)")
    b = node.body
    bl, el = b.lineno, b.end_lineno
    bc = _char_col(lines[bl - 1], b.col_offset)
    ec = _char_col(lines[el - 1], b.end_col_offset)
    head = f"def {_LAMBDA_NAME}({ast.unparse(node.args)}): return ("
    body = [lines[i] for i in range(bl - 1, el)]
    body[-1] = body[-1][:ec] + ")\n"
    if bl > 1:  # the def on the line above: the body keeps its line and columns
        body[0] = " " * bc + body[0][bc:]
        return head + "\n" + "".join(body), filename, bl - 1
    # on the file's first line the def shares it: columns past the head stay exact
    body[0] = head + " " * max(0, bc - len(head)) + body[0][bc:]
    return "".join(body), filename, 1


# ---- text given to exec ---------------------------------------------------------
#
# exec("def k(a): ...") leaves a function whose file is '<string>': Python keeps no text
# for it (Numba reads bytecode; kiln reads source).  The text is in reach while a frame
# that holds it lives: the frame that called exec, when the function is decorated inside
# the text, or the frame that made the text and then wraps the function.  So kiln looks
# through the string locals and constants of up to _EXEC_FRAMES frames above the caller
# for a text that defines the function, and matches it by compiling the text again and
# finding a code object equal to the function's own (bytecode, constants, names, lines),
# so two texts with a `def fn` on the same line are never confused.  `python -c TEXT`
# is such a text too: sys.orig_argv keeps it.  Once those frames are gone (a helper that
# returned what its exec made), the texts Python compiled since kiln was imported are
# tried: an audit hook written in C (PEP 578; a hook in Python would cost about 420 ns per
# audited event of the process) keeps the recent ones that define functions
# (python/kiln/_ext/exectext.c).  Past those, the error says what to do.

_EXEC_FRAMES = 64             # frames searched for the text given to exec (docs/limits.md)
_EXEC_MAX_CHARS = 1 << 20     # longer strings are not tried as that text (docs/limits.md)
_FUTURE_MASK = []             # the __future__ flags a code object carries, computed once


def _holds(top, code):
    todo = [top]
    while todo:
        c = todo.pop()
        if c == code:
            return True
        todo.extend(k for k in c.co_consts if type(k) is type(c))
    return False


def _exec_lines(code):
    """The lines of the text given to exec that defined this code object, found in a
    frame above the caller, or None."""
    if not _FUTURE_MASK:
        import __future__

        mask = 0
        for name in __future__.all_feature_names:
            mask |= getattr(__future__, name).compiler_flag
        _FUTURE_MASK.append(mask)
    needle = "lambda" if code.co_name == "<lambda>" else code.co_name
    tried = set()
    f = sys._getframe(1)
    argv = getattr(sys, "orig_argv", [])
    # `python -c TEXT` compiles TEXT as '<string>' too, and keeps it in sys.orig_argv
    extra = [argv[argv.index("-c") + 1]] if "-c" in argv[:-1] else []
    def match(texts):
        for text in texts:
            if id(text) in tried or len(text) > _EXEC_MAX_CHARS or needle not in text:
                continue
            tried.add(id(text))
            try:
                top = compile(text, code.co_filename, "exec",
                              flags=code.co_flags & _FUTURE_MASK[0], dont_inherit=True)
            except (SyntaxError, ValueError, OverflowError):
                continue
            if _holds(top, code):
                return text.splitlines(True)
        return None

    for _ in range(_EXEC_FRAMES):
        if f is None:
            break
        texts = [v for v in f.f_locals.values() if type(v) is str]
        texts += [c for c in f.f_code.co_consts if type(c) is str] + extra
        extra = []
        found = match(texts)
        if found:
            return found
        f = f.f_back
    # the frames are gone: the recent texts Python compiled, kept by kiln's audit hook
    # (python/kiln/_ext/exectext.c), newest first
    from . import _kiln

    return match(_kiln.exec_texts())
