#!/bin/sh
# Installs the Debian packages kiln's build and tests need, when some are missing.
#
#   tools/install-deps.sh [build|test] [PYTHON]
#
#   build  a C compiler with OpenMP (gcc), pkg-config, the C libraries the build links
#          (SQLite, xxHash, hiredis) and tier 0's libtcc with tcc's runtime; for Debian's
#          own python3 (PYTHON, default python3), its headers and venv module
#          (python3-dev, python3-venv); `make build` and `make demo` run this
#   test   build, plus sqlite3 (the C tests edit cache databases with it), redis-server
#          (the remote tier's tests start one), clang with libFuzzer (make
#          test-fuzz-short), llvm and libc6-dbg (llvm-symbolizer and glibc's symbols
#          name the dynamic loader's frames in sanitizer reports, which tests/lsan.supp
#          matches: leak:dl_open_worker), GCC's ThreadSanitizer runtime (make
#          test-tsan) and Chromium (the report page's test renders it headless);
#          `make test` (and so `.ci/run`) runs this
#
# Nothing happens when every package is there (a dpkg query, a few ms).  Otherwise it runs
# apt-get as root, or through sudo when that works without a password prompt blocking;
# without either it says which packages to install and exits 1.  On a system without
# dpkg (not Debian-like) it says what it needs and leaves the build to find them.
set -eu
what=${1:-build}
py=${2:-python3}
pkgs="gcc libc6-dev pkgconf libsqlite3-dev libxxhash-dev libhiredis-dev libtcc-dev tcc"
case $what in
build) ;;
test) pkgs="$pkgs sqlite3 redis-server clang libclang-rt-dev llvm libc6-dbg libtsan2 chromium" ;;
*) echo "usage: tools/install-deps.sh [build|test] [PYTHON]" >&2; exit 2 ;;
esac
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "kiln: not a Debian-like system; the build needs a C compiler with OpenMP, the" \
         "SQLite, xxHash and hiredis headers (and libtcc for tier 0), the tests redis-server" \
         "and chromium" >&2
    exit 0
fi
# Debian's python3 keeps its headers and its venv module (ensurepip) in packages of their
# own; a Python built elsewhere (pyenv, conda, python.org) has both
pypath=$(command -v "$py" 2>/dev/null || true)
case $(readlink -f "$pypath" 2>/dev/null) in
/usr/bin/python3*) pkgs="$pkgs python3-dev python3-venv" ;;
esac
need=""
for p in $pkgs; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case $st in *"install ok installed"*) ;; *) need="$need $p" ;; esac
done
[ -z "$need" ] && exit 0
echo "kiln: installing Debian packages:$need" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
else
    echo "kiln: these packages are missing and installing them needs root:$need" >&2
    echo "      run: sudo apt-get install$need" >&2
    exit 1
fi
# a bounded wait for another apt run's lock, then the install itself (without the
# packages merely recommended: chromium's would bring desktop daemons such as avahi)
$sudo apt-get -o DPkg::Lock::Timeout=120 update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq \
    --no-install-recommends $need
