"""kiln.cache: the compiled-kernel cache (memory, disk, and Redis when configured).

Every kernel kiln builds is stored under a key that hashes the generated source
and the target (compiler identity, architecture, options, kiln's version), so
an edited kernel, callee or frozen global is a new key and a stale hit cannot
happen.  The disk tier is one SQLite database under ``$KILN_CACHE_DIR``
(default ``$XDG_CACHE_HOME/kiln``, else ``~/.cache/kiln``), bounded by
``KILN_CACHE_SIZE`` (default 1 GiB); ``KILN_REMOTE_CACHE=redis://host:port/db``
adds a shared tier.  See docs/cache.md.
"""

import os

from . import _kiln

CacheWarning = _kiln.CacheWarning
CacheError = _kiln.CacheError


def stats():
    """Per tier hits, misses, entries and bytes; this process's compiles and their
    milliseconds; the disk tier's totals over all processes (``all_*``)."""
    return _kiln.cache_stats()


def clear():
    """Removes every entry from the memory and disk tiers; returns how many disk
    entries went.  Kernels already loaded in this process keep running."""
    return _kiln.cache_clear()


def prune(max_bytes=None):
    """Evicts the least recently used disk entries until the tier holds at most
    max_bytes (default: its configured size); returns how many went."""
    if max_bytes is None:
        max_bytes = -1
    elif (not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0
          or max_bytes >= 1 << 63):
        raise ValueError(f"max_bytes must be an int from 0 to 2**63-1, not {max_bytes!r}")
    return _kiln.cache_prune(max_bytes)


def entries():
    """The disk tier's entries, most recently used first, as dicts; ``hits`` counts the
    disk hits of all processes, ``compile_ms`` is the build that stored the entry."""
    fields = ("key", "kind", "name", "target", "size", "created_ms", "last_used_ms", "hits",
              "compile_ms")
    return [dict(zip(fields, e)) for e in _kiln.cache_entries()]


def path():
    """The disk tier's database file, or None when that tier is off."""
    return _kiln.cache_where()[0]


def export(file, targets=()):
    """Writes the disk tier's entries (those whose target starts with one of
    ``targets``, such as "cuda:sm_90" or "cpu", when given) to a bundle file;
    returns how many.  With ``KILN_BUNDLE_KEY`` (or ``KILN_BUNDLE_KEY_FILE``) set,
    the bundle carries an HMAC-SHA256 of its contents under that key."""
    if isinstance(targets, str):
        targets = [targets]
    return _kiln.cache_export(os.fspath(file), _export_targets(targets))


def _export_targets(targets):
    """The target prefixes `kiln cache export --target` takes (cli/cache_cmd.c add_targets):
    cpu, cuda, cpu:NAME, or cuda:LIST of architectures (sm_90 or 90, from sm_10 to sm_199),
    normalised to cuda:sm_90.  Anything else is an error: a typo would export nothing."""
    out = []
    for t in targets:
        if not isinstance(t, str):
            raise TypeError(f"a target is a string such as 'cpu' or 'cuda:sm_90', not "
                            f"{type(t).__name__}")
        kind, colon, rest = t.partition(":")
        ok = t in ("cpu", "cuda") or (kind == "cpu" and rest and
                                      all(c.isascii() and (c.isalnum() or c == "_") for c in rest))
        if ok:
            out.append(t)
            continue
        archs = rest.split(",") if kind == "cuda" and rest else []
        for a in archs:
            a = a[5:] if a.startswith("cuda:") else a
            d = a[3:] if a.startswith("sm_") else a
            if not (d.isascii() and d.isdigit() and 10 <= int(d) <= 199):
                archs = []
                break
            out.append(f"cuda:sm_{int(d)}")
        if not archs:
            raise ValueError(f"bad target {t!r} (write cpu, cuda, or cuda:sm_80,sm_90)")
    if len(out) > 64:
        raise ValueError(f"at most 64 export targets, got {len(out)}")
    return out


def import_(file, trust_unsigned=False):
    """Verifies the entries of a bundle and stores the good ones; returns how many.

    A bundle is machine code that will run in this process.  With a bundle key set
    (``KILN_BUNDLE_KEY`` or ``KILN_BUNDLE_KEY_FILE``), a bundle that is not signed,
    or whose signature does not match, raises CacheError, unless ``trust_unsigned``
    (then a CacheWarning says so).  Only regular files are read."""
    if not isinstance(trust_unsigned, bool):  # "false" from a config file is truthy
        raise TypeError(f"trust_unsigned must be True or False, not {trust_unsigned!r}")
    return _kiln.cache_import(os.fspath(file), trust_unsigned)


def _reopen():
    """Closes the cache; the next build opens it again from the environment (tests)."""
    _kiln.cache_reopen()
