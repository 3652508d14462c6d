#!/bin/sh
# tune.t: the tuning database (formats/tune.md) in the cuda lowering and
# devproc tune.  Golden tests that run no nvcc and need no GPU (but a build
# with the cuda target, i.e. configured with nvcc):
# - the narrow ResNet-18 lowered for cuda (up to 5.gpu.cu) with a mapping
#   that names a database whose entries set the split of K of its two
#   128-channel 7x7 convolutions with a residual add (the heuristic splits
#   them 15 ways) and of its 7x7 stem (1 way by the heuristic), and the
#   cuBLASLt algorithm of its classifier (the GEMV kernel by the heuristic);
#   the chosen splits and the database line of each show in the
#   convolutions' constants, the others keep the heuristic's; the .cu is
#   byte-identical from another build folder; editing the database
#   relowers (the depfile) and changes exactly those; an entry for another
#   GPU generation or precision applies only to builds for it; a bad line
#   or candidate set is an error naming it;
# - tests/golden/tune/xfmr.ir (a transformer's products and attention)
#   lowered without and with xfmr.db: the tunable sites dp-lower_gpu lists
#   (xfmr.sites), and the variants chosen as the .cu shows them
#   (xfmr.untuned, xfmr.chosen);
# - tests/golden/tune/x3.ir (products of constants) lowered under each
#   setting of tune cuda.mm.x3, in tf32 and with a database: which products
#   run as 3xTF32 through cuBLASLt, and their splits;
# - tests/golden/tune/x3split.ir: which elementwise kernels write their
#   3xTF32 product's A already split;
# - devproc tune's --help and its errors where it cannot run, its medians
#   and choices on hand-made times (tests/unit/tune.c); on a GPU, a
#   database written for the narrow ResNet-18 and used.
# And the mapping's precision (tune cuda.precision tf32): set at init.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
# devproc tune's medians and choice on hand-made times (tests/unit/tune.c)
check "devproc tune's arithmetic: medians from a trace, the entry chosen per key (bin/test-tune)" "$bin/test-tune"
if [ -z "$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)" ]; then
	# devproc gen refuses cuda mappings where configure found no nvcc
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do
		skip "no nvcc (the cuda target is not built)"
	done
	echo "1..$n"
	exit 0
fi

m=$tmp/map
mkdir -p "$m"
{ cat targets/cuda; echo "tune cuda.db tune.db"; } >"$m/cuda.map"
cat >"$m/tune.db" <<'DB'
# measured elsewhere; the last entry for a key wins
conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 bias+add+relu split=8
conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 bias+add+relu split=4
conv sm_90 1x3x224x224 16x7x7 s2x2 p3x3 d1x1 g1 f32 fp32 bias+relu split=2   # the stem
conv sm_80 1x64x14x14 64x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 bias+add+relu split=3
mm sm_90 1x1000x128 nt f32 fp32 bias algo=1
conv sm_90 1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 f32 tf32 bias+relu split=1
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
	[ "$(grep -c 'tuning database line 3 \*/' "$cu")" -eq 2 ] &&
		[ "$(grep -c 'tuning database line 4 \*/' "$cu")" -eq 1 ] &&
		[ "$(grep -c 'tuning database line' "$cu")" -eq 4 ] &&
		grep -q '^	4, 288,   /\* split K: blocks, K each (of 1152); tuning database line 3 \*/' "$cu" &&
		grep -q '^	2, 80,   /\* split K: blocks, K each (of 147); tuning database line 4 \*/' "$cu" &&
		# the classifier: cuBLASLt's second algorithm, not the GEMV kernel
		grep -q '^/\* algo=1: tuning database line 6 \*/$' "$cu" &&
		[ "$(grep -c '^	g->ltalgo = 1;$' "$cu")" -eq 1 ] &&
		[ "$(grep -c 'one warp per column' "$cu")" -eq 0 ]
}
check "the database's splits for the three convolutions it names (the last entry of a key wins), cuBLASLt's algorithm 1 for the classifier, the heuristic's for the rest" chosen
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
		! grep -q 'tuning database' "$tmp/h/resnet18_core/5.gpu.cu" &&
		! grep -q 'ltalgo' "$tmp/h/resnet18_core/5.gpu.cu" &&
		[ "$(grep -c 'one warp per column' "$tmp/h/resnet18_core/5.gpu.cu")" -eq 1 ]
}
check "without a database: the heuristic everywhere, no database line" untuned
edit() {
	sed -i 's/split=4$/split=2/' "$m/tune.db"
	ninja -C "$tmp/a" resnet18_core/5.gpu.cu >"$tmp/edit.log" 2>&1 || return 1
	cat "$tmp/edit.log"
	grep -q 'lower_gpu' "$tmp/edit.log" &&
		[ "$(grep -c '^	2, 576,   /\* split K: blocks, K each (of 1152); tuning database line 3 \*/' "$cu")" -eq 2 ]
}
check "editing the database relowers (the depfile names it); the new split is taken" edit
arch() {
	"$bin/devproc" gen "$root/$dp" --target "$m/cuda.map" --cuda-arch sm_80 -C "$tmp/c" >/dev/null &&
		ninja -C "$tmp/c" resnet18_core/5.gpu.cu >/dev/null 2>&1 || return 1
	c=$tmp/c/resnet18_core/5.gpu.cu
	# sm_80: only the sm_80 entry (line 5: the 64-channel 14x14 convolutions
	# with a residual add, split 3)
	grep 'tuning database' "$c"
	[ "$(grep -c 'tuning database line 5 \*/' "$c")" -eq 2 ] &&
		[ "$(grep -c 'tuning database' "$c")" -eq 2 ] &&
		! grep -q 'tuning database line 5' "$cu"
}
check "for another GPU generation (--cuda-arch sm_80) its entries apply, the sm_90 ones do not" arch
# a tune line appended to targets/cuda: its line (the value's column in
# each message: after "tune KEY ")
tl=$(($(wc -l <targets/cuda) + 1))
refuses() { # DPIR MAP MESSAGE: lower_gpu exits 1 with "DPIR: lower_gpu: MESSAGE", writes nothing
	rm -f "$tmp/refused.cu"
	"$bin/dp-lower_gpu" "$1" -t "$2" -o "$tmp/refused.cu" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && [ ! -e "$tmp/refused.cu" ] && grep -qxF "$1: lower_gpu: $3" "$tmp/err"
}
bad() {
	echo "conv sm_90 1x3x224x224 16x7x7 split=2x" >>"$m/tune.db"
	refuses "$tmp/a/resnet18_core/4.partition.dpir" "$m/cuda.map" \
		"$m/tune.db:8: expected 'OP ARCH KEY... CHOICE': conv ... split=1..64, mm ... algo=0..15|gemv|tc, attn ... split=0..64 (formats/tune.md)"
}
check "a malformed database line: exit 1, file:line named, nothing written" bad
sed -i '$d' "$m/tune.db"
# precision as a mapping choice: tune cuda.precision tf32 sets it at init;
# the database's keys hold the precision
{ cat "$m/cuda.map"; echo "tune cuda.precision tf32"; } >"$m/tf32.map"
precision() {
	"$bin/devproc" gen "$root/$dp" --target "$m/tf32.map" -C "$tmp/p" >/dev/null &&
		ninja -C "$tmp/p" resnet18_core/5.gpu.cu >/dev/null 2>&1 || return 1
	c=$tmp/p/resnet18_core/5.gpu.cu
	grep 'tuning database' "$c"
	[ "$(grep -c '^	if (dprt_cuda_precision(g, DPRT_CONV_TF32, err, errn) != 0) {$' "$c")" -eq 1 ] &&
		! grep -q 'dprt_cuda_precision' "$tmp/h/resnet18_core/5.gpu.cu" &&
		# before the first packing of the weights, in NAME_gpu_init
		[ "$(grep -n 'dprt_cuda_precision\|dprt_cuda_convpack' "$c" | head -1 | grep -c precision)" -eq 1 ] &&
		# the tf32 entry (line 7: the 7x7 convolution without an add, split 1) alone
		[ "$(grep -c 'tuning database' "$c")" -eq 1 ] &&
		grep -q '^	1, 1152,   /\* split K: blocks, K each (of 1152); tuning database line 7 \*/' "$c"
}
check "tune cuda.precision tf32: the program sets TF32 at init (fp32, the default, sets nothing); the tf32 entries apply" precision
badprec() {
	{ cat targets/cuda; echo "tune cuda.precision bf17"; } >"$m/bad.map"
	refuses "$tmp/a/resnet18_core/4.partition.dpir" "$m/bad.map" \
		"$m/bad.map:$tl:21: tune cuda.precision bf17: expected fp32, tf32, bf16 or f16"
}
check "an unknown precision: exit 1, named" badprec
cands() { # the mapping's candidates in the sites listed; a bad set is an error
	{ cat targets/cuda; echo "tune cuda.conv.split {1,4}"; echo "tune cuda.mm.algo {0,7}"; } >"$m/c.map"
	"$bin/dp-lower_gpu" "$tmp/a/resnet18_core/4.partition.dpir" -t "$m/c.map" -o "$tmp/z.cu" \
		--tunables "$tmp/sites" || return 1
	cat "$tmp/sites"
	[ "$(grep -c '	split	[0-9]*	1,4$' "$tmp/sites")" -eq 20 ] &&
		[ "$(grep -c '	algo	gemv	gemv,0,7$' "$tmp/sites")" -eq 1 ] &&
		[ "$(wc -l <"$tmp/sites")" -eq 21 ] &&
		grep -q '^3	conv sm_90 1x3x224x224 16x7x7 s2x2 p3x3 d1x1 g1 f32 fp32 bias+relu	split	2	1,4$' "$tmp/sites" &&
		{ cat targets/cuda; echo "tune cuda.conv.split {1,3,99}"; } >"$m/c.map" &&
		refuses "$tmp/a/resnet18_core/4.partition.dpir" "$m/c.map" \
			"$m/c.map:$tl:22: tune cuda.conv.split {1,3,99}: expected a set of choices such as {1,2,4,8,16} (values 1..64)"
}
check "the mapping's candidates (tune cuda.conv.split {1,4}): in the sites --tunables lists; a value out of range is an error" cands

# the golden transformer block
g=tests/golden/tune
lowir() { # IR DIR MAPPING SITES CU: the stages up to lower_gpu, in DIR
	mkdir -p "$2" &&
		"$bin/devproc" parse "$1" -o "$2/1.dpir" &&
		"$bin/dp-legalize" "$2/1.dpir" -o "$2/2.dpir" &&
		"$bin/dp-place" "$2/2.dpir" -t targets/cuda -o "$2/3.dpir" &&
		"$bin/dp-partition" "$2/3.dpir" -o "$2/4.dpir" &&
		"$bin/dp-lower_gpu" "$2/4.dpir" -t "$3" --tunables "$4" -o "$5"
}
xf() { lowir "$g/xfmr.ir" "$tmp/x" "$@"; }   # MAPPING SITES CU
variants() { grep -E 'tuning database|ltalgo|cublasLtMatmul|tensor-core product|one warp per column|chunks of keys' "$1"; }
{ cat targets/cuda; echo "tune cuda.db $root/$g/xfmr.db"; } >"$m/x.map"
xsites() {
	xf targets/cuda "$tmp/x.sites" "$tmp/x0.cu" && diff -u "$g/xfmr.sites" "$tmp/x.sites"
}
check "golden: xfmr.ir's tunable sites (two biased products, two attentions) as --tunables lists them" xsites
xuntuned() { variants "$tmp/x0.cu" >"$tmp/x0.v"; diff -u "$g/xfmr.untuned" "$tmp/x0.v"; }
check "golden: xfmr.ir untuned: cuBLASLt's first algorithm, the GEMV kernel, keys chunked at run time" xuntuned
xchosen() {
	xf "$m/x.map" "$tmp/x1.sites" "$tmp/x1.cu" && variants "$tmp/x1.cu" >"$tmp/x1.v" &&
		diff -u "$g/xfmr.chosen" "$tmp/x1.v" && cmp "$g/xfmr.sites" "$tmp/x1.sites" &&
		mkdir -p "$tmp/again" && xf "$m/x.map" "$tmp/x2.sites" "$tmp/again/x1.cu" &&
		cmp "$tmp/x1.cu" "$tmp/again/x1.cu"
}
check "golden: xfmr.ir with xfmr.db: the chosen algorithms and chunks with their lines (not the tf32 or sm_80 entries); the same bytes twice" xchosen
xtc() { # algo=tc: the kernel library's tensor-core product where more than 8 rows; not a choice for 4
	printf '%s\n' 'mm sm_90 197x576x192 nt f32 fp32 bias algo=tc' \
		'mm sm_90 4x576x192 nt f32 fp32 bias algo=tc' >"$m/tc.db" &&
		{ cat targets/cuda; echo "tune cuda.db $m/tc.db"; } >"$m/tc.map" &&
		xf "$m/tc.map" "$tmp/x3.sites" "$tmp/x3.cu" &&
		grep -q '^	if (dprt_cuda_gemm(g, 197, 576, 192, 1.0f, ' "$tmp/x3.cu" &&
		[ "$(grep -c 'dprt_cuda_gemm(g' "$tmp/x3.cu")" -eq 1 ] &&
		grep -q '^/\* algo=tc: tuning database line 1 \*/$' "$tmp/x3.cu" &&
		grep -q 'M=4 N=576 K=192: one warp per column n' "$tmp/x3.cu" &&
		! grep -q 'tuning database line 2' "$tmp/x3.cu"
}
check "a database's algo=tc: the 197-row product on the tensor-core kernel (runtime/cuda/gemm.cu), the entry ignored for the 4-row GEMV" xtc
xmmtc() { # tune cuda.mm.tc 1: the 197-row product on it without a database; 2 refused, nothing written
	{ cat targets/cuda; echo "tune cuda.mm.tc 1"; } >"$m/mmtc.map" &&
		xf "$m/mmtc.map" "$tmp/x4.sites" "$tmp/x4.cu" &&
		grep -q '^	if (dprt_cuda_gemm(g, 197, 576, 192, 1.0f, ' "$tmp/x4.cu" &&
		grep -q '	algo	tc	tc,0,1,2,3$' "$tmp/x4.sites" &&
		{ cat targets/cuda; echo "tune cuda.mm.tc 2"; } >"$m/mmtc2.map" &&
		refuses "$tmp/x/4.dpir" "$m/mmtc2.map" "$m/mmtc2.map:$tl:17: tune cuda.mm.tc 2: expected 0 or 1"
}
check "tune cuda.mm.tc 1: the tensor-core product without a database (the site's heuristic tc); tune cuda.mm.tc 2: a clear error, no output" xmmtc

# 3xTF32 through cuBLASLt (tune cuda.mm.x3): x3.ir's products of constants
x3f() { lowir "$g/x3.ir" "$tmp/x3" "$1" "${3:-$tmp/x3/sites}" "$2"; }   # MAPPING CU [SITES]
calls() { grep -c "$1(g" "$2"; }
xx3() {
	x3f targets/cuda "$tmp/x3/auto.cu" "$tmp/x3/auto.sites" &&
		[ "$(calls dprt_cublaslt_x3 "$tmp/x3/auto.cu")" -eq 3 ] &&
		[ "$(calls dprt_cuda_x3weight "$tmp/x3/auto.cu")" -eq 2 ] &&
		[ "$(calls dprt_cublaslt_bias "$tmp/x3/auto.cu")" -eq 1 ] &&
		grep -q '^	if (dprt_cublas_sgemm(g, 256, 510, 512, ' "$tmp/x3/auto.cu" &&
		grep -q '^	if (dprt_cublaslt_x3(g, 256, 512, 512, 1.0f, v[0-9]*, 512, v[0-9]*, 1, 512, 0,$' "$tmp/x3/auto.cu" &&
		grep -q '^	if (dprt_cublaslt_x3(g, 256, 512, 512, 1.0f, v[0-9]*, 512, v[0-9]*, 512, 1, 3145728,$' "$tmp/x3/auto.cu" &&
		grep -q 'NULL, v[0-9]*, 512, err, errn) != 0)$' "$tmp/x3/auto.cu" &&
		grep -q '	if (dprt_cuda_x3init(g, 6291456, 1572864, err, errn) != 0) {' "$tmp/x3/auto.cu" &&
		grep -q '	mm sm_90 256x512x512 nt f32 fp32 bias	algo	x3	tc,x3,0,1,2,3$' "$tmp/x3/auto.sites" &&
		grep -q '	mm sm_90 64x512x512 nt f32 fp32 bias	algo	0	tc,x3,0,1,2,3$' "$tmp/x3/auto.sites" &&
		{ cat targets/cuda; echo "tune cuda.mm.x3 1"; } >"$m/x3all.map" &&
		x3f "$m/x3all.map" "$tmp/x3/all.cu" && [ "$(calls dprt_cublaslt_x3 "$tmp/x3/all.cu")" -eq 5 ] &&
		{ cat targets/cuda; echo "tune cuda.mm.x3 0"; } >"$m/x3none.map" &&
		x3f "$m/x3none.map" "$tmp/x3/none.cu" && ! grep -q 'dprt_cuda_x3\|dprt_cublaslt_x3' "$tmp/x3/none.cu" &&
		{ cat targets/cuda; echo "tune cuda.precision tf32"; } >"$m/x3tf32.map" &&
		x3f "$m/x3tf32.map" "$tmp/x3/tf32.cu" && ! grep -q 'dprt_cuda_x3\|dprt_cublaslt_x3' "$tmp/x3/tf32.cu" &&
		printf '%s\n' 'mm sm_90 256x512x512 nt f32 fp32 bias algo=1' 'mm sm_90 64x512x512 nt f32 fp32 bias algo=x3' >"$m/x3.db" &&
		{ cat targets/cuda; echo "tune cuda.db $m/x3.db"; } >"$m/x3db.map" &&
		x3f "$m/x3db.map" "$tmp/x3/db.cu" && [ "$(calls dprt_cublaslt_x3 "$tmp/x3/db.cu")" -eq 3 ] &&
		grep -q '^	if (dprt_cublaslt_x3(g, 64, 512, 512, ' "$tmp/x3/db.cu" &&
		grep -q '^	if (dprt_cublaslt_bias(g, 256, 512, 512, ' "$tmp/x3/db.cu" &&
		{ cat targets/cuda; echo "tune cuda.mm.x3 2"; } >"$m/x3bad.map" &&
		refuses "$tmp/x3/4.dpir" "$m/x3bad.map" "$m/x3bad.map:$tl:17: tune cuda.mm.x3 2: expected auto, 0 or 1"
}
check "tune cuda.mm.x3: by default the 256-row products of constants as 3xTF32 through cuBLASLt (a bias, none, the weight by rows or by columns; one split of the weight per layout), the 64-row one and the one of 510 columns on cuBLAS in fp32; 1 all five, 0 and tf32 none; a database's algo=x3 and algo=1 per product; 2 a clear error" xx3

# the kernel computing a 3xTF32 product's A writes its split (kern.c, x3split)
x3s() {
	lowir "$g/x3split.ir" "$tmp/xs" "$1" "$tmp/xs/sites" "$2"
}
xx3split() {
	x3s targets/cuda "$tmp/xs/auto.cu" &&
		[ "$(calls dprt_cublaslt_x3s "$tmp/xs/auto.cu")" -eq 6 ] &&
		grep -q '^	if (dprt_cuda_sdpa3(g, &attn29, v28 + 0, v28 + 0, v28 + 0, NULL, v31, 256, err, errn) != 0)$' "$tmp/xs/auto.cu" &&
		grep -q '^	if (dprt_cublaslt_x3s(g, 256, 1024, 256, 1.0f, v31, 256, ' "$tmp/xs/auto.cu" &&
		[ "$(calls dprt_cublaslt_x3 "$tmp/xs/auto.cu")" -eq 4 ] &&
		[ "$(grep -c '^		dp_x3put(s3, 512, i, yv);$' "$tmp/xs/auto.cu")" -eq 3 ] &&
		grep -q '^#include "cuda/tf32.cuh"' "$tmp/xs/auto.cu" &&
		for k in k4_gelu k6_relu k15_view; do
			grep -q "^	DP_LAUNCH($k, 512, 256, 1)(v[0-9]*, v[0-9]*, g->x3off ? NULL : (float \*)g->s3);\$" \
				"$tmp/xs/auto.cu" || return 1
		done &&
		grep -q '^	DP_LAUNCH(k19_layer_norm, 150, 256, 1)(v18, v19, g->x3off ? NULL : (float \*)g->s3);$' "$tmp/xs/auto.cu" &&
		grep -q '^	DP_LAUNCH(k22_layer_norm, 150, 256, 1)(v18, v20, v21, v22, g->x3off ? NULL : (float \*)g->s3);$' "$tmp/xs/auto.cu" &&
		grep -q '^	DP_LAUNCH(k25_layer_norm, 32, 256, 1)(v3, v25);$' "$tmp/xs/auto.cu" &&
		[ "$(grep -c '^			dp_x3at(s3r + j, 512, u);$' "$tmp/xs/auto.cu")" -eq 2 ] &&
		for k in k8_tanh k11_sigmoid; do
			grep -q "^	DP_LAUNCH($k, 512, 256, 1)(v[0-9]*, v[0-9]*);\$" "$tmp/xs/auto.cu" || return 1
		done &&
		grep -q '^	if (dprt_cublaslt_x3s(g, 256, 512, 512, 1.0f, v4, 512, ' "$tmp/xs/auto.cu" &&
		grep -q '^	if (dprt_cublaslt_x3(g, 256, 512, 512, 1.0f, v8, 512, ' "$tmp/xs/auto.cu" &&
		{ cat targets/cuda; echo "tune cuda.precision tf32"; } >"$m/xstf32.map" &&
		x3s "$m/xstf32.map" "$tmp/xs/tf32.cu" && ! grep -q 'x3put\|x3s(g\|s3' "$tmp/xs/tf32.cu" &&
		{ cat targets/cuda; echo "tune cuda.mm.x3 0"; } >"$m/xsnone.map" &&
		x3s "$m/xsnone.map" "$tmp/xs/none.cu" && ! grep -q 'x3put\|x3s(g\|s3' "$tmp/xs/none.cu" &&
		{ cat targets/cuda; echo "tune cuda.mm.x3split 0"; } >"$m/xsoff.map" &&
		x3s "$m/xsoff.map" "$tmp/xs/off.cu" && ! grep -q 'x3put\|x3at\|x3s(g\|s3r' "$tmp/xs/off.cu" &&
		[ "$(calls dprt_cublaslt_x3 "$tmp/xs/off.cu")" -eq 10 ] && ! grep -q 'sdpa3' "$tmp/xs/off.cu" &&
		{ cat targets/cuda; echo "tune cuda.mm.x3split yes"; } >"$m/xsbad.map" &&
		refuses "$tmp/xs/4.dpir" "$m/xsbad.map" "$m/xsbad.map:$tl:22: tune cuda.mm.x3split yes: expected 0 or 1"
}
check "3xTF32's split of A written by the kernel that computes A (a GELU, a relu, a negation through a reshape, layer norms of 150 blocks with and without the residual add, attention written in place): not a norm of 32 blocks, nor where another 3xTF32 product runs between or A has a second reader, nor in tf32, without 3xTF32 or with tune cuda.mm.x3split 0; a bad value a clear error" xx3split

# devproc tune
check "devproc tune --help" sh -c "'$bin/devproc' tune --help | grep -q '^usage: devproc tune PIPELINE.dp'"
notcuda() {
	"$bin/devproc" tune "$dp" --target cpu -C "$tmp/t0" -o "$tmp/t0.tune" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && [ ! -e "$tmp/t0.tune" ] &&
		grep -q "^devproc: tune: target 'cpu' has no cuda device: tuning is for the cuda target$" "$tmp/err"
}
check "devproc tune with a cpu mapping: a clear error" notcuda
if [ -e /dev/nvidiactl ] || [ -e /dev/dxg ]; then
	skip "this machine has an NVIDIA driver (the no-GPU error is for machines without)"
else
	nogpu() {
		"$bin/devproc" tune "$dp" -C "$tmp/t1" -o "$tmp/t1.tune" 2>"$tmp/err"
		rc=$?
		cat "$tmp/err"
		[ $rc -eq 1 ] && [ ! -e "$tmp/t1.tune" ] && [ ! -e "$tmp/t1" ] &&
			grep -q "^devproc: tune: no NVIDIA GPU here (no /dev/nvidiactl): run devproc tune on a machine with the GPU the program is for$" "$tmp/err"
	}
	check "devproc tune without a GPU: a clear error, before building anything" nogpu
fi
if [ -n "$gpu" ]; then
	ontgpu() {
		"$bin/devproc" tune "$dp" -C "$tmp/t2" -o "$tmp/r.tune" || return 1
		cat "$tmp/r.tune"
		# one entry per key of the sites dp-lower_gpu lists (15 convolution
		# keys today, the classifier)
		"$bin/dp-lower_gpu" "$tmp/h/resnet18_core/4.partition.dpir" -t targets/cuda -o "$tmp/s.cu" \
			--tunables "$tmp/s.sites" || return 1
		nconv=$(cut -f2 "$tmp/s.sites" | sort -u | grep -c '^conv ')
		echo "convolution keys listed: $nconv"
		[ "$nconv" -gt 0 ] &&
			[ "$(grep -c '^conv sm_[0-9]* .* split=[0-9]*$' "$tmp/r.tune")" -eq "$nconv" ] &&
			[ "$(grep -c '^mm sm_[0-9]* 1x1000x128 nt f32 fp32 bias algo=' "$tmp/r.tune")" -eq 1 ] &&
			{ cat targets/cuda; echo "tune cuda.db $tmp/r.tune"; } >"$m/r.map" &&
			"$bin/devproc" build "$root/$dp" --target "$m/r.map" -C "$tmp/t3" >/dev/null &&
			[ "$(grep -c 'tuning database line' "$tmp/t3/resnet18_core/5.gpu.cu")" -eq 21 ] &&
			"$tmp/t3/resnet18_core/resnet18_core" --in "x=$tmp/t2/tune/in.x.npy" >/dev/null
	}
	check "devproc tune on the GPU: a database with an entry per key, a build with it takes them all and runs" ontgpu
else
	skip "no CUDA device"
fi
echo "1..$n"
[ $fails -eq 0 ]
