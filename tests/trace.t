#!/bin/sh
# trace.t: --trace FILE and --profile of the generated executables (TAP).
# The classify example built for the cpu: --trace writes Chrome/Perfetto
# trace JSON (valid where python3 is, to check it) with one complete event
# per cpu op that has code (the DPRT_TRACE_OP marks of its 5.cpu.c), each
# with a start and a duration; --profile prints a row per such op; an
# unwritable trace fails with exit 1.  Where nvcc and a CUDA device are,
# the cuda build too: one "cuda" event per op with kernels (the
# DPRT_CUDA_MARK marks of its 5.gpu.cu) besides the cpu ones.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu
img=examples/classify/image.npy

check "classify builds for the cpu" "$bin/devproc" build examples/classify/classify.dp -C "$tmp/c"
exe=$tmp/c/classify/classify

# shape FILE CPU CUDA: the trace's complete events are CPU on the cpu track
# (tid 1) and CUDA on the cuda one (tid 2), each with ts and dur, and the
# JSON is valid (python3's json module, where python3 is)
shape() {
	f=$1
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool "$f" >/dev/null || { echo "not valid JSON"; return 1; }
	fi
	grep -q '^{"displayTimeUnit": "ns", "traceEvents": \[$' "$f" || { echo "no traceEvents"; return 1; }
	c=$(grep -c '"cat": "cpu", "ph": "X", "pid": 1, "tid": 1, "ts": [0-9.]*, "dur": [0-9.]*, "args": {"op": [0-9]*}}' "$f")
	g=$(grep -c '"cat": "cuda", "ph": "X", "pid": 1, "tid": 2, "ts": [0-9.]*, "dur": [0-9.]*, "args": {"op": [0-9]*}}' "$f")
	x=$(grep -c '"ph": "X"' "$f")
	echo "$c cpu events (expected $2), $g cuda events (expected $3), $x in all"
	[ "$c" -eq "$2" ] && [ "$g" -eq "$3" ] && [ "$x" -eq $(($2 + $3)) ]
}
cpuops=$(grep -c 'DPRT_TRACE_OP(' "$tmp/c/classify/5.cpu.c")
cputrace() {
	"$exe" --in image=$img --trace "$tmp/t.json" >"$tmp/out" || return 1
	grep -q '^label = ' "$tmp/out" && [ "$cpuops" -ge 5 ] && shape "$tmp/t.json" "$cpuops" 0 &&
		grep -q '"name": "aten.linear", "cat": "cpu"' "$tmp/t.json"
}
check "--trace on a cpu program: valid trace JSON, one event per cpu op ($cpuops)" cputrace
profile() {
	"$exe" --in image=$img --profile >"$tmp/prof" || return 1
	cat "$tmp/prof"
	grep -q '^profile: 20 runs, mean per run; cpu ops [0-9.]* us' "$tmp/prof" &&
		[ "$(grep -c '^ *[0-9][0-9]*  cpu  ' "$tmp/prof")" -eq "$cpuops" ] &&
		grep -q '  aten.linear$' "$tmp/prof"
}
check "--profile prints one row per op with its mean time" profile
# a 3 MiB output copied from an input: dprt_memcpy in 1 MiB chunks on the
# pool's threads (the last chunk short), its own row in --profile
head -c 3147776 /dev/urandom >"$tmp/raw"
printf 'input x: u8[2048,1537]\noutput x\n' >"$tmp/big.dp"
bigcopy() {
	"$bin/devproc" tensor -o "$tmp/big.npy" --raw "$tmp/raw" --dtype u8 --shape 2048,1537 &&
		"$bin/devproc" build "$tmp/big.dp" -C "$tmp/b" >/dev/null || return 1
	grep -q 'dprt_memcpy(out\[0\], v0, 3147776);' "$tmp/b/big/5.cpu.c" || return 1
	for t in 1 4; do
		"$tmp/b/big/big" --in x="$tmp/big.npy" --out x="$tmp/o$t.npy" --threads $t >/dev/null &&
			cmp "$tmp/big.npy" "$tmp/o$t.npy" || return 1
	done
	"$tmp/b/big/big" --in x="$tmp/big.npy" --profile --threads 4 >"$tmp/prof" &&
		grep -q '^ *0  cpu  .*  copy to output$' "$tmp/prof"
}
check "a 3 MiB output copied on 1 and 4 threads: the input's bytes; a profile row" bigcopy
unwritable() {
	"$exe" --in image=$img --trace "$tmp/no/such/dir/t.json" >/dev/null 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "^classify: $tmp/no/such/dir/t.json: cannot write the trace" "$tmp/err"
}
check "an unwritable --trace file: exit 1, the path named" unwritable

# a trace's cuda events are DPRT_CUDA_MARK's, one after each launch (or
# each launch of small kernels run as one, or run by a GEMV kernel's
# blocks): ResNet-18 (convolution chains whose last op is elementwise), the
# Llama step (its rotary embedding and cache writes in the q/k/v GEMV's
# kernel), lowered only (no nvcc needed)
marks() {
	"$bin/devproc" gen tests/data/resnet18_core.dp examples/llama/llama_kv.dp --target cuda \
		-C "$tmp/mk" >/dev/null &&
		ninja -C "$tmp/mk" resnet18_core/5.gpu.cu llama_kv/5.gpu.cu >/dev/null || return 1
	for c in "$tmp/mk/resnet18_core/5.gpu.cu" "$tmp/mk/llama_kv/5.gpu.cu"; do
		k=$(sed -n 's/^ \* 1 cuda partition, \([0-9]*\) kernels;.*/\1/p' "$c")
		echo "$c: $k kernels, $(grep -c 'DPRT_CUDA_MARK(' "$c") marks"
		[ -n "$k" ] && [ "$k" -gt 10 ] && [ "$(grep -c 'DPRT_CUDA_MARK(' "$c")" -eq "$k" ] || return 1
	done
	grep -q '^/\* the GEMV.s blocks, then each block.s elements of the kernels after it' \
		"$tmp/mk/llama_kv/5.gpu.cu"
}
check "cuda: one event mark per kernel launch (ResNet-18's convolution chains, the Llama step's kernels run by its GEMV kernels' blocks)" marks

if [ -z "$nvcc" ]; then
	skip "no nvcc"
	skip "no nvcc"
elif check "classify builds for cuda" "$bin/devproc" build examples/classify/classify.dp \
		--target cuda -C "$tmp/g"; [ -z "$gpu" ]; then
	skip "no CUDA device"
else
	gputrace() {
		d=$tmp/g/classify
		k=$(grep -c 'DPRT_CUDA_MARK(' "$d/5.gpu.cu")
		h=$(grep -c 'DPRT_TRACE_OP(' "$d/5.cpu.c")
		"$d/classify" --in image=$img --trace "$tmp/g.json" >"$tmp/out" || return 1
		"$d/classify" --in image=$img --profile || return 1
		[ "$k" -ge 1 ] && shape "$tmp/g.json" "$h" "$k"
	}
	check "--trace on a cuda program: one event per kernel (CUDA events), the cpu ops too" gputrace
fi
echo "1..$n"
[ $fails -eq 0 ]
