"""Run one benchmark script against two builds of kiln, alternating, in one run, and
print each table row's median per build and the ratio (new / old).  The script must
print a markdown table whose rows end in a number (microseconds or the like).

    python3 bench/ab.py OLD_PYTHONPATH NEW_PYTHONPATH bench/launch_cpu.py [ROUNDS]

Used to show that a change does not regress launch overhead: the old build is the
commit before the change, built in a directory of its own (bench/gpu/run.sh ab).
"""
import os
import re
import statistics
import subprocess
import sys


def rows_of(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\|\s*(.+?)\s*\|\s*([0-9.]+)\s*\|\s*$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def run(pypath, script):
    env = dict(os.environ, PYTHONPATH=pypath)
    r = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                       timeout=900)
    if r.returncode:
        sys.exit(f"{script} with PYTHONPATH={pypath} failed:\n{r.stderr[-2000:]}")
    return rows_of(r.stdout)


def main():
    old, new, script = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    res = {"old": [], "new": []}
    for _ in range(rounds):
        res["old"].append(run(old, script))
        res["new"].append(run(new, script))
    names = [n for n in res["new"][0] if all(n in r for r in res["old"] + res["new"])]
    print(f"# {script}: old = {old}, new = {new}; median of {rounds} alternating runs\n")
    print("| row | old | new | new / old |")
    print("| --- | ---: | ---: | ---: |")
    for n in names:
        o = statistics.median(r[n] for r in res["old"])
        w = statistics.median(r[n] for r in res["new"])
        print(f"| {n} | {o:.4g} | {w:.4g} | {w / o:.3f} |")


if __name__ == "__main__":
    main()
