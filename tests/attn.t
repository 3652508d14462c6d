#!/bin/sh
# attn.t: the kernel library's attention (runtime/cuda/attn.cu: the SIMT
# kernel and the tensor-core one, attnmma.cuh) against a float64 reference
# on the cpu (TAP).  Wherever nvcc is (CI has it, with no GPU):
# tests/gpu/attn.c compiles and links against lib/libdprt_cuda.a.  Where a
# CUDA device is present too, it runs: every method (simt, 3xTF32 within
# 1e-5 of the reference, TF32 within 5e-3), every block shape and with and
# without keys split over blocks, on ViT-B/16's, DeiT-tiny's and GPT-2's
# shapes, tails, masks and a row with every key masked, and the decode
# kernel (attndec.cuh) on one query row against 1 to 1000 keys; elsewhere that says
# "# SKIP no CUDA device".  And GPT-2 and BERT lower with attention reading
# q, k and v and writing its result in place (their runs against PyTorch
# are tests/zoo.t's).
cd "$(dirname "$0")/.." || exit 1
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
cuda=$(sed -n 's/^CUDA_HOME = //p' config.mk 2>/dev/null)
cc=$(sed -n 's/^CC = //p' config.mk 2>/dev/null)
cc=${DP_TEST_CC:-${cc:-cc}}   # bin/san-cc under make check SAN=1, as the runtime's objects
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
if [ -z "$nvcc" ] || [ ! -f lib/libdprt_cuda.a ]; then
	skip "no nvcc"
	skip "no nvcc"
	skip "no nvcc"
	skip "no nvcc"
	echo "1..$n"
	exit 0
fi
# linked as dp-link links a cuda program (stages/link/gen.c)
lib=$cuda/lib64
[ -f "$lib/libcudart_static.a" ] || lib=$cuda/targets/x86_64-linux/lib
check "tests/gpu/attn.c compiles and links against the kernel library" \
	$cc -std=c11 -O2 -Wall -Wextra -Werror -Iruntime -I"$cuda/include" tests/gpu/attn.c \
	lib/libdprt_cuda.a lib/libdprt.a -L"$lib" -Wl,--as-needed -lcublas -lcublasLt -lstdc++ \
	-Wl,--no-as-needed -lcudart_static -ldl -lrt -lpthread -lm -o "$tmp/attn"
# the decode kernel (runtime/cuda/attndec.cuh) on the host through the
# emulator of tests/gpu/emu: one query row against 1 to 1000 keys, masks,
# causal rows, a dead row, head sizes 64, 16, 40/72, with its chunks merged
# by the last block, against float64 (no GPU needed)
emudec() {
	${CXX:-c++} -std=c++17 -O1 -Itests/gpu/emux -Itests/gpu/emu -Iruntime tests/gpu/attndec.cpp \
		tests/gpu/emux/emux.cpp tests/gpu/emu/emu.cpp -lpthread -o "$tmp/attndec" &&
		"$tmp/attndec" >"$tmp/dec.out" 2>&1
	rc=$?
	cat "$tmp/dec.out"
	[ $rc -eq 0 ] && ! grep -q FAIL "$tmp/dec.out"
}
check "the decode attention kernel, emulated on the host, against float64 (chunks and their merge in one kernel)" emudec
inplace() {
	# GPT-2 (two layers): q, k and v are windows of c_attn's product that
	# attention reads in place, with no copy kernel (slice, view, permute)
	# between, and its result is written in place as the transpose and
	# reshape that c_proj reads; the same for BERT (query, key, value
	# products, viewed)
	# (tune cuda.attn.inplace 1, the default)
	bin/devproc build tests/zoo/hf_gpt2_train/m_hf_gpt2_train.dp tests/zoo/hf_bert_train/m_hf_bert_train.dp \
		--target cuda -C "$tmp/z" >/dev/null || return 1
	cu=$tmp/z/m_hf_gpt2_train/5.gpu.cu
	[ "$(grep -c '^	/\* q, k, v read in place' "$cu")" -eq 2 ] || { echo "not 2 attentions in place"; return 1; }
	grep -q 'dprt_cuda_sdpa(g, &attn[0-9]*, v[0-9]* + 0, v[0-9]* + 64, v[0-9]* + 128, ' "$cu" ||
		{ echo "q, k, v not at 0, 64, 128 of one buffer"; return 1; }
	! grep -q '^static __global__.*k[0-9]*_permute' "$cu" || { echo "a permute kernel is left"; return 1; }
	[ "$(grep -c '^	/\* y written in place' "$cu")" -eq 2 ] || { echo "not 2 attentions writing in place"; return 1; }
	# (and one reading the ids from the staging; the position ids and the
	# mask's small tables computed again in each kernel reading them,
	# plan.c's manyread: 23)
	grep -q '^ \* 1 cuda partition, 23 kernels' "$cu" || { echo "not 23 kernels"; return 1; }
	# the residual adds, read through the view of addmm's result, in the
	# kernels of the layer norms after them (reduce.c, gaddnorm): the one
	# add kernel left the sum of the two embeddings (the token's and the
	# position's, both gathered in it)
	[ "$(grep -c 'DP_LAUNCH(k[0-9]*_add\(_group\)*,' "$cu")" -eq 1 ] &&
		grep -B12 '^k[0-9]*_add(' "$cu" | grep -q '= aten.embedding ' ||
		{ echo "an add kernel is left"; return 1; }
	# the layer norms launched with programmatic dependent launch, each
	# waiting first (reduce.c, rowhead)
	[ "$(grep -c 'DP_LAUNCH(k[0-9]*_layer_norm, [0-9]*, [0-9]*, 1)' "$cu")" -eq 5 ] &&
		[ "$(grep -A2 '^k[0-9]*_layer_norm(' "$cu" | grep -c '^	dp_pdl_wait();')" -eq 5 ] ||
		{ echo "not 5 layer norms launched early, each waiting"; return 1; }
	[ "$(grep -c '^	/\* q, k, v read in place' "$tmp/z/m_hf_bert_train/5.gpu.cu")" -eq 2 ]
}
check "GPT-2 and BERT (tests/zoo) by default: attention reads q, k, v and writes y in place, no copy kernels, no residual add kernels, the layer norms launched early (23 kernels for GPT-2, 27 without)" inplace
copies() {
	# with tune cuda.attn.inplace 0 the copies stay: 27 kernels (each layer's
	# three permutes of q, k and v in one launch)
	{ cat targets/cuda; echo "tune cuda.attn.inplace 0"; } >"$tmp/copies.target"
	bin/devproc build tests/zoo/hf_gpt2_train/m_hf_gpt2_train.dp --target "$tmp/copies.target" \
		-C "$tmp/d" >/dev/null || return 1
	! grep -q '^	/\* q, k, v read in place' "$tmp/d/m_hf_gpt2_train/5.gpu.cu" &&
		grep -q '^ \* 1 cuda partition, 27 kernels' "$tmp/d/m_hf_gpt2_train/5.gpu.cu"
}
check "GPT-2 (tests/zoo) with tune cuda.attn.inplace 0: attention through copies (27 kernels)" copies
run() { "$tmp/attn" >"$tmp/out" 2>&1; rc=$?; cat "$tmp/out"; [ $rc -eq 0 ] && ! grep -q FAIL "$tmp/out"; }
if [ -n "$gpu" ]; then
	check "attention on the device: every method, block shape and split against float64" run
else
	skip "no CUDA device"
fi
echo "1..$n"
[ $fails -eq 0 ]
