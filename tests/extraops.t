#!/bin/sh
# extraops.t: training-IR ops that are formulas or that import computes in
# several ops (softplus, threshold, shrinks, frac, logit, std, var_mean
# and std_mean (either result read), logsumexp,
# glu, pixel_(un)shuffle, max/min of all, triu/tril, nan_to_num, lerp,
# logaddexp, cumprod, logcumsumexp, PReLU's kernel, mv and dot, celu,
# log_sigmoid's forward (either result read), addmv, bucketize and
# searchsorted (1-D boundaries), index_add, index_fill, hypot, copysign,
# upsampling along 1 and 3 axes and by scale factors that are
# not integers, adaptive max pooling, im2col) against their definitions:
# tests/extraops.py makes each case from a one-op conformance archive with
# the node changed and computes the reference in float64; the cpu build
# must be within 1e-5 of it (exactly, for *_exact), the cuda build must
# compile (nvcc; run where a GPU is).  Where no GPU is and
# DP_TEST_CUDA_LOWERED=REASON (tests/conformance_cuda.t), the cuda builds
# stop at the generated .cu and .c.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
. tests/tap.sh

py=$(command -v python3) || { echo "1..0 # SKIP no python3"; exit 0; }
check "the cases and their references are made" "$py" tests/extraops.py "$tmp"
# linked against lib/libdprt.so under make check SAN=1 (tests/tap.sh); for
# cuda only where no GPU runs the programs (there, statically, as users'
# programs are)
cshared=$shared
[ -z "$gpu" ] || cshared=
# lower NAME: NAME's cuda build up to 5.gpu.cu and 5.cpu.c
lower() {
	"$bin/devproc" gen "$tmp/$1.dp" --target cuda -C "$tmp/bc$1" &&
		ninja -C "$tmp/bc$1" "$1/5.gpu.cu" "$1/5.cpu.c" &&
		[ -s "$tmp/bc$1/$1/5.gpu.cu" ] && [ -s "$tmp/bc$1/$1/5.cpu.c" ]
}
lowered=
[ -n "$gpu" ] || lowered=${DP_TEST_CUDA_LOWERED:-}
nvcc=
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=yes; fi
for c in softplus std_keep std_dims var_mean_var var_mean_mean std_mean_std std_mean_all \
	logsumexp logsumexp_keep glu pixel_shuffle pixel_unshuffle \
	threshold hardshrink softshrink frac logit_eps max_all min_all triu tril nan_to_num \
	nan_to_num_exact lerp lerp_scalar logaddexp up_nearest1d up_linear1d up_linear1d_al \
	up_nearest3d up_trilinear3d up_bilinear_sf up_nearest_sf up_nearest1d_sf up_trilinear_sf \
	adaptive_max adaptive_max_1 im2col cumprod cumprod_last logcumsumexp prelu mv dot celu log_sigmoid log_sigmoid_buf addmv bucketize bucketize_right searchsorted index_add index_fill hypot_ab copysign_ab histc grouped_mm; do
	ins=$(for f in "$tmp/${c}"_x*.npy; do k=${f##*_x}; printf ' --in in%s=%s' "${k%.npy}" "$f"; done)
	check "$c builds for the cpu" "$bin/devproc" build "$tmp/$c.dp" -C "$tmp/b$c" $shared
	check "$c runs" "$tmp/b$c/$c/$c" $ins --out out="$tmp/${c}_y.npy"
	cmp="--tol 1e-5"
	case $c in *_exact) cmp=--exact ;; esac
	check "$c: within 1e-5 of the definition (${cmp#--})" "$bin/npycmp" $cmp "$tmp/${c}_y.npy" "$tmp/${c}_ref.npy"
	if [ -n "$nvcc" ] && [ -n "$lowered" ]; then
		check "$c lowers for cuda (not compiled or linked here: $lowered)" lower "$c"
		skip "no CUDA device"
		skip "no CUDA device"
	elif [ -n "$nvcc" ]; then
		check "$c builds for cuda" "$bin/devproc" build "$tmp/$c.dp" -C "$tmp/bc$c" --target cuda $cshared
		if [ -n "$gpu" ]; then
			check "$c runs on cuda" "$tmp/bc$c/$c/$c" $ins --out out="$tmp/${c}_g.npy"
			check "$c on cuda: within 1e-5 of the definition (${cmp#--})" "$bin/npycmp" $cmp "$tmp/${c}_g.npy" "$tmp/${c}_ref.npy"
		else
			skip "no CUDA device"
			skip "no CUDA device"
		fi
	else
		skip "no nvcc"
	fi
done
# an index out of range stops index_add's run with the cpu's message, on
# cuda too (the fault flag), where it added nothing before
fails_oob() { # EXE IN1.npy
	"$1" --in in0="$tmp/${c}_x0.npy" --in in1="$2" $3 --out out="$tmp/${c}_ooby.npy" \
		>"$tmp/oob.out" 2>&1
	[ $? -eq 1 ] && grep -q "index 4 is out of range for a dimension of size 4" "$tmp/oob.out" ||
		{ cat "$tmp/oob.out"; false; }
}
for c in index_add; do
	x2=
	[ -f "$tmp/${c}_x2.npy" ] && x2="--in in2=$tmp/${c}_x2.npy"
	check "$c: an index out of range fails the run (cpu)" fails_oob "$tmp/b$c/$c/$c" "$tmp/${c}_oob.npy" "$x2"
	if [ -n "$gpu" ] && [ -n "$nvcc" ]; then
		check "$c: an index out of range fails the run (cuda)" fails_oob "$tmp/bc$c/$c/$c" "$tmp/${c}_oob.npy" "$x2"
	else
		skip "no CUDA device"
	fi
done
echo "1..$n"
[ $fails -eq 0 ]
