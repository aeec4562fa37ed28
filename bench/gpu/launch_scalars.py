"""Launch cost by kind of scalar argument (issue 13): the same 5-argument kernel launched
with a Python float, a NumPy float32 and a NumPy float64 scalar, from a Python loop;
median of 7 rounds taken in turn, us per launch.

    PYTHONPATH=python python3 bench/gpu/launch_scalars.py
"""
import statistics
import time

import numpy as np

import kiln


@kiln.jit
def k5(a, b, c, x, n):
    i = kiln.grid(1)
    if i < n:
        c[i] = a[i] + b[i] * x


a = kiln.to_device(np.ones(1024, np.float32))
b = kiln.to_device(np.ones(1024, np.float32))
c = kiln.device_array(1024, np.float32)
launch = k5[4, 256]


def loop(x, n):
    t = time.perf_counter()
    for _ in range(n):
        launch(a, b, c, x, 1024)
    kiln.synchronize()
    return (time.perf_counter() - t) / n * 1e6


kinds = (2.0, np.float32(2.0), np.float64(2.0), np.int32(3))
for x in kinds:
    loop(x, 2000)
# the kinds' rounds take turns, so that drift in the machine's speed hits them all
times = {i: [] for i in range(len(kinds))}
for _ in range(7):
    for i, x in enumerate(kinds):
        times[i].append(loop(x, 20000))
print("| scalar argument | us per launch |")
print("| --- | ---: |")
for i, x in enumerate(kinds):
    print(f"| {type(x).__module__}.{type(x).__name__} | {statistics.median(times[i]):.3f} |")
