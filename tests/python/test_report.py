"""`kiln report`: traces made here in the schema kiln.profile() and KILN_TRACE write
(docs/observability.md), rendered to a page whose table holds the right figures, bad
input turned into one line of error (never a traceback), and the page rendered by a real
browser (headless Chromium, marker `browser`) with its plot drawn and no JavaScript
error."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from kiln import _report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("KILN_TEST_PYDIR") or os.path.join(ROOT, "python")
BUILD = os.path.join(ROOT, os.environ.get("KILN_BUILD_DIR", "build"))
KILN = os.path.join(BUILD, "kiln")
GPU = _report.GPU_PID_BASE
PID, TID2 = 4242, 4250


def x(cat, name, ts, dur, pid=PID, tid=PID, **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid,
            "args": args}


def make_trace(copy_gbps=3000.0, launches=4):
    """A process that compiles saxpy for the CPU (a miss, then cc) and for the GPU, finds
    'norm' in the disk tier, launches both from two threads, copies and synchronises."""
    k = dict(kernel="saxpy", spec="(float32[::1], float32[::1], float32)", loc="app.py:12")
    n = dict(kernel="norm", spec="(float64[:, ::1],)", loc="app.py:30")
    ev = [
        {"ph": "M", "name": "process_name", "pid": PID, "tid": 0,
         "args": {"name": f"kiln host (pid {PID})"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": PID,
         "args": {"name": f"main: MainThread (tid {PID})"}},
        {"ph": "M", "name": "thread_name", "pid": PID, "tid": TID2,
         "args": {"name": f"worker (tid {TID2})"}},
        {"ph": "M", "name": "process_name", "pid": GPU, "tid": 0,
         "args": {"name": "GPU 0: NVIDIA H200"}},
        x("cache", "saxpy", 100, 20, tier="none", hit=False, key="ab", **k),
        x("compile", "saxpy", 120, 500, stage="front", **k),
        x("compile", "saxpy", 620, 700, stage="sema", **k),
        x("compile", "saxpy", 1320, 300, stage="emit", **k),
        x("compile", "saxpy", 1620, 40000, stage="cc", compiler="cc", **k),
        x("compile", "saxpy", 41620, 380, stage="load", **k),
        x("compile", "saxpy", 42000, 9000, stage="nvrtc", **k),
        x("cache", "norm", 51000, 150, tier="disk", hit=True, key="cd", **n),
        x("cache", "norm", 51200, 10, tier="memory", hit=True, key="cd", **n),
        x("copy", "host to device", 52000, 400, bytes=4 << 20, device=0, gbps=10.5),
        x("sync", "synchronize", 70000, 55),
        {"ph": "i", "name": "an instant", "ts": 1, "pid": PID, "tid": PID, "s": "t"},
    ]
    t = 53000
    for i in range(launches):
        # CPU launches of norm: 30 us of host cost around a 1000 us run
        ev.append(x("launch", "norm", t, 1030, tid=TID2 if i % 2 else PID, target="cpu",
                    bytes=8 << 20, run_us=1000.0, grid=[64, 1, 1], block=[256, 1, 1], **n))
        # GPU launches of saxpy: 8 us on the host, 100 us on the device moving 150 MB
        ev.append(x("launch", "saxpy", t + 2000, 8, target="cuda", bytes=150_000_000,
                    run_us=0.0, **k))
        ev.append(x("launch", "saxpy", t + 2010, 100, pid=GPU, tid=0x7f00, device_us=100.0,
                    bytes=150_000_000, gbps=1500.0, **k))
        t += 4000
    return {"traceEvents": ev, "displayTimeUnit": "ms",
            "otherData": {"kiln_version": "0.1.0",
                          "devices": [{"name": "NVIDIA H200", "copy_gbps": copy_gbps}]}}


def write(tmp_path, doc, name="trace.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def by_kernel(doc):
    return {r["kernel"]: r for r in _report.summarize(*_report.check(doc))}


# ---- the figures --------------------------------------------------------------------------

def test_the_table_counts_builds_stages_hits_launches_and_device_time():
    rows = by_kernel(make_trace())
    s = rows["saxpy"]
    assert s["builds"] == 2 and s["loc"] == "app.py:12"
    assert s["compile_ms"] == pytest.approx((500 + 700 + 300 + 40000 + 380 + 9000) / 1e3)
    assert s["stage_ms"]["cc"] == pytest.approx(40.0) and s["stage_ms"]["nvrtc"] == 9.0
    assert (s["lookups"], s["hit_total"], s["hit_rate"]) == (1, 0, 0.0)
    assert s["launches"] == 4 and s["mean_launch_us"] == pytest.approx(8.0)
    assert s["device"] == 0 and s["busy_ms"] == pytest.approx(0.4)
    # 4 x 150 MB in 4 x 100 us: 1500 GB/s, half the 3000 GB/s ceiling
    assert s["gbps"] == pytest.approx(1500.0) and s["of_ceiling"] == pytest.approx(0.5)
    n = rows["norm"]
    assert n["builds"] == 0 and n["hits"] == {"memory": 1, "disk": 1, "remote": 0}
    assert n["hit_rate"] == 1.0
    # a CPU kernel: the host's cost is the launch less the run; the run is its busy time
    assert n["launches"] == 4 and n["mean_launch_us"] == pytest.approx(30.0)
    assert n["busy_ms"] == pytest.approx(4.0) and n["device"] is None
    assert n["gbps"] == pytest.approx(4 * (8 << 20) / 4000e3) and n["of_ceiling"] is None


def test_a_compile_without_a_kernel_is_counted_apart():
    doc = make_trace()
    doc["traceEvents"].append(x("compile", "compile", 80000, 3000, tid=TID2, stage="cc"))
    rows = by_kernel(doc)
    assert rows["compile (no kernel named)"]["builds"] == 1
    assert rows["compile (no kernel named)"]["compile_ms"] == 3.0
    assert rows["saxpy"]["builds"] == 2


def test_without_a_copy_ceiling_there_is_no_fraction_of_it():
    s = by_kernel(make_trace(copy_gbps=None))["saxpy"]
    assert s["gbps"] == pytest.approx(1500.0) and s["of_ceiling"] is None


def test_tracks_are_named_host_threads_first_then_gpu_streams():
    events, other, names = _report.check(make_trace())
    labels = list(_report.tracks(events, names).values())
    assert labels == [f"kiln host (pid {PID}) · main: MainThread (tid {PID})",
                      f"kiln host (pid {PID}) · worker (tid {TID2})",
                      "GPU 0: NVIDIA H200 · stream 0x7f00"]


def test_the_page_holds_the_plot_the_table_and_plotly_itself(tmp_path):
    pytest.importorskip("plotly", reason="Plotly is not installed (make's venv installs it)")
    src = write(tmp_path, make_trace())
    out = _report.report(str(src))
    assert out == str(tmp_path / "trace.html")
    page = open(out, encoding="utf-8").read()
    assert "id=\"kiln-timeline\"" in page and "id='kiln-kernels'" in page
    # self-contained: plotly.js is in the page, nothing is fetched
    assert "plotly.js v" in page.lower() or "plotly.js" in page
    assert not re.search(r"<script[^>]+src=", page)
    assert "<td>saxpy</td>" in page and "50% of 3000" in page


def test_a_big_trace_draws_the_longest_events_and_counts_all(tmp_path, monkeypatch):
    pytest.importorskip("plotly", reason="Plotly is not installed (make's venv installs it)")
    monkeypatch.setattr(_report, "REPORT_MAX_TIMELINE_EVENTS", 10)
    doc = make_trace(launches=20)
    events, other, names = _report.check(doc)
    fig, left_out = _report.timeline_figure(events, names)
    assert left_out == len(events) - 10
    drawn = sorted(d for tr in fig.data for d in tr.x)
    assert drawn[0] >= 1.0  # the 8 us and 20 us events are the ones left out
    page = _report.render(events, other, names, "t.json")
    assert f"The {left_out} shortest events are not drawn" in page
    assert "<td>20</td>" in page  # the table still counts every launch


def test_html_in_names_is_escaped(tmp_path):
    pytest.importorskip("plotly", reason="Plotly is not installed (make's venv installs it)")
    doc = make_trace()
    doc["traceEvents"].append(x("launch", "<script>alert(1)</script>", 90000, 5,
                                kernel="<img src=x onerror=alert(1)>", target="cpu"))
    page = _report.render(*_report.check(doc), "t.json")
    assert "<img src=x" not in page and "&lt;img src=x" in page


# ---- bad input ------------------------------------------------------------------------------

def run_report(*args, env=None, python_only=False):
    e = dict(os.environ, PYTHONPATH=PYDIR, KILN_PYTHON=sys.executable)
    e.pop("LD_PRELOAD", None) if python_only else None
    e.update(env or {})
    cmd = [sys.executable, "-m", "kiln", "report"] if python_only else [KILN, "report"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          env=e, timeout=120)


BAD = [
    ("not json {", "is not JSON: Expecting value at line 1 column 1"),
    ("", "is empty, not a trace"),
    ("[1, 2]", "event 0 is not an object"),
    ('"text"', "its JSON is a str, not an object with 'traceEvents'"),
    ('{"events": []}', "it has no 'traceEvents'"),
    ('{"traceEvents": {}}', "'traceEvents' is not a list"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "dur": 1, "pid": 1, "tid": 1}]}',
     "event 0 ('X' 'k'): 'ts' is missing"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "ts": "9", "dur": 1, "pid": 1, "tid": 1}]}',
     "'ts' is not a finite number (\"9\")"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": NaN, "pid": 1, "tid": 1}]}',
     "'dur' is not a finite number (NaN)"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": -4, "pid": 1, "tid": 1}]}',
     "event 0 has a negative duration"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 4, "tid": 1}]}',
     "'pid' is missing or not an integer"),
    ('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 4, "pid": 1, "tid": 1, '
     '"args": [1]}]}', "event 0: 'args' is not an object"),
    ('{"traceEvents": [], "otherData": {"devices": 3}}', "'otherData.devices' is not a list"),
    ("[" * 100000, "nested too deeply"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_traces_are_one_line_of_error(tmp_path, text, message):
    src = write(tmp_path, text)
    with pytest.raises(_report.ReportError) as e:
        _report.load(str(src))
    assert message in str(e.value)


def test_a_binary_file_is_not_json(tmp_path):
    src = tmp_path / "trace.json"
    src.write_bytes(b"\xff\xfe\x00garbage\x80\x81")
    with pytest.raises(_report.ReportError, match="is not JSON"):
        _report.load(str(src))


def test_a_trace_past_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(_report, "REPORT_MAX_TRACE_BYTES", 1000)
    src = write(tmp_path, make_trace())
    with pytest.raises(_report.ReportError, match=r"kiln report reads traces of at most 0 MiB "
                                                  r"\(REPORT_MAX_TRACE_BYTES\)"):
        _report.load(str(src))


def test_the_command_reports_bad_input_without_a_traceback(tmp_path):
    src = write(tmp_path, '{"traceEvents": [{"ph": "X", "ts": 1}]}')
    for python_only in (False, True):
        r = run_report(src, python_only=python_only)
        assert r.returncode == 1, r.stderr
        assert r.stdout == ""
        assert r.stderr == f"kiln report: {src}: event 0 ('X'): 'dur' is missing\n"
    r = run_report(tmp_path / "absent.json")
    assert (r.returncode, r.stderr) == (1, f"kiln report: cannot read {tmp_path}/absent.json: "
                                           "No such file or directory\n")
    r = run_report(tmp_path)
    assert r.returncode == 1 and "is a directory" in r.stderr and "Traceback" not in r.stderr
    # a FIFO that nobody writes: refused at once (its open would block for ever)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = run_report(fifo)
    assert (r.returncode, r.stderr) == (1, f"kiln report: {fifo} is not a regular file (a FIFO, "
                                           "a socket or a device), not a trace file\n")


def test_the_command_writes_the_page_where_asked(tmp_path):
    pytest.importorskip("plotly", reason="Plotly is not installed (make's venv installs it)")
    src = write(tmp_path, make_trace())
    r = run_report(src, "-o", tmp_path / "page.html")
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{tmp_path}/page.html\n", "")
    assert os.path.getsize(tmp_path / "page.html") > 1 << 20  # plotly.js is inside
    r = run_report(src, "-o", tmp_path / "no" / "such" / "dir.html")
    assert r.returncode == 1 and r.stderr.startswith(f"kiln report: cannot write {tmp_path}/no/")


def test_without_plotly_the_error_names_the_extra(tmp_path):
    src = write(tmp_path, make_trace())
    code = ("import sys; sys.modules['plotly'] = None; from kiln.__main__ import main; "
            f"sys.exit(main(['report', {str(src)!r}]))")
    env = dict(os.environ, PYTHONPATH=PYDIR)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 1
    assert r.stderr == ("kiln report: kiln report draws its timeline with Plotly, which is not "
                        "installed in this Python: pip install 'kiln[report]' (or pip install "
                        "plotly)\n")


def test_report_help_and_usage_errors():
    r = subprocess.run([KILN, "report", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("usage: kiln report [options] TRACE")
    assert "-o, --output FILE" in r.stdout and r.stderr == ""
    r = subprocess.run([KILN, "report"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "missing arguments" in r.stderr
    r = subprocess.run([KILN, "help", "report"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("usage: kiln report")


# ---- a real browser ---------------------------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="no chromium on the PATH (Debian's package "
                                               "chromium; tools/install-deps.sh test installs it)")
def test_chromium_renders_the_plot_without_javascript_errors(tmp_path):
    pytest.importorskip("plotly", reason="Plotly is not installed (make's venv installs it)")
    src = write(tmp_path, make_trace())
    page = _report.report(str(src))
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # not ASan's, in Chromium
    env["HOME"] = str(tmp_path)  # its profile and crash dumps stay in the test's directory
    r = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
         "--dump-dom", f"file://{page}"],
        capture_output=True, text=True, env=env, timeout=120)
    dom = r.stdout
    assert r.returncode == 0, r.stderr[-3000:]
    # the page's error hook saw nothing, and Plotly ran to its end (the post-script's mark)
    assert re.search(r'<pre id="kiln-errors" class="warn" hidden=""></pre>', dom), dom[:3000]
    assert 'data-kiln-plotted="yes"' in dom
    # Plotly drew SVG: the plot's root, one bar group per category, a bar per event
    assert 'class="main-svg"' in dom
    bars = re.findall(r'<g class="point">', dom)
    assert len(bars) == 23, len(bars)  # every complete event of make_trace()
    legend = re.findall(r'class="legendtext"[^>]*>([a-z]+)<', dom)
    assert legend == ["compile", "cache", "launch", "copy", "sync"]
    # the y axis names every track
    assert "worker (tid 4250)" in dom and "GPU 0: NVIDIA H200" in dom
