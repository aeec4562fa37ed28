#!/bin/sh
# Checks that the README's two commands work on a fresh Debian machine: a bookworm chroot
# made by debootstrap with Debian's minimal base and the two programs the README assumes
# (make and python3) and nothing else (no compiler, no -dev package), a clean clone of the
# repository in it, and `make demo` then `make test` run inside as root.
#
#   tools/check-fresh.sh [REPO] [DIR]      (as root; REPO defaults to this checkout's
#                                           committed HEAD, DIR to /tmp/kiln-fresh;
#                                           the debootstrapped base is kept in DIR.base)
#
# Needs debootstrap (apt-get install debootstrap), network access to Debian's archive
# and PyPI, and about 4 GB in DIR.  Writes DIR/check.log (everything the two commands
# printed) and prints the result; exits with the commands' status.  docs/setup.md has
# the last run's result.
set -eu
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
dir=${2:-/tmp/kiln-fresh}
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "check-fresh: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check-fresh: apt-get install debootstrap" >&2; exit 2; }

mounted=""
cleanup() {
    for m in $mounted; do umount -l "$dir$m" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

# debootstrap once into DIR.base; each run starts from a fresh copy of it in DIR
if [ ! -x "$dir.base/usr/bin/python3" ]; then
    rm -rf "$dir.base"
    echo "check-fresh: debootstrap bookworm (minbase + make, python3) into $dir.base"
    debootstrap --variant=minbase --include=make,python3 bookworm "$dir.base" "$mirror" \
        > "$dir.debootstrap.log" 2>&1 || { tail -20 "$dir.debootstrap.log"; exit 1; }
fi
for m in /dev/pts /dev /sys /proc /; do umount -l "$dir$m" 2>/dev/null || true; done
rm -rf "$dir"
cp -a "$dir.base" "$dir"
# what the machine has before the commands run: no compiler, no headers
for p in gcc cc libsqlite3-dev libxxhash-dev python3-dev python3-venv; do
    if chroot "$dir" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        echo "check-fresh: $dir is not fresh: $p is installed (remove $dir)" >&2; exit 2
    fi
done
cp /etc/resolv.conf "$dir/etc/resolv.conf"
# A machine that reaches PyPI through a TLS-inspecting proxy trusts the proxy's CA and says
# so to pip (PIP_CERT, SSL_CERT_FILE): the chroot gets the same bundle and variables, as a
# new machine of the same kind would have them.  Nothing else of the host's goes in.
tls=""
ca=${PIP_CERT:-${SSL_CERT_FILE:-}}
if [ -n "$ca" ] && [ -f "$ca" ]; then
    cp "$ca" "$dir/etc/host-ca-bundle.crt"
    tls="PIP_CERT=/etc/host-ca-bundle.crt SSL_CERT_FILE=/etc/host-ca-bundle.crt"
fi
# The chroot's root is made a mount point of its own, as a machine's root is: without it
# `unshare -m` (the full-disk test's private tmpfs) cannot make its mount namespace private
# ("cannot change root filesystem propagation").
mount --bind "$dir" "$dir"
mounted="/"
for m in /proc /sys /dev /dev/pts; do
    mkdir -p "$dir$m"
    mount --bind "$m" "$dir$m"
    mounted="$m $mounted"
done
# The CUDA toolkit is part of a machine of this kind (not a Debian package: /usr/local/cuda,
# whose NVRTC the tests compile CUDA C with): the chroot sees the host's, read-only.
if [ -d /usr/local/cuda/ ] && [ "${KILN_FRESH_NO_CUDA:-}" != 1 ]; then
    real=$(readlink -f /usr/local/cuda)
    mkdir -p "$dir$real"
    mount --bind "$real" "$dir$real" && mount -o remount,ro,bind "$dir$real"
    mounted="$real $mounted"
    ln -sfn "$real" "$dir/usr/local/cuda"
    for f in /etc/ld.so.conf.d/*cuda*; do [ -f "$f" ] && cp "$f" "$dir/etc/ld.so.conf.d/"; done
    chroot "$dir" ldconfig
fi
rm -rf "$dir/root/kiln"
git clone -q --no-local "$repo" "$dir/root/kiln"
echo "check-fresh: $(git -C "$dir/root/kiln" log -1 --format='%h %s' | cut -c1-100)"
echo "check-fresh: running 'make demo' and 'make test' in the chroot (log: $dir/check.log)"
start=$(date +%s)
set +e
chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 $tls \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c 'cd /root/kiln && make demo && make test' > "$dir/check.log" 2>&1
rc=$?
set -e
echo "check-fresh: exit status $rc after $(( $(date +%s) - start )) s; the log's last lines:"
tail -15 "$dir/check.log"
exit $rc
