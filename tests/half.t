#!/bin/sh
# half.t: the cuda target in 16-bit precision, `tune cuda.precision bf16`
# and `f16` (formats/target.md, "Precision") (TAP).  Wherever nvcc is (CI
# has it, with no GPU): tests/data/half/block.dp (a transformer-style block
# used on 16 rows and on one, tools/make_bf16_refs.py) builds for both
# mappings, and the generated code shows the plan: at init the model's 11
# parameters rounded to 16 bits and each of the 5 weight matrices copied to
# 16 bits once (both uses share it); the 16-row products on cuBLASLt in 16
# bits (the bias in its epilogue where it is a bias vector alone), each
# result rounded (the relu's product by its epilogue kernel); the one-row
# products as matrix-vector kernels reading the 16-bit weights.  Where a
# CUDA device is present too: the outputs equal PyTorch's model.to(dtype)
# within 1e-2 of max|ref| (bf16) and 2e-3 (f16), and the bf16 program is
# nearer PyTorch's bf16 model than PyTorch's fp32 model is (it rounds where
# PyTorch does); elsewhere those say "# SKIP no CUDA device".
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
d=$root/tests/data/half
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
ondevice() { if [ -n "$gpu" ]; then check "$@"; else skip "no CUDA device"; fi; }

if [ -z "$nvcc" ]; then
	for i in 1 2 3 4 5 6 7; do skip "no nvcc"; done
	echo "1..$n"
	exit 0
fi
for p in bf16 f16; do
	{ cat targets/cuda; echo "tune cuda.precision $p"; } >"$tmp/$p.map"
done
builds() {
	"$bin/devproc" build "$d/block.dp" --target "$tmp/bf16.map" -C "$tmp/bf16" &&
		"$bin/devproc" build "$d/block.dp" --target "$tmp/f16.map" -C "$tmp/f16"
}
check "block.dp builds for cuda.precision bf16 and f16 (lower_gpu, nvcc, link)" builds
plan() {
	cu=$tmp/bf16/block/5.gpu.cu
	grep -q '^typedef __nv_bfloat16 dp_h16;' "$cu" || { echo "no bf16 type"; return 1; }
	grep -q '^typedef __half dp_h16;' "$tmp/f16/block/5.gpu.cu" || { echo "f16: no half type"; return 1; }
	[ "$(grep -c 'dprt_cuda_half(g, DPRT_BF16, ' "$cu")" -eq 1 ] || { echo "not one dprt_cuda_half"; return 1; }
	[ "$(grep -c 'dprt_cuda_round16(g, (float \*)(g->weights + ' "$cu")" -eq 11 ] ||
		{ echo "not 11 parameters rounded at init"; return 1; }
	[ "$(grep -c '^	if (dprt_cuda_to16(g, g->w16 + ' "$cu")" -eq 5 ] ||
		{ echo "not 5 weight copies made at init"; return 1; }
	# 16 rows: 5 products on cuBLASLt, 3 with their bias in the epilogue
	[ "$(grep -c '^	if (dprt_cublaslt_16(g, 16, ' "$cu")" -eq 5 ] || { echo "not 5 cuBLASLt products"; return 1; }
	[ "$(grep -c '^	if (dprt_cublaslt_16(g, 16, .*, NULL, v' "$cu")" -eq 2 ] || { echo "not 2 without bias"; return 1; }
	[ "$(grep -c '^	if (dprt_cuda_round16(g, v[0-9]*, v[0-9]*, ' "$cu")" -eq 4 ] || { echo "not 4 results rounded"; return 1; }
	grep -q '_linear_epilogue\(<<<\|, \)' "$cu" || { echo "no epilogue kernel (relu)"; return 1; }
	# one row: 5 matrix-vector kernels of 16-bit weights, the results rounded
	[ "$(grep -c '^/\* y\[m,n\] = .*M=1 .*b in 16 bits (16-byte loads)' "$cu")" -eq 5 ] ||
		{ echo "not 5 GEMV kernels of 16-bit weights"; return 1; }
	[ "$(grep -c '^	r = dp_r16(r);   /\* rounded to 16 bits' "$cu")" -eq 5 ] || { echo "not 5 GEMV results rounded"; return 1; }
	! grep -q 'dprt_cublas_sgemm\|dprt_cublaslt_bias' "$cu" || { echo "an fp32 product left"; return 1; }
}
check "the bf16 plan: 11 parameters rounded and 5 weight copies at init; 5 cuBLASLt products (3 with bias); 5 GEMV kernels of bf16 weights" plan

# ---- where a CUDA device is
runs() { # precision
	"$tmp/$1/block/block" --in x="$d/x.npy" --in z="$d/z.npy" \
		--out y="$tmp/$1.y.npy" --out w="$tmp/$1.w.npy"
}
near() { # precision tolerance
	runs "$1" &&
		"$bin/npycmp" --tol "$2" "$tmp/$1.y.npy" "$d/ref_$1_y.npy" &&
		"$bin/npycmp" --tol "$2" "$tmp/$1.w.npy" "$d/ref_$1_w.npy"
}
ondevice "bf16: y (16 rows) and w (one row) within 1e-2 of PyTorch's bf16 model" near bf16 1e-2
ondevice "f16: y and w within 2e-3 of PyTorch's f16 model" near f16 2e-3
# The bf16 program against PyTorch's bf16 model, and PyTorch's fp32 model
# against it: the program rounds as PyTorch's bf16 model does, so it is the
# nearer of the two (by max|err|).
nearer() {
	for o in y w; do
		a=$("$bin/npycmp" --tol 1 "$tmp/bf16.$o.npy" "$d/ref_bf16_$o.npy" | sed -n 's/^max|err|=\([^ ]*\) .*/\1/p')
		b=$("$bin/npycmp" --tol 1 "$d/ref_fp32_$o.npy" "$d/ref_bf16_$o.npy" | sed -n 's/^max|err|=\([^ ]*\) .*/\1/p')
		echo "$o: program-bf16 $a, fp32-bf16 $b"
		awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' || return 1
	done
}
ondevice "bf16: the program is nearer PyTorch's bf16 model than PyTorch's fp32 model is" nearer
again() {
	"$tmp/bf16/block/block" --in x="$d/x.npy" --in z="$d/z.npy" --steps 3 --out y="$tmp/s%d.npy" &&
		"$bin/npycmp" --exact "$tmp/s3.npy" "$tmp/s1.npy" && "$bin/npycmp" --exact "$tmp/s1.npy" "$tmp/bf16.y.npy"
}
ondevice "bf16: three runs in one process (eager, captured, replayed): the same bytes" again
fp32() {
	"$bin/devproc" build "$d/block.dp" --target cuda -C "$tmp/fp32" &&
		"$tmp/fp32/block/block" --in x="$d/x.npy" --in z="$d/z.npy" \
			--out y="$tmp/fp32.y.npy" --out w="$tmp/fp32.w.npy" &&
		"$bin/npycmp" --tol 1e-5 "$tmp/fp32.y.npy" "$d/ref_fp32_y.npy" &&
		"$bin/npycmp" --tol 1e-5 "$tmp/fp32.w.npy" "$d/ref_fp32_w.npy"
}
ondevice "the same block in fp32 (targets/cuda): within 1e-5 of PyTorch's fp32 model" fp32
echo "1..$n"
[ $fails -eq 0 ]
