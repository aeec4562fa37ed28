#!/bin/bash
# One call on the GPU machine: build (system meson and ninja), then the parts asked
# for, comma-separated: tests, bench, aot, startup (default: all of them), modes and fuse
# (bench/gpu/modes.py and fuse.py, also part of bench), reducehost (bench/gpu/reduce_host.py,
# where a small kiln.reduce call's time goes; only when asked), tuneprobe
# (bench/gpu/tune_probe.py, max-autotune's vectorize step against default's in both
# orders, with the calls left to Python; only when asked), launchargs
# (bench/gpu/launch_args.py: the launch path from a C loop against the floor, by argument
# count, and launch_scalars.py, by kind of scalar argument; only when asked), vec (bench/gpu/vec.py, the
# wide entry's vector path; only when asked), suite (Numba-CUDA's tests from
# $NUMBA_SUITE, only when asked), and
# variants (bench/gpu/variants.py, a code-generation study; only when asked), and ab
# (only when asked): the commit in .deps/base.tar (`git archive -o .deps/base.tar REV`)
# built beside this tree, and bench/gpu/shapes.py alternating between the two builds
# (bench/ab.py; SHAPES picks its parts, AB_ROUNDS the rounds, AB_SCRIPT another script
# of bench/gpu than shapes.py, such as launch_args.py).
# Logs and tables go to $OUT (or ./gpu-out).  Usage: bench/gpu/run.sh [aot,startup,...]
set -o pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
PY=${PY:-python3}
what=",${1:-tests,bench,aot,startup},"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; $PY -c 'import sys; print(sys.version)'; } > "$OUT/machine.txt" 2>&1
sh tools/gpu-build.sh "$PY" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
rc=0
if [[ $what == *,aot,* ]]; then
    # a bundle built by `kiln precompile` on a machine without a GPU (.deps/aot.kiln, see
    # bench/gpu/aot_kernels.py) is imported into an empty cache and run: nothing compiles
    c=$(mktemp -d)
    { KILN_CACHE_DIR=$c build-gpu/kiln cache import .deps/aot.kiln &&
      KILN_CACHE_DIR=$c KILN_CC=/bin/false PYTHONPATH=python $PY bench/gpu/aot_check.py &&
      KILN_CACHE_DIR=$c build-gpu/kiln cache stats; } 2>&1 | tee "$OUT/aot.log" | tail -12
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
if [[ $what == *,startup,* ]]; then
    PYTHONPATH=python $PY bench/gpu/startup.py 2>&1 | tee "$OUT/startup.md" | tail -10
fi
if [[ $what == *,tests,* ]]; then
    PYTHONPATH=python $PY -m pytest -q -m gpu tests -p no:cacheprovider -x -q 2>&1 | tee "$OUT/gpu-test.log" | tail -25
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
if [[ $what == *,variants,* ]]; then
    $PY bench/gpu/variants.py 2>&1 | tee "$OUT/variants.md" | tail -60
fi
if [[ $what == *,bench,* ]]; then
    PYTHONPATH=python $PY bench/gpu/launch.py 2>&1 | tee "$OUT/launch.md" | tail -14
    PYTHONPATH=python $PY bench/gpu/kernels.py 2>&1 | tee "$OUT/kernels.md" | tail -20
    PYTHONPATH=python $PY bench/gpu/kernels2d.py 2>&1 | tee "$OUT/kernels2d.md" | tail -10
    PYTHONPATH=python $PY bench/gpu/shapes.py 2>&1 | tee "$OUT/shapes.md" | tail -45
fi
if [[ $what == *,bench,* || $what == *,modes,* ]]; then
    PYTHONPATH=python $PY bench/gpu/modes.py 2>&1 | tee "$OUT/modes.md" | tail -12
fi
if [[ $what == *,bench,* || $what == *,fuse,* ]]; then
    (cd bench/gpu && PYTHONPATH=../../python $PY fuse.py) 2>&1 | tee "$OUT/fuse.md" | tail -30
fi
if [[ $what == *,reducehost,* ]]; then
    PYTHONPATH=python $PY bench/gpu/reduce_host.py 2>&1 | tee "$OUT/reduce_host.md" | tail -24
fi
if [[ $what == *,launchargs,* ]]; then
    PYTHONPATH=python $PY bench/gpu/launch_args.py 2>&1 | tee "$OUT/launch_args.md" | tail -12
    PYTHONPATH=python $PY bench/gpu/launch_scalars.py 2>&1 | tee "$OUT/launch_scalars.md" | tail -8
fi
if [[ $what == *,tuneprobe,* ]]; then
    PYTHONPATH=python $PY bench/gpu/tune_probe.py 2>&1 | tee "$OUT/tune_probe.md" | tail -8
fi
if [[ $what == *,vec,* ]]; then
    (cd bench/gpu && PYTHONPATH=../../python $PY vec.py) 2>&1 | tee "$OUT/vec.md" | tail -16
fi
if [[ $what == *,suite,* ]]; then
    # Numba-CUDA's own tests (../shared/numba_suite, copied to $NUMBA_SUITE on this machine)
    $PY "${NUMBA_SUITE:?set NUMBA_SUITE to the numba_suite folder}/run.py" --kiln "$PWD" -j 12 \
        --json "$OUT/numba_suite_gpu.json" > "$OUT/numba_suite_gpu.txt" 2>&1
    tail -8 "$OUT/numba_suite_gpu.txt"
    $PY "$NUMBA_SUITE/summarize.py" "$OUT/numba_suite_gpu.json" > "$OUT/numba_suite_gpu_summary.txt" 2>&1
fi
if [[ $what == *,ab,* ]]; then
    base=$(mktemp -d)
    tar -xf .deps/base.tar -C "$base" && mkdir -p "$base/.deps" && cp .deps/*.deb "$base/.deps/" &&
        (cd "$base" && sh tools/gpu-build.sh "$PY") > "$OUT/base-build.log" 2>&1 || { tail -20 "$OUT/base-build.log"; exit 1; }
    (cd bench/gpu && SHAPES=${SHAPES:-bs,rows,sum} $PY ../ab.py "$base/python" ../../python "${AB_SCRIPT:-shapes.py}" "${AB_ROUNDS:-3}") 2>&1 | tee "$OUT/ab.md" | tail -30
fi
exit $rc
