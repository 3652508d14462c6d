#!/bin/sh
# tensor.t: devproc tensor (TAP): .npy files made without numpy, from a
# list of numbers, raw bytes or a PNG/JPEG, equal byte for byte to the ones
# numpy and PIL made (tests/data, examples/); .npy and .npz files shown with
# dtype, shape and statistics worked out by hand; npycmp on .npz members;
# devproc dump of .npy, .npz and .pt2 files; the errors.
cd "$(dirname "$0")/.." || exit 1
dp=$(pwd)/bin/devproc
cmp_=$(pwd)/bin/npycmp
. tests/tap.sh   # $tmp, n, fails, check, skip

# values printed with --all read back with --values into the same bytes as
# numpy's file (u8, and f32 printed with 9 significant digits)
roundtrip() { # FILE DTYPE SHAPE
	"$dp" tensor "$1" --all >"$tmp/all" || return 1
	sed '1,/values:/d' "$tmp/all" >"$tmp/vals"
	"$dp" tensor -o "$tmp/rt.npy" --values @"$tmp/vals" --dtype "$2" --shape "$3" || return 1
	cmp "$tmp/rt.npy" "$1"
}
check "u8 image.npy (numpy's) printed with --all and read back with --values: same bytes" \
	roundtrip examples/classify/image.npy u8 1,32,32,3
check "f32 logits.npy (numpy's) printed with --all and read back with --values: same bytes" \
	roundtrip tests/data/classify/logits.npy f32 '[1,10]'

raw() {
	tail -c 3072 examples/classify/image.npy >"$tmp/raw.bin"
	"$dp" tensor -o "$tmp/raw.npy" --raw "$tmp/raw.bin" --dtype u8 --shape 1,32,32,3 &&
		cmp "$tmp/raw.npy" examples/classify/image.npy
}
check "--raw: image.npy's 3072 data bytes give numpy's file again" raw

values_stdin() {
	printf '1\n2\n3\n' | "$dp" tensor -o "$tmp/s.npy" --values - --dtype i64 &&
		"$dp" tensor "$tmp/s.npy" | grep -qx "$tmp/s.npy: i64\[3\], 3 elements, 24 bytes"
}
check "--values - reads stdin; --shape defaults to [N]" values_stdin

image() { # FILE MEMBER
	"$dp" tensor -o "$tmp/img.npy" --image "$1" || return 1
	"$cmp_" --exact "$tmp/img.npy" tests/data/imagenet_ref.npz:"$2"
}
check "--image photo.png: PIL's pixels (imagenet_ref.npz:photo_png)" image examples/imagenet/photo.png photo_png
check "--image photo.jpg: PIL's pixels (imagenet_ref.npz:photo_jpg)" image examples/imagenet/photo.jpg photo_jpg

crop() {
	"$dp" tensor -o "$tmp/c.npy" --image examples/imagenet/photo.png --resize 256 --crop 224 &&
		"$cmp_" --exact "$tmp/c.npy" tests/data/imagenet_ref.npz:crop_pil || return 1
	# a crop of the whole image: no resampling
	"$dp" tensor -o "$tmp/w.npy" --image examples/imagenet/photo.png --crop 375,500 &&
		"$cmp_" --exact "$tmp/w.npy" tests/data/imagenet_ref.npz:photo_png
}
check "--resize 256 --crop 224: torchvision's Resize(256) + CenterCrop(224) through PIL (imagenet_ref.npz:crop_pil)" crop

image_shape() {
	"$dp" tensor -o "$tmp/r.npy" --image examples/imagenet/photo.png --resize 32,32 \
		--shape 1,32,32,3 || return 1
	"$dp" tensor "$tmp/r.npy" | grep -qx "$tmp/r.npy: u8\[1,32,32,3\], 3072 elements, 3072 bytes" || return 1
	"$dp" tensor -o "$tmp/f.npy" --image examples/imagenet/photo.png --dtype f32 || return 1
	"$dp" tensor "$tmp/f.npy" | grep -q "f32\[375,500,3\], 562500 elements, 2250000 bytes"
}
check "--image with --resize H,W, --shape (a reshape) and --dtype (a conversion)" image_shape

stats() {
	"$dp" tensor -o "$tmp/x.npy" --values '[[1, 4], [2, 3]]' --shape 2,2 || return 1
	"$dp" tensor "$tmp/x.npy" >"$tmp/out" || return 1
	cat >"$tmp/want" <<EOF
$tmp/x.npy: f32[2,2], 4 elements, 16 bytes
  min 1  max 4  mean 2.5  std 1.11803399  nan 0  inf 0
  argmax 1 [0,1]
  values: [1, 4, 2, 3]
EOF
	diff "$tmp/want" "$tmp/out"
}
check "statistics of [[1,4],[2,3]]: min 1, max 4, mean 2.5, std sqrt(1.25), argmax 1 = [0,1]" stats

nonfinite() {
	"$dp" tensor -o "$tmp/nf.npy" --values 'nan inf -1' --dtype f64 || return 1
	"$dp" tensor "$tmp/nf.npy" | grep -q '  min -1  max inf  mean -1  std 0  nan 1  inf 1'
}
check "NaN and Inf are counted, and left out of mean and std" nonfinite

npz() {
	"$dp" tensor tests/data/imagenet_ref.npz >"$tmp/z" || return 1
	grep -qx 'tests/data/imagenet_ref.npz: .npz archive, 9 members' "$tmp/z" &&
		grep -qx 'tests/data/imagenet_ref.npz:photo_png: u8\[375,500,3\], 562500 elements, 562500 bytes' "$tmp/z" &&
		grep -qx 'tests/data/imagenet_ref.npz:pre_pil: f32\[1,3,224,224\], 150528 elements, 602112 bytes' "$tmp/z" &&
		[ "$(grep -c '^  values: ' "$tmp/z")" -eq 9 ]
}
check "an .npz: every member with its dtype, shape and values" npz

npycmp_npz() {
	"$dp" tensor -o "$tmp/p.npy" --image examples/imagenet/photo.png || return 1
	"$cmp_" "$tmp/p.npy" tests/data/imagenet_ref.npz:photo_png.npy || return 1
	! "$cmp_" "$tmp/p.npy" tests/data/imagenet_ref.npz:photo_jpg >"$tmp/o" 2>&1 || return 1
	"$cmp_" "$tmp/p.npy" tests/data/imagenet_ref.npz:nope 2>"$tmp/e"
	[ $? -eq 2 ] || return 1
	grep -q 'imagenet_ref.npz: no such member; its members: photo_png photo_jpg' "$tmp/e" || return 1
	"$cmp_" "$tmp/p.npy" tests/data/imagenet_ref.npz 2>"$tmp/e"
	[ $? -eq 2 ] && grep -q 'name one member as FILE.npz:NAME' "$tmp/e"
}
check "npycmp reads .npz members (NAME or NAME.npy), differs where it should, names the members" npycmp_npz

deflated() {
	python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.write("tests/data/classify/logits.npy", "logits.npy")
    z.write("tests/data/classify/image.npy", "image.npy")' "$tmp/c.npz" || return 1
	"$dp" tensor "$tmp/c.npz" | grep -qx "$tmp/c.npz:image: u8\[1,32,32,3\], 3072 elements, 3072 bytes" &&
		"$cmp_" --exact "$tmp/c.npz:logits" tests/data/classify/logits.npy &&
		"$dp" dump "$tmp/c.npz" | grep -Eq '^  image.npy +3200 +[0-9]+  deflated$'
}
if command -v python3 >/dev/null 2>&1; then
	check "an .npz with deflated members (as numpy.savez_compressed writes; made by Python's zipfile)" deflated
else
	skip "no python3 to write a deflated .npz"
fi

dump() {
	"$dp" dump tests/data/classify/logits.npy | grep -qx 'tests/data/classify/logits.npy: f32\[1,10\], 10 elements, 40 bytes' || return 1
	"$dp" dump examples/classify/mlp.pt2 >"$tmp/d" || return 1
	grep -qx 'examples/classify/mlp.pt2: zip archive, 13 members' "$tmp/d" &&
		grep -Eq '^  mlp/models/model.json +[0-9]+ +[0-9]+  stored$' "$tmp/d" || return 1
	"$dp" dump tests/data/imagenet_ref.npz | grep -q '^tests/data/imagenet_ref.npz:narrow_top5: '
}
check "devproc dump: an .npy's dtype and shape, a .pt2's members, an .npz's members and tensors" dump

err() { # EXPECTED-STDERR ARGS...
	want=$1
	shift
	! "$dp" tensor "$@" >"$tmp/o" 2>"$tmp/e" || return 1
	[ "$(cat "$tmp/e")" = "$want" ] || { echo "got: $(cat "$tmp/e")"; echo "want: $want"; return 1; }
	[ ! -e "$tmp/bad.npy" ] || { echo "left a file"; return 1; }
}
check "error: a value out of the dtype's range" err \
	"devproc: tensor: --values: '300' is not a u8 value (an integer in its range)" \
	-o "$tmp/bad.npy" --values '1 2 300' --dtype u8
check "error: a bad dtype" err \
	"devproc: tensor: --dtype float: not a dtype (u8 i8 i16 i32 i64 f16 f32 f64 bool bf16)" \
	-o "$tmp/bad.npy" --values 1 --dtype float
check "error: a shape of another element count" err \
	"devproc: tensor: --shape [2,2] holds 4 elements, the data [3] 3" \
	-o "$tmp/bad.npy" --values '1 2 3' --shape 2,2
printf 'abc' >"$tmp/three"
check "error: raw bytes of the wrong size" err \
	"$tmp/three: tensor: 3 bytes, but f32[1] takes 4" \
	-o "$tmp/bad.npy" --raw "$tmp/three" --dtype f32 --shape 1
check "error: a file that is no tensor" err \
	"$tmp/three: tensor: not an .npy file (bad magic) (devproc tensor shows .npy, .npz, PNG and JPEG files)" \
	"$tmp/three"
check "error: a missing file" err \
	"$tmp/none.npy: tensor: No such file or directory" \
	"$tmp/none.npy"
check "error: making options without -o" err \
	"devproc: tensor: --image, --raw, --values, --dtype, --shape, --resize and --crop make a file: give -o OUT.npy" \
	--values 1
helps() { "$dp" tensor --help | grep -q '^usage: devproc tensor' && "$dp" --help | grep -q '^  tensor '; }
check "devproc tensor --help, and devproc --help lists tensor" helps
echo "1..$n"
[ $fails -eq 0 ]
