#!/bin/sh
# models.t: real models end to end on the CPU: the vision CNN and the
# Llama-style decoder (tests/data/{cnn,tinylm}.pt2, PyTorch 2.11's default
# training IR) and the same archives after run_decompositions() (Core ATen,
# *_core.pt2, made by tools/decompose.py), and a quarter-width torchvision
# ResNet-18 in both forms (tools/export_resnet.py) are built with
# bin/devproc, run, and compared with PyTorch's outputs: fp32,
# max|err| / max|ref| <= 1e-5.
root=$(pwd)
bin=$root/bin
data=$root/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
check() { # description command...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/log" 2>&1; then
		echo "ok $n - $desc"
		sed -n 's/^max|err|/# max|err|/p' "$tmp/log"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
		sed 's/^/# /' "$tmp/log" | head -20
	fi
}

b=$tmp/b
check "build cnn, cnn_core, tinylm, tinylm_core through every stage" \
	"$bin/devproc" build "$data/cnn.dp" "$data/cnn_core.dp" "$data/tinylm.dp" \
	"$data/tinylm_core.dp" "$data/resnet18.dp" "$data/resnet18_core.dp" -C "$b"

# model input-name reference-folder
for m in cnn:x:cnn cnn_core:x:cnn tinylm:ids:tinylm tinylm_core:ids:tinylm; do
	name=${m%%:*}
	rest=${m#*:}
	in=${rest%%:*}
	ref=$data/${rest#*:}
	out=$(sed -n 's/^output //p' "$data/$name.dp")
	check "$name runs" "$b/$name/$name" --in "$in=$ref/in0.npy" --out "$out=$tmp/$name.npy"
	check "$name: output within 1e-5 of PyTorch's" "$bin/npycmp" --tol 1e-5 "$tmp/$name.npy" "$ref/out.npy"
done

# ResNet-18: the references are in tests/data/imagenet_ref.npz (stored npz)
mkdir "$tmp/ref"
cc -o "$tmp/npzx" "$root/tests/conformance/npzx.c" && "$tmp/npzx" "$data/imagenet_ref.npz" "$tmp/ref"
for name in resnet18 resnet18_core; do
	check "$name runs" "$b/$name/$name" --in "x=$tmp/ref/pre_pil.npy" --out "probs=$tmp/$name.npy"
	check "$name: probabilities within 1e-5 of PyTorch's" \
		"$bin/npycmp" --tol 1e-5 "$tmp/$name.npy" "$tmp/ref/narrow_probs.npy"
done

echo "1..$n"
[ $fails -eq 0 ]
