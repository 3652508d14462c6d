#!/bin/sh
# device-check.sh: on the GPU machine, builds DevProc from the working tree
# (tools/device-setup.sh, make) and runs the test files named (all of
# tests/ when none are) under prove, where the GPU halves run for real.
# Logs under $OUT (or bench/out): build.log, check.log; a summary on stdout.
#   sh tools/device-check.sh tests/gpu.t tests/nonzero.t
# DP_TEST_ONLY and the other DP_TEST_ variables pass through to the tests.
# ZOO_DEADLINE=S also runs the model zoo (tools/zoo.py --deadline S, its
# table in $OUT/zoo.md, its log in $OUT/zoo.log) beside the tests, which
# then run at a lower priority (nice 5) so that the zoo has most cores; CONFIGURE
# holds extra ./configure options (e.g. --cuda-archs=90), ZOO_ARGS more
# options of zoo.py (e.g. --time-import vit_b_16); AFTER, a command run
# after the tests, while the zoo may still run (e.g. a benchmark).
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-bench/out}
mkdir -p "$out"
{ nvidia-smi -L; nvcc --version | tail -1; git rev-parse --short HEAD 2>/dev/null; } 2>&1 | tee "$out/env.log"
t0=$(date +%s)
if ! { sh tools/device-setup.sh $CONFIGURE && make -j"$(nproc)" testprogs; } >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	exit 1
fi
echo "build: $(($(date +%s) - t0)) s"
[ $# -gt 0 ] || set -- tests/
nice=
if [ -n "$ZOO_DEADLINE" ]; then
	PYTHONUNBUFFERED=1 python3 tools/zoo.py --deadline "$ZOO_DEADLINE" --out "$out/zoo.md" $ZOO_ARGS \
		>"$out/zoo.log" 2>&1 &
	zoo=$!
	nice="nice -n 5"
fi
$nice prove -v "$@" >"$out/check.log" 2>&1
rc=$?
grep -E '^(not ok|ok .*# SKIP)' "$out/check.log" | head -80
grep -E '^(Files=|Result|Failed)' "$out/check.log"
grep -c '^ok' "$out/check.log" | sed 's/^/ok lines: /'
echo "prove exit status: $rc"
if [ -n "$AFTER" ]; then
	sh -c "$AFTER"
	echo "AFTER exit status: $?"
fi
if [ -n "$ZOO_DEADLINE" ]; then
	wait "$zoo"
	echo "zoo exit status: $?"
	head -3 "$out/zoo.md" 2>/dev/null | cut -c1-600
	grep -E '^\|' "$out/zoo.md" | grep -v '| ok [^|]* | [^|]* | ok ' | head -20
fi
exit $rc
