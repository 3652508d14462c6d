#!/bin/sh
# conformance.t: every supported op against PyTorch, in both export forms:
# the archives, pipelines and references that tools/make_conformance.py
# writes into tests/conformance/ (NAME.pt2 / NAME_core.pt2, NAME.dp with
# "# ref R" and "# tol T" lines, refs.npz (and refs_*.npz) holding R.in0... and R.out) are
# built in one ninja graph, run, and compared with bin/npycmp: floats to
# max|err| / max|ref| <= T, integers and bool exactly.  Skips while the
# references have not been generated.  DP_TEST_ONLY="c_cat c_gelu" checks
# only the pipelines it names.
# one conformance suite at a time (make check runs test files side by
# side; each holds all its builds at once, about 20 GB under SAN=1)
if [ -z "${DP_CONFORMANCE_LOCKED:-}" ] && command -v flock >/dev/null 2>&1 && mkdir -p obj; then
	DP_CONFORMANCE_LOCKED=1 exec flock obj/.conformance.lock sh "$0" "$@"
fi
root=$(pwd)
bin=$root/bin
dir=$root/tests/conformance
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
n=0
fails=0
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
"$bin/devproc" gen "$@" -C "$b" >"$tmp/gen.log" 2>&1 || { sed 's/^/# /' "$tmp/gen.log"; }
ninja -C "$b" -k 0 >"$tmp/ninja.log" 2>&1

for dp in "$@"; do
	name=${dp##*/}; name=${name%.dp}
	ref= tol= ins=   # its "# ref R", "# tol T" and input names, read without a process
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		"# ref "*) ref=${line#"# ref "} ;;
		"# tol "*) tol=${line#"# tol "} ;;
		input\ *:*) i=${line#input } i=${i%%:*}
			case $i in *[!a-z0-9_]*) ;; *) ins="$ins $i" ;; esac ;;
		esac
	done <"$dp"
	n=$((n + 1))
	exe=$b/$name/$name
	if [ ! -x "$exe" ]; then
		# build it alone to show why
		"$bin/devproc" build "$dp" -C "$tmp/one" >"$tmp/log" 2>&1
		echo "not ok $n - $name: does not build"
		grep -v '^\[\|^ninja\|^FAILED\|^/.*dp-' "$tmp/log" | sed 's/^/# /' | head -8
		fails=$((fails + 1))
		continue
	fi
	set --
	for i in $ins; do
		set -- "$@" --in "$i=$tmp/refs/$ref.$i.npy"
	done
	if ! "$exe" "$@" --out "out=$tmp/out/$name.npy" >"$tmp/log" 2>&1; then
		echo "not ok $n - $name: does not run"
		sed 's/^/# /' "$tmp/log" | head -8
		fails=$((fails + 1))
		continue
	fi
	if "$bin/npycmp" --tol "${tol:-1e-5}" "$tmp/out/$name.npy" "$tmp/refs/$ref.out.npy" >"$tmp/log" 2>&1; then
		echo "ok $n - $name: $(cat "$tmp/log")"
	else
		echo "not ok $n - $name: differs from PyTorch"
		sed 's/^/# /' "$tmp/log" | head -8
		fails=$((fails + 1))
	fi
done
echo "1..$n"
[ $fails -eq 0 ]
