#!/bin/sh
# firsthour.t: what a new user meets first (TAP), as the README's "first
# hour" walks it: an input made from a PNG with devproc tensor runs through
# the classify program (with --full and --out, read back by devproc
# tensor and npycmp); the C API compiled with the README's command line,
# and a NULL pointer to it named in the error; a second pipeline built into
# a folder that holds one already keeps both in build.ninja, and devproc
# stages marks a folder the graph dropped; the executable removes the --out
# temporaries of a killed run but not a running one's; the errors for an
# unknown target and a file name that is no C identifier.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
dp=$root/bin/devproc
cc=$(sed -n 's/^CC = //p' config.mk 2>/dev/null)
cc=${DP_TEST_CC:-${cc:-cc}}
. tests/tap.sh   # $tmp, n, fails, check, skip

b=$tmp/build
cold() { "$dp" build examples/classify/classify.dp -C "$b" >"$tmp/log" 2>&1 || { cat "$tmp/log"; return 1; }; }
check "devproc build examples/classify/classify.dp -C build" cold
exe=$b/classify/classify

png_input() {
	# a 32x32 PNG (the photo, resized) as the u8[1,32,32,3] input
	"$dp" tensor -o "$tmp/cat.npy" --image examples/imagenet/photo.png --resize 32,32 \
		--shape 1,32,32,3 || return 1
	"$exe" --in image="$tmp/cat.npy" --out label="$tmp/label.npy" --out logits="$tmp/logits.npy" || return 1
	"$dp" tensor "$tmp/label.npy" | grep -q "i64\[1\], 1 element" &&
		"$dp" tensor "$tmp/logits.npy" | grep -q "f32\[1,10\], 10 elements"
}
check "an input from a PNG made with devproc tensor runs; the outputs read back with devproc tensor" png_input

full() {
	"$exe" --in image=examples/classify/image.npy --out logits="$tmp/l.npy" || return 1
	"$exe" --in image=examples/classify/image.npy --full >"$tmp/out" || return 1
	grep -q '^label = \[1\]$' "$tmp/out" || return 1
	line=$(grep '^logits: f32\[1,10\] = \[' "$tmp/out") || return 1
	# the ten values printed, read back: PyTorch's logits to the %g digits
	echo "$line" | sed 's/^logits: f32\[1,10\] = //' >"$tmp/v"
	[ "$(tr ',' '\n' <"$tmp/v" | grep -c .)" -eq 10 ] || { echo "not 10 values: $line"; return 1; }
	"$dp" tensor -o "$tmp/printed.npy" --values @"$tmp/v" --shape 1,10 &&
		bin/npycmp --tol 1e-5 "$tmp/printed.npy" tests/data/classify/logits.npy &&
		! "$exe" --in image=examples/classify/image.npy | grep -q '^logits: .*0.210409'
}
check "--full prints every value (the 10 logits, PyTorch's to 6 digits); without it, the first 6" full

capi() {
	cat >"$tmp/app.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "classify.h"
int main(void)
{
	static uint8_t image[1 * 32 * 32 * 3];
	int64_t label;
	float logits[10];
	classify *m = classify_create();
	if (m == NULL || classify_run(m, image, &label, logits) != 0)
		return 1;
	if (classify_run(m, NULL, &label, logits) != -1 ||
	    strcmp(classify_error(m), "image: a NULL pointer was passed for this input") != 0)
		return 2;
	if (classify_run(m, image, &label, NULL) != -1 ||
	    strcmp(classify_error(m), "logits: a NULL pointer was passed for this output") != 0)
		return 3;
	if (classify_run(m, image, &label, logits) != 0 || classify_error(m)[0] != 0)
		return 4;
	printf("label %lld\n", (long long)label);
	classify_destroy(m);
	return 0;
}
EOF
	# the README's line, run from the folder the build is in
	(cd "$tmp" && $cc app.c -Ibuild/classify build/classify/libclassify.a -lm -o app) &&
		"$tmp/app" | grep -q '^label [0-9]$'
}
check "the README's C API line compiles and links; a NULL pointer is named in NAME_error" capi

second() {
	mkdir -p "$tmp/m" && cp tests/data/cnn.dp tests/data/cnn.pt2 "$tmp/m/" || return 1
	"$dp" build "$tmp/m/cnn.dp" -C "$b" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
	grep -q "keeps the pipelines built there before: classify" "$tmp/err" || { cat "$tmp/err"; return 1; }
	grep -qx '# pipeline classify' "$b/build.ninja" && grep -qx '# pipeline cnn' "$b/build.ninja" &&
		grep -qx 'default classify/classify cnn/cnn' "$b/build.ninja" || return 1
	out=$(ninja -C "$b") && echo "$out" | grep -q 'no work to do' || { echo "$out"; return 1; }
	"$dp" stages "$b" >"$tmp/st" && grep -q '^classify (' "$tmp/st" && grep -q '^cnn (' "$tmp/st" &&
		! grep -q 'not in build.ninja' "$tmp/st"
}
check "a second pipeline built into the same folder: both stay in build.ninja, ninja has no work, stages lists both" second

retarget() {
	cp targets/cpu "$tmp/other"
	"$dp" gen "$tmp/m/cnn.dp" -C "$b" --target "$tmp/other" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
	grep -q "keeps the pipelines built there before: classify, now for target $tmp/other" "$tmp/err" ||
		{ cat "$tmp/err"; return 1; }
	"$dp" gen "$tmp/m/cnn.dp" -C "$b" 2>"$tmp/err" && grep -q 'now for target cpu' "$tmp/err" &&
		"$dp" gen "$tmp/m/cnn.dp" -C "$b" 2>"$tmp/err" && [ ! -s "$tmp/err" ]
}
check "another target for one pipeline of the folder: the note says the others follow it; quiet when nothing changes" retarget

dropped() {
	rm "$tmp/m/cnn.dp"
	"$dp" build examples/classify/classify.dp -C "$b" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
	grep -q "drops cnn: its .dp file is gone" "$tmp/err" || { cat "$tmp/err"; return 1; }
	! grep -q '# pipeline cnn' "$b/build.ninja" &&
		"$dp" stages "$b" | grep -q '^cnn (.*not in build.ninja: left from an earlier build'
}
check "a pipeline whose .dp is gone leaves build.ninja, saying so; stages marks its folder" dropped

tmpfiles() {
	sh -c 'echo $$ >"$1"' sh "$tmp/deadpid"   # a process gone by now
	dead=$(cat "$tmp/deadpid")
	: >"$tmp/o.npy.$dead.0.tmp"
	: >"$tmp/o.npy.$$.0.tmp"                 # this shell's: running
	: >"$tmp/o.npy.1x.0.tmp"                  # not a writer's name
	"$exe" --in image=examples/classify/image.npy --out label="$tmp/o.npy" >/dev/null || return 1
	[ ! -e "$tmp/o.npy.$dead.0.tmp" ] || { echo "the dead writer's file stayed"; return 1; }
	[ -e "$tmp/o.npy.$$.0.tmp" ] && [ -e "$tmp/o.npy.1x.0.tmp" ] && [ -e "$tmp/o.npy" ]
}
check "--out removes a dead run's PATH.PID.N.tmp, not a running one's nor other files" tmpfiles

err() { # WANT-STDERR ARGS...
	want=$1
	shift
	! "$dp" "$@" >"$tmp/o" 2>"$tmp/e" || return 1
	[ "$(cat "$tmp/e")" = "$want" ] || { echo "got:  $(cat "$tmp/e")"; echo "want: $want"; return 1; }
}
check "an unknown target lists the shipped ones" err \
	"devproc: unknown target 'gpu' (No such file or directory); the targets shipped: cpu, cuda (in $root/targets/), or give a mapping file's path" \
	build examples/classify/classify.dp --target gpu -C "$tmp/x"
mapfile() {   # a mapping file in the current folder, named without a '/'
	cp "$root/targets/cpu" "$tmp/mine.target" &&
		(cd "$tmp" && "$dp" build "$root/examples/classify/classify.dp" --target mine.target \
			-C "$tmp/mine" >/dev/null) &&
		grep -q "^dp_target = $tmp/mine.target\$" "$tmp/mine/build.ninja"
}
check "--target NAME: a mapping file of that name in the current folder where no target is shipped by it" mapfile
printf 'input x: f32[1,4]\ny = softmax(x, dim=1)\noutput y\n' >"$tmp/my-model.dp"
check "a file name that is no C identifier: the error names the 'pipeline NAME' line" err \
	"devproc: $tmp/my-model.dp: the pipeline name must be a C identifier (letters, digits, _): rename the file, or name the pipeline in it with a 'pipeline NAME' line" \
	build "$tmp/my-model.dp" -C "$tmp/x"
named() {
	printf 'pipeline my_model  # the C API prefix\n' >>"$tmp/my-model.dp"
	"$dp" build "$tmp/my-model.dp" -C "$tmp/named" >"$tmp/o" 2>&1 || { cat "$tmp/o"; return 1; }
	"$tmp/named/my_model/my_model" --help | grep -q '^usage: my_model '
}
check "... and with that line it builds, as NAME" named

echo "1..$n"
[ $fails -eq 0 ]
