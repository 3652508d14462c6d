#!/bin/sh
# run-device.sh: everything one call of the GPU machine does, logs under
# $OUT (or bench/out): build from the working tree, the test suite (the GPU
# tests run for real there), a profile of the cuda classify program's
# kernels (ncu, when it works), and the benchmark (bench/bench.py).
# Usage, from the repository root: sh bench/run-device.sh [BENCH ARGS]
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-bench/out}
mkdir -p "$out"
exec 3>&1
say() { echo "== $*" >&3; }

say "setup and build"
{ nvidia-smi -L; nvcc --version | tail -1; python3 -c 'import torch; print("torch", torch.__version__)'; } 2>&1 | tee "$out/env.log" >&3
if ! { sh tools/device-setup.sh && make -j16; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&3
	exit 1
fi

say "make check"
make check >"$out/check.log" 2>&1
echo "make check exit status: $?" >>"$out/check.log"
grep -E '^(not ok|ok .*SKIP|tests/|Result|Files=|make check exit)' "$out/check.log" | grep -v '^ok [0-9]* - ' | tail -60 >&3
grep -E '^(ok|not ok)' "$out/check.log" | grep -c . | sed 's/^/test cases: /' >&3
sed -n '/^tests\/gpu.t/,/^tests\//p' "$out/check.log" | head -40 >&3

say "profile (ncu, kernels of the cuda classify program)"
if [ -x build/bench-prof/classify/classify ] || bin/devproc build examples/classify/classify.dp --target cuda -C build/bench-prof >/dev/null 2>&1; then
	timeout 120 ncu --metrics gpu__time_duration.sum --csv build/bench-prof/classify/classify \
		--in image=examples/classify/image.npy --bench 3 >"$out/ncu.csv" 2>"$out/ncu.err"
	echo "ncu exit status: $?" >>"$out/ncu.err"
	grep -E 'gpu__time_duration' "$out/ncu.csv" | awk -F'","' '{print $5, $(NF)}' | head -30 >&3
	tail -3 "$out/ncu.err" >&3
fi

say "benchmark"
PYTHONUNBUFFERED=1 python3 bench/bench.py "$@" 2>&1 | tee "$out/bench.log" | grep -v '^W' >&3
