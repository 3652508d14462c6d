#!/bin/sh
# run.sh: make demo-llama.  Builds examples/llama -- the prompt's tokenizer
# (tokenize.dp), the model (llama.dp: llama.pt2, a Llama-architecture model
# from transformers with a small random config, made by
# tools/export_llama.py; llama_kv.dp: the same model with a KV cache kept as
# the program's state) and the detokenizer (detokenize.dp) -- for the GPU
# (targets/cuda) when configure found nvcc and an NVIDIA GPU is present,
# else for the CPU (TARGET=cpu or TARGET=cuda forces one); tokenizes the
# prompt, generates 16 tokens greedily (--generate, printed as they come)
# with each model, prints their text and checks the ids against
# model.generate(do_sample=False)'s in refs.txt: "tokens equal PyTorch's"
# (once per model), or exit 1.
set -e
cd "$(dirname "$0")/../.."
ex=examples/llama
prompt=$(sed -n 's/^prompt: //p' $ex/refs.txt)
want=$(sed -n 's/^generate: //p' $ex/refs.txt)
target=${TARGET:-}
if [ -z "$target" ]; then
	target=cpu
	if grep -q '^NVCC = .' config.mk &&
		{ [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; }; then
		target=cuda
	fi
fi
out=${DEMO_OUT:-build/$target}
echo "== devproc build $ex/tokenize.dp $ex/llama.dp $ex/llama_kv.dp $ex/detokenize.dp --target $target -C $out"
bin/devproc build $ex/tokenize.dp $ex/llama.dp $ex/llama_kv.dp $ex/detokenize.dp --target "$target" -C "$out"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo
echo "== prompt: $prompt"
"$out/tokenize/tokenize" --in prompt="text:$prompt" --out ids="$t/ids.npy" >/dev/null
# the prompt's token count (the ids before the -1 padding), the padding made
# 0; and the prompt alone, i64[N], for llama_kv's --prompt
n=$(perl -e 'open my $i, "<:raw", $ARGV[0] or die; local $/; $s = <$i>; $h = unpack("v", substr($s, 8, 2));
	@v = unpack("q<*", substr($s, 10 + $h)); $n = grep { $_ >= 0 } @v; print "$n\n";
	substr($s, 10 + $h) = pack("q<*", map { $_ < 0 ? 0 : $_ } @v);
	open my $o, ">:raw", $ARGV[1] or die; print $o $s;
	$d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: ($n,), }";
	$d .= " " x (117 - length $d) . "\n"; open $o, ">:raw", $ARGV[2] or die;
	print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v[0 .. $n - 1])' \
	"$t/ids.npy" "$t/prompt.npy" "$t/p.npy")
echo "== $out/llama/llama --generate ids=logits,prompt=$n,max_tokens=16"
"$out/llama/llama" --in ids="$t/prompt.npy" --generate "ids=logits,prompt=$n,max_tokens=16" | tee "$t/gen"
got=$(sed -n 's/^tokens: //p' "$t/gen")
perl -e '($f, @v) = @ARGV; $d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (1, 16), }";
	$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
	print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v)' "$t/gen.npy" $got
"$out/detokenize/detokenize" --in ids="$t/gen.npy"
if [ "$got" = "$want" ]; then
	echo "tokens equal PyTorch's"
else
	echo "tokens differ from PyTorch's: $want" >&2
	exit 1
fi
echo
echo "== $out/llama_kv/llama_kv --prompt PROMPT.npy --generate prompt=$n (the KV cache: one token a run)"
"$out/llama_kv/llama_kv" --prompt "$t/p.npy" --generate "prompt=$n" | tee "$t/gen"
got=$(sed -n 's/^tokens: //p' "$t/gen")
if [ "$got" = "$want" ]; then
	echo "tokens equal PyTorch's"
else
	echo "tokens differ from PyTorch's: $want" >&2
	exit 1
fi
