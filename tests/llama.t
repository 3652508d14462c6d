#!/bin/sh
# llama.t: make demo-llama's check on the cpu (examples/llama/run.sh with
# TARGET=cpu): the Llama-architecture model of tools/export_llama.py
# (transformers' LlamaForCausalLM exported as it runs, its rotary
# embedding a torch.no_grad region import inlines) generates 16 tokens
# greedily from the tokenized prompt, recomputing the sequence each step
# (llama.dp) and with its KV cache kept as the program's state, one token
# a run (llama_kv.dp, generate ... pos=pos); both must equal
# model.generate(do_sample=False)'s tokens in examples/llama/refs.txt (made
# on the GPU machine).  Then the positions input's refusals: --generate
# with pos= and no --prompt, --prompt without --generate, a pos= naming no
# input or an input of the wrong type (executable and import); and
# llama.pt2's no_grad region rewritten (python3's zipfile) as a disabled
# autocast region, inlined to the same tokens, or an enabled one, refused.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
b=$tmp/b

demo() {
	TARGET=cpu DEMO_OUT=$b sh examples/llama/run.sh >"$tmp/demo" 2>&1
	rc=$?
	cat "$tmp/demo"
	[ $rc -eq 0 ] && [ "$(grep -c "^tokens equal PyTorch's$" "$tmp/demo")" -eq 2 ]
}
check "make demo-llama on the cpu: both models' tokens equal PyTorch's generate" demo
want=$(sed -n 's/^generate: //p' examples/llama/refs.txt)
distinct() { [ "$(echo $want | tr ' ' '\n' | sort -u | wc -l)" -ge 8 ]; }
check "the reference chain is a strong check (8 or more distinct tokens)" distinct

exe=$b/llama_kv/llama_kv
perl -e '$d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (3,), }";
	$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $ARGV[0] or die;
	print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", 0, 5, 7)' "$tmp/p.npy"
for f in tok:1,\ 1 pos:1,; do   # tok i64[1,1] and pos i64[1], zeros
	perl -e '($f, $s) = @ARGV; $d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: ($s), }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<", 0)' "$tmp/${f%%:*}.npy" "${f#*:}"
done
refused() { # MESSAGE ARGS...: the executable fails with MESSAGE
	m=$1
	shift
	! "$exe" "$@" >/dev/null 2>"$tmp/err" && grep -qF -e "$m" "$tmp/err"
}
check "pos= without --prompt: refused" refused "takes the prompt from --prompt FILE" \
	--in tok="$tmp/tok.npy" --in pos="$tmp/pos.npy" --generate prompt=1
check "--prompt without --generate: refused" refused "--prompt goes with --generate" \
	--prompt "$tmp/p.npy"
check "pos= naming no input: refused" refused "pos=x names no other input" \
	--prompt "$tmp/p.npy" --generate tok=logits,pos=x
check "pos= naming the token input: refused" refused "pos=tok names no other input" \
	--prompt "$tmp/p.npy" --generate tok=logits,pos=tok

capi() { # llama_kv_generate from the prompt's ids: PyTorch's tokens, streamed
	cat >"$tmp/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "llama_kv.h"
static int
put(void *u, int64_t t)
{
	(void)u;
	printf(" %lld", (long long)t);
	return 0;
}
int
main(int argc, char **argv)
{
	int64_t ids[64], n;
	llama_kv *m = llama_kv_create();

	for (n = 0; n + 1 < argc && n < 64; n++)
		ids[n] = strtoll(argv[n + 1], NULL, 10);
	printf("tokens:");
	if (llama_kv_generate(m, ids, n, NULL, put, NULL) != 16)
		return fprintf(stderr, "%s\n", llama_kv_error(m)), 1;
	printf("\n");
	llama_kv_destroy(m);
	return 0;
}
C
	cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
	$cc -std=c11 -I"$b/llama_kv" "$tmp/gen.c" "$b/llama_kv/libllama_kv.a" \
		-lm -lpthread -o "$tmp/gen" &&
		"$tmp/gen" $(sed -n 's/^ids: //p' examples/llama/refs.txt) >"$tmp/got" &&
		echo "tokens: $want" | diff - "$tmp/got"
}
check "C API: llama_kv_generate (positions input) streams PyTorch's tokens" capi

mkdir -p "$tmp/i"
cp examples/llama/llama_kv.pt2 "$tmp/i/"
badpos() { # STATEMENT MESSAGE: import refuses the generate statement
	printf 'input tok: i64[1,1]\ninput pos: %s\nlogits = model("llama_kv.pt2", tok, pos)\noutput logits\n%s\n' \
		"$1" "$2" >"$tmp/i/g.dp"
	! bin/devproc build "$tmp/i/g.dp" -C "$tmp/ib" >"$tmp/err" 2>&1 && grep -qF -e "$3" "$tmp/err"
}
check "import: pos= naming no input refused" badpos 'i64[1]' 'generate tok, logits, pos=q' \
	"pos=q names no other input"
check "import: pos= with a number refused" badpos 'i64[1]' 'generate tok, logits, pos=3' \
	"pos names the positions input"
# llama.pt2's no_grad region (wrap_with_set_grad_enabled) rewritten as an
# autocast region: disabled, import inlines it and the tokens are the same;
# enabled, import refuses it, saying why
autocast() { # ENABLED OUT.pt2: the rewritten archive
	python3 - examples/llama/llama.pt2 "$2" "$1" <<'PY'
import json, sys, zipfile
src, dst, enabled = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
zi = zipfile.ZipFile(src)
zo = zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED)
for e in zi.infolist():
    b = zi.read(e)
    if e.filename.endswith("models/model.json"):
        j = json.loads(b)
        for nd in j["graph_module"]["graph"]["nodes"]:
            if nd["target"] == "torch.ops.higher_order.wrap_with_set_grad_enabled":
                nd["target"] = "torch.ops.higher_order.wrap_with_autocast"
                arg = lambda a: {"name": "", "arg": a, "kind": 1}
                nd["inputs"] = [arg({"as_string": "cpu"}), arg({"as_none": True}),
                                arg({"as_bool": enabled}), arg({"as_none": True})] + nd["inputs"][1:]
        b = json.dumps(j).encode()
    zo.writestr(e.filename, b)
zo.close()
PY
}
if command -v python3 >/dev/null 2>&1; then
	mkdir -p "$tmp/ac"
	sed 's/llama\.pt2/off.pt2/' examples/llama/llama.dp >"$tmp/ac/off.dp"
	sed 's/llama\.pt2/on.pt2/' examples/llama/llama.dp >"$tmp/ac/on.dp"
	off() {
		autocast 0 "$tmp/ac/off.pt2" && bin/devproc build "$tmp/ac/off.dp" -C "$tmp/ac/b" >/dev/null &&
			"$tmp/ac/b/off/off" --in ids="$tmp/ac/ids.npy" --generate ids=logits,prompt=$np,max_tokens=16 \
				>"$tmp/ac/g" && [ "$(sed -n 's/^tokens: //p' "$tmp/ac/g")" = "$want" ]
	}
	set -- $(sed -n 's/^ids: //p' examples/llama/refs.txt)
	np=$#
	perl -e '($f, @v) = @ARGV; push @v, 0 while @v < 32;
		$d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (1, 32), }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v)' "$tmp/ac/ids.npy" "$@"
	check "a disabled autocast region: inlined, PyTorch's tokens" off
	on() {
		autocast 1 "$tmp/ac/on.pt2" && ! bin/devproc build "$tmp/ac/on.dp" -C "$tmp/ac/b" >"$tmp/ac/err" 2>&1 &&
			grep -qF "higher_order.wrap_with_autocast x1" "$tmp/ac/err" &&
			grep -qF "an enabled autocast region changes dtypes" "$tmp/ac/err"
	}
	check "an enabled autocast region: refused, saying why" on
else
	skip "no python3 to rewrite an archive"
	skip "no python3 to rewrite an archive"
fi

echo "1..$n"
[ $fails -eq 0 ]
