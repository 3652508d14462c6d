#!/bin/sh
# tune.t: the tuning database (formats/target.md) in the cuda lowering, a
# golden test that runs no nvcc and needs no GPU (but a build with the cuda
# target, i.e. configured with nvcc): the narrow ResNet-18
# lowered for cuda (up to 5.gpu.cu) with a mapping that names a database
# whose entries set the split of K of its three 3x3 128-channel 7x7
# convolutions (the heuristic splits them 15 ways) and of its 7x7 stem (1
# way by the heuristic); the chosen splits and the database line of each
# show in the convolutions' constants, the others keep the heuristic's;
# the .cu is byte-identical from another build folder; editing the database
# relowers (the depfile) and changes exactly those; an entry for another GPU
# generation applies only to builds for it; a bad line is an error naming it.
# And the mapping's precision (tune cuda.precision tf32): set at init.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
if [ -z "$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)" ]; then
	# devproc gen refuses cuda mappings where configure found no nvcc
	for i in 1 2 3 4 5 6 7 8 9; do skip "no nvcc (the cuda target is not built)"; done
	echo "1..$n"
	exit 0
fi

m=$tmp/map
mkdir -p "$m"
{ cat targets/cuda; echo "tune cuda.db tune.db"; } >"$m/cuda.map"
cat >"$m/tune.db" <<'DB'
# measured elsewhere; the last entry for a key wins
conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 split=8
conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 split=4
conv sm_90 1x3x224x224 16x7x7 s2x2 p3x3 d1x1 g1 split=2
conv sm_80 1x64x14x14 64x3x3 s1x1 p1x1 d1x1 g1 split=3
DB
dp=tests/data/resnet18_core.dp
low() { # DIR: lowers dp for cuda with the mapping into DIR (no nvcc, no link)
	"$bin/devproc" gen "$root/$dp" --target "$m/cuda.map" -C "$1" >/dev/null &&
		ninja -C "$1" resnet18_core/5.gpu.cu >"$1.log" 2>&1
}
check "the narrow ResNet-18 lowers for cuda with a tuning database" low "$tmp/a"
cu=$tmp/a/resnet18_core/5.gpu.cu
# the splits: "S, KCHUNK,   /* split K ... [; tuning database line L] */"
splits() { grep -o '^	[0-9]*, [0-9]*,   /\* split K.*' "$1" | sed 's/, [0-9]*,   .*line \([0-9]*\) \*\//@\1/; s/, [0-9]*,   .*//' | tr '\n' ' '; }
chosen() {
	s=$(splits "$cu")
	echo "splits: $s"
	[ "$(grep -c 'tuning database line 3 \*/' "$cu")" -eq 3 ] &&
		[ "$(grep -c 'tuning database line 4 \*/' "$cu")" -eq 1 ] &&
		[ "$(grep -c 'tuning database line' "$cu")" -eq 4 ] &&
		grep -q '^	4, 288,   /\* split K: blocks, K each (of 1152); tuning database line 3 \*/' "$cu" &&
		grep -q '^	2, 80,   /\* split K: blocks, K each (of 147); tuning database line 4 \*/' "$cu"
}
check "the database's splits for the four convolutions it names (the last entry of a key wins), the heuristic's for the rest" chosen
same() {
	low "$tmp/b" && cmp "$cu" "$tmp/b/resnet18_core/5.gpu.cu"
}
check "byte-identical from another build folder" same
untuned() { # the splits of the convolutions the database does not name are the heuristic's
	"$bin/devproc" gen "$root/$dp" --target cuda -C "$tmp/h" >/dev/null &&
		ninja -C "$tmp/h" resnet18_core/5.gpu.cu >/dev/null 2>&1 || return 1
	splits "$cu" | tr ' ' '\n' | grep . >"$tmp/s.a"
	splits "$tmp/h/resnet18_core/5.gpu.cu" | tr ' ' '\n' | grep . >"$tmp/s.h"
	paste "$tmp/s.a" "$tmp/s.h" | tr '\n' ' '
	[ "$(wc -l <"$tmp/s.a")" -eq 20 ] && [ "$(wc -l <"$tmp/s.h")" -eq 20 ] &&
		[ "$(paste "$tmp/s.a" "$tmp/s.h" | awk '$1 !~ /@/ && $1 != $2' | wc -l)" -eq 0 ] &&
		! grep -q 'tuning database' "$tmp/h/resnet18_core/5.gpu.cu"
}
check "without a database: the heuristic everywhere, no database line" untuned
edit() {
	sed -i 's/split=4$/split=2/' "$m/tune.db"
	ninja -C "$tmp/a" resnet18_core/5.gpu.cu >"$tmp/edit.log" 2>&1 || return 1
	cat "$tmp/edit.log"
	grep -q 'lower_gpu' "$tmp/edit.log" &&
		[ "$(grep -c '^	2, 576,   /\* split K: blocks, K each (of 1152); tuning database line 3 \*/' "$cu")" -eq 3 ]
}
check "editing the database relowers (the depfile names it); the new split is taken" edit
arch() {
	"$bin/devproc" gen "$root/$dp" --target "$m/cuda.map" --cuda-arch sm_80 -C "$tmp/c" >/dev/null &&
		ninja -C "$tmp/c" resnet18_core/5.gpu.cu >/dev/null 2>&1 || return 1
	c=$tmp/c/resnet18_core/5.gpu.cu
	# sm_80: only the sm_80 entry (line 5: the 64-channel 14x14 convolutions, split 3)
	grep 'tuning database' "$c"
	[ "$(grep -c 'tuning database line 5 \*/' "$c")" -eq 3 ] &&
		[ "$(grep -c 'tuning database' "$c")" -eq 3 ] &&
		! grep -q 'tuning database line 5' "$cu"
}
check "for another GPU generation (--cuda-arch sm_80) its entries apply, the sm_90 ones do not" arch
bad() {
	echo "conv sm_90 1x3x224x224 16x7x7 split=2" >>"$m/tune.db"
	"$bin/dp-lower_gpu" "$tmp/a/resnet18_core/4.partition.dpir" -t "$m/cuda.map" -o "$tmp/x.cu" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && [ ! -e "$tmp/x.cu" ] &&
		grep -q "^$tmp/a/resnet18_core/4.partition.dpir: lower_gpu: $m/tune.db:6: expected 'conv ARCH" "$tmp/err"
}
check "a malformed database line: exit 1, file:line named, nothing written" bad
# precision as a mapping choice: tune cuda.precision tf32 sets it at init
{ cat targets/cuda; echo "tune cuda.precision tf32"; } >"$m/tf32.map"
precision() {
	"$bin/devproc" gen "$root/$dp" --target "$m/tf32.map" -C "$tmp/p" >/dev/null &&
		ninja -C "$tmp/p" resnet18_core/5.gpu.cu >/dev/null 2>&1 || return 1
	c=$tmp/p/resnet18_core/5.gpu.cu
	[ "$(grep -c '^	if (dprt_cuda_precision(g, DPRT_CONV_TF32, err, errn) != 0) {$' "$c")" -eq 1 ] &&
		! grep -q 'dprt_cuda_precision' "$tmp/h/resnet18_core/5.gpu.cu" &&
		# before the first packing of the weights, in NAME_gpu_init
		[ "$(grep -n 'dprt_cuda_precision\|dprt_cuda_convpack' "$c" | head -1 | grep -c precision)" -eq 1 ]
}
check "tune cuda.precision tf32: the program sets TF32 at init (fp32, the default, sets nothing)" precision
badprec() {
	{ cat targets/cuda; echo "tune cuda.precision bf17"; } >"$m/bad.map"
	"$bin/dp-lower_gpu" "$tmp/a/resnet18_core/4.partition.dpir" -t "$m/bad.map" -o "$tmp/y.cu" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && [ ! -e "$tmp/y.cu" ] &&
		grep -q "^$tmp/a/resnet18_core/4.partition.dpir: lower_gpu: $m/bad.map: tune cuda.precision bf17: expected fp32, tf32, bf16 or f16$" "$tmp/err"
}
check "an unknown precision: exit 1, named" badprec
echo "1..$n"
[ $fails -eq 0 ]
