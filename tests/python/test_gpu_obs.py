"""kiln.metrics(), kiln.profile() and NVTX on a real GPU (pytest -m gpu; `make gpu-test`):
device time from events and GB/s, the GPU's tracks in a trace (one per stream), the bytes
kiln copies for host arrays, NVRTC's stage and the cache tier across processes, and
libnvToolsExt when the machine has it.  test_obs.py runs the same host side against
tests/fake_cuda in CI; each scenario here runs in a child process with a cache of its own."""
import ctypes.util
import glob
import json
import os
import sys

import pytest

from test_obs import check_schema, last_json, run

pytestmark = pytest.mark.gpu

GPU = {"KILN_TARGET": "cuda"}


def test_gpu_device_time_and_bandwidth(tmp_path):
    out, _ = run(tmp_path, '''
        n = 1 << 24
        a, b, c = (kiln.to_device(np.ones(n, np.float32)) for _ in range(3))
        add[n // 256, 256](a, b, c)
        kiln.synchronize()
        kiln.metrics(reset=True, device_time=True)
        for _ in range(10):
            add[n // 256, 256](a, b, c)
        kiln.synchronize()
        print(json.dumps(kiln.metrics(device_time=True)))
    ''', **GPU)
    m = last_json(out)
    (k,) = m["kernels"]
    assert k["target"] == "cuda:0" and k["launches"] == 10 and k["device_launches"] == 10
    assert k["device_bytes"] == 10 * 3 * (1 << 24) * 4
    assert k["device_ms"] > 0
    # an H200 moves about 4.8 TB/s; an add kernel reaches a good part of it
    assert 200 < k["gbps"] < 6000, k
    assert m["gbps"] == pytest.approx(k["gbps"])


def test_gpu_trace_has_a_track_per_stream(tmp_path):
    out, _ = run(tmp_path, '''
        n = 1 << 20
        a, b, c = (kiln.to_device(np.ones(n, np.float32)) for _ in range(3))
        s1, s2 = kiln.stream(), kiln.stream()
        with kiln.profile("gpu.json"):
            add[n // 256, 256, s1](a, b, c)
            add[n // 256, 256, s2](a, b, c)
            add[n // 256, 256](a, b, c)
            kiln.synchronize()
        print(json.dumps([s1.handle, s2.handle]))
    ''', **GPU)
    handles = json.loads(out.splitlines()[-1])
    doc = json.loads((tmp_path / "gpu.json").read_text())
    check_schema(doc)
    dev = [e for e in doc["traceEvents"] if e["pid"] == 1000000000 and e["ph"] == "X"]
    assert len(dev) == 3
    assert {e["tid"] for e in dev} >= set(handles) | {0}
    host = [e for e in doc["traceEvents"] if e.get("cat") == "launch" and e["pid"] != 1000000000]
    lo = min(e["ts"] for e in host)
    for e in dev:
        assert e["args"]["device_us"] > 0 and e["args"]["gbps"] > 0
        assert e["ts"] >= lo - 2000, (e, lo)  # the device's clock placed on the host's
    names = [e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["pid"] == 1000000000]
    assert names and names[0].startswith("GPU 0: ")
    assert doc["otherData"]["devices"][0]["name"]
    assert any(e.get("cat") == "sync" for e in doc["traceEvents"])


def test_gpu_host_array_copies_are_counted(tmp_path):
    out, _ = run(tmp_path, '''
        warnings.simplefilter("ignore")
        n = 1000
        a, b, c = np.ones(n), np.ones(n), np.zeros(n)
        add[4, 256](a, b, c)
        assert (c == 2).all()
        d = kiln.to_device(a)
        d.copy_to_host()
        print(json.dumps(kiln.metrics()))
    ''', **GPU)
    m = last_json(out)
    (k,) = m["kernels"]
    assert k["h2d_bytes"] == 3 * 8000 and k["d2h_bytes"] == 8000
    assert m["h2d_bytes"] == 4 * 8000 and m["d2h_bytes"] == 2 * 8000


def test_gpu_compile_stages_and_cache_tier_across_processes(tmp_path):
    body = '''
        d = kiln.to_device(np.ones(10, np.float32))
        add[1, 32](d, d, kiln.device_array(10, np.float32))
        print(json.dumps(kiln.metrics()))
    '''
    cache = tmp_path / "cache"
    m = last_json(run(tmp_path, body, cache, **GPU)[0])
    assert m["compile_ms"]["nvrtc"] > 0 and m["compile_ms"]["load"] > 0
    assert m["kernels"][0]["cache_tier"] is None
    m = last_json(run(tmp_path, body, cache, **GPU)[0])
    assert m["compile_ms"]["nvrtc"] == 0 and m["kernels"][0]["cache_tier"] == "disk"


def nvtx_library():
    found = ctypes.util.find_library("nvToolsExt")
    if found:
        return found
    for pat in ("/usr/local/cuda*/lib64/libnvToolsExt.so*", "/usr/lib/x86_64-linux-gnu/libnvToolsExt.so*",
                "/opt/nvidia/nsight-systems/*/target-linux-x64/libnvToolsExt.so*",
                "/usr/local/cuda*/lib64/libnvtx3interop.so*"):
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[0]
    for d in sys.path:  # the wheel PyTorch depends on (nvidia-nvtx)
        hits = sorted(glob.glob(os.path.join(d, "nvidia", "**", "libnvToolsExt.so*"), recursive=True) +
                      glob.glob(os.path.join(d, "nvidia", "**", "libnvtx3interop.so*"), recursive=True))
        if hits:
            return hits[0]
    return None


def test_gpu_nvtx_loads_when_the_library_exists(tmp_path):
    lib = nvtx_library()
    if lib is None:
        pytest.skip("no libnvToolsExt on this machine (the stand-in test in test_obs.py runs)")
    out, err = run(tmp_path, '''
        d = kiln.to_device(np.ones(10, np.float32))
        add[1, 32](d, d, kiln.device_array(10, np.float32))
        kiln.synchronize()
        print(kiln._kiln.obs_nvtx()[0])
    ''', KILN_NVTX="1", KILN_NVTX_LIB=lib, **GPU)
    assert out.split()[-1] == "True", err
