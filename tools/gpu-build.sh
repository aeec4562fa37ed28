#!/bin/sh
# Builds kiln with the meson and ninja that the machine has (no pip, no network),
# for the Python given as $1, and puts the extension into python/kiln.
# Headers the machine lacks come from the Debian packages in .deps
# (tools/fetch-gpu-deps.sh); the libraries are the machine's own.
set -e
PY=${1:-python3}
if command -v meson >/dev/null; then MESON=meson; else MESON="$PY -m mesonbuild.mesonmain"; fi
if command -v ninja >/dev/null; then NINJA=ninja
else NINJA=$($PY -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))'); fi
if [ -d .deps ] && ls .deps/*.deb >/dev/null 2>&1; then
    rm -rf .deps/root .deps/lib
    for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
    mkdir -p .deps/lib
    for lib in sqlite3; do
        so=$(ls /usr/lib/x86_64-linux-gnu/lib$lib.so.* /lib/x86_64-linux-gnu/lib$lib.so.* 2>/dev/null | head -1)
        [ -n "$so" ] && ln -sf "$so" .deps/lib/lib$lib.so
    done
    export CFLAGS="-I$PWD/.deps/root/usr/include" LDFLAGS="-L$PWD/.deps/lib"
    export PKG_CONFIG_LIBDIR=/nonexistent  # the .pc files of this machine, if any, would point elsewhere
fi
[ -f build-gpu/build.ninja ] || $MESON setup build-gpu --buildtype=release -Dredis=auto
$NINJA -C build-gpu
cp build-gpu/_kiln*.so python/kiln/
