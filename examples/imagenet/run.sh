#!/bin/sh
# run.sh: builds examples/imagenet (make demo-imagenet) -- for the GPU
# (targets/cuda) when configure found nvcc and an NVIDIA GPU is present, else
# for the CPU; TARGET=cpu or TARGET=cuda forces a target -- runs it on an
# image file (default: examples/imagenet/photo.png) and prints the top 5 as
# "rank  class  score" with the class names of labels.txt.
#   examples/imagenet/run.sh [IMAGE.png|IMAGE.jpg]
set -e
img=${1:-examples/imagenet/photo.png}
case $img in /*) ;; *) img=$(pwd)/$img ;; esac
cd "$(dirname "$0")/../.."
target=${TARGET:-}
if [ -z "$target" ]; then
	target=cpu
	if grep -q '^NVCC = .' config.mk &&
		{ [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }; then
		target=cuda
	fi
fi
out=build/$target
echo "== devproc build examples/imagenet/imagenet.dp --target $target -C $out"
bin/devproc build examples/imagenet/imagenet.dp --target "$target" -C "$out"
echo
echo "== $out/imagenet/imagenet --in photo=$img"
res=$("$out/imagenet/imagenet" --in photo="$img") || exit 1
# "classes = [286, 129, ...]" and "scores = [0.00707066, ...]" -> a table
printf '%s\n' "$res" | awk -v labels=examples/imagenet/labels.txt '
	BEGIN { while ((getline l < labels) > 0) name[n++] = l }
	/^classes = \[/ { s = $0; gsub(/^[^[]*\[|\].*$|,/, "", s); nc = split(s, c, " ") }
	/^scores = \[/ { s = $0; gsub(/^[^[]*\[|\].*$|,/, "", s); split(s, p, " ") }
	END {
		printf "%-5s %-6s %-30s %s\n", "rank", "class", "name", "score"
		for (i = 1; i <= nc; i++)
			printf "%-5d %-6d %-30s %.5f\n", i, c[i], name[c[i]], p[i]
	}'
