#!/bin/sh
# conformance.t: every supported op against PyTorch, in both export forms:
# the archives, pipelines and references that tools/make_conformance.py
# writes into tests/conformance/ (NAME.pt2 / NAME_core.pt2, NAME.dp with
# "# ref R" and "# tol T" lines, refs.npz (and refs_*.npz) holding R.in0... and R.out) are
# built in one ninja graph, run, and compared with bin/npycmp: floats to
# max|err| / max|ref| <= T, integers and bool exactly.  Skips while the
# references have not been generated.  DP_TEST_ONLY="c_cat c_gelu" checks
# only the pipelines it names.  A case whose program is another's (the
# same C and weights, the same reference: tests/twins.sh, mostly a Core
# ATen case and its training-IR twin) is lowered, not compiled, linked or
# run again; its line gives its twin's result.
# one conformance suite at a time (make check runs test files side by
# side; each holds all its builds at once, about 20 GB under SAN=1)
cd "$(dirname "$0")/.." || exit 1
if [ -z "${DP_CONFORMANCE_LOCKED:-}" ] && command -v flock >/dev/null 2>&1 && mkdir -p obj; then
	DP_CONFORMANCE_LOCKED=1 exec flock obj/.conformance.lock sh tests/conformance.t "$@"
fi
root=$(pwd)
bin=$root/bin
dir=$root/tests/conformance
# $tmp, n, fails; shared: linked against lib/libdprt.so under make check
# SAN=1 (0.3 s a link instead of 0.7)
. tests/tap.sh

if [ ! -f "$dir/refs.npz" ] || ! ls "$dir"/*.dp >/dev/null 2>&1; then
	echo "ok 1 # SKIP references not generated (run tools/make_conformance.py with PyTorch)"
	echo "1..1"
	exit 0
fi
if ! ${CC:-cc} -o "$tmp/npzx" "$dir/npzx.c" 2>"$tmp/cc.log"; then
	echo "ok 1 # SKIP cannot build tests/conformance/npzx.c"
	echo "1..1"
	exit 0
fi
mkdir "$tmp/refs" "$tmp/out"
unpack() {   # every refs*.npz (refs_nonzero.npz: the nonzero cases)
	for z in "$dir"/refs*.npz; do "$tmp/npzx" "$z" "$tmp/refs" || return 1; done
}
if ! unpack 2>"$tmp/log"; then
	echo "not ok 1 - unpack refs.npz"
	sed 's/^/# /' "$tmp/log"
	echo "1..1"
	exit 1
fi

# one graph for every pipeline; -k 0 so one failure does not stop the rest
b=$tmp/b
set --
for dp in "$dir"/*.dp; do
	name=${dp##*/}; name=${name%.dp}
	case " ${DP_TEST_ONLY:-$name} " in *" $name "*) set -- "$@" "$dp" ;; esac
done
"$bin/devproc" gen "$@" $shared -C "$b" >"$tmp/gen.log" 2>&1 || { sed 's/^/# /' "$tmp/gen.log"; }
# every case's C first, then the programs of those that are no twin's
names() { for dp in "$@"; do name=${dp##*/}; echo "${name%.dp}"; done; }
ninja -C "$b" -k 0 $(names "$@" | sed 's|.*|&/5.cpu.c|') >"$tmp/ninja.log" 2>&1
sh "$root/tests/twins.sh" "$b" 5.cpu.c weights.bin >"$tmp/twins"
ninja -C "$b" -k 0 $(names "$@" | awk -v t="$tmp/twins" '
	BEGIN { while ((getline l < t) > 0) { split(l, w, " "); tw[w[1]] = 1 } }
	!($0 in tw) { print $0 "/" $0 }') >>"$tmp/ninja.log" 2>&1

# run.sh NAME: runs the case's program on its inputs and compares its
# output with PyTorch's at the case's tolerance (its "# ref R", "# tol T"
# and input names read without a process); res/NAME.rc says how it went
# ("run": the run failed, "cmp": the outputs differ, else 0), res/NAME.log
# what the run or bin/npycmp said.  The cases run side by side, as many as
# the host has cores; the loop after reports them in order.
mkdir "$tmp/res"
export tmp bin b
cat >"$tmp/run.sh" <<'RUN'
dp=$1
name=${dp##*/}; name=${name%.dp}
res=$tmp/res/$name
ref= tol= ins=
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	"# ref "*) ref=${line#"# ref "} ;;
	"# tol "*) tol=${line#"# tol "} ;;
	input\ *:*) i=${line#input } i=${i%%:*}
		case $i in *[!a-z0-9_]*) ;; *) ins="$ins $i" ;; esac ;;
	esac
done <"$dp"
exe=$b/$name/$name
[ -x "$exe" ] || exit 0
set --
for i in $ins; do
	set -- "$@" --in "$i=$tmp/refs/$ref.$i.npy"
done
if ! "$exe" "$@" --out "out=$tmp/out/$name.npy" >"$res.log" 2>&1; then
	echo run >"$res.rc"
elif "$bin/npycmp" --tol "${tol:-1e-5}" "$tmp/out/$name.npy" "$tmp/refs/$ref.out.npy" \
	>"$res.log" 2>&1; then
	echo 0 >"$res.rc"
else
	echo cmp >"$res.rc"
fi
RUN
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
for dp in "$@"; do echo "$dp"; done | xargs -n 1 -P "$jobs" sh "$tmp/run.sh"

for dp in "$@"; do
	name=${dp##*/}; name=${name%.dp}
	n=$((n + 1))
	twin=$(sed -n "s/^$name //p" "$tmp/twins")
	if [ -n "$twin" ]; then
		if [ "$(cat "$tmp/res/$twin.rc" 2>/dev/null)" = 0 ]; then
			echo "ok $n - $name: the program of $twin (the same C, weights and reference): $(cat "$tmp/res/$twin.log")"
		else
			echo "not ok $n - $name: the program of $twin, which fails"
			fails=$((fails + 1))
		fi
		continue
	fi
	if [ ! -x "$b/$name/$name" ]; then
		# build it alone to show why
		"$bin/devproc" build "$dp" -C "$tmp/one" >"$tmp/log" 2>&1
		echo "not ok $n - $name: does not build"
		grep -v '^\[\|^ninja\|^FAILED\|^/.*dp-' "$tmp/log" | sed 's/^/# /' | head -8
		fails=$((fails + 1))
		continue
	fi
	case $(cat "$tmp/res/$name.rc" 2>/dev/null) in
	0) echo "ok $n - $name: $(cat "$tmp/res/$name.log")" ;;
	cmp) echo "not ok $n - $name: differs from PyTorch"
		sed 's/^/# /' "$tmp/res/$name.log" | head -8
		fails=$((fails + 1)) ;;
	*) echo "not ok $n - $name: does not run"
		sed 's/^/# /' "$tmp/res/$name.log" 2>/dev/null | head -8
		fails=$((fails + 1)) ;;
	esac
done
echo "1..$n"
[ $fails -eq 0 ]
