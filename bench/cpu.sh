#!/bin/sh
# cpu.sh: the CPU benchmark (bench/cpu.py) on the GPU machine's host: the
# build from the working tree (tools/device-setup.sh, make), the CPU's
# description, then the benchmark; logs and the table (cpu.md) under $OUT
# (or bench/out).  Usage, from the repository root: sh bench/cpu.sh [ARGS]
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-bench/out}
mkdir -p "$out"
if ! { sh tools/device-setup.sh && make -j16; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	exit 1
fi
lscpu >"$out/lscpu.txt" 2>&1
PYTHONUNBUFFERED=1 python3 bench/cpu.py --out "$out/cpu.md" "$@" 2>&1 | tee "$out/cpu.log" |
	grep -v '^W[0-9]\|Warning\|warn('
