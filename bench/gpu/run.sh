#!/bin/bash
# One call on the GPU machine: build (system meson and ninja), GPU tests, benchmarks.
# Logs and tables go to $OUT (or ./gpu-out).  Usage: bench/gpu/run.sh [tests|bench|all]
set -o pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
PY=${PY:-python3}
what=${1:-all}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; $PY -c 'import sys; print(sys.version)'; } > "$OUT/machine.txt" 2>&1
sh tools/gpu-build.sh "$PY" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
    PYTHONPATH=python $PY -m pytest -q -m gpu tests -p no:cacheprovider -x -q 2>&1 | tee "$OUT/gpu-test.log" | tail -25
    rc=${PIPESTATUS[0]}
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    PYTHONPATH=python $PY bench/gpu/launch.py 2>&1 | tee "$OUT/launch.md" | tail -14
    PYTHONPATH=python $PY bench/gpu/kernels.py 2>&1 | tee "$OUT/kernels.md" | tail -20
fi
exit $rc
