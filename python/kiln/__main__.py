"""``python -m kiln precompile|compile|report ...``: the commands of `kiln` that need Python.

``python -m kiln precompile MODULE.py --target cuda:sm_80,sm_90 --target cpu``
builds every kernel of a module that has explicit signatures, for the targets
named, into the cache (``kiln cache export`` then moves them to other
machines).  CUDA targets need only NVRTC, not a GPU.

``python -m kiln compile FILE KERNEL SIGNATURE [--target cpu|cuda] [--types]``
prints a kernel's generated C or CUDA C (or its types), translated by the
dispatcher's own path: the file is imported as a module, so its globals and
device functions are what a call would see.

``python -m kiln report TRACE.json [-o REPORT.html]`` renders a trace written by
kiln.profile() or KILN_TRACE as one self-contained HTML page: a timeline and a table
per kernel (needs Plotly: ``pip install 'kiln[report]'``).

The `kiln` command (cli/main.c) runs these for ``kiln precompile``, ``kiln compile``
and ``kiln report``: compiling a kernel needs its module's globals, so Python imports
it, and the report is drawn by a Python library.
The other commands (``kiln info``, ``kiln cache ...``) are the `kiln` command's.
"""

import argparse
import importlib.machinery
import importlib.util
import os
import sys
import time

# CUDA architectures taken (sm_XY, XY = compute capability x 10): a sanity bound, the
# same as the `kiln` command's (cli/cli.h ARCH_MIN, ARCH_MAX); NVRTC says which of
# these it can compile for.
ARCH_MIN = 10
ARCH_MAX = 199
ARCH_DEFAULT = 90  # `compile --target cuda` without --arch and without a GPU


def _usage_error(message):
    """A usage error: the message on stderr, exit status 2 (docs/cli.md), as argparse's."""
    sys.stderr.write(message + "\n")
    raise SystemExit(2)


def _parse_targets(specs):
    """["cuda:sm_80,sm_90", "cpu"] -> [("cuda", 80), ("cuda", 90), ("cpu", 0)]"""
    out = []
    for spec in specs:
        kind, _, rest = spec.partition(":")
        if kind == "cpu" and not rest:
            out.append(("cpu", 0))
            continue
        if kind != "cuda" or not rest:
            _usage_error(f"kiln precompile: bad target '{spec}'; write cpu or cuda:sm_80,sm_90")
        for arch in rest.split(","):
            a = arch.strip()
            digits = a[3:] if a.startswith("sm_") else a
            if not (digits.isascii() and digits.isdigit()) or \
                    not ARCH_MIN <= int(digits) <= ARCH_MAX:
                _usage_error(f"kiln precompile: bad CUDA architecture '{arch}' in '{spec}'; "
                             f"write sm_80 or 80 (sm_{ARCH_MIN} to sm_{ARCH_MAX})")
            out.append(("cuda", int(digits)))
    seen = []
    for t in out:
        if t not in seen:
            seen.append(t)
    return seen


def _import_module(path, command="precompile"):
    path = os.path.abspath(path)
    if not os.path.exists(path):
        raise SystemExit(f"kiln {command}: no such file {path}")
    if not os.path.isfile(path):
        raise SystemExit(f"kiln {command}: {path} is not a file (a Python module, MODULE.py)")
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    # read as Python source whatever its suffix (importlib finds no loader for kernels.txt)
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:  # the module ended the process while it was imported
        raise SystemExit(f"kiln {command}: importing {path} called sys.exit({e.code!r}); kiln "
                         f"imports the module to find its kernels") from None
    except Exception as e:
        # the module's own frames, not importlib's or this file's
        import traceback

        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(e), e, tb or e.__traceback__))
        how = "from KILN_PYTHON" if os.environ.get("KILN_PYTHON") else \
            "KILN_PYTHON chooses another"
        raise SystemExit(f"{text.rstrip()}\nkiln {command}: importing {path} failed (Python "
                         f"{sys.executable}, {how})") from None
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
    for entry, text in found:
        for kind, arch in targets:
            label = "cpu" if kind == "cpu" else f"cuda:sm_{arch}"
            try:
                if hasattr(entry, "precompile_targets"):  # kiln.fuse: the kernels its calls run
                    kernels = entry.precompile_targets(kind)
                else:
                    kernels = [(entry, _kiln.parse_signature(text)[1])]
            except _kiln.CompileError as e:
                failures += 1
                print(f"error: {entry.__qualname__}{text[text.index('('):]} for {label}:\n{e}",
                      file=sys.stderr)
                continue
            for disp, argkey in kernels:
                try:
                    if kind == "cpu":
                        _, _, ckey, hit = _compile.build_cpu(disp, argkey)
                    else:
                        [(_, ckey, hit)] = _compile.check_cuda(disp, argkey, (arch,))
                except _kiln.CompileError as e:
                    failures += 1
                    print(f"error: {entry.__qualname__}{text[text.index('('):]} for {label}:\n{e}",
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


def _kernel_of(module, name, path):
    """The dispatcher named `name` (dotted names reach attributes) in the module; a
    plain function is wrapped as @kiln.jit would."""
    from . import _dispatch

    obj = module
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if isinstance(obj, _dispatch.Dispatcher):
        return obj
    if obj is not None and hasattr(obj, "__code__"):
        if getattr(obj, "__module__", None) != module.__name__:  # kiln.jit, np.sum...
            raise SystemExit(f"kiln compile: '{name}' in {path} is a function of module "
                             f"{obj.__module__}, not a kernel or function defined in {path}")
        try:
            return _dispatch.Dispatcher(obj)
        except (TypeError, ValueError) as e:
            raise SystemExit(f"kiln compile: '{name}' in {path}: {e}") from None
    kernels = sorted(k for k, v in vars(module).items() if isinstance(v, _dispatch.Dispatcher))
    listed = f"; its kernels and device functions: {', '.join(kernels)}" if kernels else ""
    if obj is None:
        raise SystemExit(f"kiln compile: {path} has no function '{name}'{listed}")
    raise SystemExit(f"kiln compile: '{name}' in {path} is a {type(obj).__name__}, not a kiln "
                     f"kernel or a function{listed}")


def compile_(argv):
    p = argparse.ArgumentParser(
        prog="kiln compile",
        description="Print the generated C (CPU) or CUDA C of a kernel for a signature, "
                    "translated as a call would be: FILE is imported as a module.")
    p.add_argument("file", help="the kernel's file (imported as a module)")
    p.add_argument("kernel", help="the kernel's name in it")
    p.add_argument("signature", help='Numba syntax: "void(float32[::1], float32)"')
    p.add_argument("-t", "--target", choices=("cpu", "cuda"), default="cpu",
                   help="cpu (C with OpenMP, the default) or cuda (CUDA C)")
    p.add_argument("--arch", help="CUDA architecture: 90 or sm_90 (default: the first GPU's, "
                                  "else 90)")
    p.add_argument("--types", action="store_true",
                   help="print each variable's type (inspect_types) instead of the code")
    p.add_argument("--build", action="store_true",
                   help="also build it (cc or NVRTC, through the cache) and report the result")
    p.add_argument("--fastmath", action="store_true", help="as @kiln.jit(fastmath=True)")
    p.add_argument("--debug", action="store_true", help="as @kiln.jit(debug=True)")
    args = p.parse_args(argv)
    from . import _compile, _dispatch, _kiln

    arch = 0
    if args.target == "cuda":
        if args.arch is not None:
            digits = args.arch[3:] if args.arch.startswith("sm_") else args.arch
            if not (digits.isascii() and digits.isdigit()) or \
                    not ARCH_MIN <= int(digits) <= ARCH_MAX:
                p.error(f"'{args.arch}' is not a CUDA architecture (write 90 or sm_90, from "
                        f"sm_{ARCH_MIN} to sm_{ARCH_MAX})")
            arch = int(digits)
        else:
            arch = _compile._arch_of(0) if _compile.cuda_available() else ARCH_DEFAULT
    # kernels with explicit signatures are recorded, not built, while the module loads
    _dispatch._precompiling = []
    try:
        module = _import_module(args.file, "compile")
    finally:
        _dispatch._precompiling = None
    disp = _kernel_of(module, args.kernel, args.file)
    if disp._is_device:
        raise SystemExit(f"kiln compile: '{args.kernel}' is a device function: its code is "
                         "generated inside each kernel that calls it (compile one of those; "
                         "--types shows the device function's types there)")
    if args.fastmath:
        disp.options["fastmath"] = True
    if args.debug:
        disp.options["debug"] = True
    try:
        ret, argkey = _kiln.parse_signature(args.signature)
        if len(argkey) // 4 != disp._nparams:
            raise SystemExit(f"kiln compile: signature '{args.signature}' has {len(argkey) // 4} "
                             f"arguments but '{args.kernel}' takes {disp._nparams}")
        if ret and not disp._is_device:
            raise SystemExit(f"kiln compile: kernel '{args.kernel}' returns nothing, but "
                             f"signature '{args.signature}' has a return type; write void(...)")
        # the dispatcher's own translation: Dispatcher.inspect_source and inspect_types
        # show this program once a call has built it
        prog = _compile._translate(disp, argkey, 1 if args.target == "cuda" else 0, arch)
        sys.stdout.write(prog.types if args.types else prog.source)
        sys.stdout.flush()
        if args.build and args.target == "cpu":
            _, blob, ckey, hit = _compile.build_cpu(disp, argkey)
            print(f"kiln compile: {'found in the cache' if hit else 'built'}: {len(blob)} bytes "
                  f"of machine code, cache key {ckey}", file=sys.stderr)
        elif args.build:
            [(_, ckey, hit)] = _compile.check_cuda(disp, argkey, (arch,))
            print(f"kiln compile: {'found in the cache' if hit else 'built'} for sm_{arch} with "
                  f"NVRTC, cache key {ckey}", file=sys.stderr)
    except _kiln.CompileError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def report(argv):
    p = argparse.ArgumentParser(
        prog="kiln report",
        description="Render a trace (kiln.profile(), KILN_TRACE) as one self-contained HTML "
                    "page: a timeline of compiles and launches per thread and stream, and a "
                    "table per kernel.")
    p.add_argument("trace", help="the Chrome trace-event file (trace.json)")
    p.add_argument("-o", "--output", help="the page to write (default: the trace's name "
                                          "with .html)")
    args = p.parse_args(argv)
    from . import _report

    try:
        out = _report.report(args.trace, args.output)
    except _report.ReportError as e:
        print(f"kiln report: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


_COMMANDS = {"precompile": precompile, "compile": compile_, "report": report}


def _tell_the_cli(command):
    """The `kiln` command runs this interpreter as a child and waits for this line on the
    pipe it names: without it, it reports that the interpreter failed before kiln ran."""
    fd = os.environ.pop("KILN_CLI_FD", None)
    if fd is None:
        return
    try:
        fd = int(fd)
        os.write(fd, f"kiln {command}\n".encode())
        os.close(fd)
    except (OSError, ValueError):
        pass


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    _tell_the_cli(argv[0] if argv else "")
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    run = _COMMANDS.get(argv[0])
    if run is None:
        print(f"python -m kiln: unknown command '{argv[0]}' ({', '.join(_COMMANDS)}; the `kiln` "
              "command has the others)", file=sys.stderr)
        return 2
    try:
        return run(argv[1:])
    except KeyboardInterrupt:
        print(f"kiln {argv[0]}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
