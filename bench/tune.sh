#!/bin/sh
# tune.sh: on the GPU machine, after make: devproc tune on ResNet-50 and
# DeiT-tiny (batch 1, fp32; bench/gpu.py's exports), each database written
# to $OUT, the tuned lowering built twice and compared byte for byte, then
# bench/gpu.py with the databases (DevProc untuned and tuned, PyTorch) and
# GPT-2 prefill and batch 32.  Every step under a time limit, so that what
# was measured comes back.  Usage: OUT=DIR sh bench/tune.sh
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-build/bench-gpu/out}
mkdir -p "$out"
b=build/bench-gpu
timeout 90 python3 bench/gpu.py --export-only --models resnet50,deit_tiny --batches 1 >"$out/export.log" 2>&1
for m in resnet50 deit_tiny; do
	d=$b/${m}_b1
	echo "== devproc tune $m"
	t0=$(date +%s)
	timeout 80 bin/devproc tune "$d/${m}_b1.dp" --target cuda \
		-o "$out/$m.tune" -C "$d/tune" --in "x=$d/in.npy" 2>&1 | tail -9
	echo "devproc tune $m: $(($(date +%s) - t0)) s, $(grep -c '^[a-z]' "$out/$m.tune") entries"
	# the database used, twice, byte-identical .cu
	{ cat targets/cuda; echo "tune cuda.db $(pwd)/$out/$m.tune"; } >"$d/tuned.map"
	for k in 1 2; do
		bin/devproc gen "$d/${m}_b1.dp" --target "$d/tuned.map" -C "$d/det$k" >/dev/null &&
			ninja -C "$d/det$k" "${m}_b1/5.gpu.cu" >/dev/null 2>&1
	done
	cmp "$d/det1/${m}_b1/5.gpu.cu" "$d/det2/${m}_b1/5.gpu.cu" && echo "$m: tuned .cu byte-identical twice"
	echo "$m: tuning database lines used: $(grep -c 'tuning database line' "$d/det1/${m}_b1/5.gpu.cu")"
done
echo "== bench batch 1: untuned and tuned (fp32)"
timeout 70 python3 bench/gpu.py --models resnet50,deit_tiny --batches 1 --modes devproc,eager \
	--precisions fp32 --runs 200 --db resnet50="$out/resnet50.tune" --db deit_tiny="$out/deit_tiny.tune" \
	--out "$out/gpu-tuned.md" >"$out/gpu-tuned.log" 2>&1
grep -E '^\|' "$out/gpu-tuned.md"
echo "== bench GPT-2 prefill, batch 1"
timeout 120 python3 bench/gpu.py --models gpt2 --batches 1 --modes devproc,eager,ro,ma --budget 70 \
	--out "$out/gpu-gpt2.md" >"$out/gpu-gpt2.log" 2>&1
grep -E '^\|' "$out/gpu-gpt2.md"
echo "== bench batch 32 (tf32)"
timeout 80 python3 bench/gpu.py --models resnet50,deit_tiny,gpt2 --batches 32 --modes devproc,eager \
	--precisions tf32 --runs 30 --budget 50 --out "$out/gpu-b32.md" >"$out/gpu-b32.log" 2>&1
grep -E '^\|' "$out/gpu-b32.md"
