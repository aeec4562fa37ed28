# limits: running out of memory while compiling (malloc failing under a real
# RLIMIT_AS, in a child process) is a CompileError "out of memory compiling this
# function", with the compilation's arena freed; it was abort() in the arena
import os
import subprocess
import sys

CHILD = r'''
import linecache, resource, sys
import numpy as np
import kiln

n = 400000
src = "def k(a, x):\n" + "".join(f"    x = x + {i}\n" for i in range(n)) + "    a[0] = x\n"
linecache.cache["<long>"] = (len(src), None, src.splitlines(True), "<long>")
ns = {}
exec(compile("def k(a, x):\n    pass\n", "<long>", "exec"), ns)
k = kiln.jit(ns["k"])
a = np.zeros(1)
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + (96 << 20), resource.RLIM_INFINITY))
try:
    k[1, 1](a, 1.0)
    print("compiled")
except kiln.CompileError as e:
    # malloc failing (the rlimit) or the arena reaching KILN_MAX_ARENA_BYTES first: the same
    # error, which one comes first depends on the allocator (ASan's differs)
    print("CompileError:", str(e).splitlines()[0].split(" (")[0].split(": it needs")[0])
except MemoryError:
    print("MemoryError")
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print("the process goes on")
'''


def main():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    # under ASan (make test-san-py) a failed malloc aborts unless it may return NULL
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"),
                                                  "allocator_may_return_null=1"]))
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                       timeout=120)
    print(r.stdout, end="")
    print("exit status", r.returncode)
