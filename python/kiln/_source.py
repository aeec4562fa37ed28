"""A function's source text, as it was when the function was defined.

kiln compiles a function from its file's text, starting at the code object's
first line.  A file edited after import would put other text there (another
function, or this one changed), and kiln would compile that under the old
name.  So the decorators take a snapshot of the file's lines when they wrap a
function (``snapshot``: one stat, and one read per file while the file stays
the same), and the compiler reads from the snapshot.  Whatever the lines come
from, ``source_of`` checks that the line the code object names starts the
``def`` of this function with its parameters, and refuses otherwise.

Imports nothing of kiln, so the decorators can use it at ``import kiln``.
"""

import os
import sys

_files = {}  # file name -> ((mtime_ns, size, inode), Snapshot) of the latest snapshot
_def_re = []  # the pattern of a def line, compiled at the first check (re is not free)


def _match_def(line):
    if not _def_re:
        import re

        _def_re.append(re.compile(r"\s*(?:async\s+)?def\s+([^\W\d]\w*)\s*\("))
    return _def_re[0].match(line)


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
    start = text.index("(", _match_def(text).end() - 1)
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
                    for part in _split_top("".join(buf)[1:]):
                        name = part.split(":")[0].split("=")[0].strip().lstrip("*").strip()
                        if name and name != "/":
                            names.append(name)
                    return names
            buf.append(c)
            j += 1
        i, j = i + 1, 0
    return None


def _split_top(text):
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def _check(fn, lines, first, filename):
    """Raises CompileError unless lines, from line `first`, hold the def of fn
    (after its decorators) with fn's parameters."""
    code = fn.__code__
    at = first - 1
    found = None
    while at < len(lines) and at < first - 1 + 200:
        m = _match_def(lines[at])
        if m:
            found = m.group(1)
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
    plain function beside kernels), else the file now; checked."""
    code = fn.__code__
    filename = code.co_filename
    if snap is None:  # a plain function: the snapshot of its file, if a kernel there took one
        hit = _files.get(filename)
        snap = hit[1] if hit is not None else None
    lines = snap.lines if snap is not None else None
    if lines is None:
        lines = _file_lines(filename)
        if lines is None:
            lines = _linecache_lines(filename, getattr(fn, "__globals__", None))
    first = code.co_firstlineno
    if not lines:
        from . import _kiln

        raise _kiln.CompileError(
            f"{filename}:{first}: error: cannot read the source of '{fn.__qualname__}'\n"
            "hint: kiln compiles functions defined in files, notebooks or linecache-registered text")
    if code.co_name != "<lambda>":  # a lambda has no def to check; the parser says what it is
        _check(fn, lines, first, filename)
    return "".join(lines[first - 1:]), filename, first
