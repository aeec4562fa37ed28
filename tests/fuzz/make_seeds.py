"""Seed corpora for the fuzz targets (tests/fuzz/README.md).

    python tests/fuzz/make_seeds.py OUTDIR

writes OUTDIR/compile, OUTDIR/bundle and OUTDIR/cache:

compile  every kiln function of tests/lang/*.py in the input format of fuzz_compile.c:
         once with each fixed argument-type list, and, for every translation the lang
         cases really make (they are run, with kiln.translate recorded), with the
         exact signature and options of that translation.  The text is the function
         from its decorators to the end of the file, then the file's beginning, where
         the target's resolver finds the device functions it calls.
bundle   a bundle written by `kiln cache export` from the cache those runs filled, cut
         to its smallest entry (raw mode), small bundles written here, and structured
         inputs that describe good bundles.
cache    kiln.db files with a few small rows (the keys fuzz_cache.c's file mode asks
         for), structured rows, and Redis replies.

The package is imported from $KILN_TEST_PYDIR (else python/); the lang cases compile
into the cache $KILN_CACHE_DIR (make sets one under the fuzz build, so a second run
compiles nothing).
"""
import contextlib
import ctypes
import glob
import hashlib
import io
import os
import re
import runpy
import shutil
import sqlite3
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LANG = os.path.join(ROOT, "tests", "lang")
NLISTS = 8  # fuzz_compile.c's fixed type lists


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def short(data):
    return hashlib.sha1(data).hexdigest()[:16]


# ---- compile --------------------------------------------------------------------------

def functions(text):
    """(offset of the decorators, offset of the def) of each top-level function."""
    out = []
    for m in re.finditer(r"^def \w+\(", text, re.M):
        start = m.start()
        while True:
            prev = text.rfind("\n", 0, max(start - 1, 0))
            line = text[prev + 1:start]
            if start > 0 and line.startswith("@"):
                start = prev + 1
            else:
                break
        out.append(start)
    return out


def fuzz_text(text, start):
    """The kernel from its decorators to the end, then the file's beginning."""
    return (text[start:] + "\n\n" + text[:start]).encode()


def record_translations():
    """Runs every lang case with kiln's translate recorded: [(path, text, key, opts)]."""
    seen = []
    try:
        import kiln
        from kiln import _kiln
    except ImportError as e:
        print(f"make_seeds: kiln cannot be imported ({e}); fixed type lists only")
        return seen
    orig = _kiln.translate

    def translate(text, filename, first, key, opts, resolver, scope):
        seen.append((filename, first, text, bytes(key), tuple(opts)))
        return orig(text, filename, first, key, opts, resolver, scope)

    _kiln.translate = translate
    try:
        for path in sorted(glob.glob(os.path.join(LANG, "*.py"))):
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                try:
                    ns = runpy.run_path(path, run_name="seed_" + os.path.basename(path)[:-3])
                    ns["main"]()
                except BaseException:  # error cases end with an exception
                    pass
    finally:
        _kiln.translate = orig
    return [(f, first, t, k, o) for f, first, t, k, o in seen
            if os.path.abspath(f).startswith(LANG)]


def compile_seeds(out):
    d = os.path.join(out, "compile")
    n = 0
    for path in sorted(glob.glob(os.path.join(LANG, "*.py"))):
        with open(path) as f:
            text = f.read()
        for start in functions(text):
            body = fuzz_text(text, start)
            for i in range(NLISTS):
                data = bytes([0, i]) + body
                write(d, short(data), data)
                n += 1
    from kiln import _kiln  # noqa: F401  (present when record_translations found kiln)
    for filename, first, ktext, key, opts in record_translations():
        with open(filename) as f:
            text = f.read()
        lines = text.splitlines(keepends=True)
        start = sum(len(x) for x in lines[:first - 1])
        sig = "void(" + _kiln.argtype_str(key) + ")"
        target, fastmath, debug, lineinfo = opts[0], opts[1], opts[2], opts[3]
        flags = (1 if target else 0) | (2 if debug else 0) | (4 if fastmath else 0) | \
            (8 if lineinfo else 0)
        for extra in (0, 0x20):  # and both targets
            data = bytes([flags | extra, 0x80]) + sig.encode() + b"\n" + fuzz_text(text, start)
            write(d, short(data), data)
            n += 1
    return n


# ---- checksums as kiln makes them (XXH3-128, canonical) ---------------------------------

class _H128(ctypes.Structure):
    _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]


_xxh = ctypes.CDLL("libxxhash.so.0")
_xxh.XXH3_128bits.restype = _H128
_xxh.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def xxh3(data):
    h = _xxh.XXH3_128bits(data, len(data))
    return struct.pack(">QQ", h.high64, h.low64)


def checksum(key, kind, blob):
    """cache/key.c's key_checksum: of the key, the kind with its NUL, and the blob."""
    return xxh3(key + kind.encode() + b"\0" + blob)


# ---- structured inputs: the byte streams fuzz_util.h's Reader decodes ---------------------

def rbytes(b):
    """rd_bytes: a length byte (255: two more, big-endian) and the bytes."""
    if len(b) < 255:
        return bytes([len(b)]) + b
    return bytes([255, len(b) >> 8, len(b) & 255]) + b


def u64(v):
    return struct.pack("<Q", v & (2**64 - 1))


RIGHT = b"\x00"  # a bind_fuzz tag that binds the right value


def bundle_structured(rows, facts=(), schema=0, disk=False):
    """fuzz_bundle.c's description of a bundle."""
    s = bytes([2 if disk else 0, schema])
    if not schema & 1:
        s += b"\x00" + RIGHT + RIGHT  # one format row, right
    s += bytes([len(rows)])
    for key, kind, name, target, blob in rows:
        s += key + bytes([kind]) + rbytes(b"") + rbytes(name) + bytes([target]) + rbytes(b"")
        s += rbytes(blob) + u64(1700000000000) + RIGHT * (8 if schema & 4 else 9)
    if not schema & 2:
        s += bytes([len(facts)])
        for good in facts:
            s += bytes([1 if good else 0]) + rbytes(b"1 2 3 4 5 12040 2 80 90 /x") + RIGHT * 2
    return s


def cache_rows(rows, pending=0, ops=0):
    """fuzz_cache.c's rows mode."""
    s = bytes([0 | ops]) + bytes([len(rows)])
    for key, kind, name, blob in rows:
        s += key + bytes([kind]) + rbytes(b"") + rbytes(name) + rbytes(blob)
        s += b"\x05" + RIGHT * 9  # last_used's age, then the nine columns' tags
    s += bytes([pending])
    for _ in range(pending):
        s += bytes(16) + rbytes(b"otherhost:1:abc") + RIGHT + RIGHT + u64(2**62) + RIGHT
    s += b"\x02" + u64(0x4059000000000000) + RIGHT * 2 + u64(0x3ff0000000000000) + RIGHT * 2
    s += b"\x01" + b"\x01" + rbytes(b"") + RIGHT * 2
    return s


def redis_input(replies, flags=0, ops=0):
    s = bytes([2 | ops, flags])
    for r in replies:
        s += struct.pack("<H", len(r)) + r
    return s


def record_body(kind=b"so", name=b"k", target=b"cpu:x86_64", blob=b"\x7fELF....."):
    meta = kind + b"\0" + name + b"\0" + target + b"\0"
    return bytes(40) + bytes(32) + struct.pack("<I", len(meta)) + struct.pack("<Q", len(blob)) \
        + meta + blob


# ---- small databases ------------------------------------------------------------------------

def small_db(src_db, path, keep_rows):
    """A copy of a kiln database or bundle with a few small rows, page size 512."""
    shutil.copy(src_db, path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("DELETE FROM artifacts")
    for i, (kind, blob) in enumerate(keep_rows):
        db.execute("INSERT INTO artifacts(key, kind, name, target, size, checksum, created, "
                   "last_used, blob) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (bytes([i]) * 16, kind, f"seed.k{i}(float64[::1])", "cpu:x86_64", len(blob),
                    checksum(bytes([i]) * 16, kind, blob), 1700000000000, 1700000000000, blob))
    db.commit()
    db.execute("PRAGMA page_size=512")
    db.execute("VACUUM")
    db.close()
    with open(path, "rb") as f:
        return f.read()


def cache_seeds(out, cache_dir):
    db_d, b_d = os.path.join(out, "cache"), os.path.join(out, "bundle")
    n = 0
    tmp = tempfile.mkdtemp(prefix="kiln-seeds-")
    try:
        kdb = os.path.join(cache_dir, "kiln.db")
        if os.path.exists(kdb):
            c = sqlite3.connect(kdb)
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.close()
            rows = [("so", b"\x7fELF" + bytes(60)), ("cubin", b"cubin" * 8),
                    ("ptx", b"// ptx\n.version 8.0\n")]
            for k in range(1, 4):
                data = small_db(kdb, os.path.join(tmp, "k.db"), rows[:k])
                for ops in (0x00, 0x04, 0x08, 0x10):
                    write(db_d, short(bytes([1 | ops]) + data), bytes([1 | ops]) + data)
                    n += 1
            # a bundle as `kiln cache export` writes it, cut to small entries
            import kiln.cache
            full = os.path.join(tmp, "full.bundle")
            kiln.cache.export(full)
            for k in (1, 2):
                data = small_db(full, os.path.join(tmp, "b.db"), rows[:k])
                for mode in (1, 3):
                    write(b_d, short(bytes([mode]) + data), bytes([mode]) + data)
                    n += 1
        else:
            print("make_seeds: no kiln.db in the seed cache; no file seeds")
        key = bytes(range(16))
        for disk in (False, True):
            for schema in (0, 1, 2, 4):
                data = bundle_structured([(key, 0, b"m.k(int64)", 0, b"\x7fELF" + bytes(20)),
                                          (bytes(16), 1, b"m.g", 1, b"cubin")],
                                         facts=(True, False), schema=schema, disk=disk)
                write(b_d, short(data), data)
                n += 1
        for ops in (0, 4, 8, 16):
            data = cache_rows([(key, 0, b"m.k(int64)", b"\x7fELF" + bytes(20)),
                               (bytes(16), 2, b"m.p", b"ptx text")], pending=1, ops=ops)
            write(db_d, short(data), data)
            n += 1
        replies = [
            [b"$-1\r\n", b"+OK\r\n", b"+OK\r\n", b":1\r\n"],
            [b"-ERR wrong\r\n"],
            [b":5\r\n", b"$-1\r\n"],
            [b"*2\r\n$1\r\na\r\n$-1\r\n", b"+OK\r\n"],
            [b"$3\r\nab"],
            [b"$10\r\nKILNREC2xx\r\n", b"$-1\r\n"],
            [b"$10\r\nKILNREC1xx\r\n", b"$-1\r\n"],
        ]
        for r in replies:
            data = redis_input(r)
            write(db_d, short(data), data)
            n += 1
        for flags in (1 | 4, 1, 1 | 2 | 4):
            for body in (record_body(), record_body(kind=b"cubin", blob=b""),
                         record_body(name=b"x" * 200)):
                data = redis_input([body, b"$-1\r\n", b"+OK\r\n", b"+OK\r\n", b":1\r\n"],
                                   flags=flags)
                write(db_d, short(data), data)
                n += 1
    finally:
        shutil.rmtree(tmp, True)
    return n


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUTDIR")
    out = sys.argv[1]
    sys.path.insert(0, os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python"))
    cache_dir = os.environ.get("KILN_CACHE_DIR")
    if not cache_dir:
        sys.exit("make_seeds: set KILN_CACHE_DIR (the lang cases compile into it)")
    os.environ.pop("KILN_REMOTE_CACHE", None)
    nc = compile_seeds(out)
    nk = cache_seeds(out, cache_dir)
    print(f"make_seeds: {nc} compile seeds, {nk} bundle and cache seeds in {out}")


if __name__ == "__main__":
    main()
