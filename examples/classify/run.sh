#!/bin/sh
# run.sh: the demo (make demo): builds examples/classify through every stage
# for the CPU, runs it on a sample image and checks the label against
# PyTorch's.
set -e
cd "$(dirname "$0")/../.."
bin/devproc build examples/classify/classify.dp -C build
echo
echo "== build/classify/classify --in image=examples/classify/image.npy"
build/classify/classify --in image=examples/classify/image.npy
build/classify/classify --in image=examples/classify/image.npy --out label=build/classify/label.npy >/dev/null
if bin/npycmp --exact build/classify/label.npy tests/data/classify/label.npy >/dev/null; then
	echo "label equals PyTorch's (tests/data/classify/label.npy)"
else
	echo "label differs from PyTorch's!" >&2
	exit 1
fi
