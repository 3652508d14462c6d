#!/bin/sh
# device-check.sh: on the GPU machine, builds DevProc from the working tree
# (tools/device-setup.sh, make) and runs the test files named (all of
# tests/ when none are) under prove, where the GPU halves run for real.
# Logs under $OUT (or bench/out): build.log, check.log; a summary on stdout.
#   sh tools/device-check.sh tests/gpu.t tests/nonzero.t
# DP_TEST_ONLY and the other DP_TEST_ variables pass through to the tests.
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-bench/out}
mkdir -p "$out"
{ nvidia-smi -L; nvcc --version | tail -1; git rev-parse --short HEAD 2>/dev/null; } 2>&1 | tee "$out/env.log"
t0=$(date +%s)
if ! { sh tools/device-setup.sh && make -j"$(nproc)" testprogs; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	exit 1
fi
echo "build: $(($(date +%s) - t0)) s"
[ $# -gt 0 ] || set -- tests/
prove -v "$@" >"$out/check.log" 2>&1
rc=$?
grep -E '^(not ok|ok .*# SKIP)' "$out/check.log" | head -80
grep -E '^(Files=|Result|Failed)' "$out/check.log"
grep -c '^ok' "$out/check.log" | sed 's/^/ok lines: /'
echo "prove exit status: $rc"
exit $rc
