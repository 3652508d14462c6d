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
#
# --pack (on the development machine) writes .deps/min.tar.xz instead: the
# packages' headers and libraries alone (0.6 MB against 2.3 MB of packages:
# no documentation), for an upload that must stay small; carried without
# the .deb files, it is what this script unpacks.
set -e
cd "$(dirname "$0")/.."
if [ "$1" = --pack ]; then
	rm -rf .deps/pack && mkdir -p .deps/pack/root
	for f in .deps/*.deb; do dpkg -x "$f" .deps/pack/root; done
	rm -rf .deps/pack/root/usr/share .deps/pack/root/usr/bin
	tar cJf .deps/min.tar.xz -C .deps/pack root && rm -rf .deps/pack
	exit 0
fi
mkdir -p .deps/root
if ls .deps/*.deb > /dev/null 2>&1; then
	for f in .deps/*.deb; do dpkg -x "$f" .deps/root; done
else
	tar xJf .deps/min.tar.xz -C .deps
fi
# the -dev packages' .so links point at the versioned libraries unpacked beside them
./configure --dep-prefix=.deps/root "$@"
