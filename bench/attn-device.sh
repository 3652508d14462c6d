#!/bin/sh
# attn-device.sh: on the GPU machine after make, what the tensor-core
# attention needs checked and measured, into $OUT: tests/attn.t (every
# method against float64; GPT-2 and BERT lowered with attention in place)
# and those two zoo models' cuda outputs against PyTorch's, the kernel's
# time per method on the models' shapes (tests/gpu/attn.c --bench), then
# bench/gpu.py for DeiT-tiny, ViT-B/16 and GPT-2's prefill at batch 1, fp32
# and tf32 (the SIMT attention as a variant; each build's --profile summed
# by op).  Usage: OUT=DIR sh bench/attn-device.sh [gpu.py args]
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/attn-device}
mkdir -p "$OUT" build
cuda=$(sed -n 's/^CUDA_HOME = //p' config.mk)
prove -v tests/attn.t >"$OUT/attn.txt" 2>&1
grep -c '^ok  ' "$OUT/attn.txt"; grep 'FAIL\|not ok\|^#' "$OUT/attn.txt" | head -20
for z in hf_gpt2_train hf_bert_train hf_gpt2_core; do
	bin/devproc build tests/zoo/$z/m_$z.dp --target cuda -C build/zoo >/dev/null 2>&1 &&
		build/zoo/m_$z/m_$z --in in0=tests/zoo/$z/in0.npy --out out=build/zoo/$z.npy >/dev/null &&
		echo "$z cuda: $(bin/npycmp --tol 1e-4 build/zoo/$z.npy tests/zoo/$z/ref.npy)" ||
		echo "$z cuda: FAIL"
done
cc -std=c11 -O2 -Iruntime -I"$cuda/include" tests/gpu/attn.c lib/libdprt_cuda.a lib/libdprt.a \
	-L"$cuda/lib64" -lcublas -lcublasLt -lstdc++ -lcudart_static -ldl -lrt -lpthread -lm \
	-o build/attn-bench && build/attn-bench --bench 50 | tee "$OUT/attn-bench.txt"
# DevProc and eager first (cheap), then reduce-overhead as time allows
PYTHONUNBUFFERED=1 python3 bench/gpu.py --models deit_tiny,vit_b16,gpt2 --batches 1 \
	--modes devproc,eager --precisions fp32,tf32 --runs 100 \
	--variant simt:DPRT_CUDA_ATTN=simt \
	--profile build/prof --out "$OUT/gpu.md" "$@" >"$OUT/gpu.log" 2>&1
PYTHONUNBUFFERED=1 timeout ${RO_SECONDS:-200} python3 bench/gpu.py --models deit_tiny,vit_b16,gpt2 \
	--batches 1 --modes ro --precisions fp32,tf32 --runs 100 --out "$OUT/ro.md" >"$OUT/ro.log" 2>&1
grep 'ro:' "$OUT/ro.log"
grep -v 'compiled in\|^torch\||' "$OUT/gpu.log" | tail -c 5000
cat "$OUT/gpu.md"
for f in build/prof/*.txt; do echo "== $f"; cat "$f"; done >"$OUT/prof.txt" 2>/dev/null
