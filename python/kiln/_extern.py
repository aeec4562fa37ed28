"""External CUDA device functions: Numba's ``declare_device`` and ``CUSource``.

``declare_device(name, sig, link=...)`` names a function written in CUDA C; kernels and
device functions call it like a device function.  kiln compiles each kernel as one NVRTC
program, so the CUDA C sources given in ``link`` (``CUSource`` objects and ``.cu`` files)
are pasted into the kernel's translation unit, each once, ahead of kiln's own code, with
an ``extern "C"`` declaration of the function as its ABI spells it (src/emit/emit.c).
The sources' text is part of the program, so of its cache key: an edited ``.cu`` file is
a new key.  Files are read when a kernel that calls the function is compiled.

Compiled device code (PTX, cubin, fatbin, LTO-IR, objects and archives: files by their
extension, or Numba's ``PTXSource``, ``Cubin``, ``Fatbin``, ``LTOIR``, ``Object`` and
``Archive`` objects) is linked with the kernel by nvJitLink (src/target/nvjitlink.c): in
the program such an item is a comment naming its kind and the SHA-256 of its bytes
(``linked_marker``), so the cache key covers its content; the build finds the bytes by
that digest (``linked_inputs``) and gives them to nvJitLink after the kernel's own
LTO-IR.  The CPU target cannot run such code: there the comment is a C ``#error``.
"""

import os

from . import _types
from ._types import CPointer, Signature, Type


class _Regex:
    """A pattern compiled at its first use: re and hashlib stay out of `import kiln`
    (5 ms of its 16 here)."""

    def __init__(self, pattern, flags=0):
        self._args = (pattern, flags)
        self._rx = None

    def __getattr__(self, name):
        if self._rx is None:
            import re
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)

# how a declared function is called: kiln_abi in include/kiln.h
_ABIS = {"numba": 0, "c": 1}

# compiled device code by file extension: nvJitLink's input kinds (kiln_link_kind)
_LINKED_KINDS = {".cubin": 1, ".ptx": 2, ".ltoir": 3, ".fatbin": 4, ".o": 5, ".obj": 5,
                 ".a": 6, ".lib": 6}
_KIND_NAMES = {1: "cubin", 2: "PTX", 3: "LTO-IR", 4: "fatbin", 5: "object", 6: "archive"}

# the program's comment for a linked input (KILN_LINKED_MARKER in src/compiler.h)
_MARKER = "/* kiln-linked "
_MARKER_RE = _Regex(r"/\* kiln-linked (\d) ([0-9a-f]{64}) ")

# the bytes of every compiled input read in this process, by SHA-256: what a build links
_BLOBS = {}

_C_NAME = _Regex(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# headers nested in headers that link_texts puts in place (docs/limits.md)
KILN_LINK_MAX_INCLUDE_DEPTH = 32


class _Compiled:
    """Compiled device code held in memory, linked with kernels by nvJitLink (Numba's
    LinkableCode classes): ``data`` the bytes, ``name`` names it in messages."""

    kind = 0
    _text = False  # PTX is text: a str is taken as its characters

    def __init__(self, data, name=None):
        if isinstance(data, str) and self._text:
            data = data.encode("utf-8")
        if isinstance(data, str):
            raise TypeError(f"{type(self).__name__} takes the code's bytes, not a str (to link "
                            f"a file, put its path in link= itself)")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{type(self).__name__} takes the code's bytes, not "
                            f"{type(data).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}'s name is a str, not {type(name).__name__}")
        self.data = bytes(data)
        self.name = name or f"<{type(self).__name__}>"

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} ({len(self.data)} bytes)>"


class PTXSource(_Compiled):
    """PTX text (str or bytes) to link with kernels (Numba's ``PTXSource``)."""
    kind = 2
    _text = True


class Cubin(_Compiled):
    """A relocatable cubin to link with kernels (Numba's ``Cubin``)."""
    kind = 1


class Fatbin(_Compiled):
    """A fatbin (cubins and PTX for several architectures) to link with kernels."""
    kind = 4


class LTOIR(_Compiled):
    """LTO-IR (nvcc -dlto or NVRTC -dlto) to link with kernels; linking it turns on
    link-time optimisation."""
    kind = 3


class Object(_Compiled):
    """A host object file holding device code (nvcc -dc) to link with kernels."""
    kind = 5


class Archive(_Compiled):
    """A static library of such objects to link with kernels."""
    kind = 6


class CUSource:
    """CUDA C/C++ source text to link with kernels (Numba's ``CUSource``): ``data`` is
    ``str`` or UTF-8 ``bytes``; ``name`` names it in messages."""

    kind = "cu"

    def __init__(self, data, name=None):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8")
        if not isinstance(data, str):
            raise TypeError(f"CUSource takes CUDA C source text (str or bytes), not "
                            f"{type(data).__name__}")
        self.data = data
        self.name = name or "<CUSource>"

    def __repr__(self):
        return f"<CUSource {self.name} ({len(self.data)} characters)>"


def _order(x):
    if isinstance(x, CUSource):
        return (0, x.data.encode("utf-8"))
    if isinstance(x, _Compiled):
        return (1, x.data)
    return (2, os.fspath(x).encode("utf-8", "surrogateescape"))


def link_items(link):
    """The link argument as a tuple of CUSource and compiled-code objects and paths, in a
    stable order (a set's items sorted by their content or path, so every process puts
    them in alike)."""
    if link is None:
        return ()
    if isinstance(link, (str, os.PathLike, CUSource, _Compiled)):
        items = [link]
    elif isinstance(link, (list, tuple)):
        items = list(link)
    elif isinstance(link, (set, frozenset)):
        items = sorted(link, key=_order)
    else:
        raise TypeError(f"link= takes a CUSource, a path or a list of them, not "
                        f"{type(link).__name__}")
    out = []
    for x in items:
        if isinstance(x, (CUSource, _Compiled)):
            out.append(x)
            continue
        if not isinstance(x, (str, os.PathLike)):
            raise TypeError(f"link= items are CUSource objects, compiled code (PTXSource, "
                            f"Cubin, Fatbin, LTOIR, Object, Archive) or paths, not "
                            f"{type(x).__name__}")
        path = os.fspath(x)
        ext = os.path.splitext(path)[1].lower()
        if ext not in (".cu", ".cuh") and ext not in _LINKED_KINDS:
            raise ValueError(f"Don't know how to link file with extension {ext or '(none)'}: "
                             f"{path} (kiln links CUDA C sources (.cu), and .ptx, .cubin, "
                             f".fatbin, .ltoir, .o and .a files of device code)")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"link= file not found: {path}")
        out.append(path)
    return tuple(out)


def _line(name, line):
    quoted = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'#line {line} "{quoted}"\n'


# #include "name" or #include <name>, as the preprocessor writes it
_INCLUDE = _Regex(r'[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)[^\n]*')
_PRAGMA_ONCE = _Regex(r'[ \t]*#[ \t]*pragma[ \t]+once[ \t]*(?://[^\n]*)?\Z')


def _find(name, own_dir, quoted, paths):
    """The header an #include names: a quoted one in the including file's directory
    first, then (quoted or not) in the search paths; None to leave to the compiler."""
    dirs = ([own_dir] if quoted and own_dir else []) + list(paths)
    for d in dirs:
        f = os.path.join(d, name)
        if os.path.isfile(f):
            return os.path.realpath(f)
    return None


def _expand(text, name, own_dir, paths, seen, depth):
    """text with the headers its #include lines name, found in own_dir (quoted) or the
    search paths, put in place (each file once per source: include guards and
    `#pragma once` hold), with #line markers back to each file's own lines."""
    out = []
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        m = _INCLUDE.match(ln)
        if m:
            inc = m.group(1) or m.group(2)
            path = _find(inc, own_dir, m.group(1) is not None, paths)
            if path is not None:
                if path not in seen:
                    if depth >= KILN_LINK_MAX_INCLUDE_DEPTH:
                        raise ValueError(f"{name}:{i + 1}: #include nests more than "
                                         f"{KILN_LINK_MAX_INCLUDE_DEPTH} headers deep "
                                         f"({inc}): an include cycle?")
                    seen.add(path)
                    body = _read_text(path, f"{name}:{i + 1}: the header")
                    out.append(_line(path, 1) + _expand(body, path, os.path.dirname(path),
                                                        paths, seen, depth + 1))
                out.append(_line(name, i + 2).rstrip("\n"))
                continue
        if _PRAGMA_ONCE.match(ln) and depth > 0:
            out.append("")  # the header is put in once already
            continue
        out.append(ln)
    return "\n".join(out)


def search_paths():
    """kiln.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS as a list of directories, then those of
    Numba's own config module when the program loaded one and set it there (a program
    that kept ``from numba.cuda import config`` beside ``import kiln as cuda``)."""
    import sys

    from . import config
    dirs = []
    for mod, name in ((config, "kiln.config"), (sys.modules.get("numba.cuda.config"),
                                                "numba.cuda.config")):
        if mod is None or mod is config and name != "kiln.config":
            continue
        value = getattr(mod, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")
        if not isinstance(value, str):
            raise TypeError(f"{name}.CUDA_NVRTC_EXTRA_SEARCH_PATHS is a string of "
                            f"directories separated by ':', not {type(value).__name__}")
        dirs += [d for d in value.split(":") if d and d not in dirs]
    return dirs


def link_texts(items):
    """The texts of link_items' items, read now, each headed by a #line marker so that
    NVRTC's messages name the source (a file's absolute path, a CUSource's name) and its
    own line numbers.  The headers they include from their own directory (a file's) or
    from kiln.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS are put in place, so the program
    needs no include path and its cache key covers them; other includes (CUDA's own
    headers) are left to the compiler."""
    paths = search_paths()
    texts = []
    for x in items:
        if isinstance(x, _Compiled):
            texts.append(linked_marker(x.kind, x.name, x.data))
            continue
        if isinstance(x, CUSource):
            name, text, own = x.name, x.data, None
        elif os.path.splitext(x)[1].lower() in _LINKED_KINDS:
            with open(x, "rb") as f:
                data = f.read()
            texts.append(linked_marker(_LINKED_KINDS[os.path.splitext(x)[1].lower()],
                                       os.path.abspath(x), data))
            continue
        else:
            name = os.path.abspath(x)
            text = _read_text(x, "the link= source")
            own = os.path.dirname(name)
        seen = set() if own is None else {os.path.realpath(name)}
        texts.append(_line(name, 1) + _expand(text, name, own, paths, seen, 0))
    return tuple(texts)


def _read_text(path, what):
    """A source file's text: UTF-8, as NVRTC and the C compiler read it; a CompileError
    naming the file and the first byte that is not."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        from ._kiln import CompileError

        raise CompileError(f"{what} {path} is not UTF-8 text (byte {data[e.start]:#04x} at "
                           f"offset {e.start}); save it as UTF-8") from None


def linked_marker(kind, name, data):
    """The program's text for compiled code: a comment with its kind, the SHA-256 of its
    bytes (so the cache key covers them) and its name; the bytes are kept by digest."""
    import hashlib
    digest = hashlib.sha256(data).hexdigest()
    _BLOBS.setdefault(digest, data)
    # shown in messages and the program: printable UTF-8 (a file name need not be)
    shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
    shown = "".join(c if c.isprintable() else "?" for c in shown).replace("*/", "* /")
    return f"{_MARKER}{kind} {digest} {shown} ({_KIND_NAMES[kind]}) */"


def linked_inputs(source):
    """The compiled code a translated program links, in its order, each once:
    [(kind, name, bytes)] for kiln._kiln.nvrtc_compile's links."""
    out, seen = [], set()
    for m in _MARKER_RE.finditer(source):
        kind, digest = int(m.group(1)), m.group(2)
        if digest in seen or digest not in _BLOBS or not 1 <= kind <= 6:
            continue  # a source's own text that looks like a marker is not one
        seen.add(digest)
        end = source.find(" */", m.end())
        label = source[m.end():end].rsplit(" (", 1)[0] if end >= 0 else digest
        out.append((kind, label, _BLOBS[digest]))
    _refuse_duplicates(out)
    return out


_PTX_DEF = _Regex(rb"^\s*\.visible\s+\.(?:func|entry)\s*(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)",
                  8)  # re.M


def _elf_functions(data):
    """The global functions an ELF file (a cubin) defines, from its symbol tables; empty
    for anything else."""
    import struct
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return set()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(data):
        return set()
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _, typ, _, _, off, size, link, _, _, entsize in secs:
        if typ != 2 or entsize < 24 or link >= shnum or off + size > len(data):
            continue  # SHT_SYMTAB only
        stroff, strsize = secs[link][4], secs[link][5]
        for k in range(size // entsize):
            st_name, st_info, _, st_shndx = struct.unpack_from("<IBBH", data, off + k * entsize)
            if st_info >> 4 != 1 or st_info & 15 != 2 or st_shndx == 0 or st_name >= strsize:
                continue  # a defined GLOBAL FUNC
            end = data.find(b"\0", stroff + st_name, stroff + strsize)
            names.add(data[stroff + st_name:end if end >= 0 else stroff + strsize])
    return names


def _refuse_duplicates(inputs):
    """A CompileError when two linked inputs define one function: nvJitLink 13 takes one
    of them without failing the link and then crashes in a later link of the process
    (PTX is read for its .visible functions, cubins for their symbol tables; fatbins,
    LTO-IR, objects and archives are not looked into)."""
    where = {}
    for kind, label, data in inputs:
        names = (set(_PTX_DEF.findall(data)) if kind == 2 else _elf_functions(data)
                 if kind == 1 else set())
        for n in names:
            if n in where and where[n] != label:
                from ._kiln import CompileError
                raise CompileError(
                    f"error: function '{n.decode(errors='replace')}' is defined by two linked "
                    f"inputs, {where[n]} and {label}\nhint: link one definition of each "
                    f"function (nvJitLink would keep one of them, whichever it reads first)")
            where.setdefault(n, label)


def _type_of(text, where):
    text = text.strip()
    ns = {k: v for k, v in vars(_types).items() if isinstance(v, Type)}
    ns["CPointer"] = CPointer
    ptr = 0
    while text.endswith("*"):  # kiln's signature text spells CPointer(T) "T*"
        text = text[:-1].rstrip()
        ptr += 1
    try:
        t = eval(text, {"__builtins__": {}}, ns)  # a type expression: float32[:, ::1]
    except Exception:
        t = None
    if not isinstance(t, Type):
        raise TypeError(f"{where}: {text!r} is not a type kiln knows")
    for _ in range(ptr):
        t = CPointer(t)
    return t


def _signature(sig):
    """A Signature from text or a Signature; TypeError without a return type."""
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        import re
        m = re.match(r"\s*(.*?)\s*\((.*)\)\s*\Z", sig, re.S)
        if not m:
            raise TypeError(f"a signature is 'ret(args)', not {sig!r}")
        if not m.group(1):
            raise TypeError(f"Return type must be given: {sig!r} declares only the argument "
                            "types (write 'void(...)' for a function that returns nothing)")
        ret = _type_of(m.group(1), sig)
        args = [_type_of(a, sig) for a in _types.split_top(m.group(2))]
        return Signature(ret, args)
    if isinstance(sig, (tuple, list)):
        raise TypeError("Return type must be given: a tuple of argument types declares no "
                        "return type (write int32(float32) or 'void(...)')")
    raise TypeError(f"a signature is text like 'int32(float32)' or a type called with "
                    f"argument types, not {type(sig).__name__}")


class ExternFunction:
    """An external CUDA device function (``declare_device``'s result): ``name`` its C
    symbol, ``sig`` its signature (``sig.args``, ``sig.return_type``), ``link`` its
    sources, ``abi`` ``"numba"`` or ``"c"``.  Kernels and device functions call it."""

    def __init__(self, name, sig, link, abi, use_cooperative):
        self.name = name
        self.sig = sig
        self.link = link
        self.abi = abi
        self.use_cooperative = use_cooperative

    def _describe(self):
        """_compile.describe's tuple: the sources are read now, at the kernel's compile."""
        return ("extern", self.name, _types.signature_text(self.sig), _ABIS[self.abi],
                link_texts(self.link), self.use_cooperative)

    def __call__(self, *args):
        raise TypeError(f"external device function '{self.name}' can only be called from "
                        "kernels and device functions")

    def __repr__(self):
        return f"<external device function '{self.name}' {self.sig}, abi={self.abi!r}>"


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Declares the CUDA C device function ``name`` of signature ``sig`` (Numba's): with
    ``abi="numba"`` it is ``extern "C" __device__ int name(ret *out, args...)``, returning
    a status (kiln ignores it) and its result through ``out``; with ``abi="c"``,
    ``extern "C" __device__ ret name(args...)``.  ``link``: the code that defines it (a
    CUSource or .cu path of CUDA C; compiled code: a .ptx, .cubin, .fatbin, .ltoir, .o or
    .a path or a PTXSource, Cubin, Fatbin, LTOIR, Object or Archive; or a list, tuple or
    set of them)."""
    if not isinstance(name, str) or not _C_NAME.match(name):
        raise ValueError(f"declare_device's name is the function's C symbol, not {name!r}")
    if abi not in _ABIS:
        raise ValueError(f"abi= is 'numba' or 'c', not {abi!r}")
    signature = _signature(sig)
    return ExternFunction(name, signature, link_items(link), abi, bool(use_cooperative))
