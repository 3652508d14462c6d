#!/bin/sh
# cuda-tune.sh: writes a tuning database (formats/target.md, "Tuning
# database") for a pipeline's convolutions, measured on this machine's GPU:
# the pipeline is built for --target cuda once per split of K (1, 2, 4, 8,
# 16; every convolution forced to it through a database), each build's
# --profile (CUDA-event time per op, the mean of 20 runs, ROUNDS times)
# gives each convolution's time per split, and each shape gets the split
# whose summed time over the convolutions of that shape is least (the
# smaller split on a tie).  Depthwise convolutions (the direct kernel, no
# split) are left out.  Then point a mapping at the file with
# `tune cuda.db FILE`.
#
# Usage: sh tools/cuda-tune.sh PIPELINE.dp OUT.db --in NAME=FILE.npy ...
#   (the program's inputs, as its executable takes them).  MAPPING=FILE
#   (default targets/cuda) gives the GPU generation of the keys (its
#   `device cuda sm_XX`), ROUNDS=N (default 3) the rounds of --profile;
#   DPRT_CUDA_CONV (fp32 or tf32) is the method timed, as the program will
#   run.  Needs bin/devproc built with nvcc and a CUDA device.  Not yet run
#   on a GPU: lower_gpu's reading of the database is what tests/tune.t
#   checks.
set -u
[ $# -ge 2 ] || { echo "usage: sh tools/cuda-tune.sh PIPELINE.dp OUT.db --in NAME=FILE.npy ..." >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
dp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
shift 2
map=${MAPPING:-$here/targets/cuda}
rounds=${ROUNDS:-3}
name=$(sed -n 's/^pipeline  *\([A-Za-z0-9_]*\).*/\1/p' "$dp" | head -1)
[ -n "$name" ] || name=$(basename "$dp" .dp)
arch=$(sed -n 's/^device  *cuda  *\(sm_[0-9a-z]*\).*/\1/p' "$map" | head -1)
[ -n "$arch" ] || arch=sm_90
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cuda-tune: $*" >&2; exit 1; }

# the mapping, naming a database of ours
grep -v '^tune  *cuda\.db' "$map" >"$tmp/map"
echo "tune cuda.db forced.db" >>"$tmp/map"
: >"$tmp/forced.db"
"$here/bin/devproc" build "$dp" --target "$tmp/map" -C "$tmp/b0" >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log" >&2; fail "the pipeline does not build for cuda"; }
cu=$tmp/b0/$name/5.gpu.cu
[ -f "$cu" ] || fail "no $cu"
# op -> key of each convolution that takes the GEMM (not the direct loop)
awk -v arch="$arch" '
	/^static const dprt_conv conv[0-9]* = \{$/ { on = 1; n = 0; next }
	on { gsub(/\/\*.*\*\//, ""); gsub(/[ \t,]+/, " "); v[++n] = $0 }
	on && n == 5 {
		split(v[1], a, " "); split(v[2], b, " "); split(v[3], c, " "); split(v[4], d, " "); split(v[5], e, " ")
		if (e[3] == 0)   # not direct
			printf "%s conv %s %sx%sx%sx%s %sx%sx%s s%sx%s p%sx%s d%sx%s g%s\n", a[1], arch,
			       b[1], b[2], b[3], b[4], c[1], c[4], c[5], d[1], d[2], d[3], d[4], d[5], d[6], b[5]
		on = 0
	}' "$cu" >"$tmp/convs"
[ -s "$tmp/convs" ] || fail "no convolution to tune in $dp"
cut -d' ' -f2- "$tmp/convs" | sort -u >"$tmp/keys"
echo "cuda-tune: $(wc -l <"$tmp/convs") convolutions, $(wc -l <"$tmp/keys") shapes, $arch" >&2

# each split: the whole program with every convolution at it, profiled
: >"$tmp/times"   # split key us
for s in 1 2 4 8 16; do
	sed "s/\$/ split=$s/" "$tmp/keys" >"$tmp/forced.db"
	"$here/bin/devproc" build "$dp" --target "$tmp/map" -C "$tmp/b0" >"$tmp/log" 2>&1 ||
		{ cat "$tmp/log" >&2; fail "the build with split $s failed"; }
	r=0
	while [ $r -lt "$rounds" ]; do
		"$tmp/b0/$name/$name" "$@" --profile >"$tmp/prof" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; fail "the program does not run (split $s)"; }
		awk '$2 == "cuda" { print $1, $3 }' "$tmp/prof" >"$tmp/ops"
		awk -v s=$s 'NR == FNR { t[$1] = $2; next } ($1 in t) { k = $0; sub(/^[0-9]+ /, "", k); print s, t[$1], k }' \
			"$tmp/ops" "$tmp/convs" >>"$tmp/times"
		r=$((r + 1))
	done
	echo "cuda-tune: split $s measured" >&2
done
# per key and split: the sum over its convolutions, mean over rounds; the least
awk -v rounds="$rounds" '
	{ k = $3; for (i = 4; i <= NF; i++) k = k " " $i; sum[k SUBSEP $1] += $2; keys[k] = 1 }
	END {
		for (k in keys) {
			best = -1
			for (s = 1; s <= 16; s *= 2)
				if ((k SUBSEP s) in sum && (best < 0 || sum[k SUBSEP s] < bt)) {
					best = s; bt = sum[k SUBSEP s]
				}
			printf "%s split=%d\n", k, best
		}
	}' "$tmp/times" | sort >"$tmp/db"
{
	echo "# tuning database written by tools/cuda-tune.sh for $(basename "$dp"),"
	echo "# DPRT_CUDA_CONV=${DPRT_CUDA_CONV:-fp32}, $rounds rounds of --profile, on $(nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//')"
	cat "$tmp/db"
} >"$out" || fail "cannot write $out"
echo "cuda-tune: wrote $out ($(wc -l <"$tmp/db") entries)" >&2
