#!/bin/sh
# layout.t: the blocked activation layout between convolutions (runtime/
# dprt.h, "blocked layout"; lower_cpu's nn_layout): the small CNN, the
# quarter-width ResNet-18 in both export forms and dwnet (MobileNetV2-shaped
# blocks: depthwise convolutions, a residual, 24 channels; its reference an
# independent float64 forward pass, tools/make_dwnet.py) are built, the
# generated code is checked to keep their convolution chains blocked (max
# pool and global average pool included), and each program runs at 1 and 2
# threads in every layout mode against PyTorch's outputs (fp32, max|err| /
# max|ref| <= 1e-5): the default (oneDNN's block where it is loaded, its
# Winograd for 3x3 stride 1), the
# plain layout (DPRT_LAYOUT=plain), our kernels on plain activations
# (DPRT_DNNL=0), and our kernels on blocks of 16 and 8 (DPRT_DNNL=0
# DPRT_LAYOUT=16|8: the convolutions through plain copies, our blocked max
# pool and average pool, with AVX-512 our 1×1 convolutions on the blocks of
# 16), our depthwise kernel on oneDNN's blocks (DPRT_DNNL=conv,linear),
# oneDNN's direct and depthwise convolutions everywhere
# (DPRT_DNNL=conv,dw,dw1,linear,gemm), oneDNN's 1×1 convolutions on its
# blocks (DPRT_DNNL=conv,dw,linear,gemm,wino,pw), and oneDNN on blocks of 8
# (DPRT_LAYOUT=8).  Our kernels on blocks of 16 give the same bits at 1 and
# 3 threads.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
root=$(pwd)
bin=$root/bin
data=$root/tests/data

b=$tmp/b
check "build cnn, resnet18, resnet18_core, dwnet" \
	"$bin/devproc" build "$data/cnn.dp" "$data/resnet18.dp" "$data/resnet18_core.dp" \
	"$data/dwnet.dp" -C "$b"

# the chains are blocked: lay = 3 (x and y blocked) on inner convolutions,
# 2 on the first (its input is the graph's), the blocked pools
for m in resnet18 resnet18_core; do
	check "$m: inner convolutions blocked in and out" grep -q ', 3};$' "$b/$m/5.cpu.c"
	check "$m: the first convolution writes blocks from the plain input" \
		grep -q '{1, 3, 224, 224, .*, 2};$' "$b/$m/5.cpu.c"
	check "$m: blocked max pool and global average pool" \
		sh -c "grep -q dprt_maxpool2d_blk_f32 '$b/$m/5.cpu.c' && grep -q dprt_gap_blk_f32 '$b/$m/5.cpu.c'"
done
check "dwnet: the depthwise convolutions blocked in and out" \
	sh -c "grep -c '{1, 24, .*, 24, {3, 3}, .*, 3};\$' '$b/dwnet/5.cpu.c' | grep -qx 2"
# cnn: conv, pool, conv, pool, then a view: the last pool's result is plain
check "cnn: the pool before the view writes the plain layout" \
	sh -c "grep -c dprt_maxpool2d_blk_f32 '$b/cnn/5.cpu.c' | grep -qx 1 &&
	       grep -q 'dprt_maxpool2d_f32(' '$b/cnn/5.cpu.c'"

mkdir "$tmp/ref"
cc -o "$tmp/npzx" "$root/tests/conformance/npzx.c" && "$tmp/npzx" "$data/imagenet_ref.npz" "$tmp/ref"

# run MODE THREADS NAME IN OUT REF: one program in one mode against PyTorch
run() {
	mode=$1 t=$2 name=$3 in=$4 out=$5 ref=$6
	check "$name, $mode, $t threads: within 1e-5 of PyTorch" sh -c \
		"env $mode '$b/$name/$name' --threads $t --in '$in' --out '$out=$tmp/o.npy' >/dev/null &&
		 '$bin/npycmp' --tol 1e-5 '$tmp/o.npy' '$ref'"
}
for mode in DPRT_LAYOUT=auto DPRT_LAYOUT=plain DPRT_DNNL=0 "DPRT_DNNL=0 DPRT_LAYOUT=16" \
	"DPRT_DNNL=0 DPRT_LAYOUT=8" DPRT_DNNL=conv,linear DPRT_DNNL=conv,dw,dw1,linear,gemm \
	DPRT_DNNL=conv,dw,linear,gemm,wino,pw DPRT_LAYOUT=8; do
	for t in 1 2; do
		run "$mode" $t cnn "x=$data/cnn/in0.npy" y "$data/cnn/out.npy"
		run "$mode" $t dwnet "x=$data/dwnet/in0.npy" y "$data/dwnet/out.npy"
		for m in resnet18 resnet18_core; do
			run "$mode" $t $m "x=$tmp/ref/pre_pil.npy" probs "$tmp/ref/narrow_probs.npy"
		done
	done
done

for m in dwnet resnet18; do
	in="x=$data/dwnet/in0.npy" out=y
	[ $m = dwnet ] || in="x=$tmp/ref/pre_pil.npy" out=probs
	check "$m, DPRT_DNNL=0 DPRT_LAYOUT=16: the same bits at 1 and 3 threads" sh -c \
		"DPRT_DNNL=0 DPRT_LAYOUT=16 '$b/$m/$m' --threads 1 --in '$in' --out '$out=$tmp/t1.npy' >/dev/null &&
		 DPRT_DNNL=0 DPRT_LAYOUT=16 '$b/$m/$m' --threads 3 --in '$in' --out '$out=$tmp/t3.npy' >/dev/null &&
		 cmp '$tmp/t1.npy' '$tmp/t3.npy'"
done

echo "1..$n"
[ $fails -eq 0 ]
