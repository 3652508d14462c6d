#!/bin/sh
# measure.sh: times DevProc builds of examples/classify (not a test): a cold
# build, no-op rebuilds (ninja alone, and devproc build), and the edits a-d
# of tests/build.t, each with the edges it reran; medians of RUNS runs.
#   sh tests/build/measure.sh [RUNS]      (from the repository root)
cd "$(dirname "$0")/../.." || exit 1
runs=${1:-11}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# a private copy of the DevProc folder: a concurrent make cannot disturb it
mkdir -p "$tmp/dp/bin" "$tmp/dp/lib"
cp -p bin/devproc bin/dp-* "$tmp/dp/bin/" && cp -p lib/libdprt*.a "$tmp/dp/lib/" &&
	cp -pR runtime targets rules.ninja "$tmp/dp/" || exit 1
dp=$tmp/dp/bin/devproc
cp examples/classify/classify.dp examples/classify/mlp.pt2 targets/cpu "$tmp/" || exit 1
mv "$tmp/cpu" "$tmp/map"

# ms COMMAND...: the command's wall time in ms (timed inside perl, so that
# starting perl is not counted); its output goes to $tmp/out
ms() { NINJA_STATUS='@@ ' perl -MTime::HiRes=time -e '$t = time; system(@ARGV) == 0 or exit 1;
	printf "%.1f\n", (time - $t) * 1000' "$@" 2>"$tmp/err" >"$tmp/out.all" || { cat "$tmp/out.all" "$tmp/err" >&2; exit 1; }
	tail -n 1 "$tmp/out.all"; sed '$d' "$tmp/out.all" >"$tmp/out"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
edges() { sed -n 's/^@@ //p' "$tmp/out" | awk '{ p = $2; sub(/\/.*/, "", p); printf "%s%s", sep, $1; sep = ", " }'; }
tick() { sleep 0.05; }

echo "machine: $(nproc) cpus, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); ninja $(ninja --version)"
echo "median of $runs runs each"

: >"$tmp/t"
for i in $(seq "$runs"); do
	rm -rf "$tmp/b"
	ms "$dp" build "$tmp/classify.dp" --target "$tmp/map" -C "$tmp/b" >>"$tmp/t"
done
echo "cold build (devproc build, 7 edges): $(median <"$tmp/t") ms"

for cmd in "ninja -C $tmp/b" "$dp build $tmp/classify.dp --target $tmp/map -C $tmp/b"; do
	: >"$tmp/t"
	for i in $(seq "$runs"); do
		# shellcheck disable=SC2086
		ms $cmd >>"$tmp/t"
	done
	grep -q 'no work to do' "$tmp/out" || { echo "not a no-op: $cmd"; cat "$tmp/out"; exit 1; }
	case $cmd in ninja*) what="ninja -C DIR" ;; *) what="devproc build" ;; esac
	echo "a: no-op, $what: $(median <"$tmp/t") ms (min $(sort -n "$tmp/t" | head -1), max $(sort -n "$tmp/t" | tail -1))"
done

# edit NAME DO UNDO: alternates the edit and its undoing, timing ninja
edit() {
	: >"$tmp/t"
	for i in $(seq "$runs"); do
		tick
		eval "$2"
		ms ninja -C "$tmp/b" >>"$tmp/t"
		[ "$i" = 1 ] && e=$(edges)
		tick
		eval "$3"
		ninja -C "$tmp/b" >"$tmp/undo" 2>&1 || { cat "$tmp/undo" >&2; exit 1; }
	done
	echo "$1: $(median <"$tmp/t") ms; reran: $e"
}
cp "$tmp/classify.dp" "$tmp/dp.orig"
cp "$tmp/map" "$tmp/map.orig"
edit "b: postprocessing edit (new softmax output)" \
	"printf 'probs = softmax(logits, dim=1)\noutput probs\n' >>$tmp/classify.dp" "cp $tmp/dp.orig $tmp/classify.dp"
edit "b: comment-only .dp edit" "printf '# c\n' >>$tmp/classify.dp" "cp $tmp/dp.orig $tmp/classify.dp"
edit "c: mapping edit (op argmax cpu)" "printf 'op argmax cpu\n' >>$tmp/map" "cp $tmp/map.orig $tmp/map"
edit "d: touch mlp.pt2" "touch $tmp/mlp.pt2" "true"
