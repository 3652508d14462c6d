#!/bin/sh
# weights.t: weights at run time (TAP).  examples/classify linked with its
# blob apart (dp-link --apart) maps weights.bin beside it or --weights FILE
# and gives PyTorch's logits; a blob of another build is refused from its
# header; .safetensors checkpoints replace the model's tensors by name
# (a checkpoint whose fc2.bias is PyTorch's + 1 gives PyTorch's logits + 1;
# a bf16 checkpoint is widened exactly to the model's f32),
# through the executable and the C API (NAME_create_with).  The malformed
# checkpoints are in tests/malformed/safetensors/.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
b=$tmp/b/classify
img=examples/classify/image.npy
ref=tests/data/classify/logits.npy

build() {
	bin/devproc build examples/classify/classify.dp -C "$tmp/b" >/dev/null &&
		mkdir -p "$tmp/apart" &&
		bin/dp-link "$b/4.partition.dpir" "$b/5.cpu.o" --apart --runtime lib --cc "$cc" -o "$tmp/apart/classify"
}
check "classify builds, embedded and apart (dp-link --apart)" build

driver_apart() {
	bin/devproc build examples/classify/classify.dp --apart -C "$tmp/d" >/dev/null &&
		[ $(($(wc -c <"$tmp/d/classify/classify") + $(wc -c <"$tmp/d/classify/weights.bin") / 2)) \
			-lt "$(wc -c <"$b/classify")" ] &&
		"$tmp/d/classify/classify" --in image=$img --out logits="$tmp/ld.npy" &&
		bin/npycmp "$tmp/ld.npy" $ref &&
		grep -qx 'dp_genflags = --apart' "$tmp/d/build.ninja" &&
		(cd "$tmp/d" && ninja -n) | grep -q 'no work to do'
}
check "devproc build --apart: the program maps weights.bin beside it, PyTorch's logits; regeneration keeps --apart" driver_apart

apart_small() {
	blob=$(wc -c <"$b/weights.bin")
	exe=$(wc -c <"$tmp/apart/classify")
	echo "apart: $exe bytes, blob: $blob bytes, embedded: $(wc -c <"$b/classify") bytes"
	# less than the embedded one by most of the blob (the runtime alone
	# outgrows the 6 MB blob under the sanitizers)
	[ $((exe + blob / 2)) -lt "$(wc -c <"$b/classify")" ] && [ "$(wc -c <"$b/classify")" -gt "$blob" ]
}
check "the apart executable holds no blob; the embedded one does" apart_small

missing() {
	"$tmp/apart/classify" --in image=$img 2>"$tmp/err" && return 1
	echo "classify: $tmp/apart/weights.bin: cannot open: No such file or directory" | diff - "$tmp/err"
}
check "apart, no weights.bin beside it: one error naming the file" missing

beside() {
	cp "$b/weights.bin" "$tmp/apart/" &&
		"$tmp/apart/classify" --in image=$img --out logits="$tmp/l1.npy" &&
		bin/npycmp "$tmp/l1.npy" $ref
}
check "apart, weights.bin beside it: logits within 1e-5 of PyTorch's" beside

given() {
	mkdir -p "$tmp/w" && mv "$tmp/apart/weights.bin" "$tmp/w/blob.bin" &&
		"$tmp/apart/classify" --in image=$img --weights "$tmp/w/blob.bin" --out logits="$tmp/l2.npy" &&
		bin/npycmp "$tmp/l2.npy" $ref
}
check "apart, --weights FILE elsewhere: logits within 1e-5 of PyTorch's" given

# another build's blob of the same size: one data byte changed and the
# header's data hash (formats/weights.md's weight hash, written here again
# from its definition) made again for it
perl -e '
	use integer;
	my ($k1, $k2, $k3) = (0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb);
	sub rotl { my ($x, $r) = @_; ($x << $r) | (($x >> (64 - $r)) & ((1 << $r) - 1)) }
	sub shr { my ($x, $r) = @_; ($x >> $r) & ((1 << (64 - $r)) - 1) }
	open my $f, "<:raw", $ARGV[0] or die; local $/; my $d = <$f>; close $f;
	substr($d, 100, 1) = chr(ord(substr($d, 100, 1)) ^ 1);
	my $data = substr($d, 64);     # a multiple of 64 bytes: whole stripes
	my @v = map { $_ * $k2 } 1 .. 4;
	my @w = unpack "q<*", $data;
	$v[$_ & 3] = rotl($v[$_ & 3] + $w[$_] * $k2, 31) * $k1 for 0 .. $#w;
	my $h = length($data) * $k1;
	$h = rotl($h ^ $_, 29) * $k1 for @v;
	$h ^= shr($h, 31); $h *= $k2; $h ^= shr($h, 29); $h *= $k3; $h ^= shr($h, 32);
	substr($d, 32, 8) = pack("q<", $h);
	open my $o, ">:raw", $ARGV[1] or die; print $o $d; close $o;
' "$tmp/w/blob.bin" "$tmp/w/other.bin"
other() {
	# the data hash made here is the one devproc dump computes (no MISMATCH)
	bin/devproc dump "$tmp/w/other.bin" >"$tmp/dump" || { cat "$tmp/dump"; return 1; }
	"$tmp/apart/classify" --in image=$img --weights "$tmp/w/other.bin" 2>"$tmp/err" && return 1
	echo "classify: $tmp/w/other.bin: not the weight blob the program was built with (its content hash differs from that of weights.bin)" |
		diff - "$tmp/err"
}
check "a blob of another build (same size, other data hash): refused from its header" other

short() {
	head -c 4096 "$tmp/w/blob.bin" >"$tmp/w/short.bin"
	"$tmp/apart/classify" --in image=$img --weights "$tmp/w/short.bin" 2>"$tmp/err" && return 1
	echo "classify: $tmp/w/short.bin: a weight blob of 4096 bytes, but the program was built with one of $(wc -c <"$tmp/w/blob.bin") (weights.bin of another build?)" |
		diff - "$tmp/err"
}
check "a truncated blob: refused with both sizes" short

# checkpoints made from the blob's own tensors (offsets from the IR)
off() { bin/devproc dump "$b/1.import.dpir" | sed -n "s/.*offset=\([0-9]*\), param=\"$1\".*/\1/p"; }
w=$tmp/w/blob.bin
tensors() { # ADD: fc2.bias + ADD
	echo "fc1.weight:F32:512,3072:$w:$(off fc1.weight)" "fc1.bias:F32:512:$w:$(off fc1.bias)" \
		"fc2.weight:F32:10,512:$w:$(off fc2.weight)" "fc2.bias:F32:10:$w:$(off fc2.bias):$1"
}
# shellcheck disable=SC2046
perl tests/st.pl "$tmp/same.safetensors" $(tensors 0)
# shellcheck disable=SC2046
perl tests/st.pl "$tmp/plus1.safetensors" $(tensors 1)
# PyTorch's logits + 1, as .npy (the header kept, each f32 plus 1)
perl -e '
	open my $f, "<:raw", $ARGV[0] or die; local $/; my $d = <$f>; close $f;
	my $h = 10 + unpack("v", substr($d, 8, 2));
	my $out = substr($d, 0, $h) . pack("f<*", map { $_ + 1 } unpack("f<*", substr($d, $h)));
	open my $o, ">:raw", $ARGV[1] or die; print $o $out; close $o;
' $ref "$tmp/ref_plus1.npy"

st_same() {
	"$tmp/apart/classify" --in image=$img --weights "$tmp/same.safetensors" --out logits="$tmp/l3.npy" &&
		bin/npycmp "$tmp/l3.npy" $ref
}
check "apart, a .safetensors of the same tensors: logits within 1e-5 of PyTorch's" st_same

st_plus1() {
	"$tmp/apart/classify" --in image=$img --weights "$tmp/plus1.safetensors" --out logits="$tmp/l4.npy" &&
		bin/npycmp "$tmp/l4.npy" "$tmp/ref_plus1.npy" &&
		"$b/classify" --in image=$img --weights "$tmp/plus1.safetensors" --out logits="$tmp/l5.npy" &&
		bin/npycmp "$tmp/l5.npy" "$tmp/ref_plus1.npy"
}
check "a checkpoint with fc2.bias + 1, apart and embedded: PyTorch's logits + 1 (no rebuild)" st_plus1

# a bf16 checkpoint (the high halves of the f32 weights) and the same
# values as f32: the program widens bf16 to its f32 exactly
tensors16() { # DT HOW
	echo "fc1.weight:$1:512,3072:$w:$(off fc1.weight):$2" "fc1.bias:$1:512:$w:$(off fc1.bias):$2" \
		"fc2.weight:$1:10,512:$w:$(off fc2.weight):$2" "fc2.bias:$1:10:$w:$(off fc2.bias):$2"
}
# shellcheck disable=SC2046
perl tests/st.pl "$tmp/bf16.safetensors" $(tensors16 BF16 bf16)
# shellcheck disable=SC2046
perl tests/st.pl "$tmp/bf16f32.safetensors" $(tensors16 F32 bf16f32)
st_bf16() {
	[ "$(wc -c <"$tmp/bf16.safetensors")" -lt "$(wc -c <"$tmp/bf16f32.safetensors")" ] &&
		"$tmp/apart/classify" --in image=$img --weights "$tmp/bf16.safetensors" --out logits="$tmp/l6.npy" &&
		"$tmp/apart/classify" --in image=$img --weights "$tmp/bf16f32.safetensors" --out logits="$tmp/l7.npy" &&
		bin/npycmp --exact "$tmp/l6.npy" "$tmp/l7.npy" &&
		bin/npycmp --tol 0.05 "$tmp/l6.npy" $ref
}
check "a bf16 checkpoint of the f32 model: the same logits as its values in f32 (widened exactly)" st_bf16

# a convolutional network, whose weights the program packs once at start
# (prepared weights) from wherever they come: a checkpoint of its own
# tensors, every one found by name, gives PyTorch's output
cnn() {
	bin/devproc build tests/data/cnn.dp -C "$tmp/c" >/dev/null || return 1
	cb=$tmp/c/cnn
	mkdir -p "$tmp/capart" &&
		bin/dp-link "$cb/4.partition.dpir" "$cb/5.cpu.o" --apart --runtime lib --cc "$cc" \
			-o "$tmp/capart/cnn" || return 1
	set --
	for t in $(bin/devproc dump "$cb/1.import.dpir" |
		sed -n 's/.*offset=\([0-9]*\), param="\([^"]*\)"} : f32\[\([0-9,]*\)\].*/\2:F32:\3:W:\1/p'); do
		set -- "$@" "$(echo "$t" | sed "s|:W:|:$cb/weights.bin:|")"
	done
	[ $# -eq 14 ] && perl tests/st.pl "$tmp/cnn.safetensors" "$@" &&
		"$tmp/capart/cnn" --in x=tests/data/cnn/in0.npy --weights "$tmp/cnn.safetensors" \
			--out y="$tmp/cy.npy" && bin/npycmp "$tmp/cy.npy" tests/data/cnn/out.npy
}
check "cnn (convolutions with prepared weights) apart, from a checkpoint of its 14 tensors: PyTorch's output" cnn

capi() {
	cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include "classify.h"
/* app WEIGHTS IMAGE_RAW: the logits of the checkpoint, or of the embedded blob ("-") */
int
main(int argc, char **argv)
{
	static uint8_t image[32 * 32 * 3];
	const char *files[] = {argv[1], NULL};
	classify_options o = {0};
	int64_t label;
	float logits[10];
	FILE *f = fopen(argv[2], "rb");
	classify *m;
	int i;

	if (f == NULL || fseek(f, -(long)sizeof image, SEEK_END) != 0 ||
	    fread(image, 1, sizeof image, f) != sizeof image)
		return 2;
	fclose(f);
	if (argv[1][0] != '-')
		o.weights = files;
	m = classify_create_with(&o);
	if (m == NULL || classify_run(m, image, &label, logits) != 0) {
		fprintf(stderr, "%s\n", classify_error(m));
		return 1;
	}
	for (i = 0; i < 10; i++)
		printf("%.4f\n", logits[i]);
	classify_destroy(m);
	return 0;
}
C
	$cc -std=c11 -I"$tmp/apart" "$tmp/app.c" "$tmp/apart/libclassify.a" -lm -o "$tmp/app" &&
		"$tmp/app" "$tmp/w/blob.bin" $img >"$tmp/a0" &&
		"$tmp/app" "$tmp/plus1.safetensors" $img >"$tmp/a1" &&
		awk 'NR == FNR { a[FNR] = $1; next } { d = $1 - a[FNR] - 1; if (d > 1e-3 || d < -1e-3) bad = 1 } END { exit bad }' \
			"$tmp/a0" "$tmp/a1" &&
		! "$tmp/app" - $img 2>"$tmp/err" &&
		echo "the program was linked without its weights: give its weight blob (weights.bin) or .safetensors files" |
			diff - "$tmp/err"
}
check "C API: classify_create_with(weights) with the blob, with the checkpoint (logits + 1), without (error)" capi

echo "1..$n"
[ $fails -eq 0 ]
