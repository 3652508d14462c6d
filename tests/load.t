#!/bin/sh
# load.t: program instances under load (tests/load/load.c): 8 instances of
# tests/data/cnn.dp run at once from 8 threads, 2500 runs each, with outputs
# equal bit for bit to a lone instance's (itself within 1e-5 of PyTorch's);
# one instance used from two threads at once runs or refuses each call;
# the executable refuses bad --threads, DPRT_THREADS and DPRT_ISA values and
# runs with each kernel set the CPU has.
# make check SAN=1 builds the driver with the sanitizers (DP_TEST_CC).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
cc=${cc:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
runs=${DP_LOAD_RUNS:-2500}

if ! "$root/bin/devproc" build "$root/tests/data/cnn.dp" -C "$tmp/b" >"$tmp/log" 2>&1; then
	echo "not ok 1 - build tests/data/cnn.dp"
	sed 's/^/# /' "$tmp/log" | head -20
	echo "1..1"
	exit 1
fi
if ! $cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -I"$tmp/b/cnn" \
	-I"$root/runtime" "$root/tests/load/load.c" "$tmp/b/cnn/libcnn.a" -lm -lpthread \
	-o "$tmp/load" >"$tmp/log" 2>&1; then
	echo "not ok 1 - compile tests/load/load.c against libcnn.a"
	sed 's/^/# /' "$tmp/log" | head -20
	echo "1..1"
	exit 1
fi
"$tmp/load" "$root/tests/data/cnn/in0.npy" "$root/tests/data/cnn/out.npy" "$runs" >"$tmp/tap"
rc=$?
grep -v '^1\.\.' "$tmp/tap"
n=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/tap")
fails=$(grep -c '^not ok' "$tmp/tap")
[ $rc -eq 0 ] || fails=$((fails + 1))

# the executable's thread and kernel-set requests: errors, exit 1, no output
exe=$tmp/b/cnn/cnn
in=x=$root/tests/data/cnn/in0.npy
refuse() { # description expected-message env/command...
	desc=$1 want=$2
	shift 2
	n=$((n + 1))
	if env "$@" >"$tmp/out" 2>"$tmp/err"; then
		echo "not ok $n - $desc: succeeded"
		fails=$((fails + 1))
	elif [ "$(cat "$tmp/err")" = "$want" ] && [ ! -s "$tmp/out" ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		sed 's/^/# /' "$tmp/err"
		fails=$((fails + 1))
	fi
}
refuse "--threads 0 is refused" "cnn: --threads needs a thread count from 1 to 1024, got '0'" \
	"$exe" --in "$in" --threads 0
refuse "--threads x is refused" "cnn: --threads needs a thread count from 1 to 1024, got 'x'" \
	"$exe" --in "$in" --threads x
refuse "DPRT_THREADS=abc is refused" "cnn: DPRT_THREADS needs a thread count from 1 to 1024, got 'abc'" \
	DPRT_THREADS=abc "$exe" --in "$in"
refuse "an unknown DPRT_ISA is refused" "cnn: DPRT_ISA=sse9: unknown (generic, avx2 or avx512)" \
	DPRT_ISA=sse9 "$exe" --in "$in"
# a kernel set this CPU lacks (only where one is missing), and each one it has
for isa in avx512 avx2 generic; do
	n=$((n + 1))
	if DPRT_ISA=$isa "$exe" --in "$in" --out "y=$tmp/y_$isa.npy" 2>"$tmp/err"; then
		if "$root/bin/npycmp" --tol 1e-5 "$tmp/y_$isa.npy" "$root/tests/data/cnn/out.npy" >"$tmp/cmp"; then
			echo "ok $n - DPRT_ISA=$isa: within 1e-5 of PyTorch's"
		else
			echo "not ok $n - DPRT_ISA=$isa: within 1e-5 of PyTorch's"
			sed 's/^/# /' "$tmp/cmp"
			fails=$((fails + 1))
		fi
	elif grep -q "^cnn: DPRT_ISA=$isa: this CPU does not support $isa (best: [a-z0-9]*)\$" "$tmp/err"; then
		echo "ok $n - DPRT_ISA=$isa: this CPU lacks it, refused with a message"
		sed 's/^/# /' "$tmp/err"
	else
		echo "not ok $n - DPRT_ISA=$isa"
		sed 's/^/# /' "$tmp/err"
		fails=$((fails + 1))
	fi
done
echo "1..$n"
[ $fails -eq 0 ]
