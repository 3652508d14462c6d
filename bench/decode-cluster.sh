#!/bin/sh
# decode-cluster.sh: what the decode attention as a cluster of blocks
# (runtime/cuda/attndec.cuh, sdpadec_cl; DPRT_CUDA_ATTN_CLUSTER) needs
# checked and measured on an sm_90 GPU before it becomes the default:
# - tests/gpu/attn.c: every decode method and cluster size against float64
#   (ATTN_QUICK: the batch-32 case left out);
# - the ~100M Llama of bench/llm.py in bf16 (--build-only: the export and
#   the cuda build), one token at position 128: the logits of each cluster
#   size against one block's (npycmp --exact: the same bits are expected),
#   then rounds alternating the sizes, each figure the executable's --bench
#   median of 300 runs, host to host.
# Run from the repository root after ./configure && make on the GPU machine
# (torch and transformers for the export):
#     sh bench/decode-cluster.sh [ROUNDS] [SIZES]      (3, "1 2 4 8")
set -e
rounds=${1:-3}
sizes=${2:-1 2 4 8}
cuda=$(sed -n 's/^CUDA_HOME = //p' config.mk)
mkdir -p build
cc -std=c11 -O2 -Iruntime -I"$cuda/include" tests/gpu/attn.c lib/libdprt_cuda.a lib/libdprt.a \
	-L"$cuda/lib64" -lcublas -lcublasLt -lstdc++ -lcudart_static -ldl -lrt -lpthread -lm \
	-o build/attn-check
ATTN_QUICK=1 build/attn-check >build/attn-check.txt 2>&1 || true
echo "attention against float64: $(grep -c '^ok  ' build/attn-check.txt) ok," \
	"$(grep -c '^FAIL' build/attn-check.txt) FAIL"
grep '^FAIL' build/attn-check.txt || true
python3 bench/llm.py --skip-cpu --devproc-only --precisions bf16 --build-only >build/llm-build.log 2>&1
d=build/bench-llm
e=$d/cuda.bf16/decode/decode
for c in $sizes; do
	DPRT_CUDA_ATTN_CLUSTER=$c $e --in ids=$d/tok.npy --in pos=$d/tokpos.npy \
		--out logits=$d/logits.cl$c.npy >/dev/null
	[ "$c" = 1 ] || echo "cluster $c against 1: $(bin/npycmp --exact $d/logits.cl1.npy $d/logits.cl$c.npy 2>&1)"
done
r=1
while [ $r -le "$rounds" ]; do
	for c in $sizes; do
		echo "round $r, cluster $c: $(DPRT_CUDA_ATTN_CLUSTER=$c $e --in ids=$d/tok.npy \
			--in pos=$d/tokpos.npy --bench 300 | grep -o 'median [0-9.]* us')"
	done
	r=$((r + 1))
done
