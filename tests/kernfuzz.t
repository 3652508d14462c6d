#!/bin/sh
# kernfuzz.t: the cuda target's fused kernels against the cpu target on
# random programs (TAP).  tests/kernfuzz.pl makes, per seed, a chain of
# elementwise and shape ops (slices with negative bounds and steps,
# selects, permutes, views, expands, cats, gathers, where) whose values are
# read at several indices of one kernel (a slice's halves swapped and
# concatenated, as rotate_half, then multiplied by the value itself); each
# is built for the cpu and for cuda, dp-lower_gpu's .cu compiled for the
# host against the emulator of tests/gpu/emu (a thread per CUDA thread, no
# GPU or nvcc needed), and every output of the two must agree within 1e-6
# relative (the formulas are runtime/dpscalar.h's on both sides); a
# program with one-row products (the GEMV kernel, which sums in its own
# order, which sines of large sums amplify) within 1e-3, and its cuda
# build with the GEMV kernels' tails
# (tune cuda.gemv.tail) to the bit as without them.
# DP_TEST_KERNFUZZ=N checks N seeds (default 40) from DP_TEST_KERNFUZZ_SEED
# (default 1); a failure prints its seed and program, which
# `perl tests/kernfuzz.pl SEED DIR` writes again.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh   # $tmp, n, fails, check, skip
cc=$(sed -n 's/^CC = //p' config.mk 2>/dev/null)
cc=${DP_TEST_CC:-${cc:-cc}}
cxx=${CXX:-c++}
count=${DP_TEST_KERNFUZZ:-40}
first=${DP_TEST_KERNFUZZ_SEED:-1}
command -v perl >/dev/null 2>&1 || { echo "1..0 # SKIP no perl"; exit 0; }
x="-I$root/tests/gpu/emux -I$root/tests/gpu/emu -I$root/runtime"
if ! $cxx -std=c++17 -O1 -ffp-contract=off -w $x -c tests/gpu/emu/emu.cpp -o "$tmp/emu.o" 2>"$tmp/log" ||
	! $cxx -std=c++17 -O1 -ffp-contract=off -w $x -c tests/gpu/emux/emux.cpp -o "$tmp/emux.o" 2>>"$tmp/log"; then
	echo "1..0 # SKIP no C++ compiler for the emulator: $(head -1 "$tmp/log")"
	exit 0
fi

# build DIR TARGET [MAPPING]: DIR/k.ir through the stages for targets/TARGET
# (or MAPPING, for cuda) into DIR/TARGET/k (cuda: its .cu compiled for the
# emulator)
build() {
	bd=$1/$2
	map=${3:-$root/targets/$2}
	mkdir -p "$bd" &&
		"$bin/devproc" parse "$1/k.ir" -o "$bd/1.dpir" &&
		"$bin/dp-legalize" "$bd/1.dpir" -o "$bd/2.dpir" &&
		"$bin/dp-place" "$bd/2.dpir" -t "$map" -o "$bd/3.dpir" &&
		"$bin/dp-partition" "$bd/3.dpir" -o "$bd/4.dpir" &&
		"$bin/dp-lower_cpu" "$bd/4.dpir" -o "$bd/5.cpu.c" &&
		$cc -std=c11 -O1 -I"$root/runtime" -c "$bd/5.cpu.c" -o "$bd/5.cpu.o" || return 1
	if [ "$2" = cpu ]; then
		"$bin/dp-link" "$bd/4.dpir" "$bd/5.cpu.o" --runtime "$root/lib" --cc "$cc" $shared -o "$bd/k"
		return
	fi
	"$bin/dp-lower_gpu" "$bd/4.dpir" -t "$map" -o "$bd/5.gpu.cu" &&
		cp "$bd/5.gpu.cu" "$bd/gpu.cpp" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -include dprt_cuda.h -include emux.h \
			-c "$bd/gpu.cpp" -o "$bd/gpu.o" &&
		"$bin/dp-link" "$bd/4.dpir" "$bd/5.cpu.o" "$bd/gpu.o" "$tmp/emu.o" "$tmp/emux.o" \
			--runtime "$root/lib" --include "$root/runtime" --cc "$cc" $shared -o "$bd/k"
}

# the cuda mapping with the GEMV kernels' tails off
{ cat "$root/targets/cuda"; echo "tune cuda.gemv.tail 0"; } >"$tmp/tail0"

# same SEED: the program of SEED gives the same outputs built for both;
# where it has one-row products (GEMV kernels, their sums in another order
# than the cpu's: 1e-3), the same bits with their tails as without
same() {
	d=$tmp/s$1
	mkdir -p "$d" && perl tests/kernfuzz.pl "$1" "$d" || return 1
	ok=1 tol=1e-6 ts="cpu cuda"
	grep -q ' = aten.linear ' "$d/k.ir" && tol=1e-3 ts="cpu cuda cudat0"
	build "$d" cpu && build "$d" cuda || ok=
	case $ts in *cudat0) build "$d" cudat0 "$tmp/tail0" || ok= ;; esac
	if [ -n "$ok" ]; then
		for t in $ts; do
			# shellcheck disable=SC2046
			"$d/$t/k" $(sed "s#OUT#$d/$t#g" "$d/args") >/dev/null || { ok=; break; }
		done
	fi
	if [ -n "$ok" ]; then
		for o in $(cat "$d/outs"); do
			"$bin/npycmp" --tol $tol "$d/cuda.$o.npy" "$d/cpu.$o.npy" || { echo "output $o differs"; ok=; }
			case $ts in *cudat0)
				"$bin/npycmp" --exact "$d/cuda.$o.npy" "$d/cudat0.$o.npy" ||
					{ echo "output $o differs with tune cuda.gemv.tail 0"; ok=; } ;;
			esac
		done
	fi
	[ -n "$ok" ] && { rm -rf "$d"; return 0; }
	echo "perl tests/kernfuzz.pl $1 DIR writes this program:"
	cat "$d/k.ir"
	return 1
}

s=$first
while [ "$s" -lt $((first + count)) ]; do
	check "seed $s: the program's cuda kernels (emulated) give the cpu build's outputs" same "$s"
	s=$((s + 1))
done
echo "1..$n"
[ $fails -eq 0 ]
