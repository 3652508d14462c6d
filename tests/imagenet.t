#!/bin/sh
# imagenet.t: the vision pipeline examples/imagenet (TAP): image files of any
# size decoded as PIL decodes them, torchvision's Resize(256) + CenterCrop(224)
# through PIL, normalize, ResNet-18 (narrow), softmax, top-5, against the
# references of tests/data/imagenet_ref.npz (tools/export_resnet.py).
# Tolerances, with what was measured (libpng 1.6.39, libjpeg-turbo 2.1.5):
#   png decoding       exact (PIL's pixels)
#   jpg decoding       within 1 per channel value (measured: exact)
#   resize + crop      exact against PIL's u8 crop (measured: exact)
#   normalized tensor  1e-6 relative to the largest (measured 1.8e-7: x/255
#                      in torch, x·(1/255) here)
#   probabilities      1e-5 relative to the largest (measured 3.3e-7)
#   top-5 indices      equal
# Bad image files: one line naming the file, exit 1, no output written.
# --target cuda builds where nvcc is; it runs where a CUDA device is.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
ex=$root/examples/imagenet
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
cc=${cc:-cc}
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)

n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; shift
	for f; do [ -f "$f" ] && sed 's/^/# /' "$f"; done
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# check DESCRIPTION COMMAND...: passes when COMMAND exits 0 (output shown on failure)
check() {
	d=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then pass "$d"; else fail "$d" "$tmp/log"; fi
}
# measured DESCRIPTION COMMAND...: as check, and shows npycmp's numbers
measured() {
	d=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then pass "$d ($(head -n 1 "$tmp/log"))"; else fail "$d" "$tmp/log"; fi
}

mkdir "$tmp/ref"
$cc -o "$tmp/npzx" tests/conformance/npzx.c && "$tmp/npzx" tests/data/imagenet_ref.npz "$tmp/ref" ||
	echo "# cannot unpack tests/data/imagenet_ref.npz"

# the example, and two probes: the decoded image (a resize to the image's
# own size filters nothing) and the preprocessing alone
cat >"$tmp/decode.dp" <<'EOF'
input photo: u8[?,?,3]
x = resize(photo, size=[375, 500])
output x
EOF
cat >"$tmp/pre.dp" <<'EOF'
input photo: u8[?,?,3]
x = resize(photo, size=256, crop=224)
t = normalize(x, scale=1/255, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
chw = permute(t, dims=[2, 0, 1])
pre = reshape(chw, shape=[1, 3, 224, 224])
output x
output pre
EOF
b=$tmp/b
check "examples/imagenet/imagenet.dp and the probes build for the cpu" \
	sh -c "'$bin/devproc' build '$ex/imagenet.dp' -C '$b' &&
	       '$bin/devproc' build '$tmp/decode.dp' -C '$b' && '$bin/devproc' build '$tmp/pre.dp' -C '$b'"
prog=$b/imagenet/imagenet

# decoding
check "photo.png decodes to PIL's pixels exactly" \
	sh -c "'$b/decode/decode' --in photo='$ex/photo.png' --out x='$tmp/png.npy' &&
	       '$bin/npycmp' '$tmp/png.npy' '$tmp/ref/photo_png.npy'"
measured "photo.jpg decodes to PIL's pixels within 1" \
	sh -c "'$b/decode/decode' --in photo='$ex/photo.jpg' --out x='$tmp/jpg.npy' &&
	       '$bin/npycmp' --diff 1 '$tmp/jpg.npy' '$tmp/ref/photo_jpg.npy'"

# preprocessing
"$b/pre/pre" --in photo="$ex/photo.png" --out x="$tmp/crop.npy" --out pre="$tmp/pre.npy" \
	>"$tmp/log" 2>&1 || cat "$tmp/log"
check "resize(size=256, crop=224) equals torchvision's Resize(256)+CenterCrop(224) through PIL" \
	"$bin/npycmp" "$tmp/crop.npy" "$tmp/ref/crop_pil.npy"
measured "the normalized NCHW tensor within 1e-6 of torchvision's" \
	"$bin/npycmp" --tol 1e-6 "$tmp/pre.npy" "$tmp/ref/pre_pil.npy"

# the whole pipeline
check "imagenet runs on photo.png" \
	"$prog" --in photo="$ex/photo.png" --out probs="$tmp/probs.npy" --out classes="$tmp/top5.npy"
measured "softmax within 1e-5 of PyTorch's" "$bin/npycmp" --tol 1e-5 "$tmp/probs.npy" "$tmp/ref/narrow_probs.npy"
check "top-5 classes equal PyTorch's" "$bin/npycmp" "$tmp/top5.npy" "$tmp/ref/narrow_top5.npy"
check "photo.jpg and PIL's decoding of it as a .npy give the same probabilities" \
	sh -c "'$prog' --in photo='$ex/photo.jpg' --out probs='$tmp/pj.npy' &&
	       '$prog' --in photo='$tmp/ref/photo_jpg.npy' --out probs='$tmp/pn.npy' &&
	       '$bin/npycmp' --exact '$tmp/pj.npy' '$tmp/pn.npy'"
check "run.sh prints the top 5 with class names" \
	sh -c "TARGET=cpu sh '$ex/run.sh' >'$tmp/run.out' &&
	       grep -q '^1  *286  *cougar  *0\\.0070' '$tmp/run.out' && grep -q '^5  *594 ' '$tmp/run.out'"

# bad image files: expect NAME FILE MESSAGE
head -c 20000 "$ex/photo.png" >"$tmp/cut.png"
head -c 20000 "$ex/photo.jpg" >"$tmp/cut.jpg"
head -c 33 "$ex/photo.png" >"$tmp/header.png"
echo 'not an image' >"$tmp/text.png"
{ printf '\223NUMPY\001\000\166\000'   # a u8 [2,2,4] image: 4 channels
  printf "%-117s\n" "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2, 4), }"
  printf '0123456789abcdef'; } >"$tmp/rgba.npy"
expect() {
	rm -f "$tmp/o.npy"
	"$prog" --in photo="$2" --out probs="$tmp/o.npy" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	printf '%s\n' "$3" >"$tmp/want"
	if [ "$rc" -eq 1 ] && cmp -s "$tmp/want" "$tmp/stderr" && [ ! -e "$tmp/o.npy" ]; then
		pass "$1: a clear error"
	else
		echo "exit $rc; want:" >"$tmp/log"
		cat "$tmp/want" >>"$tmp/log"
		echo "got:" >>"$tmp/log"
		cat "$tmp/stderr" >>"$tmp/log"
		fail "$1: a clear error" "$tmp/log"
	fi
}
cd "$tmp" || exit 1
expect "a truncated PNG" cut.png "imagenet: cut.png: bad or truncated PNG file (Read Error)"
expect "a PNG cut inside its header" header.png "imagenet: header.png: bad or truncated PNG file (Read Error)"
expect "a truncated JPEG" cut.jpg "imagenet: cut.jpg: bad or truncated JPEG file (Premature end of JPEG file)"
expect "not an image" text.png "imagenet: text.png: not a PNG, JPEG or .npy file"
expect "a missing file" none.jpg "imagenet: none.jpg: cannot open: No such file or directory"
expect "a .npy image with 4 channels" rgba.npy \
	"imagenet: rgba.npy: holds u8[2,2,4]; input photo takes an image u8[H,W,3]"
expect "a .npy of floats" ref/pre_pil.npy \
	"imagenet: ref/pre_pil.npy: holds f32[1,3,224,224]; input photo takes an image u8[H,W,3]"
cd "$root" || exit 1

# the cuda target: image ops on the cpu, the model on the GPU
if [ -z "$nvcc" ]; then
	skip "no nvcc"
	skip "no nvcc"
	skip "no nvcc"
else
	c=$tmp/cuda
	check "imagenet builds for --target cuda" "$bin/devproc" build "$ex/imagenet.dp" --target cuda -C "$c"
	check "--target cuda: resize and topk stay on the cpu, the model runs on cuda" \
		sh -c "'$bin/devproc' dump '$c/imagenet/3.place.dpir' >'$tmp/place' &&
		       grep -q '= resize .*@cpu' '$tmp/place' && grep -q '= topk .*@cpu' '$tmp/place' &&
		       grep -q '= aten.convolution .*@cuda' '$tmp/place'"
	if [ -z "${DP_TEST_NO_GPU:-}" ] && command -v nvidia-smi >/dev/null 2>&1 &&
		nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		check "--target cuda: top-5 equal PyTorch's, softmax within 1e-4" \
			sh -c "'$c/imagenet/imagenet' --in photo='$ex/photo.png' --out probs='$tmp/gp.npy' \
			       --out classes='$tmp/g5.npy' && '$bin/npycmp' '$tmp/g5.npy' '$tmp/ref/narrow_top5.npy' &&
			       '$bin/npycmp' --tol 1e-4 '$tmp/gp.npy' '$tmp/ref/narrow_probs.npy'"
	else
		skip "no CUDA device"
	fi
fi

echo "1..$n"
[ $fails -eq 0 ]
