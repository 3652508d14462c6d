#!/bin/sh
# fuzz.t: a smoke run of every libFuzzer harness in fuzz/ (TAP).  Each is
# built with clang (make fuzz-build), replays the inputs that once crashed
# it (fuzz/regress/NAME/), then fuzzes for DP_FUZZ_SECONDS (default 10)
# from its seeds into a scratch corpus, with a fixed random seed
# (DP_FUZZ_SEED, default 1; 0 picks one) so that a failure here replays
# anywhere: a slower machine runs a prefix of the same inputs.  Skipped
# where clang has no libFuzzer.  The long, exploring runs are `make fuzz`
# (fuzz/README.md).  DP_FUZZ_SKIP=REASON skips the fuzzing runs alone
# (.ci/run, for make check SAN=1 after make check: the harnesses are built
# once, the same with or without SAN=1, so a second run with the same seed
# would replay a prefix of the same inputs through the same binaries).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
secs=${DP_FUZZ_SECONDS:-10}
seed=${DP_FUZZ_SEED:-1}
fuzzers="dpir text target dp pt2 npy safetensors tokenizer regex"

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' >"$tmp/t.c"
if ! clang -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" >/dev/null 2>&1; then
	echo "1..1"
	echo "ok 1 - fuzz harnesses # SKIP no clang with libFuzzer"
	exit 0
fi
echo "1..$(($(echo $fuzzers | wc -w) * 4))"
n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	[ -f "$2" ] || return
	# the harness's own message first: a sanitizer's stack alone does not say what broke
	grep -a -m 5 -e '^internal error' -e 'ERROR: ' -e 'runtime error' "$2" | sed 's/^/# /'
	tail -n 30 "$2" | sed 's/^/# /'
}

# the harnesses built by as many compilers as the host has cores
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
make -s -j"$jobs" fuzz-build >"$tmp/build.log" 2>&1
# the fuzzing runs (one process each, $secs s) side by side, as many as the
# host has cores, started here; the loop below reports them in order
fuzzrun() {
	f=$1 h=bin/fuzz-$1
	mkdir -p "$tmp/corpus-$f"
	set -- -seed="$seed" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$tmp/$f-"
	[ -f "fuzz/$f.dict" ] && set -- "$@" -dict="fuzz/$f.dict"
	"$h" "$@" "$tmp/corpus-$f" "fuzz/seeds/$f" >"$tmp/$f.log" 2>&1
	echo $? >"$tmp/$f.rc"
}
running=0
for f in $fuzzers; do
	[ -x "bin/fuzz-$f" ] && [ -z "${DP_FUZZ_SKIP:-}" ] || continue
	if [ $running -ge "$jobs" ]; then wait; running=0; fi
	fuzzrun "$f" &
	running=$((running + 1))
done
wait
for f in $fuzzers; do
	h=bin/fuzz-$f
	if [ -x "$h" ]; then pass "$f: the harness builds"; else fail "$f: the harness builds" "$tmp/build.log"; continue; fi
	# --help: the usage, exit 0 (libFuzzer alone would start fuzzing)
	if "$h" --help >"$tmp/$f.help" 2>&1 && grep -q "^usage: fuzz-$f " "$tmp/$f.help"; then
		pass "$f: --help prints its usage"
	else
		fail "$f: --help prints its usage" "$tmp/$f.help"
	fi
	set --
	[ -d "fuzz/regress/$f" ] && set -- fuzz/regress/"$f"/*
	if [ $# -eq 0 ] || "$h" "$@" >"$tmp/$f.regress" 2>&1; then
		pass "$f: the $# inputs that once crashed it pass"
	else
		fail "$f: the inputs that once crashed it pass" "$tmp/$f.regress"
	fi
	if [ -n "${DP_FUZZ_SKIP:-}" ]; then
		n=$((n + 1)); echo "ok $n - $f: $secs s of fuzzing # SKIP $DP_FUZZ_SKIP"
	elif [ "$(cat "$tmp/$f.rc")" = 0 ]; then
		pass "$f: $secs s of fuzzing, $(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$f.log") executions, no crash"
	else
		fail "$f: $secs s of fuzzing without a crash" "$tmp/$f.log"
		# the crashing input itself, so that a CI log is enough to replay it
		for c in "$tmp/$f-"*; do
			[ -f "$c" ] || continue
			echo "# crashing input $(basename "$c"), $(wc -c <"$c") bytes, base64:"
			head -c 4096 "$c" | base64 | sed 's/^/#   /'
		done
	fi
done
[ $fails -eq 0 ]
