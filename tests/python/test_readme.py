"""The README's example runs as written (on the CPU target here) and computes what it says."""
import os
import re

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_example_runs(tmp_path):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"## Example\n\n```python\n(.*?)```", text, re.S).group(1)
    path = tmp_path / "readme_example.py"      # kiln reads kernels from their files
    path.write_text(block)
    ns = {"__name__": "readme_example", "__file__": str(path)}
    exec(compile(block, str(path), "exec"), ns)
    x, y = ns["x"], ns["y"]
    first = 2 * x + y
    np.testing.assert_allclose(ns["out"], 0.5 * first + y, rtol=1e-6)
    xs, ys = x.reshape(1024, -1).astype(np.float64), y.reshape(1024, -1)
    want = np.sum(np.exp(-xs * xs / 2) * np.where(ys > 0, ys, 0.1 * ys), axis=-1)
    np.testing.assert_allclose(ns["r"], want, rtol=1e-4)
    assert ns["step"].records[0].why is None and ns["step"].records[0].launches == 2
