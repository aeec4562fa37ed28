#!/usr/bin/env bash
# Runs kiln's fuzz targets (tests/fuzz/README.md).
#
#   tests/fuzz/run.sh BUILD SECONDS [TARGET...]    fuzz each target for SECONDS
#   tests/fuzz/run.sh BUILD replay                 run tests/fuzz/crashes/* once
#   tests/fuzz/run.sh BUILD emit-check             compile the C the compile corpus generates
#
# BUILD is the fuzz build (build-fuzz) holding fuzz-TARGET binaries, seeds/TARGET
# (make_seeds.py) and corpus/TARGET, the corpus that grows from run to run.  A crash
# leaves its input in BUILD/artifacts/ and fails the run; the summary line of each
# target gives its executions, coverage (edges; features) and corpus size.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run.sh BUILD SECONDS|replay [TARGET...]}
what=${2:?usage: run.sh BUILD SECONDS|replay [TARGET...]}
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(compile bundle cache)

# Sanitizer findings are fatal; leaks are findings too (libFuzzer checks them per input).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
ubsan=halt_on_error=1:print_stacktrace=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-$ubsan:suppressions=$PWD/tests/fuzz/open.supp}

# the targets' scratch files (databases, bundles) on tmpfs when there is one: 3x the speed
[ -w /dev/shm ] && export TMPDIR=/dev/shm

max_len() {  # inputs: kernel text up to 8 KiB; a bundle or database of a few pages
    case $1 in compile) echo 8192 ;; *) echo 16384 ;; esac
}

if [ "$what" = emit-check ]; then
    # every C program the compile corpus makes kiln generate must compile: the corpus runs
    # once with the programs written out, then cc checks them (as kiln runs it, no output)
    out="$build/emit"
    rm -rf "$out" && mkdir -p "$out"
    KILN_FUZZ_EMIT_DIR=$out "$build/fuzz-compile" -runs=0 "$build/corpus/compile" \
        "$build/seeds/compile" >"$build/emit.log" 2>&1
    cc=${KILN_CC:-cc}
    ls "$out"/*.c | xargs -P "$(nproc)" -I{} sh -c \
        "$cc -fsyntax-only -fopenmp -fwrapv -w -std=gnu11 {} 2>{}.err || echo {}" >"$build/emit-bad.txt"
    n=$(ls "$out"/*.c | wc -l)
    bad=$(wc -l <"$build/emit-bad.txt")
    echo "emit-check: $n generated C programs, $bad refused by $cc"
    head -5 "$build/emit-bad.txt" | while read -r f; do
        echo "  ${f%.c}.in:"; grep -m2 error "$f.err" | sed 's/^/    /'
    done
    [ "$bad" -eq 0 ]
    exit
fi

if [ "$what" = replay ]; then
    # every reproducer must run clean: a reproducer that still crashes is an open bug
    fail=0
    for f in tests/fuzz/crashes/*; do
        [ -f "$f" ] || continue
        base=$(basename "$f")
        t=${base%%-*}
        case $base in *.md) continue ;; esac
        if UBSAN_OPTIONS=$ubsan "$build/fuzz-$t" -runs=1 "$f" >"$build/replay.log" 2>&1; then
            echo "replay $base: ok"
        else
            echo "replay $base: FAILS (open; see tests/fuzz/crashes/README.md)"
            grep -E "^(SUMMARY|fuzz_)|internal error|ERROR:|runtime error" "$build/replay.log" | head -3 | sed 's/^/    /'
            fail=1
        fi
    done
    exit $fail
fi

seconds=$what
mkdir -p "$build/artifacts"
status=0
for t in "${targets[@]}"; do
    corpus="$build/corpus/$t"
    mkdir -p "$corpus"
    dict=()
    [ "$t" = compile ] && dict=(-dict=tests/fuzz/kernel.dict)
    log="$build/fuzz-$t.log"
    # A long run goes on past a crash (libFuzzer's fork mode: each crash, timeout or
    # out-of-memory leaves its input and the run carries on); a short one stops at it.
    keep=()
    [ "$seconds" -ge 120 ] && keep=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    before=$(ls "$build/artifacts" | wc -l)
    start=$(date +%s)
    "$build/fuzz-$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t-" "${dict[@]}" "${keep[@]}" \
        "$corpus" "$build/seeds/$t" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    found=$(( $(ls "$build/artifacts" | wc -l) - before ))
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    runs=$(echo "$last" | grep -o '^#[0-9]*' | tr -d '#')
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    corp=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*')
    printf 'fuzz %-8s %5ds %10s execs  cov %5s  ft %6s  corpus %5s  ' "$t" "$took" \
        "${runs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
    if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
        echo ok
    else
        echo "FAILED (rc $rc, $found new inputs in $build/artifacts; log $log)"
        grep -E "^SUMMARY|^fuzz_|internal error|ERROR: (AddressSanitizer|libFuzzer)|runtime error|Test unit written" \
            "$log" | sort | uniq -c | sort -rn | head -8 | sed 's/^/    /'
        status=1
    fi
done
exit $status
