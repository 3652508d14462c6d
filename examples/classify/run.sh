#!/bin/sh
# run.sh: the demo (make demo): builds examples/classify through every stage
# -- for the GPU (targets/cuda) when configure found nvcc and an NVIDIA GPU is
# present, else for the CPU -- runs it on a sample image and checks the label
# against PyTorch's.  TARGET=cpu or TARGET=cuda forces a target.
set -e
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
echo "== devproc build examples/classify/classify.dp --target $target -C $out"
bin/devproc build examples/classify/classify.dp --target "$target" -C "$out"
echo
echo "== $out/classify/classify --in image=examples/classify/image.npy"
"$out/classify/classify" --in image=examples/classify/image.npy
"$out/classify/classify" --in image=examples/classify/image.npy --out label=$out/classify/label.npy >/dev/null
if bin/npycmp --exact $out/classify/label.npy tests/data/classify/label.npy >/dev/null; then
	echo "label equals PyTorch's (tests/data/classify/label.npy), target $target"
else
	echo "label differs from PyTorch's!" >&2
	exit 1
fi
