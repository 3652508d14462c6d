#!/bin/sh
# attn-device.sh: on the GPU machine after make, what the tensor-core
# attention needs measured, into $OUT: tests/attn.t (every method against
# float64), the kernel's time per method on the models' shapes
# (tests/gpu/attn.c --bench), and bench/gpu.py's DevProc column for
# DeiT-tiny, ViT-B/16 and GPT-2's prefill at batch 1, fp32 and tf32, with
# the SIMT attention and without keys split as variants, and each build's
# --profile summed by op.  Usage: OUT=DIR sh bench/attn-device.sh [gpu.py args]
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/attn-device}
mkdir -p "$OUT"
cuda=$(sed -n 's/^CUDA_HOME = //p' config.mk)
prove -v tests/attn.t >"$OUT/attn.txt" 2>&1
grep -c '^ok  ' "$OUT/attn.txt"; grep 'FAIL\|not ok' "$OUT/attn.txt" | head -20
cc -std=c11 -O2 -Iruntime -I"$cuda/include" tests/gpu/attn.c lib/libdprt_cuda.a lib/libdprt.a \
	-L"$cuda/lib64" -lcublas -lcublasLt -lstdc++ -lcudart_static -ldl -lrt -lpthread -lm \
	-o build/attn-bench && build/attn-bench --bench 200 | tee "$OUT/attn-bench.txt"
PYTHONUNBUFFERED=1 python3 bench/gpu.py --models deit_tiny,vit_b16,gpt2 --batches 1 \
	--modes devproc --precisions fp32,tf32 --runs 200 \
	--variant simt:DPRT_CUDA_ATTN=simt --variant nosplit:DPRT_CUDA_ATTN_SPLIT=0 \
	--profile build/prof --out "$OUT/gpu.md" "$@" >"$OUT/gpu.log" 2>&1
grep -v 'compiled in\|^torch' "$OUT/gpu.log" | tail -c 7000
for f in build/prof/*.txt; do echo "== $f"; cat "$f"; done >"$OUT/prof.txt" 2>/dev/null
