"""Splits a Numba-CUDA suite result (../shared/numba_suite/run.py --json) by whether
Numba-CUDA itself runs each test without a GPU, on its simulator (NUMBA_ENABLE_CUDASIM=1).

Issue 14 asks that on the CPU target "every test that does not need a GPU passes".  The
suite's own files say which tests need one: upstream marks them skip_on_cudasim (on the
class or the method), skipIf(config.ENABLE_CUDASIM, ...), or branches on
config.ENABLE_CUDASIM inside the test.  This reads those marks from the unmodified upstream
files and prints the failed tests (FAIL and ERROR) Numba's simulator would run, then the
count of the others.

    python3 tools/suite_simulator_split.py RESULT.json [--suite ../shared/numba_suite]
"""
import argparse
import ast
import collections
import json
import os


def _marks_simulator(decorators):
    """Whether a decorator list skips the test on the simulator."""
    for d in decorators:
        text = ast.unparse(d)
        if "cudasim" in text.lower() or "ENABLE_CUDASIM" in text:
            return True
    return False


class Upstream:
    def __init__(self, root):
        self.root = root
        self.trees = {}

    def tree(self, path):
        if path not in self.trees:
            with open(os.path.join(self.root, path)) as f:
                self.trees[path] = ast.parse(f.read())
        return self.trees[path]

    def needs_gpu(self, test):
        """'class', 'method' or 'body' where upstream keeps the test off the simulator;
        None where the simulator runs it."""
        path, rest = test.split("::", 1)
        parts = rest.split("::")
        cls = next((n for n in self.tree(path).body
                    if isinstance(n, ast.ClassDef) and n.name == parts[0]), None)
        if cls is None:
            return None
        if _marks_simulator(cls.decorator_list):
            return "class"
        name = parts[1].split("[")[0].split(" ")[0] if len(parts) > 1 else None
        for n in cls.body:
            if isinstance(n, ast.FunctionDef) and n.name == name:
                if _marks_simulator(n.decorator_list):
                    return "method"
                if "ENABLE_CUDASIM" in ast.unparse(n):
                    return "body"
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result")
    p.add_argument("--suite", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "numba_suite"))
    args = p.parse_args()
    with open(args.result) as f:
        results = json.load(f)["results"]
    up = Upstream(os.path.join(args.suite, "upstream", "numba_cuda", "numba", "cuda", "tests"))
    counts = collections.Counter()
    runs = []
    for r in results:
        if r["outcome"] not in ("FAIL", "ERROR"):
            continue
        why = up.needs_gpu(r["test"])
        counts[why or "simulator runs it"] += 1
        if why is None:
            runs.append(r)
    for r in runs:
        reason = (r["reason"] or r["detail"]).replace("\n", " ")[:150]
        print(f"{r['outcome']:5} {r['test']}: {reason}")
    print()
    print(f"{sum(counts.values())} failed: {counts['simulator runs it']} in tests Numba's simulator "
          f"runs; kept off it upstream: {counts['class']} by class, {counts['method']} by "
          f"method, {counts['body']} inside the test")


if __name__ == "__main__":
    main()
