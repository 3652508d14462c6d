#!/bin/sh
# zoo.t: small models of the model zoo (tools/zoo.py: the Hugging Face models
# with small random configs, exported on the GPU machine with their inputs
# and PyTorch's output) built and compared with PyTorch.  tests/zoo/NAME/
# holds the archive, its pipeline, in0.npy and ref.npy.  cpu: built, run,
# max|err|/max|ref| <= 1e-4 (zoo.py's tolerance); cuda: built (nvcc) where
# configure found nvcc, run and compared where a CUDA device is.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
bin=$(pwd)/bin
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)

# runs DIR STEM BUILD: the built program on the case's input against ref.npy
runs() {
	"$3/$2/$2" --in in0="$1/in0.npy" --out out="$tmp/out.npy" &&
		"$bin/npycmp" --tol 1e-4 "$tmp/out.npy" "$1/ref.npy"
}

for d in tests/zoo/*/; do
	d=${d%/}
	name=$(basename "$d")
	dp=$(ls "$d"/*.dp)
	stem=$(basename "$dp" .dp)
	for target in cpu cuda; do
		if [ $target = cuda ] && { [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; }; then
			skip "$name: no nvcc (configure found none): the cuda target is not built"
			continue
		fi
		b=$tmp/$name.$target
		check "$name: builds for $target" "$bin/devproc" build "$dp" --target $target -C "$b"
		if [ ! -x "$b/$stem/$stem" ]; then
			skip "$name: no $target build to run"
		elif [ $target = cuda ] && [ -z "$gpu" ]; then
			skip "no CUDA device"
		else
			check "$name: the $target output matches PyTorch's" runs "$d" "$stem" "$b"
		fi
	done
done

# The cpu target's transformer fusions (lower_cpu/xf.c) on GPT-2's block:
# the 8 ops of its tanh GELU one epilogue of the MLP's first product, the
# addmm products packed linear layers reading [K, N] with the residual adds
# in their epilogues, attention reading the fused projection in place.
c=$tmp/hf_gpt2_train.cpu/m_hf_gpt2_train/5.cpu.c
check "hf_gpt2_train cpu: tanh GELU fused into the linear layer before it" \
	sh -c "grep -c 'dprt_linear_ex_f32(.*DPRT_ACT_GELU_TANH, 1)' '$c' | grep -qx 2 && ! grep -q 'aten.tanh\|aten.pow' '$c'"
check "hf_gpt2_train cpu: residual adds in the epilogues of the projections" \
	sh -c "test \$(grep 'dprt_linear_ex_f32(' '$c' | grep -vc ', NULL, [0-9]*, [0-9]*, [0-9]*, DPRT_ACT') -eq 4"
check "hf_gpt2_train cpu: attention strided, no slice or permute copies" \
	sh -c "grep -c 'dprt_sdpa_strided_f32(' '$c' | grep -qx 2 && ! grep -q 'dprt_permute(' '$c'"
echo "1..$n"
[ $fails -eq 0 ]
