#!/bin/sh
# conformance_cuda.t: the cuda half of conformance.t: every case of
# tests/conformance/ built for --target cuda in one ninja graph (lower_gpu's
# .cu compiled by nvcc, linked), then, per case:
#  - "builds": the executable and 5.gpu.o exist (where no GPU runs them, a
#    case whose .cu and .c are another's, tests/twins.sh, is not compiled
#    or linked again: that one's are), and the placement says how
#    many ops run on cuda and how many stay on the cpu (naming those); an
#    op that has a cuda kernel (the devices column of `devproc ops`) but
#    lands on the cpu through the mapping's default, not through a rule
#    that sends it there on purpose (class image, op ...), fails;
#  - "runs" (where a CUDA device is, detected as gpu.t does): its outputs
#    against PyTorch's, with the tolerances per dtype below (the cases run
#    side by side, a process each, as many as the host has cores);
#    elsewhere "# SKIP no CUDA device";
#  - with DP_TEST_EMULATE=1 (and a C++ compiler), "emulated": the .cu
#    compiled for the host against tests/gpu/emu (one thread per CUDA
#    thread) and its outputs compared the same way, which checks the
#    kernels' index arithmetic where there is no GPU; cases whose kernels
#    use device features the emulator lacks say "# SKIP".
# Tolerances: f32 and f64 outputs max|err|/max|ref| <= the case's "# tol"
# (1e-5 today; cuda's expf, tanhf... are within 2 ulp, the products are
# rounded as the cpu rounds them), integers and bool exactly (bin/npycmp).
# Skips while the references have not been generated, or without nvcc.
# Without a CUDA device the .cu files are compiled in groups, a few nvcc
# calls in all (see unity below; DP_TEST_NVCC_EACH=1 compiles each on its
# own, as ninja does, which a GPU machine does unless DP_TEST_UNITY=1),
# at -O0 on the host side as the dp_nvcc rule (rules.ninja: the kernels
# are the same at any -O).  Each group's object is kept in a cache
# (DP_TEST_NVCC_CACHE, default obj/nvcc-cache; empty: none) under the
# sha256 of every byte nvcc reads from us (the group, its cases' .cu
# files, runtime/'s headers) and nvcc's and g++'s versions: make check
# SAN=1 after make check then compiles only the .cu files that its
# sanitized stages wrote differently from the plain ones.  The stages
# still all run under the sanitizers, and every executable is still
# linked by dp-link; what is not repeated is nvcc (not our code, not
# sanitized) on the same bytes, which gives the same object.
# DP_TEST_CUDA_LOWERED=REASON (.ci/run's make check SAN=1, after the plain
# make check compiled and linked the same programs): where no GPU runs
# them, each case is lowered (every stage, up to 5.gpu.cu and 5.cpu.c) and
# its placement checked, but not compiled or linked; its "builds" line says
# "lowers" and gives REASON.  A GPU, or DP_TEST_EMULATE, builds them whole.
# DP_TEST_ONLY="c_cat c_gelu" checks only the cases it names;
# DP_TEST_TARGET=MAPPING builds them for that mapping instead of cuda (a
# copy of targets/cuda with "tune cuda.mm.tc 1" checks the tensor-core
# product, runtime/cuda/gemm.cu).
cd "$(dirname "$0")/.." || exit 1
# one conformance suite at a time (make check runs test files side by
# side; each holds all its builds at once, about 20 GB under SAN=1)
if [ -z "${DP_CONFORMANCE_LOCKED:-}" ] && command -v flock >/dev/null 2>&1 && mkdir -p obj; then
	DP_CONFORMANCE_LOCKED=1 exec flock obj/.conformance.lock sh tests/conformance_cuda.t "$@"
fi
root=$(pwd)
bin=$root/bin
dir=$root/tests/conformance
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
cxx=${CXX:-c++}
. tests/tap.sh   # $tmp, n, fails, skip, gpu, shared
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }

if [ ! -f "$dir/refs.npz" ] || ! ls "$dir"/*.dp >/dev/null 2>&1; then
	skip "references not generated (run tools/make_conformance.py with PyTorch)"
	echo "1..$n"
	exit 0
fi
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
	skip "no nvcc (configure found none): the cuda target is not built"
	echo "1..$n"
	exit 0
fi
if ! ${DP_TEST_CC:-${CC:-cc}} -o "$tmp/npzx" "$dir/npzx.c" 2>"$tmp/cc.log"; then
	skip "cannot build tests/conformance/npzx.c"
	echo "1..$n"
	exit 0
fi
mkdir "$tmp/refs" "$tmp/out"
unpack() {   # every refs*.npz (refs_nonzero.npz: the nonzero cases)
	for z in "$dir"/refs*.npz; do "$tmp/npzx" "$z" "$tmp/refs" || return 1; done
}
if ! unpack 2>"$tmp/log"; then
	notok "unpack refs.npz"
	sed 's/^/# /' "$tmp/log"
	echo "1..$n"
	exit 1
fi

# under make check SAN=1 where no GPU runs them, linked against
# lib/libdprt.so (tests/tap.sh): 0.3 s a link instead of 0.7; with a GPU,
# statically, as users' programs are
[ -z "$gpu" ] || shared=
emu=
if [ -n "${DP_TEST_EMULATE:-}" ]; then
	if $cxx -std=c++17 -O1 -ffp-contract=off -w -I"$root/tests/gpu/emu" \
		-c "$root/tests/gpu/emu/emu.cpp" -o "$tmp/emu.o" 2>"$tmp/log" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w -I"$root/tests/gpu/emux" -I"$root/tests/gpu/emu" \
			-I"$root/runtime" -c "$root/tests/gpu/emux/emux.cpp" -o "$tmp/emux.o" 2>>"$tmp/log"; then
		emu=yes
	else
		sed 's/^/# emulator: /' "$tmp/log" | head -5
	fi
fi

# lowered only: no GPU to run them, no emulator, and DP_TEST_CUDA_LOWERED
lowered=
if [ -z "$gpu" ] && [ -z "$emu" ] && [ -n "${DP_TEST_CUDA_LOWERED:-}" ]; then
	lowered=$DP_TEST_CUDA_LOWERED
fi

# the ops that have a cuda kernel
"$bin/devproc" ops | awk '$3 ~ /cuda/ { print $1 }' >"$tmp/cudaops"

# the cases: all, or those DP_TEST_ONLY names ("c_cat c_gelu")
cases=
for dp in "$dir"/*.dp; do
	name=${dp##*/}; name=${name%.dp}
	case " ${DP_TEST_ONLY:-$name} " in *" $name "*) cases="$cases $dp" ;; esac
done

# one graph for every pipeline; -k 0 so one failure does not stop the rest
b=$tmp/b
: >"$tmp/twins"
"$bin/devproc" gen $cases --target "${DP_TEST_TARGET:-cuda}" $shared -C "$b" >"$tmp/gen.log" 2>&1 ||
	sed 's/^/# /' "$tmp/gen.log"

# whynot DP: the case built alone, its errors as TAP comments
whynot() {
	w=${1##*/}
	"$bin/devproc" build "$1" --target "${DP_TEST_TARGET:-cuda}" -C "$tmp/one/${w%.dp}" >"$tmp/log" 2>&1
	grep -v '^\[\|^ninja\|^FAILED\|^/.*dp-' "$tmp/log" | sed 's/^/# /' | head -8
}
# twinof NAME: the case whose .cu and .c NAME's are (tests/twins.sh), if any
twinof() { sed -n "s/^$1 //p" "$tmp/twins"; }

# lowerall: every case through the stages, up to 5.gpu.cu and 5.cpu.c
lowerall() {
	tg=
	for dp in $cases; do
		name=${dp##*/}; name=${name%.dp}
		tg="$tg $name/5.gpu.cu $name/5.cpu.c"
	done
	ninja -C "$b" -k 0 $tg >"$tmp/ninja.log" 2>&1
}

# unity: where no GPU is (nothing to run), the cases' .cu files compiled in
# a few nvcc calls rather than one each (most of an nvcc call is reading
# the CUDA headers): every edge but the nvcc and link ones through ninja,
# then groups of cases, each case's .cu included in a namespace of its own
# (its kernels and constants are static; its entry points extern "C", named
# after the case), one object per group that each case of it links as its
# 5.gpu.o; weak stand-ins for the other cases' weight blobs (linked after
# the case's own library, so that its own blob wins) let each link.  A
# group that fails compiles its cases one by one, naming the culprit.
unity() {
	u=$tmp/u
	mkdir -p "$u"
	arch=$(sed -n 's/^cuda_arch = //p' "$b/build.ninja")
	lowerall
	# where nothing runs them, a case whose .cu and .c are another's
	# (tests/twins.sh) is not compiled or linked again
	[ -n "$gpu" ] || [ -n "$emu" ] || sh "$root/tests/twins.sh" "$b" 5.gpu.cu 5.cpu.c >"$tmp/twins"
	tg=
	for dp in $cases; do
		name=${dp##*/}; name=${name%.dp}
		[ -n "$(twinof "$name")" ] || tg="$tg $name/5.cpu.o"
	done
	ninja -C "$b" -k 0 $tg >>"$tmp/ninja.log" 2>&1
	i=0
	: >"$u/weak.c"
	for dp in $cases; do
		name=${dp##*/}; name=${name%.dp}
		[ -z "$(twinof "$name")" ] || continue
		cu=$b/$name/5.gpu.cu
		[ -s "$cu" ] || continue
		if ! grep -q '_gpu_init' "$cu"; then   # no cuda partition: a comment alone
			echo "$name" >>"$u/alone"
			continue
		fi
		grep -q "${name}_weights\[\]" "$cu" &&
			printf 'const unsigned char %s_weights[1] __attribute__((weak));\n' "$name" >>"$u/weak.c"
		g=$u/g$((i / 24))
		if [ ! -f "$g.cu" ]; then
			printf '#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n\n' >"$g.cu"
			printf '#include "dprt_cuda.h"\n#include "dpscalar.h"\n#include "dpops.cuh"\n' >>"$g.cu"
			printf '#include "cuda/reduce.cuh"\n#include "cuda/fault.cuh"\n' >>"$g.cu"
			printf '#include "cuda/pdl.cuh"\n#include "cuda/launch.cuh"\n' >>"$g.cu"
		fi
		printf '\nnamespace case_%s {\n#include "%s"\n}\n' "$name" "$cu" >>"$g.cu"
		echo "$name" >>"$g.list"
		i=$((i + 1))
	done
	${DP_TEST_CC:-${CC:-cc}} -c "$u/weak.c" -o "$u/weak.o" || return
	jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
	# nvcc.sh SRC.cu: SRC.o from the cache or compiled (SRC.log: nvcc's
	# errors); SRC.list names the cases it includes, if a group
	cache=${DP_TEST_NVCC_CACHE-$root/obj/nvcc-cache}
	base=
	if [ -n "$cache" ] && mkdir -p "$cache"; then
		find "$cache" -name '*.o' -mtime +7 -exec rm -f {} + 2>/dev/null
		base=$( { echo "$nvcc -O0 -arch=$arch"; "$nvcc" --version; g++ --version
			find "$root/runtime" \( -name '*.h' -o -name '*.cuh' \) -print | LC_ALL=C sort |
				while read -r h; do echo "$h"; cat "$h"; done; } 2>&1 | sha256sum)
		base=${base%% *}
	else
		cache=
	fi
	export nvcc arch root cache base b
	cat >"$u/nvcc.sh" <<'NVCC'
src=$1 o=${1%.cu}.o
if [ -n "$cache" ]; then
	key=$( { echo "$base"; sed "s|$b/||g" "$src"
		[ -f "${src%.cu}.list" ] && while read -r name; do cat "$b/$name/5.gpu.cu"; done <"${src%.cu}.list"
	} | sha256sum)
	key=$cache/${key%% *}.o
	if [ -s "$key" ] && cp "$key" "$o"; then
		touch "$key"
		echo hit >"${src%.cu}.cache"
		exit 0
	fi
fi
"$nvcc" -O0 -arch="$arch" -I"$root/runtime" -c "$src" -o "$o" 2>"${src%.cu}.log" || exit 1
[ -z "$cache" ] || { cp "$o" "$key.$$" && mv -f "$key.$$" "$key"; }
NVCC
	ls "$u"/g*.cu 2>/dev/null | xargs -n 1 -P "$jobs" sh "$u/nvcc.sh"
	echo "# nvcc: $(ls "$u"/g*.cu 2>/dev/null | wc -l) groups, $(cat "$u"/g*.cache 2>/dev/null | wc -l) from the cache"
	for g in "$u"/g*.cu; do
		[ -f "$g" ] || continue
		g=${g%.cu}
		for name in $(cat "$g.list"); do
			if [ -s "$g.o" ]; then
				ln -f "$g.o" "$b/$name/5.gpu.o"
			else
				echo "$name" >>"$u/alone"
			fi
		done
	done
	for name in $(cat "$u/alone" 2>/dev/null); do
		sh "$u/nvcc.sh" "$b/$name/5.gpu.cu" >>"$tmp/ninja.log" 2>&1 ||
			sed 's/^/  /' "$b/$name/5.gpu.log" >>"$tmp/ninja.log"
	done
	for dp in $cases; do
		name=${dp##*/}; name=${name%.dp}
		[ -s "$b/$name/5.gpu.o" ] && [ -s "$b/$name/5.cpu.o" ] && echo "$name"
	done | shared=$shared xargs -n 1 -P "$jobs" sh -c '"$0/bin/dp-link" "$1/$3/4.partition.dpir" \
		"$1/$3/5.cpu.o" "$1/$3/5.gpu.o" --runtime "$0/lib" --include "$0/runtime" $shared \
		--cc "${DP_TEST_CC:-${CC:-cc}}" --ldflag "$2" -o "$1/$3/$3"' "$root" "$b" "$u/weak.o" \
		>>"$tmp/ninja.log" 2>&1
}
if [ -n "$lowered" ]; then
	lowerall
elif { [ -n "$gpu" ] && [ -z "${DP_TEST_UNITY:-}" ]; } || [ -n "${DP_TEST_NVCC_EACH:-}" ]; then
	ninja -C "$b" -k 0 >"$tmp/ninja.log" 2>&1
else
	unity
fi

# placed NAME: "C on cuda, H on cpu (ops)"; fails for a cuda-capable op
# that the mapping's default left on the cpu
placed() {
	"$bin/devproc" dump "$b/$1/3.place.dpir" >"$tmp/dump" 2>&1 || return 1
	awk -v list="$tmp/cudaops" '
		BEGIN { while ((getline o < list) > 0) can[o] = 1 }
		/^%[0-9]+(, %[0-9]+)* = / {
			op = $0   # the op after "%N = " or "%N, %M = " (a tuple)
			sub(/^[^=]*= /, "", op)
			sub(/ .*/, "", op)
			if (op == "input" || op == "const" || op == "copy")
				next
			if ($0 ~ / @cuda /) { nc++; next }
			nh++
			cpu = cpu (cpu == "" ? "" : ", ") op
			if (can[op] && $0 ~ /default -> cpu"/) { bad = bad " " op }
		}
		END {
			printf "%d op%s on cuda, %d on cpu%s", nc, nc == 1 ? "" : "s", nh,
			       nh ? " (" cpu ")" : ""
			if (bad != "") { printf "; has a cuda kernel but stayed on the cpu:%s", bad; exit 1 }
		}' "$tmp/dump"
}

# one.sh B RES NAME: runs B/NAME/NAME on the case's inputs, its output
# compared with PyTorch's at the case's tolerance; RES/NAME.rc says how it
# went ("run" for a run that failed, "cmp" for outputs that differ, else
# 0), RES/NAME.log what the run or bin/npycmp said
export dir tmp bin   # for one.sh
cat >"$tmp/one.sh" <<'ONE'
b=$1 res=$2 name=$3
dp=$dir/$name.dp
ref=$(sed -n 's/^# ref //p' "$dp")
tol=$(sed -n 's/^# tol //p' "$dp")
set --
for i in $(sed -n 's/^input \([a-z0-9_]*\):.*/\1/p' "$dp"); do
	set -- "$@" --in "$i=$tmp/refs/$ref.$i.npy"
done
if ! "$b/$name/$name" "$@" --out "out=$res/$name.npy" >"$res/$name.log" 2>&1; then
	rc=run
elif "$bin/npycmp" --tol "${tol:-1e-5}" "$res/$name.npy" "$tmp/refs/$ref.out.npy" \
	>"$res/$name.log" 2>&1; then
	rc=0
else
	rc=cmp
fi
echo "$rc" >"$res/$name.rc"
ONE
# on a GPU, every case's run first, side by side (a process each on the
# one device, as many as the host has cores: one after another they take
# about 8 minutes on a 16-core H100 host); the loop below reports them in
# order
if [ -n "$gpu" ]; then
	mkdir "$tmp/res"
	jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
	for dp in $cases; do
		name=${dp##*/}; name=${name%.dp}
		[ -x "$b/$name/$name" ] && echo "$name"
	done | xargs -n 1 -P "$jobs" sh "$tmp/one.sh" "$b" "$tmp/res"
fi

# emulated NAME: the case's .cu run on the host (tests/gpu/emu)
emulated() {
	e=$tmp/emu/$1
	mkdir -p "$e"
	if grep -q 'dprt_cuda_conv(\|dprt_cuda_sdpa(' "$b/$1/5.gpu.cu"; then
		echo "calls the kernel library (runtime/cuda), which the emulator does not build"
		return 2
	fi
	cp "$b/$1/5.gpu.cu" "$e/gpu.cpp"   # compiled whole; DP_LAUNCH: tests/gpu/emu/cuda/launch.cuh
	if ! $cxx -std=c++17 -O1 -ffp-contract=off -w -I"$root/tests/gpu/emux" -I"$root/tests/gpu/emu" \
		-I"$root/runtime" -include dprt_cuda.h -include emux.h -c "$e/gpu.cpp" \
		-o "$e/gpu.o" 2>"$e/cc.log"; then
		echo "uses device features the emulator lacks: $(grep -m1 error "$e/cc.log" |
			sed 's/.*error: //')"
		return 2
	fi
	"$bin/dp-link" "$b/$1/4.partition.dpir" "$b/$1/5.cpu.o" "$e/gpu.o" "$tmp/emu.o" "$tmp/emux.o" \
		--runtime "$root/lib" --include "$root/runtime" --cc "${DP_TEST_CC:-${CC:-cc}}" $shared \
		-o "$e/$1" || return 1
	sh "$tmp/one.sh" "$tmp/emu" "$e" "$1"
	cat "$e/$1.log"
	[ "$(cat "$e/$1.rc")" = 0 ]
}

for dp in $cases; do
	name=${dp##*/}; name=${name%.dp}
	exe=$b/$name/$name
	if [ -n "$lowered" ]; then
		if [ ! -s "$b/$name/5.gpu.cu" ] || [ ! -s "$b/$name/5.cpu.c" ]; then
			notok "$name: does not lower for cuda"
			whynot "$dp"
		elif where=$(placed "$name"); then
			ok "$name: lowers for cuda (not compiled or linked here: $lowered): $where"
		else
			notok "$name: lowers for cuda, but $where"
		fi
		skip "no CUDA device"
		continue
	fi
	twin=$(twinof "$name")
	if [ -n "$twin" ]; then
		if [ ! -x "$b/$twin/$twin" ]; then
			notok "$name: the .cu and .c of $twin, which does not build"
		elif where=$(placed "$name"); then
			ok "$name: builds for cuda: the .cu and .c of $twin, compiled and linked: $where"
		else
			notok "$name: the .cu and .c of $twin, but $where"
		fi
		skip "no CUDA device"
		continue
	fi
	if [ ! -x "$exe" ] || [ ! -s "$b/$name/5.gpu.o" ]; then
		notok "$name: does not build for cuda"
		whynot "$dp"
		skip "no build to run"
		continue
	fi
	if where=$(placed "$name"); then
		ok "$name: builds for cuda (nvcc): $where"
	else
		notok "$name: builds for cuda, but $where"
	fi
	if [ -n "$gpu" ]; then
		case $(cat "$tmp/res/$name.rc" 2>/dev/null) in
		0) ok "$name: runs on cuda: $(cat "$tmp/res/$name.log")" ;;
		cmp) notok "$name: on cuda differs from PyTorch"
			sed 's/^/# /' "$tmp/res/$name.log" | head -8 ;;
		*) notok "$name: does not run on cuda"
			sed 's/^/# /' "$tmp/res/$name.log" 2>/dev/null | head -8 ;;
		esac
	else
		skip "no CUDA device"
	fi
	if [ -n "$emu" ]; then
		emulated "$name" >"$tmp/log" 2>&1
		case $? in
		0) ok "$name: emulated on the host: $(tail -1 "$tmp/log")" ;;
		2) skip "$name: $(tail -1 "$tmp/log")" ;;
		*) notok "$name: emulated on the host, differs or fails"; sed 's/^/# /' "$tmp/log" | head -8 ;;
		esac
	fi
done
echo "1..$n"
[ $fails -eq 0 ]
