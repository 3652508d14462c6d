#!/bin/sh
# state.t: state a program keeps from run to run (TAP).  A const with
# state=1 is a buffer of the program instance, starting from its bytes in
# the blob; assign writes a new value into it once its other readers have
# run.  acc.ir below keeps acc f32[3] = [1,2,3] and adds x to it each run,
# giving the state before (old) and after (new) the run.  Worked out by
# hand for x = [1,1,1]: run 1 old [1,2,3] new [2,3,4]; run 2 old [2,3,4]
# new [3,4,5]; after a reset run 1 again.  Through the executable's --steps
# and the C API's NAME_reset; and the errors of a state read after its
# update and of an assign to a plain constant.  Then a .pt2 whose model
# updates its buffers (torch.export's buffer mutations) through import, and
# the KV-cache blocks on the cpu and, with a GPU, on cuda with the state
# kept on the device.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
d=$tmp/acc
mkdir -p "$d"

ir() { # BODY: acc.ir with these ops after the input and the state
	printf 'dpir 1.0 acc partition\nweights "weights.bin" "0000000000000000" 64\npart 0 @cpu\n'
	printf '%%0 = input {name="x"} : f32[3] @cpu part=0\n'
	printf '%%1 = const {hash="s", nbytes=12, offset=0, param="acc", state=1} : f32[3] @cpu part=0\n'
	printf '%s\n' "$@"
}
ir '%2 = aten.add %1, %0 : f32[3] @cpu part=0' '%3 = assign %1, %2 : f32[3] @cpu part=0' \
	'return old=%1, new=%2' >"$d/acc.ir"
# the blob: acc's [1, 2, 3] as f32, then zeros
{ printf '\000\000\200\077\000\000\000\100\000\000\100\100'; head -c 52 /dev/zero; } >"$d/weights.bin"
perl -e '$d = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (3,), }";
	$d .= " " x (117 - length $d) . "\n"; print "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("f<*", 1, 1, 1)' >"$d/x.npy"

build() {
	(cd "$d" && "$root/bin/devproc" parse acc.ir -o acc.dpir && "$root/bin/dp-lower_cpu" acc.dpir -o 5.cpu.c &&
		$cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/runtime" -c 5.cpu.c -o 5.cpu.o &&
		"$root/bin/dp-link" acc.dpir 5.cpu.o --runtime "$root/lib" --cc "$cc" -o acc)
}
check "a program with state lowers, compiles and links" build

steps() {
	"$d/acc" --in x="$d/x.npy" --steps 3 >"$tmp/out" || return 1
	cat "$tmp/out"
	printf 'step 1:\nold = [1, 2, 3]\nnew = [2, 3, 4]\nstep 2:\nold = [2, 3, 4]\nnew = [3, 4, 5]\nstep 3:\nold = [3, 4, 5]\nnew = [4, 5, 6]\n' |
		diff - "$tmp/out"
}
check "--steps 3: the state carries from step to step in one process" steps

again() {
	"$d/acc" --in x="$d/x.npy" >"$tmp/out" &&
		printf 'old = [1, 2, 3]\nnew = [2, 3, 4]\n' | diff - "$tmp/out"
}
check "a new process starts from the state's initial value" again

capi() {
	cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include "acc.h"
/* runs acc twice, resets, runs once more; prints each run's old and new */
int
main(void)
{
	const float x[3] = {1, 1, 1};
	float old[3], new_[3];
	acc *m = acc_create();
	int r;

	for (r = 0; r < 3; r++) {
		if (r == 2)
			acc_reset(m);
		if (m == NULL || acc_run(m, x, old, new_) != 0) {
			fprintf(stderr, "%s\n", acc_error(m));
			return 1;
		}
		printf("%g %g %g / %g %g %g\n", old[0], old[1], old[2], new_[0], new_[1], new_[2]);
	}
	acc_destroy(m);
	return 0;
}
C
	$cc -std=c11 -I"$d" "$tmp/app.c" "$d/libacc.a" -lm -lpthread -o "$tmp/app" && "$tmp/app" >"$tmp/out" &&
		printf '1 2 3 / 2 3 4\n2 3 4 / 3 4 5\n1 2 3 / 2 3 4\n' | diff - "$tmp/out"
}
check "C API: two runs carry the state, acc_reset restores it" capi

late() {
	ir '%2 = aten.add %1, %0 : f32[3] @cpu part=0' '%3 = assign %1, %2 : f32[3] @cpu part=0' \
		'%4 = aten.mul %1, %0 : f32[3] @cpu part=0' 'return y=%4' >"$tmp/late.ir"
	(cd "$tmp" && "$root/bin/devproc" parse late.ir -o late.dpir &&
		! "$root/bin/dp-lower_cpu" late.dpir -o late.c 2>err && [ ! -e late.c ]) &&
		echo "late.dpir: lower_cpu: op 3 (assign): op 4 reads the state after its update" | diff - "$tmp/err"
}
check "a state read after its update: refused" late

plain() {
	sed 's/, state=1}/}/' "$d/acc.ir" >"$tmp/plain.ir"
	(cd "$tmp" && ! "$root/bin/devproc" parse plain.ir -o plain.dpir 2>err) &&
		grep -q 'assign: operand 0 must be a state (a const with state=1)' "$tmp/err"
}
check "assign to a plain constant: refused" plain

# a model that updates its buffers: tests/data/state/accum.pt2 (made by
# tools/make_state_pt2.py from PyTorch's export of a KV-cache block) adds 1
# to k_cache and then k_cache to v_cache each call, returning v_cache: from
# zeros, call n gives n(n+1)/2 everywhere
npy() { # FILE DESCR SHAPE PACKED...: a .npy 1.0 file
	f=$1 descr=$2 shape=$3
	shift 3
	perl -e '($f, $t, $s, @v) = @ARGV; $d = "{\x27descr\x27: \x27$t\x27, \x27fortran_order\x27: False, \x27shape\x27: ($s), }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, $t eq "<f4" ? pack("f<*", @v) : pack("q<*", @v)' \
		"$f" "$descr" "$shape" "$@"
}
# index_write (what dp-legalize makes of index_copy and index_put) into a
# state c f32[4,2] = [[1,2],[3,4],[5,6],[7,8]] at positions p i64[2] of
# rows s f32[2,2], three steps worked out by hand: p [1,3] s [[10,11],
# [12,13]]; p [0,-1] s [[20,21],[22,23]] (-1 is out of range: nothing);
# p [2,2] s [[30,31],[32,33]] (duplicates: the last wins).  Read by nothing
# but its assign, the state is written in place (the result a view of it,
# no copy; the output is a view of the result); also returned as an
# output (old), it is copied first.
iw() { # NAME RETURN
	mkdir -p "$tmp/$1"
	cat >"$tmp/$1/$1.ir" <<IR
dpir 1.0 $1 partition
weights "weights.bin" "0000000000000000" 64
part 0 @cpu
%0 = input {name="p"} : i64[2] @cpu part=0
%1 = input {name="s"} : f32[2,2] @cpu part=0
%2 = const {hash="c", nbytes=32, offset=0, param="c", state=1} : f32[4,2] @cpu part=0
%3 = index_write %2, %0, %1 {dim=0} : f32[4,2] @cpu part=0
%4 = assign %2, %3 : f32[4,2] @cpu part=0
%5 = aten.view %3 {size=[8]} : f32[8] @cpu part=0
return $2
IR
	perl -e 'print pack("f<*", 1 .. 8), "\0" x 32' >"$tmp/$1/weights.bin"
	npy "$tmp/p1.npy" '<i8' '2,' 1 3
	npy "$tmp/p2.npy" '<i8' '2,' 0 -1
	npy "$tmp/p3.npy" '<i8' '2,' 2 2
	npy "$tmp/s1.npy" '<f4' '2, 2' 10 11 12 13
	npy "$tmp/s2.npy" '<f4' '2, 2' 20 21 22 23
	npy "$tmp/s3.npy" '<f4' '2, 2' 30 31 32 33
	(cd "$tmp/$1" && "$root/bin/devproc" parse "$1.ir" -o "$1.dpir" &&
		"$root/bin/dp-lower_cpu" "$1.dpir" -o 5.cpu.c &&
		$cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/runtime" -c 5.cpu.c -o 5.cpu.o &&
		"$root/bin/dp-link" "$1.dpir" 5.cpu.o --runtime "$root/lib" --cc "$cc" -o "$1") &&
		"$tmp/$1/$1" --steps 3 --in p="$tmp/p1.npy" --in p="$tmp/p2.npy" --in p="$tmp/p3.npy" \
			--in s="$tmp/s1.npy" --in s="$tmp/s2.npy" --in s="$tmp/s3.npy" >"$tmp/$1/out"
}
iwplace() {
	iw iwp 'new=%5' && grep -q 'v3 = v2; .*view of %2' "$tmp/iwp/5.cpu.c" &&
		printf 'step 1:\nnew = [1, 2, 10, 11, 5, 6, 12, 13]\nstep 2:\nnew = [20, 21, 10, 11, 5, 6, 12, 13]\nstep 3:\nnew = [20, 21, 10, 11, 32, 33, 12, 13]\n' |
		diff - "$tmp/iwp/out"
}
check "index_write into a state read by nothing else: in place (a view of it), three steps as worked out" iwplace
iwcopy() {
	iw iwc 'old=%2, new=%5' && ! grep -q 'v3 = v2;' "$tmp/iwc/5.cpu.c" &&
		printf 'step 1:\nold = [1, 2, 3, 4, 5, 6, 7, 8]\nnew = [1, 2, 10, 11, 5, 6, 12, 13]\nstep 2:\nold = [1, 2, 10, 11, 5, 6, 12, 13]\nnew = [20, 21, 10, 11, 5, 6, 12, 13]\nstep 3:\nold = [20, 21, 10, 11, 5, 6, 12, 13]\nnew = [20, 21, 10, 11, 32, 33, 12, 13]\n' |
		diff - "$tmp/iwc/out"
}
check "index_write into a state also read as an output: copied first, the same values" iwcopy

accum() {
	bin/devproc build tests/data/state/accum.dp -C "$tmp/b" >/dev/null || return 1
	bin/devproc dump "$tmp/b/accum/1.import.dpir" | grep -q 'param="k_cache", state=1' || return 1
	npy "$tmp/x.npy" '<f4' '1, 2, 32' $(seq 64 | sed 's/.*/0/')
	npy "$tmp/pos.npy" '<i8' '2,' 0 1
	for k in 1 2 3; do
		npy "$tmp/want$k.npy" '<f4' '1, 2, 8, 16' $(seq 256 | sed "s/.*/$((k * (k + 1) / 2))/")
	done
	"$tmp/b/accum/accum" --steps 3 --in x="$tmp/x.npy" --in pos="$tmp/pos.npy" --out v="$tmp/v%d.npy" &&
		bin/npycmp --exact "$tmp/v1.npy" "$tmp/want1.npy" && bin/npycmp --exact "$tmp/v2.npy" "$tmp/want2.npy" &&
		bin/npycmp --exact "$tmp/v3.npy" "$tmp/want3.npy"
}
check "a .pt2 whose model mutates its buffers: state consts and assigns; --steps 3 gives 1, 3, 6" accum

# the KV-cache decoder block of tools/export_kvcache.py (tests/data/kvcache:
# the keys and values of each call written into cache buffers by
# index_put_ / index_copy_, then attention over the cache): two runs in one
# process equal PyTorch's two calls of the same module (1e-5), and through
# the C API a reset then a rerun equals the first run, bitwise.  Both the
# Core ATen exports (run_decompositions(): buffer_mutation outputs) and the
# training-IR ones (an in-place index_put_ / index_copy_ into the buffer,
# with no buffer_mutation output).
kvdir=$tmp/kv
mkdir -p "$kvdir"
for m in kv_put kv_copy kv_put_core kv_copy_core; do
	cp "tests/data/kvcache/$m.pt2" "$kvdir/"
	printf 'input x: f32[1,2,32]\ninput pos: i64[2]\ny = model("%s.pt2", x, pos)\noutput y\n' $m >"$kvdir/$m.dp"
done
check "the KV-cache blocks build" bin/devproc build "$kvdir/kv_put.dp" "$kvdir/kv_copy.dp" \
	"$kvdir/kv_put_core.dp" "$kvdir/kv_copy_core.dp" -C "$kvdir/b"
kv() { # NAME: two runs against PyTorch's two calls
	r=tests/data/kvcache/${1%_core}
	"$kvdir/b/$1/$1" --steps 2 --in x="$r/x1.npy" --in x="$r/x2.npy" --in pos="$r/pos1.npy" \
		--in pos="$r/pos2.npy" --out y="$tmp/$1.y%d.npy" >/dev/null &&
		bin/npycmp "$tmp/$1.y1.npy" "$r/y1.npy" && bin/npycmp "$tmp/$1.y2.npy" "$r/y2.npy"
}
check "kv_put (training IR, in-place index_put_): two runs equal PyTorch's two calls" kv kv_put
check "kv_copy (training IR, in-place index_copy_): two runs equal PyTorch's two calls" kv kv_copy
check "kv_put_core (index_put_): two runs equal PyTorch's two calls" kv kv_put_core
check "kv_copy_core (index_copy_): two runs equal PyTorch's two calls" kv kv_copy_core
kvreset() {
	cat >"$tmp/kv.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "kv_put_core.h"
/* argv: x1 pos1 x2 pos2 (.npy): runs 1 and 2, a reset, run 1 again;
 * "equal" when the rerun's y is run 1's bit for bit and run 2's differs */
static void
load(const char *f, void *buf, size_t n)
{
	unsigned char h[10];
	FILE *p = fopen(f, "rb");

	if (!p || fread(h, 1, 10, p) != 10 || fseek(p, 10 + h[8] + 256 * h[9], SEEK_SET) ||
	    fread(buf, 1, n, p) != n)
		printf("cannot read %s\n", f);
	if (p)
		fclose(p);
}

int
main(int argc, char **argv)
{
	float x1[64], x2[64], y1[64], y2[64], y3[64];
	int64_t p1[2], p2[2];
	kv_put_core *m = kv_put_core_create();

	(void)argc;
	load(argv[1], x1, sizeof x1), load(argv[2], p1, sizeof p1);
	load(argv[3], x2, sizeof x2), load(argv[4], p2, sizeof p2);
	if (kv_put_core_run(m, x1, p1, y1) || kv_put_core_run(m, x2, p2, y2))
		return printf("%s\n", kv_put_core_error(m)), 1;
	kv_put_core_reset(m);
	if (kv_put_core_run(m, x1, p1, y3))
		return printf("%s\n", kv_put_core_error(m)), 1;
	printf("%s\n", !memcmp(y1, y3, sizeof y1) && memcmp(y1, y2, sizeof y1) ? "equal" : "differ");
	kv_put_core_destroy(m);
	return 0;
}
C
	r=tests/data/kvcache/kv_put
	$cc -std=c11 -I"$kvdir/b/kv_put_core" "$tmp/kv.c" "$kvdir/b/kv_put_core/libkv_put_core.a" -lm -lpthread \
		-o "$tmp/kvapp" && [ "$("$tmp/kvapp" "$r/x1.npy" "$r/pos1.npy" "$r/x2.npy" "$r/pos2.npy")" = equal ]
}
check "kv_put_core through the C API: a reset, then the first run again, bitwise" kvreset

# the same blocks for --target cuda: each state const lives on the device
# (placed on cuda, written by an assign on cuda: a device-to-device copy on
# the stream; the host code neither uploads nor downloads it), two runs
# equal PyTorch's two calls, and the C API's reset re-uploads the initial
# value: the first run again, bitwise
if [ "$gpu" = yes ]; then
	check "the KV-cache blocks build for --target cuda" bin/devproc build "$kvdir/kv_put.dp" \
		"$kvdir/kv_copy.dp" "$kvdir/kv_put_core.dp" "$kvdir/kv_copy_core.dp" --target cuda -C "$kvdir/c"
	ondev() {
		for m in kv_put kv_copy kv_put_core kv_copy_core; do
			bin/devproc dump "$kvdir/c/$m/4.partition.dpir" >"$tmp/dump" || return 1
			[ "$(grep -c 'state=1} : f32\[1,2,8,16\] @cuda' "$tmp/dump")" -eq 2 ] &&
				[ "$(grep -c '= assign .* @cuda' "$tmp/dump")" -eq 2 ] &&
				! grep -q 'state=1} : .* @cpu' "$tmp/dump" &&
				[ "$(grep -c '^k[0-9]*_index_write\(_at\)\?(' "$kvdir/c/$m/5.gpu.cu")" -eq 2 ] &&
				grep -q ')(.*   /\* in place: the state' "$kvdir/c/$m/5.gpu.cu" &&
				! grep -q 'cudaMemcpyDeviceToDevice' "$kvdir/c/$m/5.gpu.cu" || { echo "$m"; cat "$tmp/dump"; return 1; }
		done
	}
	check "cuda: the caches are state on the device, written there in place (no copy)" ondev
	cudakv() { # NAME
		r=tests/data/kvcache/${1%_core}
		"$kvdir/c/$1/$1" --steps 2 --in x="$r/x1.npy" --in x="$r/x2.npy" --in pos="$r/pos1.npy" \
			--in pos="$r/pos2.npy" --out y="$tmp/$1.c%d.npy" >/dev/null &&
			bin/npycmp "$tmp/$1.c1.npy" "$r/y1.npy" && bin/npycmp "$tmp/$1.c2.npy" "$r/y2.npy"
	}
	for m in kv_put kv_copy kv_put_core kv_copy_core; do
		check "cuda: $m: two runs equal PyTorch's two calls" cudakv $m
	done
	cudareset() {
		$cc -std=c11 -I"$kvdir/c/kv_put_core" "$tmp/kv.c" "$kvdir/c/kv_put_core/libkv_put_core.a" \
			$(sed -n 's/^ \* Link with [^ ]* \(.*\)\.$/\1/p' "$kvdir/c/kv_put_core/kv_put_core.h") \
			-o "$tmp/kvcuda" && r=tests/data/kvcache/kv_put &&
			[ "$("$tmp/kvcuda" "$r/x1.npy" "$r/pos1.npy" "$r/x2.npy" "$r/pos2.npy")" = equal ]
	}
	check "cuda: kv_put_core through the C API: a reset, then the first run again, bitwise" cudareset
else
	for k in 1 2 3 4 5 6 7; do
		skip "no CUDA device"
	done
fi

echo "1..$n"
[ $fails -eq 0 ]
