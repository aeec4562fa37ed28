"""What kiln shows of its own work: ``kiln.metrics()``, ``kiln.profile()``, and the
environment variables KILN_TRACE, KILN_LOG, KILN_DUMP and KILN_NVTX.

The counting, the trace events and the log lines are made in C (kiln/_ext/obs.c), on
the launch path at the cost of one predictable branch; this module reads the
environment, turns the extension's switches, writes the trace file and the dumped
sources.  docs/observability.md describes the metrics' keys and the trace's schema.
Imported by ``import kiln``: it reads a few environment variables and nothing else.
"""

import _thread
import atexit
import os

from . import _kiln

# the extension's switches (obs.h)
TRACE = 1 << 0
LOG_COMPILE = 1 << 1
LOG_CACHE = 1 << 2
LOG_LAUNCH = 1 << 3
LOG_RECOMPILE = 1 << 4
DEVTIME = 1 << 5
NVTX = 1 << 6

LOG_NAMES = {"compile": LOG_COMPILE, "cache": LOG_CACHE, "launch": LOG_LAUNCH,
             "recompile": LOG_RECOMPILE}

# where KILN_DUMP writes (None: off), and whether it has warned that it cannot
_dump_dir = None
_dump_warned = False
_dump_seen = {}  # (qualname, key, target) -> {source digest: its number under that name}

# the recorders taking trace events now: KILN_TRACE's and each open kiln.profile;
# _sinks_lock orders their opening and closing (which turn tracing on and off) between
# threads (_thread: `import kiln` imports no threading)
_sinks = []
_sinks_lock = _thread.allocate_lock()
_env_trace = None

# the events one recorder keeps (trace.h's, which bounds the C buffer between drains):
# later ones are counted in its otherData.dropped_events
TRACE_MAX_EVENTS = _kiln.TRACE_MAX_EVENTS


def _warn(message, category, stacklevel):
    import warnings  # not at import: `import kiln` stays cheap

    warnings.warn(message, category, stacklevel=stacklevel + 1)


def _set(on=0, off=0):
    flags = (_kiln.obs_flags() | on) & ~off
    _kiln.obs_set(flags)
    return _kiln.obs_flags()


# ---- metrics ---------------------------------------------------------------------------

def metrics(reset=False, device_time=False):
    """What kiln did in this process, as a dict: compiles and their milliseconds by
    stage, cache look-ups per tier and the hit rate, launches, their mean host-side
    cost, bytes copied between host and device, and the same per specialisation under
    ``"kernels"`` (docs/observability.md lists every key).

    ``reset=True`` zeroes the counters after reading them.  ``device_time=True`` reads
    the device time of the GPU launches timed so far (waiting for them) and times every
    GPU launch from now on with CUDA events; inside ``kiln.profile()`` launches are
    timed anyway."""
    flags = _kiln.obs_flags()
    if device_time and not flags & DEVTIME:
        _set(on=DEVTIME)
    include = bool(device_time or flags & (DEVTIME | TRACE))
    m = _kiln.obs_metrics(bool(reset), include)
    # kiln.compile(mode="reduce-overhead"): since the process started (not reset)
    m["recorded_steps"] = dict(zip(("records", "replays", "graphs", "graph_node_updates"),
                                   _kiln.record_counts()))
    return m


# ---- traces ------------------------------------------------------------------------------

def _drain():
    """The events recorded since the last drain go to every open recorder, each keeping
    at most TRACE_MAX_EVENTS in all."""
    text, dropped = _kiln.obs_trace_take()
    n = text.count(b"\n") if text else 0  # each event ends with a newline
    for s in _sinks:
        s._dropped += dropped
        room = TRACE_MAX_EVENTS - s._nevents
        if n <= room:
            if n:
                s._chunks.append(text)
                s._nevents += n
            continue
        if room > 0:  # "ev\n,ev\n,...": the first `room` events
            s._chunks.append(b"\n".join(text.split(b"\n")[:room]) + b"\n")
            s._nevents += room
        s._dropped += n - max(room, 0)


def _child_path(path, pid):
    root, ext = os.path.splitext(path)
    return f"{root}.{pid}{ext or '.json'}"


def _not_writable(path):
    """Why a trace cannot be written at path, or None: the trace replaces a regular
    file (through a symbolic link, the file it names); a directory, a FIFO or a device
    there is never replaced (as root, KILN_TRACE=/dev/null would have made /dev/null a
    file), and its directory must exist and be writable."""
    real = os.path.realpath(path)
    if os.path.lexists(real) and not os.path.isfile(real):
        return "it is not a regular file"
    parent = os.path.dirname(real)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        return "its directory is missing or not writable"
    return None


class _Recorder:
    def __init__(self, path):
        # absolute (a later os.chdir does not move it); bytes paths as str (surrogates
        # keep the bytes that are not UTF-8)
        self.path = os.path.abspath(os.fsdecode(os.fspath(path))) if path is not None else None
        self._chunks = []
        self._nevents = 0
        self._dropped = 0
        self._pid = os.getpid()

    def _document(self):
        import json

        devices = [{"name": n, "copy_gbps": None} for n in _kiln.obs_devices()]
        body = b",".join(c.strip() for c in self._chunks if c.strip()).decode("utf-8", "replace")
        events = json.loads("[" + body + "]") if body else []
        return {"traceEvents": events, "displayTimeUnit": "ms",
                "otherData": {"kiln_version": _kiln.version, "devices": devices,
                              "pid": os.getpid(), "dropped_events": self._dropped}}

    def _write(self, doc):
        """Writes the document to the path (a forked child to path.PID.json) through a
        temporary file renamed into place, so a reader never sees half a trace."""
        if self.path is None:
            return
        path = self.path if os.getpid() == self._pid else _child_path(self.path, os.getpid())
        why = _not_writable(path)
        if why is not None:
            _warn(f"kiln: cannot write the trace {path}: {why}", RuntimeWarning, stacklevel=3)
            return
        path = os.path.realpath(path)  # a link's file, the link kept
        tmp = f"{path}.tmp{os.getpid()}"
        import json

        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
        except OSError as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            _warn(f"kiln: cannot write the trace {path}: {e.strerror or e}",
                          RuntimeWarning, stacklevel=3)


class profile(_Recorder):
    """``with kiln.profile("trace.json"):`` records what kiln does inside the block
    (compile stages, cache look-ups, launches, copies, synchronisations, GPU launches
    with their device time) and writes a Chrome trace-event file that Perfetto
    (ui.perfetto.dev) and chrome://tracing open.  Without a path nothing is written;
    either way ``.trace`` holds the document after the block."""

    def __init__(self, path=None):
        super().__init__(path)
        self.trace = None

    def __enter__(self):
        with _sinks_lock:
            _drain()  # what came before belongs to the recorders open before
            _sinks.append(self)
            self._pid = os.getpid()
            _set(on=TRACE)
        return self

    def __exit__(self, *exc):
        with _sinks_lock:
            _drain()
            if self in _sinks:
                _sinks.remove(self)
            if not _sinks:
                _set(off=TRACE)
        self.trace = self._document()
        self._write(self.trace)
        return False


def _write_env_trace():
    if _env_trace is None:
        return
    with _sinks_lock:
        _drain()
        if _env_trace in _sinks:
            _sinks.remove(_env_trace)
    _env_trace._write(_env_trace._document())


def _after_fork_in_child():
    # the parent's events are the parent's: a child records its own, into path.PID.json
    global _sinks_lock
    _sinks_lock = _thread.allocate_lock()  # (a thread of the parent may have held it)
    for s in _sinks:
        s._chunks = []
        s._nevents = 0
        s._dropped = 0


# ---- KILN_LOG and the recompile reason -------------------------------------------------

def _flags_of_log(value):
    """KILN_LOG's flags; unknown names are warned about, naming the valid ones."""
    flags = 0
    bad = []
    for name in (n.strip().lower() for n in value.split(",")):
        if not name:
            continue
        if name == "all":
            flags |= LOG_COMPILE | LOG_CACHE | LOG_LAUNCH | LOG_RECOMPILE
        elif name in LOG_NAMES:
            flags |= LOG_NAMES[name]
        else:
            bad.append(name)
    if bad:
        _warn(f"KILN_LOG: unknown name{'s' if len(bad) > 1 else ''} "
                      f"{', '.join(map(repr, bad))} ignored; the valid names are "
                      "compile, cache, launch, recompile and all", RuntimeWarning, stacklevel=3)
    return flags


def _describe_arg(t):
    """A 4-byte argument type as text: float32[::1], int64..."""
    return _kiln.argtype_str(bytes(t))


def recompile_reason(names, key, others):
    """Why a new specialisation with type key `key` was made, compared with the keys
    `others` already compiled (same kernel): the arguments whose type, layout or number
    of dimensions differ, and the target.  Text, or None when there were none."""
    if not others:
        return None
    n = (len(key) - 2) // 4

    def diffs(other):
        out = []
        for i in range(min(n, (len(other) - 2) // 4)):
            a, b = other[4 * i:4 * i + 4], key[4 * i:4 * i + 4]
            if a == b:
                continue
            what = ("array" if b[0] else "scalar") if a[0] != b[0] else \
                "dtype" if a[1] != b[1] else ("ndim" if b[0] else "enum class") \
                if a[2] != b[2] else "layout"
            name = names[i] if i < len(names) else f"#{i + 1}"
            out.append(f"argument '{name}' {what} changed: {_describe_arg(a)} -> "
                       f"{_describe_arg(b)}")
        if other[-2:] != key[-2:]:
            tgt = lambda k: "cpu" if k[-2] == 0 else f"cuda:{k[-1]}"
            out.append(f"target changed: {tgt(other)} -> {tgt(key)}")
        return out

    best = min((diffs(o) for o in others), key=len)
    return "; ".join(best) if best else "the same types (a cleared table)"


# ---- KILN_DUMP -----------------------------------------------------------------------------

def _safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:120]


def dump(qualname, key, target_name, source, image=None, tier0=None):
    """Writes a compiled specialisation's generated source (and its PTX, when the
    image is PTX text) under KILN_DUMP as QUALNAME.KEY.TARGET.c|.cu|.ptx, KEY naming
    the argument types, so two runs' directories can be diffed file by file; tier 0's
    vector entry, when the kernel has one, as QUALNAME.KEY.cpu-tier0.c."""
    global _dump_warned
    if _dump_dir is None:
        return
    import hashlib

    short = hashlib.blake2s(bytes(key), digest_size=4).hexdigest()
    # kernels a factory makes share a qualname and their argument types: the second
    # source seen under one name (in this process) is written as QUALNAME.KEY-2...
    seen = _dump_seen.setdefault((qualname, short, target_name), {})
    n = seen.setdefault(hashlib.blake2s(source.encode("utf-8", "surrogatepass")).digest(),
                        len(seen) + 1)
    if n > 1:
        short = f"{short}-{n}"
    stem = os.path.join(_dump_dir, f"{_safe(qualname)}.{short}.{target_name}")
    files = [(stem + (".cu" if target_name.startswith("cuda") else ".c"), source)]
    if tier0 is not None:
        files.append((os.path.join(_dump_dir, f"{_safe(qualname)}.{short}.cpu-tier0.c"), tier0))
    if image is not None and bytes(image[:2]) == b"//":
        files.append((stem + ".ptx", bytes(image).rstrip(b"\0").decode("utf-8", "replace")))
    tmp = None
    try:
        if os.path.exists(_dump_dir) and not os.path.isdir(_dump_dir):
            raise NotADirectoryError(20, "it is not a directory", _dump_dir)
        os.makedirs(_dump_dir, exist_ok=True)
        for path, text in files:
            # whole or not at all: a full disk leaves no empty or cut file behind
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
            tmp = None
    except OSError as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if not _dump_warned:
            _dump_warned = True
            _warn(f"KILN_DUMP={_dump_dir}: cannot write {e.filename or _dump_dir} "
                          f"({e.strerror or e}); kernels are not dumped", RuntimeWarning,
                          stacklevel=2)


# ---- the environment -------------------------------------------------------------------

def _configure():
    """Reads KILN_LOG, KILN_TRACE, KILN_DUMP and KILN_NVTX once, at import."""
    global _dump_dir, _env_trace
    flags = 0
    log = os.environ.get("KILN_LOG", "")
    if log:
        flags |= _flags_of_log(log)
    trace = os.environ.get("KILN_TRACE", "")
    if trace:
        why = _not_writable(trace)
        if why is not None:
            _warn(f"KILN_TRACE={trace}: cannot write a file there ({why}); no trace is "
                  "recorded", RuntimeWarning, stacklevel=3)
        else:
            _env_trace = _Recorder(trace)
            _sinks.append(_env_trace)
            flags |= TRACE
            atexit.register(_write_env_trace)
    dump_dir = os.environ.get("KILN_DUMP", "")
    if dump_dir:
        _dump_dir = dump_dir
    nvtx = os.environ.get("KILN_NVTX", "")
    if nvtx not in ("", "0", "1"):
        _warn(f"KILN_NVTX must be 0 or 1, not {nvtx!r}; NVTX ranges are off",
                      RuntimeWarning, stacklevel=3)
        nvtx = "0"
    want_nvtx = nvtx == "1" or (nvtx == "" and bool(os.environ.get("NVTX_INJECTION64_PATH")))
    if want_nvtx:
        flags |= NVTX
    if flags:
        got = _set(on=flags)
        if want_nvtx and not got & NVTX and nvtx == "1":
            _warn(f"KILN_NVTX=1, but no NVTX library (libnvToolsExt, libnvtx3interop) can be loaded "
                          f"({_kiln.obs_nvtx()[1]}); NVTX ranges are off", RuntimeWarning,
                          stacklevel=3)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)


def log_enabled(flag):
    return bool(_kiln.obs_flags() & flag)


_configure()
