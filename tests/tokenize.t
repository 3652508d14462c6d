#!/bin/sh
# tokenize.t: text in and out (TAP).  First the runtime's tokenizer against
# the `tokenizers` library's ids and text on a corpus, for every style of
# tests/data/tokenizer/refs.json (made by tools/make_tokenizer_refs.py), and
# small tokenizers worked out by hand (tests/unit/tokenize.c).  Then a pipeline with a text input
# (u8[?]) and the tokenize and detokenize ops, built and run on every string
# of the corpus: its ids equal tokenizers' (GPT-2 and Llama-3 style, the
# latter with <|begin_of_text|> from the template), and the text of the
# Llama-3 ids equals tokenizers' decoding.  And the errors of a text longer
# than length, of a tokenizer file that is not one and of a missing file.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
data=tests/data/tokenizer

./bin/test-tokenize "$data" >"$tmp/unit" 2>&1
grep -v '^1\.\.' "$tmp/unit"
n=$(grep -c -e '^ok' -e '^not ok' "$tmp/unit")
fails=$(grep -c '^not ok' "$tmp/unit")

mkdir -p "$tmp/p"
cp "$data/gpt2.json" "$data/llama3.json" "$tmp/p/"
cat >"$tmp/p/text.dp" <<'DP'
# text in, token ids and text out
input prompt: u8[?]
g = tokenize(prompt, file="gpt2.json", length=128, special=0, pad=0)
l = tokenize(prompt, file="llama3.json", length=128, pad=1)  # pad: <|end_of_text|>
text = detokenize(l, file="llama3.json", bytes=512)           # skip=1: without specials
output g
output l
output text
DP
check "a pipeline with a text input, tokenize and detokenize builds" \
	bin/devproc build "$tmp/p/text.dp" -C "$tmp/b"
exe=$tmp/b/text/text

k=0
while ./bin/test-tokenize --case "$data/refs.json" $k gpt2 128 0 "$tmp/t.txt" "$tmp/g.npy"; [ $? -ne 2 ]; do
	one() {
		./bin/test-tokenize --case "$data/refs.json" $k gpt2 128 0 "$tmp/t.txt" "$tmp/g.npy" &&
			./bin/test-tokenize --case "$data/refs.json" $k llama3_special 128 1 "$tmp/t.txt" "$tmp/l.npy" 512 "$tmp/d.npy" llama3_skip ||
			{ echo "the references of string $k do not fit"; return 1; }
		"$exe" --in prompt="$tmp/t.txt" --out g="$tmp/g1.npy" --out l="$tmp/l1.npy" \
			--out text="$tmp/d1.npy" || return 1
		bin/npycmp --exact "$tmp/g1.npy" "$tmp/g.npy" && bin/npycmp --exact "$tmp/l1.npy" "$tmp/l.npy" || return 1
		bin/npycmp --exact "$tmp/d1.npy" "$tmp/d.npy"
	}
	check "string $k: the pipeline's ids equal tokenizers' (gpt2, llama3 with BOS), its text tokenizers' decoding" one
	k=$((k + 1))
done

# the other styles of the references (Qwen2, SentencePiece as Llama-2's and
# Mistral's, DeepSeek-like Splits, every Split behavior, BERT's WordPiece)
# through the ops: the ids with the post-processor's, the text without the
# special tokens, for every string of the corpus
styles="qwen2 llama2 mistral multi behaviors bert"
{
	echo "input prompt: u8[?]"
	for s in $styles; do
		cp "$data/$s.json" "$tmp/p/"
		echo "i_$s = tokenize(prompt, file=\"$s.json\", length=512, pad=-1)"
		echo "t_$s = detokenize(i_$s, file=\"$s.json\", bytes=2048)"
		echo "output i_$s"
		echo "output t_$s"
	done
} >"$tmp/p/styles.dp"
check "a pipeline of six more tokenizer styles builds" \
	bin/devproc build "$tmp/p/styles.dp" -C "$tmp/b"
k=0
while ./bin/test-tokenize --case "$data/refs.json" $k gpt2 128 0 "$tmp/t.txt" "$tmp/g.npy"; [ $? -ne 2 ]; do
	styles1() {
		set --
		for s in $styles; do
			./bin/test-tokenize --case "$data/refs.json" $k "${s}_special" 512 -1 "$tmp/t.txt" \
				"$tmp/i_$s.npy" 2048 "$tmp/t_$s.npy" "${s}_skip" || { echo "# $s: the references do not fit"; return 1; }
			set -- "$@" --out "i_$s=$tmp/i1_$s.npy" --out "t_$s=$tmp/t1_$s.npy"
		done
		"$tmp/b/styles/styles" --in prompt="$tmp/t.txt" "$@" >/dev/null || return 1
		for s in $styles; do
			bin/npycmp --exact "$tmp/i1_$s.npy" "$tmp/i_$s.npy" >/dev/null &&
				bin/npycmp --exact "$tmp/t1_$s.npy" "$tmp/t_$s.npy" >/dev/null || { echo "# $s differs"; return 1; }
		done
	}
	check "string $k, six styles: the pipeline's ids and text equal tokenizers'" styles1
	k=$((k + 1))
done

long() {
	head -c 400 /dev/zero | tr '\0' 'x' | sed 's/x/x /g' >"$tmp/long.txt"
	"$exe" --in prompt="$tmp/long.txt" 2>"$tmp/err" && return 1
	grep -Eqx 'text: tokenize: the text is [0-9]{3} tokens, more than length=128' "$tmp/err"
}
check "a text of more tokens than length: one error with both counts" long

# --steps: three strings of the corpus in one process, one file per step
steps() {
	set --
	for k in 3 18 21; do
		./bin/test-tokenize --case "$data/refs.json" $k gpt2 128 0 "$tmp/s$k.txt" "$tmp/sg$k.npy" &&
			./bin/test-tokenize --case "$data/refs.json" $k llama3_special 128 1 "$tmp/s$k.txt" "$tmp/sl$k.npy" || return 1
		set -- "$@" --in prompt="$tmp/s$k.txt"
	done
	"$exe" --steps 3 "$@" --out g="$tmp/g%d.npy" --out l="$tmp/l%d.npy" >"$tmp/out" &&
		[ "$(grep -c '^step [123]:$' "$tmp/out")" -eq 3 ] &&
		bin/npycmp --exact "$tmp/g1.npy" "$tmp/sg3.npy" && bin/npycmp --exact "$tmp/l1.npy" "$tmp/sl3.npy" &&
		bin/npycmp --exact "$tmp/g2.npy" "$tmp/sg18.npy" && bin/npycmp --exact "$tmp/l2.npy" "$tmp/sl18.npy" &&
		bin/npycmp --exact "$tmp/g3.npy" "$tmp/sg21.npy" && bin/npycmp --exact "$tmp/l3.npy" "$tmp/sl21.npy" || return 1
	"$exe" --steps 2 "$@" 2>"$tmp/err" && return 1
	echo "text: --in prompt given 3 times for 2 steps (once, or once per step)" | diff - "$tmp/err"
}
check "--steps 3, one text file per step: each step's ids equal tokenizers'; a count that is not the steps' refused" steps

literal() {
	"$exe" --in prompt="text:Hello, world!" >"$tmp/out" &&
		grep -qx 'text = Hello, world!' "$tmp/out"
}
check "--in prompt=text:STRING; a text output prints as text" literal

capi() {
	cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "text.h"
int
main(void)
{
	static const char s[] = "Hello, world!";
	int64_t g[128], l[128];
	uint8_t t[512];
	text *m = text_create();

	if (m == NULL || text_run(m, (const uint8_t *)s, (int64_t)strlen(s), g, l, t) != 0) {
		fprintf(stderr, "%s\n", text_error(m));
		return 1;
	}
	printf("%lld %lld %lld %s\n", (long long)l[0], (long long)l[1], (long long)l[4], t);
	text_destroy(m);
	return 0;
}
C
	cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk)}
	$cc -std=c11 -I"$tmp/b/text" "$tmp/app.c" "$tmp/b/text/libtext.a" -lm -o "$tmp/app" &&
		"$tmp/app" >"$tmp/out" && cat "$tmp/out" &&
		# string 1 of the corpus, "Hello, world!": tokenizers' ids with BOS are 0 1646 14 2446 3 (refs.json)
		grep -qx '0 1646 3 Hello, world!' "$tmp/out"
}
check "C API: text_run(m, prompt, prompt_n, ...) with the bytes and their count" capi

baddp() { # FILE WANT: importing a .dp whose tokenize names FILE gives WANT, the
	# line and a caret under the path
	printf 'input p: u8[?]\nx = tokenize(p, file="%s", length=4)\noutput x\n' "$1" >"$tmp/p/bad.dp"
	bin/dp-import "$tmp/p/bad.dp" -o "$tmp/p/bad.dpir" -w "$tmp/p/w.bin" 2>"$tmp/err" && return 1
	[ ! -e "$tmp/p/bad.dpir" ] &&
		printf '%s\n  x = tokenize(p, file="%s", length=4)\n                       ^\n' "$2" "$1" |
		diff - "$tmp/err"
}
printf '{"model": {"type": "Unigram"}}' >"$tmp/p/uni.json"
check "a tokenizer file DevProc cannot read: file:line:col, what it is" \
	baddp uni.json "$tmp/p/bad.dp:2:22: import: uni.json: the model is Unigram, not BPE with a vocab and merges (DevProc reads BPE and WordPiece models)"
check "a missing tokenizer file: file:line:col" \
	baddp none.json "$tmp/p/bad.dp:2:22: import: cannot read 'none.json': No such file or directory"

echo "1..$n"
[ $fails -eq 0 ]
