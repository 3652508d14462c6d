#!/bin/sh
# entry.t: a program with entry points (formats/dp.md, "Entries").  kv.dp
# below declares the KV-cache block of tools/export_kvcache.py twice, as
# exported by PyTorch for 2 tokens a call (kv_copy.pt2: entry prefill) and
# for 1 (kv_decode.pt2: entry decode), from the same module: their weights
# (equal bytes under equal names) are stored once, the caches (buffers both
# write) are one state of the instance.  Checked against PyTorch: prefill
# on x1 at positions [0, 1] gives y1; decode then on the first token of x2
# at position 2 gives the first row of y2 (PyTorch's second call, on x2 at
# [2, 3]: causal, so its first row sees positions 0..2 only), through the
# C API; a decode without the prefill differs, and after NAME_reset the
# pair again equals PyTorch's.  Then the executable's --entry, the blob's
# size (that of kv_copy alone), and the errors: a value of another entry,
# a state starting from other bytes, statements before the first entry.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
d=$tmp/kv
r=tests/data/kvcache/kv_copy
mkdir -p "$d"
cp tests/data/kvcache/kv_copy.pt2 tests/data/kvcache/kv_decode.pt2 examples/classify/mlp.pt2 \
	fuzz/seeds/pt2/core.pt2 "$d/"
cat >"$d/kv.dp" <<'DP'
# kv.dp: a prefill entry (2 tokens a run) and a decode entry (1 token)
entry prefill
input x: f32[1,2,32]
input pos: i64[2]
y = model("kv_copy.pt2", x, pos)
output y

entry decode
input xd: f32[1,1,32]
input posd: i64[1]
yd = model("kv_decode.pt2", xd, posd)
output yd
DP
printf 'input x: f32[1,2,32]\ninput pos: i64[2]\ny = model("kv_copy.pt2", x, pos)\noutput y\n' >"$d/one.dp"
check "a program of two entries builds" bin/devproc build "$d/kv.dp" "$d/one.dp" -C "$d/b"

blob() {
	a=$(wc -c <"$d/b/kv/weights.bin") && o=$(wc -c <"$d/b/one/weights.bin") && echo "$a $o" && [ "$a" -eq "$o" ]
}
check "the blob holds the shared weights and initial state once (kv_copy's alone)" blob
onestate() {
	bin/devproc dump "$d/b/kv/1.import.dpir" >"$tmp/dump" &&
		[ "$(grep -c 'state=1' "$tmp/dump")" -eq 2 ] && [ "$(grep -c '= assign ' "$tmp/dump")" -eq 4 ]
}
check "one state: two state consts, each entry assigning both" onestate

capi() {
	cat >"$tmp/app.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "kv.h"
/* argv: x1 pos1 x2 y1 y2 (.npy): prefill(x1, pos1) against y1, decode(x2's
 * first token, 2) against y2's first row (1e-5 of max|ref|); a fresh decode
 * differs; after kv_reset the pair again. */
static void
load(const char *f, void *buf, size_t n)
{
	unsigned char h[10];
	FILE *p = fopen(f, "rb");

	if (!p || fread(h, 1, 10, p) != 10 || fseek(p, 10 + h[8] + 256 * h[9], SEEK_SET) ||
	    fread(buf, 1, n, p) != n)
		printf("cannot read %s\n", f);
	if (p)
		fclose(p);
}

static double
rel(const float *a, const float *b, int n)
{
	double e = 0, m = 0;

	for (int i = 0; i < n; i++) {
		e = fmax(e, fabs((double)a[i] - b[i]));
		m = fmax(m, fabs((double)b[i]));
	}
	return e / m;
}

static int
pair(kv *m, float *x1, int64_t *p1, float *x2, float *y1r, float *y2r)
{
	float y[64], yd[32];
	int64_t p2 = 2;

	if (kv_prefill(m, x1, p1, y) || kv_decode(m, x2, &p2, yd))
		return printf("%s\n", kv_error(m)), 0;
	printf("prefill %g decode %g\n", rel(y, y1r, 64), rel(yd, y2r, 32));
	return rel(y, y1r, 64) <= 1e-5 && rel(yd, y2r, 32) <= 1e-5;
}

int
main(int argc, char **argv)
{
	float x1[64], x2[64], y1[64], y2[64], yd[32];
	int64_t p1[2], p2 = 2;
	kv *m = kv_create(), *f = kv_create();
	int ok;

	(void)argc;
	load(argv[1], x1, sizeof x1), load(argv[2], p1, sizeof p1), load(argv[3], x2, sizeof x2);
	load(argv[4], y1, sizeof y1), load(argv[5], y2, sizeof y2);
	ok = pair(m, x1, p1, x2, y1, y2);
	if (kv_decode(f, x2, &p2, yd))
		return printf("%s\n", kv_error(f)), 1;
	printf("decode alone %g\n", rel(yd, y2, 32));
	ok = ok && rel(yd, y2, 32) > 1e-3;
	kv_reset(m);
	ok = ok && pair(m, x1, p1, x2, y1, y2);
	puts(ok ? "equal" : "differ");
	kv_destroy(m);
	kv_destroy(f);
	return 0;
}
C
	$cc -std=c11 -I"$d/b/kv" "$tmp/app.c" "$d/b/kv/libkv.a" -lm -lpthread -o "$tmp/app" &&
		"$tmp/app" "$r/x1.npy" "$r/pos1.npy" "$r/x2.npy" "$r/y1.npy" "$r/y2.npy" >"$tmp/out"
	cat "$tmp/out"
	[ "$(tail -1 "$tmp/out")" = equal ]
}
check "C API: kv_prefill then kv_decode equal PyTorch's (1e-5), state shared, kv_reset" capi
header() {
	grep -q '^int kv_prefill(kv \*m,$' "$d/b/kv/kv.h" && grep -q '^int kv_decode(kv \*m,$' "$d/b/kv/kv.h" &&
		! grep -q '^int kv_run' "$d/b/kv/kv.h" && grep -q 'Runs entry decode once' "$d/b/kv/kv.h"
}
check "the header declares one function per entry, documented" header

exe() {
	"$d/b/kv/kv" --in x="$r/x1.npy" --in pos="$r/pos1.npy" --out y="$tmp/y1.npy" &&
		bin/npycmp "$tmp/y1.npy" "$r/y1.npy" &&
		"$d/b/kv/kv" --entry prefill --steps 2 --in x="$r/x1.npy" --in x="$r/x2.npy" \
			--in pos="$r/pos1.npy" --in pos="$r/pos2.npy" --out y="$tmp/s%d.npy" >/dev/null &&
		bin/npycmp "$tmp/s1.npy" "$r/y1.npy" && bin/npycmp "$tmp/s2.npy" "$r/y2.npy"
}
check "executable: the first entry by default, --entry prefill with --steps 2 equals PyTorch's two calls" exe
badentry() {
	! "$d/b/kv/kv" --entry nope 2>"$tmp/err" && cat "$tmp/err" &&
		grep -q '^kv: --entry nope: no such entry' "$tmp/err" &&
		! "$d/b/kv/kv" --entry decode --in xd="$r/x1.npy" 2>"$tmp/err" && cat "$tmp/err" &&
		grep -q '^kv: missing --in posd' "$tmp/err"
}
check "executable: an unknown --entry, a missing input of the entry" badentry
otherio() {
	! "$d/b/kv/kv" --in x="$r/x1.npy" --in pos="$r/pos1.npy" --in xd="$r/x1.npy" 2>"$tmp/err" &&
		cat "$tmp/err" && grep -q '^kv: --in xd: not an input of entry prefill (see --entry)$' "$tmp/err" &&
		"$d/b/kv/kv" --help >"$tmp/help" && grep -q '^  prefill: x pos -> y$' "$tmp/help" &&
		grep -q '^  decode: xd posd -> yd$' "$tmp/help"
}
check "executable: another entry's --in is refused; --help lists the entries" otherio

fails() { # DP WANT: importing DP fails with WANT on its first line
	printf '%s\n' "$1" >"$d/bad.dp"
	! bin/dp-import "$d/bad.dp" -o "$d/bad.dpir" -w "$d/bad.bin" 2>"$tmp/err" || return 1
	cat "$tmp/err"
	[ "$(head -1 "$tmp/err")" = "$2" ] && [ ! -e "$d/bad.dpir" ]
}
check "import: a value of another entry" fails "$(printf 'entry a\ninput x: f32[1,2,32]\ninput pos: i64[2]\ny = model("kv_copy.pt2", x, pos)\noutput y\nentry b\ninput p: i64[2]\nz = model("kv_copy.pt2", x, p)\noutput z')" \
	"$d/bad.dp:8:26: import: 'x' belongs to entry 'a'; entries share only the weights and the state"
check "import: statements before the first entry" fails "$(printf 'input x: f32[1,2,32]\nentry a')" \
	"$d/bad.dp:2:1: import: 'entry' comes before the program's inputs, ops and outputs (once there are entries, each statement belongs to one)"
check "import: an entry without outputs" fails "$(printf 'entry a\ninput x: f32[1,2,32]\nentry b\ninput y: f32[1]\noutput y')" \
	"$d/bad.dp:1:7: import: entry 'a' has no outputs (add 'output NAME')"
check "import: an entry named like a function of the C API" fails "entry reset" \
	"$d/bad.dp:1:7: import: entry 'reset' would clash with a function of the C API; choose another name"
# kv_decode.pt2 with its k_cache starting from other bytes (python3's zipfile)
mkstate() {
	python3 - "$d/kv_decode.pt2" "$d/kv_other.pt2" <<'PY'
import json, sys, zipfile
src, dst = zipfile.ZipFile(sys.argv[1]), sys.argv[2]
cfg = [n for n in src.namelist() if n.endswith("model_weights_config.json")][0]
path = json.loads(src.read(cfg))["config"]["k_cache"]["path_name"]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
    for i in src.infolist():
        b = src.read(i)
        if i.filename.endswith("/" + path):
            b = b"\x00\x00\x80\x3f" + b[4:]   # 1.0 first
        z.writestr(i, b)
PY
}
if command -v python3 >/dev/null 2>&1 && mkstate; then
	check "import: a state starting from other bytes in another entry" fails "$(printf 'entry a\ninput x: f32[1,2,32]\ninput pos: i64[2]\ny = model("kv_copy.pt2", x, pos)\noutput y\nentry b\ninput xd: f32[1,1,32]\ninput p: i64[1]\nz = model("kv_other.pt2", xd, p)\noutput z')" \
		"$d/bad.dp:9:11: import: kv_other.pt2: state 'k_cache' starts from other bytes than in entry 'a' (entries share one state)"
else
	skip "no python3"
fi

check "import: a parameter of the same name and another shape in another entry" fails "$(printf 'entry a\ninput x: f32[1,3072]\ny = model("mlp.pt2", x)\noutput y\nentry b\ninput z: f32[1,8]\nw = model("core.pt2", z)\noutput w')" \
	"$d/bad.dp:7:11: import: core.pt2: 'fc1.weight' is f32[4,8] here but f32[512,3072] in entry 'a' (entries share their weights and state by name)"

# generate with prefill=: the Llama-architecture model of examples/llama
# (llama_kv.pt2, its KV cache the program's state) as both entries, the
# prompt through entry prefill, then the new tokens through entry decode;
# PyTorch's model.generate(do_sample=False) tokens are in refs.txt.  The
# decode entry sees the prompt only through the state the entries share.
g=$tmp/g
mkdir -p "$g"
cp examples/llama/llama_kv.pt2 "$g/"
cat >"$g/lkv.dp" <<'DP'
entry prefill
input ids: i64[1,1]
input ppos: i64[1]
plogits = model("llama_kv.pt2", ids, ppos)
output plogits

entry decode
input tok: i64[1,1]
input pos: i64[1]
logits = model("llama_kv.pt2", tok, pos)
output logits
generate tok, logits, pos=pos, prefill=prefill, max_tokens=16
DP
want=$(sed -n 's/^generate: //p' examples/llama/refs.txt)
ids=$(sed -n 's/^ids: //p' examples/llama/refs.txt)
perl -e '@v = @ARGV; $d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (" . @v . ",), }";
	$d .= " " x (117 - length $d) . "\n"; print "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v)' $ids >"$g/p.npy"
check "a Llama program with prefill and decode entries builds" bin/devproc build "$g/lkv.dp" -C "$g/b"
gen() {
	"$g/b/lkv/lkv" --prompt "$g/p.npy" --generate prompt=$(echo $ids | wc -w) >"$tmp/out" || return 1
	cat "$tmp/out"
	[ "$(sed -n 's/^tokens: //p' "$tmp/out")" = "$want" ]
}
check "executable: --generate, prompt through entry prefill, then decode: PyTorch's tokens" gen
capigen() {
	cat >"$tmp/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "lkv.h"
/* argv: the prompt's ids; generates twice (a reset between), printing the tokens */
static int
tok(void *u, int64_t t)
{
	(void)u;
	printf(" %lld", (long long)t);
	return 0;
}

int
main(int argc, char **argv)
{
	int64_t p[64];
	int n = argc - 1, k;
	lkv *m = lkv_create();

	for (k = 0; k < n && k < 64; k++)
		p[k] = atoll(argv[k + 1]);
	for (k = 0; k < 2; k++) {
		printf("tokens:");
		if (lkv_generate(m, p, n, NULL, tok, NULL) != 16)
			return printf("%s\n", lkv_error(m)), 1;
		printf("\n");
		lkv_reset(m);
	}
	lkv_destroy(m);
	return 0;
}
C
	$cc -std=c11 -I"$g/b/lkv" "$tmp/gen.c" "$g/b/lkv/liblkv.a" -lm -lpthread -o "$tmp/gen" &&
		"$tmp/gen" $ids >"$tmp/out" || return 1
	cat "$tmp/out"
	[ "$(sed -n 's/^tokens: //p' "$tmp/out" | sort -u)" = "$want" ] && [ "$(wc -l <"$tmp/out")" -eq 2 ]
}
check "C API: lkv_generate (prefill entry, then decode) gives PyTorch's tokens, again after lkv_reset" capigen
cp examples/llama/llama_kv.pt2 "$d/"
gfails() { # GENERATE WANT: lkv.dp with this generate statement fails with WANT
	fails "$(sed '$d' "$g/lkv.dp")
$1" "$2"
}
check "import: generate prefill= naming no other entry" gfails "generate tok, logits, pos=pos, prefill=decode" \
	"$d/bad.dp:12:40: import: generate: prefill=decode names no other entry"
check "import: generate prefill= without pos=" gfails "generate tok, logits, prefill=prefill" \
	"$d/bad.dp:12:31: import: generate: prefill= needs pos= (a model keeping a KV cache)"
check "import: generate naming another entry's input" gfails "generate ids, logits, pos=pos" \
	"$d/bad.dp:12:10: import: generate: 'ids' is no input of the entry"

# cuda: the same program built for the GPU (the .cu compiles wherever nvcc
# is); on a GPU the C API's prefill then decode equal PyTorch's
if grep -q '^NVCC = .' config.mk; then
	check "the two-entry program builds for --target cuda" bin/devproc build "$d/kv.dp" --target cuda -C "$d/c"
	parts() { # each entry's schedule calls cuda partitions of its own
		awk '/^kv_schedule_prefill\(/ { e = "p" } /^kv_schedule_decode\(/ { e = "d" }
			/kv_gpu_part[0-9]+\(state/ { match($0, /part[0-9]+/); print e, substr($0, RSTART, RLENGTH) }' \
			"$d/c/kv/5.cpu.c" >"$tmp/parts"
		cat "$tmp/parts"
		p=$(sed -n 's/^p //p' "$tmp/parts" | sort -u) && q=$(sed -n 's/^d //p' "$tmp/parts" | sort -u) &&
			[ -n "$p" ] && [ -n "$q" ] && [ -z "$(printf '%s\n%s\n' "$p" "$q" | sort | uniq -d)" ]
	}
	check "cuda: each entry runs partitions of its own" parts
else
	skip "no nvcc"
	skip "no nvcc"
fi
if [ "$gpu" = yes ]; then
	cudacapi() {
		$cc -std=c11 -I"$d/c/kv" "$tmp/app.c" "$d/c/kv/libkv.a" \
			$(sed -n 's/^ \* Link with [^ ]* \(.*\)\.$/\1/p' "$d/c/kv/kv.h") -o "$tmp/appc" &&
			"$tmp/appc" "$r/x1.npy" "$r/pos1.npy" "$r/x2.npy" "$r/y1.npy" "$r/y2.npy" >"$tmp/out"
		cat "$tmp/out"
		[ "$(tail -1 "$tmp/out")" = equal ]
	}
	check "cuda: kv_prefill then kv_decode equal PyTorch's, state shared, kv_reset" cudacapi
	cudagen() {
		bin/devproc build "$g/lkv.dp" --target cuda -C "$g/c" >/dev/null &&
			"$g/c/lkv/lkv" --prompt "$g/p.npy" --generate prompt=$(echo $ids | wc -w) >"$tmp/out" || return 1
		cat "$tmp/out"
		[ "$(sed -n 's/^tokens: //p' "$tmp/out")" = "$want" ]
	}
	check "cuda: --generate through the prefill and decode entries: PyTorch's tokens" cudagen
else
	skip "no CUDA device"
	skip "no CUDA device"
fi

echo "1..$n"
[ $fails -eq 0 ]
