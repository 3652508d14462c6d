#!/bin/sh
# load.t: program instances under load (tests/load/load.c): 8 instances of
# tests/data/cnn.dp run at once from 8 threads, 2500 runs each, with outputs
# equal bit for bit to a lone instance's (itself within 1e-5 of PyTorch's);
# one instance used from two threads at once runs or refuses each call.
# make check SAN=1 builds the driver with the sanitizers (DP_TEST_CC).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
cc=${cc:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
runs=${DP_LOAD_RUNS:-2500}

if ! "$root/bin/devproc" build "$root/tests/data/cnn.dp" -C "$tmp/b" >"$tmp/log" 2>&1; then
	echo "not ok 1 - build tests/data/cnn.dp"
	sed 's/^/# /' "$tmp/log" | head -20
	echo "1..1"
	exit 1
fi
if ! $cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -I"$tmp/b/cnn" \
	-I"$root/runtime" "$root/tests/load/load.c" "$tmp/b/cnn/libcnn.a" -lm -lpthread \
	-o "$tmp/load" >"$tmp/log" 2>&1; then
	echo "not ok 1 - compile tests/load/load.c against libcnn.a"
	sed 's/^/# /' "$tmp/log" | head -20
	echo "1..1"
	exit 1
fi
exec "$tmp/load" "$root/tests/data/cnn/in0.npy" "$root/tests/data/cnn/out.npy" "$runs"
