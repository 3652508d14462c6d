#!/bin/sh
# extraops.t: the training-IR ops import computes in several ops (softplus,
# std, logsumexp, glu, pixel_shuffle, pixel_unshuffle) against their
# definitions: tests/extraops.py makes each case from the conformance
# archive of relu with the node changed and computes the reference in
# float64; the cpu build must be within 1e-5 of it, the cuda build must
# compile (nvcc; run where a GPU is).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh

py=$(command -v python3) || { echo "1..0 # SKIP no python3"; exit 0; }
check "the cases and their references are made" "$py" tests/extraops.py "$tmp"
nvcc=
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=yes; fi
for c in softplus std_keep std_dims logsumexp logsumexp_keep glu pixel_shuffle pixel_unshuffle; do
	check "$c builds for the cpu" "$bin/devproc" build "$tmp/$c.dp" -C "$tmp/b$c"
	check "$c runs" "$tmp/b$c/$c/$c" --in in0="$tmp/${c}_x.npy" --out out="$tmp/${c}_y.npy"
	check "$c: within 1e-5 of the definition" "$bin/npycmp" --tol 1e-5 "$tmp/${c}_y.npy" "$tmp/${c}_ref.npy"
	if [ -n "$nvcc" ]; then
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
