"""``python -m kiln precompile MODULE.py --target cuda:sm_80,sm_90 --target cpu``

Builds every kernel of a module that has explicit signatures, for the targets
named, into the cache (``kiln cache export`` then moves them to other
machines).  CUDA targets need only NVRTC, not a GPU.  The `kiln` command runs
this for ``kiln precompile``: compiling a module needs its globals, so Python
imports it.
"""

import argparse
import importlib.util
import os
import sys
import time

# CUDA architectures taken (sm_XY, XY = compute capability x 10): a sanity bound, the
# same as the `kiln` command's (cli/main.c ARCH_MIN, ARCH_MAX); NVRTC says which of
# these it can compile for.
ARCH_MIN = 10
ARCH_MAX = 199


def _parse_targets(specs):
    """["cuda:sm_80,sm_90", "cpu"] -> [("cuda", 80), ("cuda", 90), ("cpu", 0)]"""
    out = []
    for spec in specs:
        kind, _, rest = spec.partition(":")
        if kind == "cpu" and not rest:
            out.append(("cpu", 0))
            continue
        if kind != "cuda" or not rest:
            raise SystemExit(f"kiln precompile: bad target '{spec}'; write cpu or cuda:sm_80,sm_90")
        for arch in rest.split(","):
            a = arch.strip()
            digits = a[3:] if a.startswith("sm_") else a
            if not (digits.isascii() and digits.isdigit()) or \
                    not ARCH_MIN <= int(digits) <= ARCH_MAX:
                raise SystemExit(f"kiln precompile: bad CUDA architecture '{arch}' in '{spec}'; "
                                 f"write sm_80 or 80 (sm_{ARCH_MIN} to sm_{ARCH_MAX})")
            out.append(("cuda", int(digits)))
    seen = []
    for t in out:
        if t not in seen:
            seen.append(t)
    return seen


def _import_module(path):
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise SystemExit(f"kiln precompile: no such file {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def precompile(argv):
    p = argparse.ArgumentParser(prog="kiln precompile",
                                description="Build a module's kernels with explicit signatures "
                                            "into kiln's cache.")
    p.add_argument("module", help="the kernel file (MODULE.py)")
    p.add_argument("--target", action="append", default=[],
                   help="cpu, or cuda:sm_80,sm_90 (repeatable; default: cpu, and the local "
                        "GPU's architecture when there is one)")
    args = p.parse_args(argv)
    from . import _dispatch, _compile, _kiln

    targets = _parse_targets(args.target)
    if not targets:
        targets = [("cpu", 0)]
        if _compile.cuda_available():
            targets.append(("cuda", _compile._arch_of(_kiln.current_device())))
    found = []
    _dispatch._precompiling = found
    try:
        _import_module(args.module)
    finally:
        _dispatch._precompiling = None
    if not found:
        print(f"kiln precompile: {args.module} has no kernels with explicit signatures "
              "(write @kiln.jit(\"void(float32[::1], ...)\"))", file=sys.stderr)
        return 1
    failures = 0
    built = cached = 0
    t0 = time.perf_counter()
    for disp, text in found:
        _, argkey = _kiln.parse_signature(text)
        for kind, arch in targets:
            label = "cpu" if kind == "cpu" else f"cuda:sm_{arch}"
            try:
                if kind == "cpu":
                    _, _, ckey, hit = _compile.build_cpu(disp, argkey)
                else:
                    [(_, ckey, hit)] = _compile.check_cuda(disp, argkey, (arch,))
            except _kiln.CompileError as e:
                failures += 1
                print(f"error: {disp.__qualname__}{text[text.index('('):]} for {label}:\n{e}",
                      file=sys.stderr)
                continue
            cached += bool(hit)
            built += not hit
            print(f"{label:12} {'cached ' if hit else 'built  '} {ckey}  "
                  f"{_compile._cache_name(disp, argkey)}")
    from . import cache

    path = cache.path()
    print(f"{built} built, {cached} already cached, {failures} failed in "
          f"{time.perf_counter() - t0:.1f} s; cache: {path or 'memory only (nothing kept)'}")
    if path is None:
        return 1
    return 1 if failures else 0


def _tell_the_cli():
    """The `kiln` command runs this interpreter as a child and waits for this line on the
    pipe it names: without it, it reports that the interpreter failed before kiln ran."""
    fd = os.environ.pop("KILN_PRECOMPILE_FD", None)
    if fd is None:
        return
    try:
        fd = int(fd)
        os.write(fd, b"kiln precompile\n")
        os.close(fd)
    except (OSError, ValueError):
        pass


def main(argv=None):
    _tell_the_cli()
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv[0] == "precompile":
        return precompile(argv[1:])
    print(f"python -m kiln: unknown command '{argv[0]}' (precompile; the `kiln` command has "
          "the others)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
