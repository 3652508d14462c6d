#!/bin/sh
# convtr.t: transposed convolutions (ConvTranspose1d/2d/3d) against their
# definition.  tests/convtr.py makes archives from three conformance
# archives' weights with the convolution changed into conv_transpose1d/2d/3d
# (groups 2, strides, paddings, output paddings, dilations) and computes
# each output from PyTorch's definition in float64 (each input element
# times the kernel, scattered); the cpu build must be within 1e-5 of it,
# the cuda build must compile (nvcc; run where a GPU is).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh

py=$(command -v python3) || { echo "1..0 # SKIP no python3"; exit 0; }
check "the cases and their references are made" "$py" tests/convtr.py "$tmp"
for c in tr1 tr2 tr3; do
	check "$c builds for the cpu" "$bin/devproc" build "$tmp/$c.dp" -C "$tmp/b$c"
	check "$c runs" "$tmp/b$c/$c/$c" --in in0="$tmp/${c}_x.npy" --out out="$tmp/${c}_y.npy"
	check "$c: within 1e-5 of the definition" "$bin/npycmp" --tol 1e-5 "$tmp/${c}_y.npy" "$tmp/${c}_ref.npy"
	if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
		check "$c builds for cuda" "$bin/devproc" build "$tmp/$c.dp" -C "$tmp/bc$c" --target cuda
		if [ -n "$gpu" ]; then
			check "$c runs on cuda" "$tmp/bc$c/$c/$c" --in in0="$tmp/${c}_x.npy" --out out="$tmp/${c}_g.npy"
			check "$c on cuda: within 1e-5 of the definition" "$bin/npycmp" --tol 1e-5 "$tmp/${c}_g.npy" "$tmp/${c}_ref.npy"
		else
			skip "no CUDA device"
			skip "no CUDA device"
		fi
	else
		skip "no nvcc"
	fi
done
echo "1..$n"
[ $fails -eq 0 ]
