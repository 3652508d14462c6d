#!/bin/sh
# generate.t: the generation loop of the executable (--generate, TAP) on
# tinylm (a 2-layer Llama-style decoder, ids i64[1,32] -> logits
# f32[1,32,256], run without a cache: each step recomputes the sequence).
# Greedy tokens must equal the argmax chain worked out from separate single
# runs of the same program (the logits written with --out and their argmax
# taken here, in perl, at the last prompt position); sampling with top_k=1
# or a tiny top_p must fall back to that chain; sampling is the same for a
# seed and differs across seeds; greedy equals PyTorch's argmax loop over
# the same archive (tests/data/tinylm/greedy.txt, made on the GPU machine
# by tools/make_generate_refs.py); max_tokens, the end token and a full
# sequence stop it; malformed specs are refused.  Then the loop declared
# in the pipeline (tests/data/tinylm_gen.dp's generate statement): the
# executable's --generate prompt=P runs it as the full spec with the same
# keys does, keys given there replace the declared ones; the C API's
# tinylm_gen_generate streams the same tokens through its callback (keys
# replacing, a nonzero return stopping, a bad prompt or key failing); and
# import refuses malformed generate statements.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
b=$tmp/b

ids() { # FILE TOKENS...: an i64 [1,32] .npy, the tokens then zeros
	f=$1
	shift
	perl -e '($f, @v) = @ARGV; push @v, 0 while @v < 32;
		$d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (1, 32), }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v)' "$f" "$@"
}
argmax() { # FILE ROW: the first largest logit of row ROW of an f32 [1,32,256] .npy
	perl -e '($f, $r) = @ARGV; open my $i, "<:raw", $f or die; local $/; $s = <$i>;
		$h = unpack("v", substr($s, 8, 2)); @l = unpack("f<256", substr($s, 10 + $h + $r * 1024));
		$m = 0; for (1 .. 255) { $m = $_ if $l[$_] > $l[$m] } print "$m\n"' "$1" "$2"
}
prompt="3 1 4 1 5"

check "tinylm builds" bin/devproc build tests/data/tinylm.dp -C "$b"
exe=$b/tinylm/tinylm
gen() { # SPEC...: the tokens --generate prints for the prompt
	"$exe" --in ids="$tmp/p.npy" --generate "ids=logits,prompt=5,$1" >"$tmp/g" || return 1
	sed -n 's/^tokens://p' "$tmp/g"
}
ids "$tmp/p.npy" $prompt

chain() { # the greedy chain of 12 tokens from single runs
	seq=$prompt
	for k in $(seq 12); do
		ids "$tmp/s.npy" $seq
		"$exe" --in ids="$tmp/s.npy" --out logits="$tmp/l.npy" >/dev/null || return 1
		set -- $seq
		t=$(argmax "$tmp/l.npy" $(($# - 1)))
		seq="$seq $t"
		printf ' %s' "$t"
	done
	echo
}
greedy() {
	chain >"$tmp/want" && gen max_tokens=12 >"$tmp/got" && diff "$tmp/want" "$tmp/got"
}
check "greedy: the argmax chain of single runs" greedy
pytorch() { # each prompt of tests/data/tinylm/greedy.txt: PyTorch's tokens
	while IFS=: read -r p want; do
		ids "$tmp/q.npy" $p
		set -- $p
		"$exe" --in ids="$tmp/q.npy" --generate ids=logits,prompt=$#,max_tokens=12 >"$tmp/g" || return 1
		got=$(sed -n 's/^tokens: //p' "$tmp/g")
		echo "prompt $p: PyTorch$want, DevProc $got"
		[ "$got" = "$(echo $want)" ] || return 1
	done <tests/data/tinylm/greedy.txt
}
check "greedy: PyTorch's tokens (tools/make_generate_refs.py) for 3 prompts" pytorch
topk1() { gen max_tokens=12,temperature=0.7,top_k=1,seed=9 | diff "$tmp/want" -; }
check "sampling with top_k=1: the greedy chain" topk1
topp() { gen max_tokens=12,temperature=2,top_p=1e-9,seed=9 | diff "$tmp/want" -; }
check "sampling with a tiny top_p: the greedy chain" topp

seeded() {
	gen max_tokens=12,temperature=1,seed=7 >"$tmp/s7a" && gen max_tokens=12,temperature=1,seed=7 >"$tmp/s7b" &&
		gen max_tokens=12,temperature=1,seed=8 >"$tmp/s8" && diff "$tmp/s7a" "$tmp/s7b" &&
		! diff "$tmp/s7a" "$tmp/s8" >/dev/null && ! diff "$tmp/s7a" "$tmp/want" >/dev/null
}
check "sampling: equal for a seed, different across seeds and from greedy" seeded
topkp() {
	gen max_tokens=12,temperature=1,top_k=5,top_p=0.9,seed=7 >"$tmp/kp" &&
		gen max_tokens=12,temperature=1,top_k=5,top_p=0.9,seed=7 | diff "$tmp/kp" - && [ "$(wc -w <"$tmp/kp")" -eq 12 ]
}
check "top_k with top_p: deterministic for a seed, 12 tokens" topkp

maxtok() { gen max_tokens=4 | diff - "$tmp/want4"; }
awk '{ print " " $1 " " $2 " " $3 " " $4 }' "$tmp/want" | sed 's/^ */ /' >"$tmp/want4"
check "max_tokens=4: the chain's first 4" maxtok
endtok() {
	e=$(awk '{ print $3 }' "$tmp/want")
	want=$(awk '{ for (i = 1; i <= NF; i++) { printf " %s", $i; if ($i == e) break } print "" }' e="$e" "$tmp/want")
	[ "$(gen max_tokens=12,end=$e)" = "$want" ]
}
check "the end token stops it (given out, then stop)" endtok
full() {
	ids "$tmp/p30.npy" $(seq 30)
	"$exe" --in ids="$tmp/p30.npy" --generate ids=logits,prompt=30,max_tokens=10 >"$tmp/g" &&
		[ "$(sed -n 's/^tokens://p' "$tmp/g" | wc -w)" -eq 3 ]
}
check "a full sequence stops it: prompt 30 of 32 gives 3 tokens" full

# the loop declared in the .dp: tests/data/tinylm_gen.dp
check "a pipeline with a generate statement builds" bin/devproc build tests/data/tinylm_gen.dp -C "$b"
declared() {
	"$b/tinylm_gen/tinylm_gen" --in ids="$tmp/p.npy" --generate prompt=5 >"$tmp/d" &&
		gen max_tokens=6,temperature=0.8,top_k=20,top_p=0.95,seed=11 | sed 's/^/tokens:/' | diff - "$tmp/d" &&
		[ "$(wc -w <"$tmp/d")" -eq 7 ]
}
check "--generate prompt=5: the declared loop (6 tokens, sampled as declared)" declared
override() {
	"$b/tinylm_gen/tinylm_gen" --in ids="$tmp/p.npy" --generate prompt=5,temperature=0,max_tokens=12 >"$tmp/d" &&
		sed 's/^/tokens:/' "$tmp/want" | diff - "$tmp/d"
}
check "keys given to --generate replace the declared ones (greedy, 12)" override
capi() {
	cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "tinylm_gen.h"
/* tinylm_gen_generate with keys argv[1] ("-": NULL), stopping after
 * argv[2] tokens from the callback (0: never), the prompt 3 1 4 1 5 (or
 * none with argv[3]): prints "tokens:" and each token, then the count */
static int
tok(void *u, int64_t t)
{
	int *left = u;

	printf(" %lld", (long long)t);
	return --*left == 0;
}

int
main(int argc, char **argv)
{
	const int64_t prompt[5] = {3, 1, 4, 1, 5};
	int left = argc > 2 ? atoi(argv[2]) : 0;
	tinylm_gen *m = tinylm_gen_create();
	int64_t n;

	printf("tokens:");
	n = tinylm_gen_generate(m, prompt, argc > 3 ? 0 : 5, argv[1][0] == '-' ? NULL : argv[1], tok,
	                        &left);
	printf("\n%lld %s\n", (long long)n, tinylm_gen_error(m));
	tinylm_gen_destroy(m);
	return n < 0;
}
C
	cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
	$cc -std=c11 -I"$b/tinylm_gen" "$tmp/app.c" "$b/tinylm_gen/libtinylm_gen.a" -lm -lpthread -o "$tmp/app" &&
		"$b/tinylm_gen/tinylm_gen" --in ids="$tmp/p.npy" --generate prompt=5 >"$tmp/d" &&
		"$tmp/app" - >"$tmp/c" && { cat "$tmp/d"; echo "6 "; } | diff - "$tmp/c" &&
		"$tmp/app" temperature=0,max_tokens=12 >"$tmp/c" && { sed 's/^/tokens:/' "$tmp/want"; echo "12 "; } | diff - "$tmp/c" &&
		"$tmp/app" temperature=0,max_tokens=12 3 >"$tmp/c" && { cat "$tmp/want4" | cut -d' ' -f1-4 | sed 's/^/tokens:/'; echo "3 "; } | diff - "$tmp/c" &&
		! "$tmp/app" - 0 x >"$tmp/c" && grep -q "^-1 tinylm_gen_generate: the prompt must have 1 to 32 tokens" "$tmp/c" &&
		! "$tmp/app" seed=x >"$tmp/c" && grep -q "^-1 generate: seed=x needs a number" "$tmp/c"
}
check "C API: tinylm_gen_generate streams the declared loop's tokens; keys replace; the callback stops it; errors" capi
gendp() { # STATEMENT MESSAGE: a generate statement refused by import
	printf 'input ids: i64[1,32]\ninput x: f32[1]\nlogits = model("tinylm.pt2", ids)\noutput logits, x\n%s\n' "$1" >"$tmp/gen.dp"
	! bin/dp-import "$tmp/gen.dp" -o "$tmp/gen.dpir" -w "$tmp/gen.bin" 2>"$tmp/err" && [ ! -e "$tmp/gen.dpir" ] &&
		cat "$tmp/err" && grep -qF "$2" "$tmp/err"
}
cp tests/data/tinylm.pt2 "$tmp/"
check "generate on a name that is no input: refused" gendp "generate logits, logits" "generate: 'logits' is no input"
check "generate on a non-token input: refused" gendp "generate x, logits" "generate: input 'x' is f32[1]; the token input is i64[1,L]"
check "generate to an output that is no logits: refused" gendp "generate ids, x" "generate: output 'x' is f32[1]; the logits are f32[1,32,V]"
check "generate with an unknown key: refused" gendp "generate ids, logits, topk=3" "generate has no key 'topk'"
check "generate with a key twice: refused" gendp "generate ids, logits, seed=1, seed=2" "generate: 'seed' is given twice"
check "generate with top_p out of range: refused" gendp "generate ids, logits, top_p=1.5" "generate: top_p must be above 0 and at most 1"

refused() { # SPEC MESSAGE
	! "$exe" --in ids="$tmp/p.npy" --generate "$1" >/dev/null 2>"$tmp/err" && grep -qF "$2" "$tmp/err"
}
check "no prompt=: refused" refused ids=logits "needs prompt=P"
steps() { ! "$exe" --in ids="$tmp/p.npy" --steps 2 --generate ids=logits,prompt=2 >/dev/null 2>"$tmp/err" && grep -q "drop --steps" "$tmp/err"; }
check "--generate with --steps: refused" steps
check "an unknown output: refused" refused ids=x,prompt=2 "'x' is no output"
check "a bad key: refused" refused ids=logits,prompt=2,topk=3 "topk=3: unknown key"
check "a prompt longer than the input: refused" refused ids=logits,prompt=33 "prompt=33: the program takes 1 to 32 tokens"
echo "1..$n"
[ $fails -eq 0 ]
