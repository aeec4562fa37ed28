"""``kiln report trace.json [-o report.html]``: a trace made by ``kiln.profile`` or
``KILN_TRACE`` as one self-contained HTML page.

The page has a timeline of the trace's compiles, cache look-ups, launches, copies and
synchronisations, one row per host thread and per GPU stream, and a table per kernel
specialisation: builds and compile milliseconds by stage, cache hits per tier, launches
and their mean host-side cost, time on the device (or, for CPU kernels, running) and the
achieved GB/s against the device's copy ceiling when the trace gives one.

The plot is a Plotly figure (docs/report.md says why Plotly): its JavaScript is written
into the page, so the page works offline and can be mailed.  Plotly is an optional
dependency (``pip install 'kiln[report]'``); without it the command says so.

The trace is a Chrome trace-event file (docs/observability.md has kiln's schema): this
module checks what it reads and turns anything it cannot use into a ReportError whose
message the command prints (exit 1), never a traceback.  It imports nothing of kiln.
"""

import html
import json
import math
import os
import stat

# The largest trace file read (bytes): json.loads holds the whole text and its objects,
# several times the file's size, in memory.  docs/limits.md.
REPORT_MAX_TRACE_BYTES = 256 << 20
# The most events drawn on the timeline: a browser draws Plotly's bars as SVG, which
# slows past this many.  The longest are drawn; the table counts every event.
REPORT_MAX_TIMELINE_EVENTS = 20000
# A GPU track's pid is this plus the device's number (the trace's writer, _ext/obs.c)
GPU_PID_BASE = 1000000000

CATEGORIES = ("compile", "cache", "launch", "copy", "sync")
STAGES = ("front", "sema", "emit", "cc", "nvrtc", "load")
TIERS = ("memory", "disk", "remote")
# the timeline's colours per category (Plotly's default qualitative palette, fixed so a
# category has the same colour in every report)
COLOURS = {"compile": "#EF553B", "cache": "#00CC96", "launch": "#636EFA", "copy": "#AB63FA",
           "sync": "#FFA15A"}


class ReportError(Exception):
    """A trace that cannot be reported; the message says why (the command prints it)."""


# ---- reading ---------------------------------------------------------------------------

def _which(ev, i):
    """How an error names event i: "event 12 ('X' 'saxpy')"."""
    name = ev.get("name")
    return f"event {i} ({ev.get('ph')!r}" + (f" {str(name)[:60]!r})" if name is not None else ")")


def _number(ev, i, key, path):
    v = ev.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        what = "missing" if v is None else f"not a finite number ({json.dumps(v)[:40]})"
        raise ReportError(f"{path}: {_which(ev, i)}: '{key}' is {what}")
    return v


def load(path):
    """The trace at path, checked: (events, other_data, names) where events are the
    complete ("X") events as dicts with ts, dur, pid, tid, cat, name, args; names maps
    (pid, None) to a process's name and (pid, tid) to a thread's."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror}") from None
    size = st.st_size
    if stat.S_ISDIR(st.st_mode):
        raise ReportError(f"{path} is a directory, not a trace file")
    if not stat.S_ISREG(st.st_mode):
        # a FIFO with no writer would block the open for ever (as kiln cache import and
        # kiln compile refuse them)
        raise ReportError(f"{path} is not a regular file (a FIFO, a socket or a device), "
                          "not a trace file")
    if size > REPORT_MAX_TRACE_BYTES:
        raise ReportError(f"{path} is {size / 2**20:.0f} MiB; kiln report reads traces of at "
                          f"most {REPORT_MAX_TRACE_BYTES >> 20} MiB (REPORT_MAX_TRACE_BYTES): "
                          "record a shorter stretch with kiln.profile()")
    try:
        with open(path, "rb") as f:
            data = f.read(REPORT_MAX_TRACE_BYTES + 1)
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror}") from None
    if not data.strip():
        raise ReportError(f"{path} is empty, not a trace (a process that was killed before "
                          "it wrote its trace leaves none)")
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path} is not JSON: {e.msg} at line {e.lineno} column {e.colno}"
                          ) from None
    except UnicodeDecodeError:
        raise ReportError(f"{path} is not JSON: it is not UTF-8 text") from None
    except RecursionError:
        raise ReportError(f"{path} is not a trace: its JSON is nested too deeply") from None
    except MemoryError:
        raise ReportError(f"{path}: not enough memory to read it ({size >> 20} MiB)") from None
    return check(doc, path)


def check(doc, path="the trace"):
    """The parsed document, checked (see load)."""
    other = {}
    if isinstance(doc, list):  # the trace-event format's plain array form
        raw = doc
    elif isinstance(doc, dict):
        if "traceEvents" not in doc:
            raise ReportError(f"{path} is not a Chrome trace: it has no 'traceEvents' (kiln "
                              "writes them with kiln.profile() or KILN_TRACE)")
        raw = doc["traceEvents"]
        other = doc.get("otherData") or {}
        if not isinstance(other, dict):
            raise ReportError(f"{path}: 'otherData' is not an object")
    else:
        raise ReportError(f"{path} is not a Chrome trace: its JSON is a "
                          f"{type(doc).__name__}, not an object with 'traceEvents'")
    if not isinstance(raw, list):
        raise ReportError(f"{path}: 'traceEvents' is not a list")
    events, names = [], {}
    for i, ev in enumerate(raw):
        if not isinstance(ev, dict):
            raise ReportError(f"{path}: event {i} is not an object")
        ph = ev.get("ph")
        if ph == "M":
            args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
            name = args.get("name")
            if isinstance(name, str) and ev.get("name") in ("process_name", "thread_name"):
                key = (ev.get("pid"), None if ev["name"] == "process_name" else ev.get("tid"))
                names[key] = name
            continue
        if ph != "X":
            continue  # instants, counters, begin/end pairs: not kiln's, not drawn
        ts = _number(ev, i, "ts", path)
        dur = _number(ev, i, "dur", path)
        if dur < 0:
            raise ReportError(f"{path}: event {i} has a negative duration ({dur})")
        for key in ("pid", "tid"):
            if key not in ev or not isinstance(ev[key], (int, str)) or isinstance(ev[key], bool):
                raise ReportError(f"{path}: {_which(ev, i)}: '{key}' is missing or not an "
                                  "integer")
        args = ev.get("args", {})
        if not isinstance(args, dict):
            raise ReportError(f"{path}: event {i}: 'args' is not an object")
        events.append({"ts": ts, "dur": dur, "pid": ev["pid"], "tid": ev["tid"],
                       "cat": str(ev.get("cat", "")), "name": str(ev.get("name", "")),
                       "args": args})
    devices = other.get("devices", [])
    if not isinstance(devices, list) or not all(isinstance(d, dict) for d in devices):
        raise ReportError(f"{path}: 'otherData.devices' is not a list of objects")
    return events, other, names


# ---- what the table shows --------------------------------------------------------------

def _device_of(pid, names):
    """The device number of a GPU track's pid, or None for a host process."""
    name = names.get((pid, None), "")
    if name.startswith("GPU "):
        num = name[4:].split(":", 1)[0]
        if num.isdigit():
            return int(num)
    if isinstance(pid, int) and pid >= GPU_PID_BASE:
        return pid - GPU_PID_BASE
    return None


def _ceiling(devices, dev):
    if dev is None or not 0 <= dev < len(devices):
        return None
    g = devices[dev].get("copy_gbps")
    return g if isinstance(g, (int, float)) and not isinstance(g, bool) and g > 0 else None


def _key(ev):
    a = ev["args"]
    # a compile the writer could not tie to a kernel (a build on a worker thread) is
    # counted under its event's name, marked as such
    kernel = a.get("kernel") if isinstance(a.get("kernel"), str) else \
        f"{ev['name']} (no kernel named)"
    spec = a.get("spec") if isinstance(a.get("spec"), str) else ""
    return kernel, spec


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        else None


def summarize(events, other, names):
    """One dict per kernel specialisation, in order of first appearance."""
    devices = other.get("devices", [])
    rows = {}

    def row(ev):
        k = _key(ev)
        if k not in rows:
            rows[k] = {"kernel": k[0], "spec": k[1], "loc": "", "builds": 0, "compile_ms": 0.0,
                       "stage_ms": dict.fromkeys(STAGES, 0.0), "lookups": 0,
                       "hits": dict.fromkeys(TIERS, 0), "launches": 0, "host_us": 0.0,
                       "run_us": 0.0, "timed": 0, "device_us": 0.0, "bytes": 0,
                       "device_bytes": 0, "device": None, "ceiling": None}
        r = rows[k]
        loc = ev["args"].get("loc")
        if not r["loc"] and isinstance(loc, str):
            r["loc"] = loc
        return r

    for ev in events:
        cat, a = ev["cat"], ev["args"]
        if cat == "compile":
            r = row(ev)
            stage = a.get("stage")
            r["compile_ms"] += ev["dur"] / 1e3
            if stage in r["stage_ms"]:
                r["stage_ms"][stage] += ev["dur"] / 1e3
            if stage in ("cc", "nvrtc"):
                r["builds"] += 1
        elif cat == "cache":
            if not isinstance(a.get("kernel"), str):
                continue  # a look-up outside any kernel's compile (precompile, kiln cache)
            r = row(ev)
            r["lookups"] += 1
            if a.get("hit") is True and a.get("tier") in TIERS:
                r["hits"][a["tier"]] += 1
        elif cat == "launch":
            r = row(ev)
            dev = _device_of(ev["pid"], names)
            if dev is not None:  # a GPU track: the kernel's time on the device
                us = _num(a.get("device_us"))
                r["device_us"] += us if us is not None else ev["dur"]
                r["device_bytes"] += _num(a.get("bytes")) or 0
                r["timed"] += 1
                r["device"] = dev
                r["ceiling"] = _ceiling(devices, dev)
            else:  # the host's launch: its cost, and for a CPU kernel its run
                r["launches"] += 1
                run = _num(a.get("run_us"))
                if a.get("target") == "cuda" or run is None:
                    r["host_us"] += ev["dur"]
                else:
                    r["host_us"] += max(0.0, ev["dur"] - run)
                    r["run_us"] += run
                r["bytes"] += _num(a.get("bytes")) or 0
    out = []
    for r in rows.values():
        r["hit_total"] = sum(r["hits"].values())
        r["hit_rate"] = r["hit_total"] / r["lookups"] if r["lookups"] else None
        r["mean_launch_us"] = r["host_us"] / r["launches"] if r["launches"] else None
        if r["timed"]:
            busy_us, nbytes = r["device_us"], r["device_bytes"]
        else:
            busy_us, nbytes = r["run_us"], r["bytes"]
        r["busy_ms"] = busy_us / 1e3 if busy_us else None
        r["gbps"] = nbytes / (busy_us * 1e3) if busy_us and nbytes else None
        r["of_ceiling"] = r["gbps"] / r["ceiling"] if r["gbps"] and r["ceiling"] else None
        out.append(r)
    return out


def tracks(events, names):
    """The timeline's rows: {(pid, tid): label}, host threads first, then GPU streams."""
    seen = {}
    for ev in events:
        seen.setdefault((ev["pid"], ev["tid"]), None)

    def label(pid, tid):
        dev = _device_of(pid, names)
        proc = names.get((pid, None)) or (f"GPU {dev}" if dev is not None else f"pid {pid}")
        if dev is not None:
            # a stream's tid is its CUstream handle (0: the default stream)
            thread = ("default stream" if tid in (0, "0") else
                      f"stream {tid:#x}" if isinstance(tid, int) else f"stream {tid}")
        else:
            thread = names.get((pid, tid)) or f"tid {tid}"
        return f"{proc} · {thread}"

    def order(k):
        dev = _device_of(k[0], names)
        return (dev is not None, dev or 0, str(k[0]), str(k[1]))

    return {k: label(*k) for k in sorted(seen, key=order)}


# ---- the page --------------------------------------------------------------------------

def _plotly():
    try:
        import plotly.graph_objects as go
        import plotly.io as pio
    except ImportError:
        raise ReportError("kiln report draws its timeline with Plotly, which is not installed "
                          "in this Python: pip install 'kiln[report]' (or pip install plotly)"
                          ) from None
    return go, pio


def _hover(ev):
    a = ev["args"]
    parts = [f"<b>{html.escape(ev['name'])}</b> ({ev['cat']})",
             f"{ev['dur'] / 1e3:.3f} ms at {ev['t0']:.3f} ms"]
    for k in ("spec", "loc", "stage", "compiler", "tier", "hit", "target", "bytes", "device_us",
              "gbps", "run_us"):
        if k in a:
            parts.append(f"{k}: {html.escape(str(a[k]))[:120]}")
    return "<br>".join(parts)


def timeline_figure(events, names):
    """The Plotly figure of the timeline, and how many events it leaves out."""
    go, _ = _plotly()
    rows = tracks(events, names)
    t_start = min((e["ts"] for e in events), default=0.0)
    drawn = events
    if len(events) > REPORT_MAX_TIMELINE_EVENTS:
        drawn = sorted(events, key=lambda e: -e["dur"])[:REPORT_MAX_TIMELINE_EVENTS]
    fig = go.Figure()
    cats = [c for c in CATEGORIES if any(e["cat"] == c for e in drawn)]
    cats += sorted({e["cat"] for e in drawn} - set(cats))
    for cat in cats:
        evs = [e for e in drawn if e["cat"] == cat]
        for e in evs:
            e["t0"] = (e["ts"] - t_start) / 1e3
        fig.add_trace(go.Bar(
            name=cat or "other", orientation="h",
            y=[rows[(e["pid"], e["tid"])] for e in evs],
            x=[e["dur"] / 1e3 for e in evs], base=[e["t0"] for e in evs],
            marker_color=COLOURS.get(cat, "#888888"), marker_line_width=0,
            hovertext=[_hover(e) for e in evs], hoverinfo="text"))
    labels = list(rows.values())
    fig.update_layout(
        barmode="overlay", bargap=0.35, template="plotly_white",
        height=max(260, 90 + 44 * len(labels)), margin=dict(l=10, r=10, t=30, b=40),
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0),
        xaxis=dict(title="milliseconds since the trace's first event", zeroline=False),
        yaxis=dict(categoryorder="array", categoryarray=labels[::-1], automargin=True))
    return fig, len(events) - len(drawn)


def _fmt(v, spec, none="–"):
    return none if v is None else format(v, spec)


def _table(rows):
    head = ("kernel", "specialisation", "where", "builds", "compile ms", "by stage (ms)",
            "cache hits", "launches", "mean launch µs", "device / run ms", "GB/s",
            "of copy ceiling")
    out = ["<table id='kiln-kernels'><thead><tr>"]
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        stages = ", ".join(f"{s} {ms:.1f}" for s, ms in r["stage_ms"].items() if ms)
        hits = ", ".join(f"{t} {n}" for t, n in r["hits"].items() if n)
        if r["lookups"]:
            hits = f"{r['hit_total']}/{r['lookups']} ({r['hit_rate']:.0%})" + \
                (f": {hits}" if hits else "")
        where = "GPU %d" % r["device"] if r["device"] is not None else ("CPU" if r["run_us"]
                                                                          else "")
        ceiling = "" if r["ceiling"] is None else f" of {r['ceiling']:.0f}"
        cells = (r["kernel"], r["spec"], r["loc"], r["builds"], _fmt(r["compile_ms"], ".2f"),
                 stages or "–", hits or "–", r["launches"], _fmt(r["mean_launch_us"], ".1f"),
                 (f"{where}: " if where else "") + _fmt(r["busy_ms"], ".3f"),
                 _fmt(r["gbps"], ".1f"),
                 _fmt(r["of_ceiling"], ".0%") + ceiling if r["of_ceiling"] is not None else "–")
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: 0.2em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
.meta { color: #555; font-size: 0.9em; } .warn { color: #a40; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td:nth-child(n+4) { text-align: right; }
td:nth-child(4), td:nth-child(5), td:nth-child(n+8) { white-space: nowrap; }
"""

# The page records its own JavaScript errors where a reader (and the browser test) sees them.
ERROR_HOOK = """<script>
window.addEventListener('error', function (e) {
  var d = document.getElementById('kiln-errors'); d.hidden = false;
  d.textContent += 'JavaScript error: ' + e.message + '\\n';
});
</script>"""


def render(events, other, names, source):
    """The page's HTML text."""
    _, pio = _plotly()
    rows = summarize(events, other, names)
    counts = {c: sum(e["cat"] == c for e in events) for c in CATEGORIES}
    version = html.escape(str(other.get("kiln_version", "unknown")))
    devs = []
    for i, d in enumerate(other.get("devices", [])):
        g = _ceiling(other.get("devices", []), i)
        devs.append(f"GPU {i}: {html.escape(str(d.get('name', '?')))} (copy ceiling "
                    f"{'%.0f GB/s' % g if g else 'not measured'})")
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>kiln report: {html.escape(os.path.basename(source))}</title>",
             f"<style>{STYLE}</style>{ERROR_HOOK}</head><body>",
             "<pre id='kiln-errors' class='warn' hidden></pre>",
             f"<h1>kiln report: {html.escape(source)}</h1>",
             f"<p class='meta'>kiln {version}; {len(events)} events: " +
             ", ".join(f"{n} {c}" for c, n in counts.items()) +
             (f"; devices: {'; '.join(devs)}" if devs else "; no GPU in the trace") + "</p>"]
    dropped = other.get("dropped_events")
    if isinstance(dropped, int) and dropped > 0:
        parts.append(f"<p class='warn'>The trace's writer dropped {dropped} events (its "
                     "buffer was full): the figures below undercount.</p>")
    parts.append("<h2>Timeline</h2>")
    if events:
        fig, left_out = timeline_figure(events, names)
        if left_out:
            parts.append(f"<p class='warn'>The {left_out} shortest events are not drawn (at "
                         f"most {REPORT_MAX_TIMELINE_EVENTS} are); the table counts every "
                         "event.</p>")
        parts.append(pio.to_html(
            fig, full_html=False, include_plotlyjs=True, div_id="kiln-timeline",
            config={"displaylogo": False, "responsive": True},
            post_script="document.getElementById('{plot_id}').dataset.kilnPlotted = 'yes';"))
    else:
        parts.append("<p>The trace has no compiles, launches or copies to draw.</p>")
    parts.append("<h2>Kernels</h2>")
    parts.append(_table(rows) if rows else "<p>No kernel was compiled or launched.</p>")
    parts.append("<p class='meta'>builds: runs of the C compiler or NVRTC; compile ms: every "
                 "stage, cache look-ups apart; mean launch µs: the host's cost of a launch "
                 "(for a CPU kernel, less its run); device / run ms: GPU time from CUDA events, "
                 "or a CPU kernel's run; GB/s: the bytes of the kernel's array arguments over "
                 "that time.</p></body></html>")
    return "\n".join(parts)


def report(trace_path, out_path=None):
    """Reads the trace, writes the page; returns the page's path."""
    _plotly()  # before any work: a missing Plotly is the first thing said
    events, other, names = load(trace_path)
    if out_path is None:
        root, ext = os.path.splitext(trace_path)
        out_path = (root if ext.lower() == ".json" else trace_path) + ".html"
    text = render(events, other, names, trace_path)
    tmp = f"{out_path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out_path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ReportError(f"cannot write {out_path}: {e.strerror}") from None
    return out_path
