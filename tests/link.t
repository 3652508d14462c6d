#!/bin/sh
# link.t: dp-link --shared-runtime (devproc build --shared-runtime), the
# development link the test suite uses (TAP): the executable links
# lib/libdprt.so, found by its rpath, is a small fraction of the static
# one and gives the same outputs; libNAME.a and NAME.h are the static
# build's, byte for byte; regeneration keeps the option; a runtime folder
# without libdprt.so is a clear error that writes nothing.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh   # $tmp, n, fails, check, skip; sofresh
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
img=examples/classify/image.npy
ref=tests/data/classify/logits.npy

if [ -z "$sofresh" ]; then
	skip "lib/libdprt.so is missing or older than lib/libdprt.a (make testprogs builds it)"
	echo "1..$n"
	exit 0
fi

both() {
	bin/devproc build examples/classify/classify.dp -C "$tmp/st" >/dev/null &&
		bin/devproc build examples/classify/classify.dp --shared-runtime -C "$tmp/sh" >/dev/null
}
check "classify builds, statically and --shared-runtime" both

needs() {
	readelf -d "$tmp/sh/classify/classify" | grep -q 'NEEDED.*\[libdprt\.so\]' &&
		readelf -d "$tmp/sh/classify/classify" | grep -q "R.*PATH.*\[$root/lib\]" &&
		! readelf -d "$tmp/st/classify/classify" | grep -q 'libdprt'
}
check "the --shared-runtime executable needs libdprt.so, with lib/ as its rpath; the static one does not" needs

small() {
	s=$(wc -c <"$tmp/sh/classify/classify") t=$(wc -c <"$tmp/st/classify/classify")
	w=$(wc -c <"$tmp/sh/classify/weights.bin")
	echo "shared: $s bytes, static: $t bytes, blob: $w bytes"
	# the blob is embedded in both; the runtime in the static one only
	[ $((s - w)) -lt $(((t - w) / 4)) ]
}
check "the --shared-runtime executable leaves the runtime out" small

same() {
	"$tmp/sh/classify/classify" --in image=$img --out logits="$tmp/sh.npy" &&
		"$tmp/st/classify/classify" --in image=$img --out logits="$tmp/st.npy" &&
		bin/npycmp --exact "$tmp/sh.npy" "$tmp/st.npy" && bin/npycmp "$tmp/sh.npy" $ref
}
check "it runs: the static program's logits, bit for bit, and PyTorch's within 1e-5" same

lib() {
	cmp "$tmp/sh/classify/libclassify.a" "$tmp/st/classify/libclassify.a" &&
		cmp "$tmp/sh/classify/classify.h" "$tmp/st/classify/classify.h"
}
check "libclassify.a (self-contained) and classify.h are the static build's" lib

regen() {
	grep -qx 'dp_genflags = --shared-runtime' "$tmp/sh/build.ninja" &&
		(cd "$tmp/sh" && ninja -n) | grep -q 'no work to do'
}
check "regeneration keeps --shared-runtime; nothing to do after the build" regen

nolib() {
	b=$tmp/st/classify
	mkdir -p "$tmp/rt" "$tmp/out" && cp lib/libdprt.a "$tmp/rt/" &&
		! bin/dp-link "$b/4.partition.dpir" "$b/5.cpu.o" --shared-runtime --runtime "$tmp/rt" \
			--include runtime --cc "$cc" -o "$tmp/out/classify" 2>"$tmp/err" &&
		echo "$b/4.partition.dpir: link: --shared-runtime: cannot read $tmp/rt/libdprt.so (make lib/libdprt.so)" |
		diff - "$tmp/err" &&
		[ -z "$(ls -A "$tmp/out")" ]
}
check "a runtime folder without libdprt.so: one error naming it, nothing written" nolib

echo "1..$n"
[ $fails -eq 0 ]
