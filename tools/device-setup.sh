#!/bin/sh
# device-setup.sh: prepares a machine that has gcc, ninja and prove but lacks
# the msgpack-c/libzip/jansson headers: unpacks the Debian packages in .deps/
# (fetch them with `apt-get download libmsgpack-dev libmsgpackc2 libzip-dev
# libzip4 libjansson-dev libjansson4` into .deps/) into .deps/root and runs
# configure with that prefix.  Then: make, make check.
set -e
cd "$(dirname "$0")/.."
mkdir -p .deps/root
for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
# the -dev packages' .so links point at the versioned libraries unpacked beside them
./configure --dep-prefix=.deps/root "$@"
