#!/bin/sh
# device-setup.sh: prepares a machine that has gcc, ninja and prove but lacks
# the msgpack-c/libzip/jansson headers (and libpng's and libjpeg's, for the
# image decoder of programs with image inputs): unpacks the Debian packages
# in .deps/ (fetch them with `apt-get download libmsgpack-dev libmsgpackc2
# libzip-dev libzip4 libjansson-dev libjansson4 libpng-dev libpng16-16
# zlib1g-dev libjpeg62-turbo-dev libjpeg62-turbo` into .deps/) into
# .deps/root and runs configure with that prefix (which dp-link then also
# passes when it links libpng and libjpeg into such programs).  Then: make,
# make check.
set -e
cd "$(dirname "$0")/.."
mkdir -p .deps/root
for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
# the -dev packages' .so links point at the versioned libraries unpacked beside them
./configure --dep-prefix=.deps/root "$@"
