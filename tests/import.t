#!/bin/sh
# import.t: golden tests of dp-import (TAP): each tests/import/NAME.dp must
# fail with exit 1, the first stderr line of NAME.err, and no output left;
# archives broken at test time (pt2_NAME.err) likewise; then a few imports
# that must succeed, be deterministic and leave unchanged outputs alone.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
imp=$root/bin/dp-import
dir=tests/import
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ncase=$(ls $dir/*.dp | wc -l)
narch=$(ls $dir/pt2_*.err | wc -l)
echo "1..$((ncase + narch + 9))"

n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l; do printf '%s\n' "$l" | sed 's/^/# /'; done; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# errcase NAME FOLDER DP ERRFILE: runs dp-import on DP from FOLDER.
errcase() {
	out=$tmp/out
	rm -rf "$out"
	mkdir "$out"
	(cd "$2" && "$imp" "$3" -o "$out/x.dpir" -w "$out/w.bin" -d "$out/x.d") >/dev/null 2>"$tmp/stderr"
	rc=$?
	got=$(head -n "$(wc -l <"$4")" "$tmp/stderr")   # the message may be several lines
	want=$(cat "$4")
	left=$(ls -A "$out")
	if [ "$rc" -eq 1 ] && [ "$got" = "$want" ] && [ -z "$left" ]; then
		pass "$1"
	else
		fail "$1" "exit status $rc (want 1)" "got:  $got" "want: $want" "left behind: $left"
	fi
}

for f in $dir/*.dp; do
	name=$(basename "$f" .dp)
	errcase "$name" . "$f" "$dir/$name.err"
done

# broken archives, made from tests/data/mlp_core.pt2 by zpatch (same-length
# byte replacements with the CRC-32s fixed) or head -c
a=$tmp/a
mkdir "$a"
cp $dir/archive.dp.in "$a/pt2.dp"
core=tests/data/mlp_core.pt2
zp=
if ${CC:-cc} -o "$tmp/zpatch" $dir/zpatch.c 2>"$tmp/cc.log"; then
	zp=$tmp/zpatch
fi
for e in $dir/pt2_*.err; do
	name=$(basename "$e" .err)
	rm -f "$a/bad.pt2"
	case $name in
	pt2_truncated) head -c 100000 $core >"$a/bad.pt2" ;;
	*)
		if [ -z "$zp" ]; then
			skip "$name" "cannot compile $dir/zpatch.c"
			continue
		fi
		case $name in
		pt2_unsupported) $zp $core "$a/bad.pt2" aten.relu.default aten.sinc.default \
			aten.permute.default aten.permutx.default ;;
		pt2_schema) $zp $core "$a/bad.pt2" '"major": 8' '"major": 9' ;;
		pt2_symbolic) $zp $core "$a/bad.pt2" \
			'"x": {"dtype": 7, "sizes": [{"as_int": 1}, {"as_int": 3072}], "requires_grad": false,' \
			'"x": {"dtype": 7, "sizes": [{"as_expr": {"expr_str": "s77"}}, {"as_int": 3072}],     ' ;;
		pt2_short_weight) $zp $core "$a/bad.pt2" '"fc1.bias": {"path_name": "weight_1"' \
			'"fc1.bias": {"path_name": "weight_3"' ;;
		*) fail "$name" "no recipe for $name in tests/import.t"; continue ;;
		esac ;;
	esac
	errcase "$name" "$a" pt2.dp "$e"
done

# imports that must succeed
o=$tmp/ok
mkdir "$o"
if "$imp" examples/classify/classify.dp -o "$o/1.import.dpir" -w "$o/weights.bin" -d "$o/1.import.d" 2>"$tmp/stderr" &&
	[ -s "$o/1.import.dpir" ] && [ -s "$o/weights.bin" ] &&
	[ "$(cat "$o/1.import.d")" = "$o/1.import.dpir: examples/classify/mlp.pt2" ]; then
	pass "classify.dp imports"
else
	fail "classify.dp imports" "$(cat "$tmp/stderr")" "depfile: $(cat "$o/1.import.d" 2>/dev/null)"
fi

if [ "$(head -c 4 "$o/weights.bin")" = DPWB ] && [ $(($(wc -c <"$o/weights.bin") % 64)) -eq 0 ]; then
	pass "weight blob has its magic and a size that is a multiple of 64"
else
	fail "weight blob has its magic and a size that is a multiple of 64"
fi

touch "$tmp/stamp"
sleep 1
"$imp" examples/classify/classify.dp -o "$o/1.import.dpir" -w "$o/weights.bin" -d "$o/1.import.d"
newer=$(find "$o" -newer "$tmp/stamp" -type f)
if [ -z "$newer" ]; then
	pass "a second import rewrites nothing"
else
	fail "a second import rewrites nothing" "rewritten: $newer"
fi

mkdir -p "$tmp/elsewhere/x" "$tmp/elsewhere/out"
cp examples/classify/classify.dp examples/classify/mlp.pt2 "$tmp/elsewhere/x/"
(cd "$tmp/elsewhere" && "$imp" x/classify.dp -o out/1.import.dpir -w out/weights.bin)
if cmp -s "$o/1.import.dpir" "$tmp/elsewhere/out/1.import.dpir" &&
	cmp -s "$o/weights.bin" "$tmp/elsewhere/out/weights.bin"; then
	pass "the same pipeline in another folder gives identical bytes"
else
	fail "the same pipeline in another folder gives identical bytes"
fi

mkdir "$tmp/core"
cp $core "$tmp/core/"
printf 'input x: f32[1,3072]\ny = model("mlp_core.pt2", x)\np = softmax(y, dim=-1)\noutput y, p\n' >"$tmp/core/core.dp"
if "$imp" "$tmp/core/core.dp" -o "$tmp/core/1.dpir" -w "$tmp/core/w.bin" 2>"$tmp/stderr" &&
	cmp -s "$tmp/core/w.bin" "$o/weights.bin"; then
	pass "core ATen archive (permute, addmm) imports, to the same weights"
else
	fail "core ATen archive (permute, addmm) imports, to the same weights" "$(cat "$tmp/stderr")"
fi

if [ -x bin/devproc ]; then
	grep -v '^dep "classify.dp"' $dir/classify.ir >"$tmp/want.ir"
	bin/devproc dump "$o/1.import.dpir" 2>&1 | grep -v '^dep "classify.dp"' >"$tmp/got.ir"
	if cmp -s "$tmp/want.ir" "$tmp/got.ir"; then
		pass "classify.dp imports to tests/import/classify.ir"
	else
		fail "classify.dp imports to tests/import/classify.ir" "$(diff "$tmp/want.ir" "$tmp/got.ir" | head -20)"
	fi
else
	skip "classify.dp imports to tests/import/classify.ir" "no bin/devproc to dump IR"
fi

# weights are read where they lie in the mapped archive (stored entries);
# deflated entries go through libzip: both give the same IR and blob, and a
# stored entry's bytes are still checked against its CRC-32
py=$(command -v python3)
mkdir -p "$tmp/z"
cp examples/classify/classify.dp "$tmp/z/"
if [ -n "$py" ] && "$py" - examples/classify/mlp.pt2 "$tmp/z/mlp.pt2" <<'PY'
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as out:
    for i in src.infolist():
        out.writestr(i.filename, src.read(i.filename))
PY
then
	"$imp" "$tmp/z/classify.dp" -o "$tmp/z/1.import.dpir" -w "$tmp/z/weights.bin" 2>"$tmp/stderr"
	if cmp -s "$tmp/z/weights.bin" "$o/weights.bin" &&
		[ "$(bin/devproc dump "$tmp/z/1.import.dpir" | grep -v '^dep ')" = \
		  "$(bin/devproc dump "$o/1.import.dpir" | grep -v '^dep ')" ]; then
		pass "an archive of deflated entries (read through libzip) gives the stored one's IR and blob"
	else
		fail "an archive of deflated entries (read through libzip) gives the stored one's IR and blob" "$(cat "$tmp/stderr")"
	fi
else
	skip "an archive of deflated entries (read through libzip) gives the stored one's IR and blob" "no python3"
fi
mkdir -p "$tmp/crc/out"
cp examples/classify/classify.dp examples/classify/mlp.pt2 "$tmp/crc/"
# a byte inside fc1.weight (the first entry, 6 MB from near offset 0) flipped
printf '\377' | dd of="$tmp/crc/mlp.pt2" bs=1 seek=5000 conv=notrunc 2>/dev/null
(cd "$tmp/crc" && "$imp" classify.dp -o out/1.import.dpir -w out/weights.bin) 2>"$tmp/stderr"
rc=$?
if [ $rc -eq 1 ] && grep -q "^classify.dp:[0-9]*:[0-9]*: import: mlp.pt2: cannot read mlp/data/weights/weight_0: CRC error$" "$tmp/stderr" &&
	[ -z "$(ls -A "$tmp/crc/out")" ]; then
	pass "a stored weight entry whose bytes fail its CRC-32: one error, no output"
else
	fail "a stored weight entry whose bytes fail its CRC-32: one error, no output" "exit status $rc" "$(cat "$tmp/stderr")"
fi

# aten.zero_ (swin_v2's training IR): c_fill_inplace.pt2 (x + x.clone().fill_(3.5),
# made by PyTorch) with its fill_ node rewritten as torch exports x.zero_():
# target aten.zero_.default, the one argument self; it imports as a fill of 0
mkdir -p "$tmp/zero"
if [ -n "$py" ] && "$py" - tests/conformance/c_fill_inplace.pt2 "$tmp/zero/c_zero.pt2" <<'PY'
import json, sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_STORED) as out:
    for i in src.infolist():
        b = src.read(i.filename)
        if i.filename.endswith("models/model.json"):
            m = json.loads(b)
            for n in m["graph_module"]["graph"]["nodes"]:
                if n["target"] == "torch.ops.aten.fill_.Scalar":
                    n["target"] = "torch.ops.aten.zero_.default"
                    n["inputs"] = n["inputs"][:1]
            b = json.dumps(m).encode()
        out.writestr(i.filename, b)
PY
then
	sed 's/c_fill_inplace.pt2/c_zero.pt2/' tests/conformance/c_fill_inplace.dp >"$tmp/zero/c_zero.dp"
	(cd "$tmp/zero" && "$imp" c_zero.dp -o 1.import.dpir -w weights.bin) 2>"$tmp/stderr" &&
		bin/devproc dump "$tmp/zero/1.import.dpir" >"$tmp/zero/dump" 2>>"$tmp/stderr"
	if grep -q '= aten.fill .*value=0' "$tmp/zero/dump" && ! grep -q 'value=3.5' "$tmp/zero/dump"; then
		pass "aten.zero_.default imports as a fill of 0"
	else
		fail "aten.zero_.default imports as a fill of 0" "$(cat "$tmp/stderr" "$tmp/zero/dump" 2>/dev/null)"
	fi
else
	skip "aten.zero_.default imports as a fill of 0" "no python3"
fi
