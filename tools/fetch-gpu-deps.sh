#!/bin/sh
# Run here, before a device call: the GPU machine has no apt and lacks the
# cache's headers, so Debian's -dev packages travel in .deps (carry it).
# tools/gpu-build.sh unpacks them there and links against the machine's own
# runtime libraries.
set -e
mkdir -p .deps
cd .deps
apt-get download libsqlite3-dev libxxhash-dev 2>/dev/null
ls -l ./*.deb
