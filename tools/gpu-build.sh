#!/bin/sh
# Builds kiln with the meson and ninja that the machine has (no pip, no network),
# for the Python given as $1, and puts the extension into python/kiln.
set -e
PY=${1:-python3}
if command -v meson >/dev/null; then MESON=meson; else MESON="$PY -m mesonbuild.mesonmain"; fi
if command -v ninja >/dev/null; then NINJA=ninja
else NINJA=$($PY -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))'); fi
[ -f build-gpu/build.ninja ] || $MESON setup build-gpu --buildtype=release
$NINJA -C build-gpu
cp build-gpu/_kiln*.so python/kiln/
