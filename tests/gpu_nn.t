#!/bin/sh
# gpu_nn.t: the neural-network ops of the cuda target (TAP).  Wherever nvcc
# is: convolution, pooling, bmm/matmul and attention cases and ResNet-18
# (narrow) build for --target cuda, and the ResNet's code shows the plan:
# one partition, each batch norm folded into its convolution at init, each
# residual add and relu in a convolution's epilogue.  Where a CUDA device is
# present too, the cases run under every convolution method
# (DPRT_CUDA_CONV=fp32, tf32, direct) against PyTorch's references (fp32 and
# direct within the case's tolerance, tf32 within 2e-2), the depthwise
# kernel bit for bit against the direct loop (DPRT_CUDA_CONV=direct), split
# K summed in thread-block clusters (DPRT_CUDA_SPLITK=cluster) bit for bit
# against the second kernel's sum, and the 128x128 tile
# (DPRT_CUDA_CONV_TILE=128) with a 1x1 window's 16-byte loads bit for bit
# against the 64x64 one with 4-byte loads (DPRT_CUDA_CONV_VEC=0), K taken
# tap by tap (groups of 16 channels and more) in the 128x128 tile against
# the 64x64 one, and a
# value those two switches do not take is a clear error; elsewhere those
# say "# SKIP no CUDA device".  tools/gpu-nn-check.sh does more, and times.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
ondevice() { if [ -n "$gpu" ]; then check "$@"; else skip "no CUDA device"; fi; }

cases="conv_dw_s2 conv_dw_5x5_dil conv_bn_relu6 conv_dw_hardtanh conv_clamp_min conv_stride conv_dilation conv_groups conv_1x1 conv_tiles conv_1x1_tiles conv_taps conv_taps_groups conv_7x7 conv_depthwise max_pool_pad_ceil
	avg_pool_ceil_divisor adaptive_avg_pool bmm matmul_batched matmul_vec sdpa_causal_rect
	sdpa_bool_mask sdpa_float_mask_scale"
if [ -z "$nvcc" ] || [ ! -f tests/conformance/refs.npz ]; then
	for i in 1 2 3 4 5; do skip "no nvcc or no conformance references"; done
	echo "1..$n"
	exit 0
fi
b=$tmp/b
printf 'input x: f32[1,3,224,224]\ny = model("%s", x)\noutput y\n' \
	"$root/examples/imagenet/resnet18_narrow.pt2" >"$tmp/rn.dp"
dps=
for c in $cases; do dps="$dps tests/conformance/c_$c.dp"; done
check "conv, pool, bmm, matmul, sdpa cases and ResNet-18 (narrow) build for --target cuda" \
	"$bin/devproc" build $dps "$tmp/rn.dp" --target cuda -C "$b"
plan() {
	cu=$b/rn/5.gpu.cu
	"$bin/devproc" dump "$b/rn/4.partition.dpir" >"$tmp/dump" || return 1
	# the input's copy in and the logits' copy out: all else on the device
	[ "$(grep -c '@cpu' "$tmp/dump")" -eq 4 ] || { echo "ops left on the cpu:"; grep '@cpu' "$tmp/dump"; return 1; }
	grep -q '^ \* 1 cuda partition, 23 kernels' "$cu" || { echo "not 23 kernels"; return 1; }
	[ "$(grep -c '^	if (dprt_cuda_convpack(g, &conv' "$cu")" -eq 20 ] || { echo "not 20 packings"; return 1; }
	[ "$(grep -c 'and op [0-9]* (aten.batch_norm) folded' "$cu")" -eq 20 ] || { echo "not 20 folds"; return 1; }
	[ "$(grep -c 'v[0-9]* /\* res \*/, v' "$cu")" -eq 8 ] || { echo "not 8 residual epilogues"; return 1; }
	[ "$(grep -c '^	1,   /\* relu \*/' "$cu")" -eq 17 ] || { echo "not 17 relu epilogues"; return 1; }
	grep -q '^	\([2-9]\|[1-9][0-9][0-9]*\), [0-9]*,   /\* split K' "$cu" || { echo "no split K"; return 1; }
	# each convolution split 2..16 ways: the init check of the clustered sum
	# (more ways: the sum kernel, even with DPRT_CUDA_SPLITK=cluster)
	[ "$(grep -c '^	\([2-9]\|1[0-6]\), [0-9]*,   /\* split K' "$cu")" -eq "$(grep -c '!dprt_cuda_convcl_ok(&conv' "$cu")" ] ||
		{ echo "split-K convolutions without the check of the clustered sum"; return 1; }
	# the convolution kernels are the library's, not in the program's own code
	! grep -q 'mma\.sync\|__global__.*conv' "$cu" || { echo "convolution kernels in the program's .cu"; return 1; }
}
check "ResNet-18's cuda plan: 20 convolutions with their batch norm folded, 8 residual adds and 17 relus in their epilogues" plan
fused() {
	# 5 cases whose convolution is direct (depthwise) or a GEMM; groups in the GEMM
	grep -q '^	[0-9]*, [01], 1,   /\* weight rows, packed, direct' "$b/c_conv_depthwise/5.gpu.cu" &&
		grep -q '^	[0-9]*, [01], 0,   /\* weight rows, packed, direct' "$b/c_conv_groups/5.gpu.cu" &&
		grep -q ', 2,   /\* N, C, H, W, groups' "$b/c_conv_groups/5.gpu.cu" &&
		grep -q '^	16, 1, 0,   /\* weight rows, packed' "$b/c_conv_1x1/5.gpu.cu" &&
		[ "$(grep -c 'dprt_cuda_sdpa(' "$b/c_sdpa_bool_mask/5.gpu.cu")" -eq 1 ] &&
		# ReLU6 after a batch norm, a hardtanh after a depthwise convolution:
		# the clamp in the convolution's epilogue, no kernel of its own (the
		# other kernel reads the input from the staging)
		grep -q '^	0.0f, 6.0f,   /\* the relu.s or clamp.s bounds' "$b/c_conv_bn_relu6/5.gpu.cu" &&
		grep -q '^ \* 1 cuda partition, 2 kernels;' "$b/c_conv_bn_relu6/5.gpu.cu" &&
		grep -q '^	-0.300000012f, 0.400000006f,   /\* the relu.s or clamp.s bounds' \
			"$b/c_conv_dw_hardtanh/5.gpu.cu" &&
		grep -q '^ \* 1 cuda partition, 2 kernels;' "$b/c_conv_dw_hardtanh/5.gpu.cu" &&
		! grep 'DP_LAUNCH(' "$b/c_sdpa_bool_mask/5.gpu.cu" | grep -vq '^	DP_LAUNCH(k[0-9]*_copyin, '
}
check "depthwise takes its own kernel, groups the GEMM; a clamp in the convolution's epilogue; attention is one library call" fused
same() {
	"$bin/devproc" build "$tmp/rn.dp" --target cuda -C "$tmp/again" >/dev/null &&
		cmp "$b/rn/5.gpu.cu" "$tmp/again/rn/5.gpu.cu"
}
check "ResNet-18's 5.gpu.cu is byte-identical from another build folder" same

runall() {
	cc -o "$tmp/npzx" tests/conformance/npzx.c && mkdir -p "$tmp/refs" &&
		"$tmp/npzx" tests/conformance/refs.npz "$tmp/refs" >/dev/null &&
		"$tmp/npzx" tests/conformance/refs_conv.npz "$tmp/refs" >/dev/null &&
		"$tmp/npzx" tests/conformance/refs_tap.npz "$tmp/refs" >/dev/null || return 1
	rc=0
	for c in $cases; do
		dp=tests/conformance/c_$c.dp
		ref=$(sed -n 's/^# ref //p' "$dp")
		tol=$(sed -n 's/^# tol //p' "$dp")
		set --
		for i in $(sed -n 's/^input \([a-z0-9_]*\):.*/\1/p' "$dp"); do
			set -- "$@" --in "$i=$tmp/refs/$ref.$i.npy"
		done
		for mode in fp32 tf32 direct; do
			t=${tol:-1e-5}
			[ $mode = tf32 ] && t=2e-2
			if DPRT_CUDA_CONV=$mode "$b/c_$c/c_$c" "$@" --out "out=$tmp/o.npy" &&
				r=$("$bin/npycmp" --tol "$t" "$tmp/o.npy" "$tmp/refs/$ref.out.npy"); then
				echo "c_$c [$mode]: $r"
			else
				echo "c_$c [$mode]: differs from PyTorch: $r"
				rc=1
			fi
			# depthwise: the kernel of several outputs a thread, the direct loop's bits
			case $mode.$c in fp32.conv_depthwise | fp32.conv_dw_*)
				if DPRT_CUDA_CONV=direct "$b/c_$c/c_$c" "$@" --out "out=$tmp/d.npy" &&
					r=$("$bin/npycmp" --exact "$tmp/o.npy" "$tmp/d.npy"); then
					echo "c_$c [depthwise kernel against DPRT_CUDA_CONV=direct]: $r"
				else
					echo "c_$c [depthwise kernel against DPRT_CUDA_CONV=direct]: differs: $r"
					rc=1
				fi
			esac
			[ $mode = direct ] && continue
			# split K summed in a cluster: the same bits as by the second kernel
			if DPRT_CUDA_CONV=$mode DPRT_CUDA_SPLITK=cluster "$b/c_$c/c_$c" "$@" --out "out=$tmp/s.npy" &&
				r=$("$bin/npycmp" --exact "$tmp/s.npy" "$tmp/o.npy"); then
				echo "c_$c [$mode, DPRT_CUDA_SPLITK=cluster]: $r"
			else
				echo "c_$c [$mode, DPRT_CUDA_SPLITK=cluster]: differs from the second kernel's sum: $r"
				rc=1
			fi
			# the 128x128 tile (batch 32's) with 16-byte loads of a 1x1
			# window's input: the same bits as the 64x64 one with 4-byte loads
			if DPRT_CUDA_CONV=$mode DPRT_CUDA_CONV_TILE=128 "$b/c_$c/c_$c" "$@" --out "out=$tmp/t.npy" &&
				DPRT_CUDA_CONV=$mode DPRT_CUDA_CONV_TILE=64 DPRT_CUDA_CONV_VEC=0 "$b/c_$c/c_$c" "$@" \
					--out "out=$tmp/s.npy" &&
				r=$("$bin/npycmp" --exact "$tmp/t.npy" "$tmp/s.npy"); then
				echo "c_$c [$mode, DPRT_CUDA_CONV_TILE=128]: $r"
			else
				echo "c_$c [$mode, DPRT_CUDA_CONV_TILE=128]: differs from the 64x64 tile's 4-byte loads: $r"
				rc=1
			fi
		done
	done
	return $rc
}
ondevice "the cases on the device, each convolution method, against PyTorch's references" runall
bigtap() {
	# K tap by tap in the 128x128 tile: conv_taps unsplit (a tuning
	# database's split=1; the heuristic splits it), so that the tile can be
	# 128; its bits against the 64x64 tile's, both against PyTorch
	mkdir -p "$tmp/tm" &&
		{ cat targets/cuda; echo "tune cuda.db tune.db"; } >"$tmp/tm/cuda.map" &&
		echo "conv sm_90 1x32x7x6 136x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 bias split=1" >"$tmp/tm/tune.db" &&
		"$bin/devproc" build tests/conformance/c_conv_taps.dp --target "$tmp/tm/cuda.map" \
			-C "$tmp/tb" >/dev/null || return 1
	grep -q '^	1, [0-9]*,   /\* split K' "$tmp/tb/c_conv_taps/5.gpu.cu" || { echo "split"; return 1; }
	for mode in fp32 tf32; do
		t=1e-5
		[ $mode = tf32 ] && t=2e-2
		DPRT_CUDA_CONV=$mode DPRT_CUDA_CONV_TILE=128 "$tmp/tb/c_conv_taps/c_conv_taps" \
			--in "in0=$tmp/refs/conv_taps.in0.npy" --out "out=$tmp/t.npy" >/dev/null &&
			DPRT_CUDA_CONV=$mode DPRT_CUDA_CONV_TILE=64 "$tmp/tb/c_conv_taps/c_conv_taps" \
				--in "in0=$tmp/refs/conv_taps.in0.npy" --out "out=$tmp/s.npy" >/dev/null &&
			"$bin/npycmp" --exact "$tmp/t.npy" "$tmp/s.npy" &&
			"$bin/npycmp" --tol "$t" "$tmp/t.npy" "$tmp/refs/conv_taps.out.npy" || return 1
	done
}
ondevice "K tap by tap in the 128x128 tile: the 64x64 tile's bits, PyTorch's values (fp32, tf32)" bigtap
splitk() {
	# the quarter-width ResNet-18 splits K in most of its convolutions
	"$tmp/npzx" tests/data/imagenet_ref.npz "$tmp/refs" >/dev/null || return 1
	# (the second kernel launched to wait in place, the default, and the
	# ordinary way: DPRT_CUDA_CONV_PDL=0; three runs, the last from the graph)
	for mode in fp32 tf32; do
		DPRT_CUDA_CONV=$mode DPRT_CUDA_SPLITK=cluster "$b/rn/rn" --in "x=$tmp/refs/pre_pil.npy" \
				--out "y=$tmp/c.npy" &&
			DPRT_CUDA_CONV=$mode "$b/rn/rn" --in "x=$tmp/refs/pre_pil.npy" --out "y=$tmp/s%d.npy" \
				--steps 3 >/dev/null &&
			DPRT_CUDA_CONV=$mode DPRT_CUDA_CONV_PDL=0 "$b/rn/rn" --in "x=$tmp/refs/pre_pil.npy" \
				--out "y=$tmp/p.npy" &&
			"$bin/npycmp" --exact "$tmp/s3.npy" "$tmp/c.npy" &&
			"$bin/npycmp" --exact "$tmp/s3.npy" "$tmp/p.npy" || return 1
	done
}
ondevice "ResNet-18 (quarter width): split K summed in clusters and by the second kernel (launched to wait in place, or the ordinary way), the same bits (fp32, tf32)" splitk
badenv() {
	# the convolutions' timing switches: a value they do not take is an error at init
	for v in DPRT_CUDA_CONV_TILE=96 DPRT_CUDA_CONV_VEC=2 DPRT_CUDA_CONV_PDL=2; do
		! env "$v" "$b/c_conv_tiles/c_conv_tiles" --in "in0=$tmp/refs/conv_tiles.in0.npy" \
			--out "out=$tmp/e.npy" 2>"$tmp/err" || return 1
		cat "$tmp/err"
		grep -q "cuda: ${v%=*} is '${v#*=}': expected" "$tmp/err" || return 1
	done
}
ondevice "DPRT_CUDA_CONV_TILE=96, DPRT_CUDA_CONV_VEC=2, DPRT_CUDA_CONV_PDL=2: a clear error" badenv
echo "1..$n"
[ $fails -eq 0 ]
