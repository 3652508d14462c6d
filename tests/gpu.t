#!/bin/sh
# gpu.t: the cuda target (TAP).  Wherever nvcc is (CI has it, with no GPU):
# the example and test pipelines build for --target cuda (lower_gpu's .cu
# compiled by nvcc, linked), deterministically, and a cuda binary started
# where no GPU is visible exits 1 naming the missing device.  Where a CUDA
# device is present too, the same tests run the programs: the cuda builds
# equal PyTorch's outputs (fp32, no TF32: max|err|/max|ref| <= 1e-5, labels
# equal) and the cpu builds' outputs; repeated runs (CUDA graph replays)
# give the first run's bytes.  Elsewhere those say "# SKIP no CUDA device".
# Data: tests/gpu/ (hand-written IR, inputs made by mkdata.py).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
data=$root/tests/data
gdir=$root/tests/gpu
cc=$(sed -n 's/^CC = //p' config.mk 2>/dev/null)
cc=${DP_TEST_CC:-${cc:-cc}}
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
hostcxx=$(sed -n 's/^CXX = //p' config.mk 2>/dev/null)   # the host half's compiler (launch.cuh)
arch=${DP_CUDA_ARCH:-sm_90}
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu

# The tests that need a device, counted so that every case reports.
ondevice() { # description command...
	if [ -n "$gpu" ]; then check "$@"; else skip "no CUDA device"; fi
}

# buildir NAME MAPPING DIR [cpu]: text IR tests/gpu/NAME.ir through legalize,
# place, partition, the lowerings, cc, nvcc and link into DIR/NAME
# (weights.bin already in DIR when the IR has constants).
buildir() {
	d=$3
	mkdir -p "$d"
	"$bin/devproc" parse "$gdir/$1.ir" -o "$d/1.import.dpir" &&
		"$bin/dp-legalize" "$d/1.import.dpir" -o "$d/2.legalize.dpir" &&
		"$bin/dp-place" "$d/2.legalize.dpir" -t "$2" -o "$d/3.place.dpir" &&
		"$bin/dp-partition" "$d/3.place.dpir" -o "$d/4.partition.dpir" &&
		"$bin/dp-lower_cpu" "$d/4.partition.dpir" -o "$d/5.cpu.c" &&
		$cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/runtime" -c "$d/5.cpu.c" -o "$d/5.cpu.o" ||
		return 1
	if [ "${4:-}" = cpu ]; then
		"$bin/dp-link" "$d/4.partition.dpir" "$d/5.cpu.o" --runtime "$root/lib" --cc "$cc" -o "$d/$1"
		return
	fi
	"$bin/dp-lower_gpu" "$d/4.partition.dpir" -o "$d/5.gpu.cu" &&
		"$nvcc" -O3 -arch="$arch" -I"$root/runtime" -c "$d/5.gpu.cu" -o "$d/5.gpu.o" &&
		"$bin/dp-link" "$d/4.partition.dpir" "$d/5.cpu.o" "$d/5.gpu.o" --runtime "$root/lib" \
			--cc "$cc" -o "$d/$1"
}

lowerir() { # IR DIR: IR through the stages for targets/cuda into DIR (1..4.dpir,
	# 5.gpu.cu, 5.cpu.c), each stage by hand
	"$bin/devproc" parse "$1" -o "$2/1.dpir" &&
		"$bin/dp-legalize" "$2/1.dpir" -o "$2/2.dpir" &&
		"$bin/dp-place" "$2/2.dpir" -t "$root/targets/cuda" -o "$2/3.dpir" &&
		"$bin/dp-partition" "$2/3.dpir" -o "$2/4.dpir" &&
		"$bin/dp-lower_gpu" "$2/4.dpir" -t "$root/targets/cuda" -o "$2/5.gpu.cu" &&
		"$bin/dp-lower_cpu" "$2/4.dpir" -o "$2/5.cpu.c"
}

cmpall() { # prefixA prefixB outputs...: PREFIX.OUTPUT.npy of two builds agree
	a=$1 b=$2   # (floats within 1e-5 relative, integers exactly)
	shift 2
	for o; do
		"$bin/npycmp" --tol 1e-5 "$b.$o.npy" "$a.$o.npy" || { echo "output $o differs"; return 1; }
	done
}

pipes="examples/classify/classify.dp examples/two_models/two_models.dp tests/data/mlp.dp tests/data/mlp_core.dp"
bc=$tmp/cuda
bp=$tmp/cpu
if [ -z "$nvcc" ]; then
	for i in $(seq 32); do skip "no nvcc"; done
	echo "1..$n"
	exit 0
fi

# ---- wherever nvcc is
check "classify, two_models, mlp, mlp_core build for --target cuda (lower_gpu, nvcc, link)" \
	"$bin/devproc" build $pipes --target cuda -C "$bc"
compiled() {
	for p in classify two_models mlp mlp_core; do
		[ -s "$bc/$p/5.gpu.o" ] && [ -x "$bc/$p/$p" ] || { echo "$p: no 5.gpu.o or executable"; return 1; }
		grep -q "__global__" "$bc/$p/5.gpu.cu" || { echo "$p: 5.gpu.cu has no kernel"; return 1; }
	done
}
check "each pipeline's 5.gpu.cu has kernels and compiled" compiled
placed() {
	"$bin/devproc" dump "$bc/classify/4.partition.dpir" >"$tmp/dump" || return 1
	cat "$tmp/dump"
	grep -q '= normalize .*@cuda .*rule="cuda:[0-9]*: class normalize -> cuda"' "$tmp/dump" &&
		grep -q '= aten.linear .*@cuda .*class matmul -> cuda' "$tmp/dump" &&
		grep -q '= argmax .*@cuda .*rule="cuda:[0-9]*: class index -> cuda"' "$tmp/dump" &&
		[ "$(grep -c ' = copy ' "$tmp/dump")" -eq 3 ]
}
check "classify on cuda: dump shows each op's device and rule; one copy in, one per output" placed
fused() {
	# the image (3072 bytes) read from the staging by a kernel, not copied;
	# normalize, permute and flatten: one kernel; linear+relu: one; linear:
	# one; argmax: one
	[ "$(grep -c '^k[0-9]*_[a-z]*(' "$bc/classify/5.gpu.cu")" -eq 5 ] &&
		grep -q '^	DP_LAUNCH(k[0-9]*_copyin, 1, 256, 1)((const unsigned long long \*)(P + 0), ' "$bc/classify/5.gpu.cu" &&
		! grep -q 'cudaMemcpyAsync(.*cudaMemcpyHostToDevice' "$bc/classify/5.gpu.cu" &&
		grep -q '^/\* 3 ops fused into one kernel' "$bc/classify/5.gpu.cu" &&
		grep -q 'relu, NaN stays' "$bc/classify/5.gpu.cu"
}
check "classify's cuda code: 5 kernels (the image read from the staging, a fused preprocessing chain, GEMV+bias+relu, GEMV+bias, argmax)" fused
# both outputs come back with no copy (emit.c, copyout): the label written
# into the page-locked staging by the argmax, the logits by their GEMV
# there too, as well as into the arena for the argmax (mirrors)
staged() {
	c=$bc/classify/5.gpu.cu
	! grep -q 'cudaMemcpyDeviceToHost' "$c" &&
		grep -q '^	int64_t \*v[0-9]* = (int64_t \*)(P + [0-9]*); *\/\* i64\[1\], staging ' "$c" &&
		grep -q '^	yh\[0 + n\] = r;$' "$c" &&
		grep -q '^	DP_LAUNCH(k[0-9]*_linear, [0-9]*, 128, 1)(v[0-9]*, v[0-9]*, v[0-9]*, v[0-9]*, (float \*)(P + [0-9]*));$' "$c" &&
		[ "$(grep -c '/\* none: .*(copyout) \*/$' "$c")" -eq 2 ]
}
check "classify's outputs written into the staging by their kernels, no device->host copy: the label by the argmax, the logits by their GEMV (into the arena too, for the argmax)" staged
check "cpu builds of the same pipelines (for comparison)" "$bin/devproc" build $pipes -C "$bp"
mkdir -p "$tmp/ir/cpu" "$tmp/ir/cuda"
cp "$bp/classify/weights.bin" "$tmp/ir/cpu/" && cp "$bp/classify/weights.bin" "$tmp/ir/cuda/"
irs() { # cpu|cuda
	for p in ops batch16 batch4; do
		mkdir -p "$tmp/ir/$1/$p"
		cp "$tmp/ir/$1/weights.bin" "$tmp/ir/$1/$p/" || return 1
		if [ "$1" = cpu ]; then
			buildir "$p" "$root/targets/cpu" "$tmp/ir/cpu/$p" cpu || return 1
		else
			buildir "$p" "$gdir/all.map" "$tmp/ir/cuda/$p" || return 1
		fi
	done
}
check "tests/gpu/{ops,batch16,batch4}.ir lowered for the cpu" irs cpu
check "tests/gpu/{ops,batch16,batch4}.ir lowered for cuda, nvcc-compiled, linked" irs cuda
transformer() {
	c=$tmp/ir/cuda/ops/5.gpu.cu
	# the addmm with a bias vector: one cuBLASLt call, no epilogue kernel
	grep -q '^	if (dprt_cublaslt_bias(g, 12, 7, 5, 1.0f, ' "$c" &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_addmm_epilogue, ' "$c")" -eq 1 ] &&
		# the residual add: written by the layer norm's kernel, launched with
		# the add's operands, its result and the norm's
		grep -q '^/\* 12 rows of 7: a warp each; the residual add x = a + b written in the first pass \*/$' "$c" &&
		[ "$(grep -c 'dps_add(ar\[j\], br\[j\], 1.0f)' "$c")" -eq 1 ] &&
		grep -A1 '^	/\* %[0-9]* = aten.add %[0-9]*, %[0-9]* {alpha=1.0} : f32\[12,7\] \*/$' "$c" |
		grep -q '^	/\* %[0-9]* = aten.layer_norm '
}
check "ops.ir's cuda code: addmm + bias vector in one cuBLASLt call; the residual add done by the layer norm reading it" transformer
same() {
	"$bin/devproc" build "$root/examples/classify/classify.dp" --target cuda -C "$tmp/again/x" &&
		cmp "$bc/classify/5.gpu.cu" "$tmp/again/x/classify/5.gpu.cu" &&
		cmp "$bc/classify/5.cpu.c" "$tmp/again/x/classify/5.cpu.c"
}
check "5.gpu.cu and 5.cpu.c are byte-identical from another build folder" same
driver() {
	$cc -std=c11 -Wall -Wextra -Werror -I"$bc/classify" -I"$root/runtime" "$gdir/repeat.c" \
		"$bc/classify/libclassify.a" $(sed -n 's/^ \* Link with [^ ]* \(.*\)\.$/\1/p' "$bc/classify/classify.h") \
		-o "$tmp/repeat"
}
check "a C program links libclassify.a with the flags classify.h names" driver
nodev() {
	CUDA_VISIBLE_DEVICES= "$bc/classify/classify" --in image=$data/classify/image.npy >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q '^classify: cuda: cudaGetDeviceCount: .*: no CUDA device (.*--target cpu' "$tmp/err"
}
check "with no GPU visible the cuda binary exits 1: 'classify: cuda: cudaGetDeviceCount: ...'" nodev
nodevapi() {
	CUDA_VISIBLE_DEVICES= "$tmp/repeat" "$data/classify/image.npy" "$tmp/l.npy" "$tmp/o.npy" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 3 ] && grep -q '^run 0: cuda: cudaGetDeviceCount: ' "$tmp/err"
}
check "with no GPU visible classify_run fails and classify_error says why" nodevapi
archflag() {
	"$bin/devproc" build examples/classify/classify.dp --target cuda --cuda-arch sm_80 -C "$tmp/sm80" >/dev/null &&
		grep -q '^cuda_arch = sm_80$' "$tmp/sm80/build.ninja" &&
		grep -q '^cuda_arch = sm_90$' "$bc/build.ninja" &&
		[ -s "$tmp/sm80/classify/5.gpu.o" ] && grep -q '^device cuda sm_90' targets/cuda
}
check "--cuda-arch sm_80 overrides the mapping's sm_90 without editing it, and nvcc builds for it" archflag
# A device->host copy of 8 MiB or more of an output no op reads comes back
# in pieces of 4 MiB or more (at most 32), each followed by an event, after
# the partition's other copies and its head event; the host waits for the
# head instead of the stream, then for each piece before copying it into
# the output (stages/common/xfer.h).  tests/gpu/pieces.ir: y in 3 pieces
# (4 MiB, 4 MiB, 128 KiB), issued by the partition after it (the last);
# not z, as large but read by the argmax on the cpu, nor the small s,
# which its kernel writes into the staging itself (emit.c, copyout: no
# copy); nor any of classify's outputs (small).
npyf32() { # file shape n seed: deterministic floats in [-1, 1]
	perl -e 'my ($f, $shape, $n, $s) = @ARGV;
		my $d = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: $shape, }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d,
			pack("f<*", map { ((($_ * 7919 + $s) % 2003) - 1001) / 1001 } 0 .. $n - 1)' "$@"
}
pc=$tmp/pieces
pieces() {
	buildir pieces "$gdir/pieces.map" "$pc/cuda" || return 1
	c=$pc/cuda/5.gpu.cu h=$pc/cuda/5.cpu.c
	# the .cu: z's copy whole, then (after s's) the head, then y's pieces,
	# each followed by its event, in this order
	grep -q '^	static const dprt_cuda_plan plan = {[0-9]*, 0, [0-9]*, 2, 1, 4};$' "$c" &&
		[ "$(grep -c 'cudaMemcpyDeviceToHost' "$c")" -eq 4 ] &&
		grep -q '^	float \*v10 = (float \*)(P + [0-9]*); *\/\* f32\[8\], staging ' "$c" &&
		grep -q '^	if (dprt_cuda_ok(cudaMemcpyAsync(P + [0-9]*, v[0-9]*, 8519680, cudaMemcpyDeviceToHost, g->stream),$' "$c" &&
		grep -q '^	return dprt_cuda_run((dprt_cuda \*)state, 0, part1, 1, err, errn);$' "$c" &&
		grep -q '^	return dprt_cuda_run_until((dprt_cuda \*)state, 1, part3, 0, err, errn);$' "$c" &&
		grep -q '^pieces_gpu_wait(void \*state, int ev, char \*err, size_t errn)$' "$c" &&
		[ "$(grep -c 'dprt_cuda_record(g, ' "$c")" -eq 4 ] &&
		sed -n '/^part3(/,/^}/p' "$c" | grep -e 'cudaMemcpyAsync(P' -e 'dprt_cuda_record' \
			-e '^	 *cudaMemcpyDeviceToHost, g->stream),$' -e 'copyout' |
			sed 's/(P + [0-9]*, /(P + N, /' >"$pc/seq" &&
		printf '%s\n' \
			'	/* none: %10 is written into the page-locked staging by its kernel (copyout) */' \
			'	if (dprt_cuda_record(g, 0, err, errn) != 0)' \
			'	if (dprt_cuda_ok(cudaMemcpyAsync(P + N, (const unsigned char *)v4 + 0, 4194304,' \
			'	                                 cudaMemcpyDeviceToHost, g->stream),' \
			'	    dprt_cuda_record(g, 1, err, errn) != 0)' \
			'	if (dprt_cuda_ok(cudaMemcpyAsync(P + N, (const unsigned char *)v4 + 4194304, 4194304,' \
			'	                                 cudaMemcpyDeviceToHost, g->stream),' \
			'	    dprt_cuda_record(g, 2, err, errn) != 0)' \
			'	if (dprt_cuda_ok(cudaMemcpyAsync(P + N, (const unsigned char *)v4 + 8388608, 131072,' \
			'	                                 cudaMemcpyDeviceToHost, g->stream),' \
			'	    dprt_cuda_record(g, 3, err, errn) != 0)' | diff - "$pc/seq" || return 1
	# the host: z copied whole; y piece by piece, each after its wait, then
	# its --profile row
	grep -q '^int pieces_gpu_wait(void \*state, int ev, char \*err, size_t errn);$' "$h" &&
		grep -q '^	dprt_memcpy(out\[1\], v[0-9]*, 8519680);   /\* output "z" \*/$' "$h" &&
		sed -n '/output "y": 3 pieces/,/copy to output/p' "$h" | sed 's/v[0-9]* + /v + /' >"$pc/hseq" &&
		printf '%s\n' \
			'	/* output "y": 3 pieces, each copied once its event (1..3) is reached */' \
			'	if (pieces_gpu_wait(state, 1, err, errn) != 0)' '		return -1;' \
			'	dprt_memcpy((unsigned char *)out[0] + 0, (const unsigned char *)v + 0, 4194304);' \
			'	if (pieces_gpu_wait(state, 2, err, errn) != 0)' '		return -1;' \
			'	dprt_memcpy((unsigned char *)out[0] + 4194304, (const unsigned char *)v + 4194304, 4194304);' \
			'	if (pieces_gpu_wait(state, 3, err, errn) != 0)' '		return -1;' \
			'	memcpy((unsigned char *)out[0] + 8388608, (const unsigned char *)v + 8388608, 131072);' \
			'	DPRT_TRACE_OP(11, "copy to output");' | diff - "$pc/hseq" || return 1
	# small outputs: no pieces, no events, no wait
	! grep -q -e 'dprt_cuda_record' -e 'run_until' -e '_gpu_wait' "$bc/classify/5.gpu.cu" \
		"$bc/classify/5.cpu.c" &&
		grep -q '^	static const dprt_cuda_plan plan = {.*, 0};$' "$bc/classify/5.gpu.cu"
}
check "pieces.ir for cuda: y (8.1 MiB, no reader) in 3 pieces after the head event, the host waiting for each before copying it; z (read on the cpu) whole; s written into the staging by its kernel; classify's outputs not in pieces; nvcc compiles it" pieces
# tune cuda.copyout 0: s copied after its kernel as before, from the arena
copyout0() {
	{ cat "$gdir/pieces.map"; echo "tune cuda.copyout 0"; } >"$pc/co0.map" &&
		"$bin/dp-lower_gpu" "$pc/cuda/4.partition.dpir" -t "$pc/co0.map" -o "$pc/co0.cu" &&
		c=$pc/co0.cu &&
		[ "$(grep -c 'cudaMemcpyDeviceToHost' "$c")" -eq 5 ] &&
		grep -q '^	float \*v10 = (float \*)(A + [0-9]*); *\/\* f32\[8\], arena ' "$c" &&
		grep -q '^	if (dprt_cuda_ok(cudaMemcpyAsync(P + [0-9]*, v10, 32, cudaMemcpyDeviceToHost, g->stream),$' "$c" &&
		! grep -q copyout "$c" &&
		{ cat "$gdir/pieces.map"; echo "tune cuda.copyout 2"; } >"$pc/co2.map" &&
		! "$bin/dp-lower_gpu" "$pc/cuda/4.partition.dpir" -t "$pc/co2.map" -o "$pc/co2.cu" \
			2>"$pc/co2.err" && [ ! -e "$pc/co2.cu" ] &&
		grep -q 'co2.map:7:19: tune cuda.copyout 2: expected 0 or 1$' "$pc/co2.err"
}
check "tune cuda.copyout 0: pieces.ir's s copied from the arena after its kernel, as before; a bad value refused" copyout0

# the most pieces: 1.2 GB in 32 of ceil(bytes/32) rounded up to 64 bytes,
# the last shorter (lowered only)
pieces32() {
	mkdir -p "$pc/32" &&
		printf '%s\n' 'dpir 1.0 p32 import' \
			'%0 = input {name="x"} : f32[3,100000000] @cpu' \
			'%1 = aten.relu %0 : f32[3,100000000] @cpu' \
			'return y=%1' >"$pc/32/p32.ir" &&
		lowerir "$pc/32/p32.ir" "$pc/32" &&
		c=$pc/32/5.gpu.cu h=$pc/32/5.cpu.c &&
		[ "$(grep -c 'cudaMemcpyAsync(P + [0-9]*, (const unsigned char \*)v[0-9]* + [0-9]*, 37500032,$' "$c")" -eq 31 ] &&
		grep -q 'cudaMemcpyAsync(P + [0-9]*, (const unsigned char \*)v[0-9]* + 1162500992, 37499008,$' "$c" &&
		[ "$(grep -c 'dprt_cuda_record(g, ' "$c")" -eq 33 ] &&
		grep -q '^	    dprt_cuda_record(g, 32, err, errn) != 0)$' "$c" &&
		grep -q '^	static const dprt_cuda_plan plan = {.*, 33};$' "$c" &&
		[ "$(grep -c '^	if (p32_gpu_wait(state, [0-9]*, err, errn) != 0)$' "$h")" -eq 32 ] &&
		grep -q '^	dprt_memcpy((unsigned char \*)out\[0\] + 1162500992, (const unsigned char \*)v[0-9]* + 1162500992, 37499008);$' "$h"
}
check "a 1.2 GB output: 32 pieces of 37500032 bytes (the last 37499008), 33 events" pieces32
# run through the host emulation of the generated CUDA (tests/gpu/emu,
# whose events fail a wait for one not recorded): the same outputs as the
# cpu build's
emupieces() {
	e=$pc/emu
	cxx=${CXX:-c++}
	x="-I$root/tests/gpu/emu -I$root/runtime"
	mkdir -p "$e" "$pc/cpu" &&
		cp "$pc/cuda/5.gpu.cu" "$e/gpu.cpp" &&
		$cxx -std=c++17 -O1 -w $x -include dprt_cuda.h -c "$e/gpu.cpp" -o "$e/gpu.o" &&
		$cxx -std=c++17 -O1 -w $x -c "$gdir/emu/emu.cpp" -o "$e/emu.o" &&
		"$bin/dp-link" "$pc/cuda/4.partition.dpir" "$pc/cuda/5.cpu.o" "$e/gpu.o" "$e/emu.o" \
			--runtime "$root/lib" --include "$root/runtime" --cc "$cc" -o "$e/pieces" &&
		buildir pieces "$root/targets/cpu" "$pc/cpu" cpu &&
		npyf32 "$pc/x.npy" "(520, 64)" 33280 1 && npyf32 "$pc/w.npy" "(64, 4096)" 262144 2 &&
		npyf32 "$pc/b.npy" "(8,)" 8 3 || return 1
	for t in emu cpu; do
		"$pc/$t/pieces" --in x="$pc/x.npy" --in w="$pc/w.npy" --in b="$pc/b.npy" \
			--out y="$pc/$t.y.npy" --out z="$pc/$t.z.npy" --out i="$pc/$t.i.npy" \
			--out s="$pc/$t.s.npy" || return 1
	done
	cmpall "$pc/cpu" "$pc/emu" y z s && "$bin/npycmp" --exact "$pc/cpu.i.npy" "$pc/emu.i.npy"
}
check "pieces.ir's cuda code emulated on the host: its outputs (y in pieces) = the cpu build's" emupieces

# ---- where a CUDA device is
run() { # exe args...: runs it, showing its messages
	"$@"
}
classify() {
	run "$bc/classify/classify" --in image=$data/classify/image.npy \
		--out label=$tmp/label.npy --out logits=$tmp/logits.npy &&
		"$bin/npycmp" --exact $tmp/label.npy $data/classify/label.npy &&
		"$bin/npycmp" --tol 1e-5 $tmp/logits.npy $data/classify/logits.npy
}
ondevice "classify on cuda: label equals PyTorch's, logits within 1e-5" classify
mlps() {
	run "$bc/mlp/mlp" --in x=$data/mlp/in0.npy --out y=$tmp/mlp.npy &&
		"$bin/npycmp" --tol 1e-5 $tmp/mlp.npy $data/mlp/out.npy &&
		run "$bc/mlp_core/mlp_core" --in x=$data/mlp_core/in0.npy --out y=$tmp/core.npy &&
		"$bin/npycmp" --tol 1e-5 $tmp/core.npy $data/mlp_core/out.npy
}
ondevice "mlp (linear, relu) and mlp_core (permute, addmm) on cuda: within 1e-5 of PyTorch's" mlps
cpugpu() {
	run "$bp/classify/classify" --in image=$data/classify/image.npy \
		--out label=$tmp/cl.npy --out logits=$tmp/co.npy &&
		"$bin/npycmp" --exact $tmp/cl.npy $tmp/label.npy &&
		"$bin/npycmp" --tol 1e-5 $tmp/logits.npy $tmp/co.npy
}
ondevice "classify: the cpu and cuda builds agree" cpugpu
repeat() {
	run "$tmp/repeat" "$data/classify/image.npy" "$tmp/rl.npy" "$tmp/ro.npy" &&
		"$bin/npycmp" --exact $tmp/rl.npy $data/classify/label.npy &&
		"$bin/npycmp" --tol 1e-5 $tmp/ro.npy $data/classify/logits.npy
}
ondevice "classify through its C API, 20 runs (eager, captured, replayed), then 3 from classify_input_buffer: same bytes each time" repeat
batches() {
	for p in batch16 batch4; do
		for t in cpu cuda; do
			run "$tmp/ir/$t/$p/$p" --in image=$gdir/image${p#batch}.npy \
				--out label=$tmp/$t.$p.label.npy --out logits=$tmp/$t.$p.logits.npy \
				--out probs=$tmp/$t.$p.probs.npy || return 1
		done
		cmpall "$tmp/cpu.$p" "$tmp/cuda.$p" label logits probs || { echo "in $p"; return 1; }
	done
}
ondevice "batch 16 (cuBLAS + epilogue kernels) and 4 (GEMV, 4 rows), with softmax and argmax on cuda: = cpu" batches
ops() {
	outs="mm relu sq cast tmm perm sm am addmm lin bias ln lsq"
	for t in cpu cuda; do
		args=
		for o in $outs; do args="$args --out $o=$tmp/$t.ops.$o.npy"; done
		run "$tmp/ir/$t/ops/ops" --in a=$gdir/a.npy --in b=$gdir/b.npy --in c=$gdir/c.npy \
			--in x=$gdir/x.npy --in w=$gdir/w.npy $args || return 1
	done
	cmpall "$tmp/cpu.ops" "$tmp/cuda.ops" $outs
}
ondevice "ops.ir (broadcasts, fused relu and cast, permute, softmax/argmax on inner axes, mm, addmm, linear, addmm+bias in cuBLASLt, add+layer norm): = cpu" ops
bench() {
	run "$bc/classify/classify" --in image=$data/classify/image.npy --bench 200 >"$tmp/bench" || return 1
	cat "$tmp/bench"
	grep -q '^bench: 200 runs, median' "$tmp/bench"
}
ondevice "classify on cuda: --bench 200 (graph replays) prints the median latency" bench
nographs() {
	DPRT_CUDA_GRAPHS=0 run "$bc/classify/classify" --in image=$data/classify/image.npy \
		--out logits=$tmp/ng.npy --bench 20 && "$bin/npycmp" --exact $tmp/ng.npy $tmp/logits.npy
}
ondevice "classify with DPRT_CUDA_GRAPHS=0 (always eager) gives the same logits" nographs
gpupieces() {
	for g in 1 0; do   # captured and replayed (--bench), then eager
		DPRT_CUDA_GRAPHS=$g run "$pc/cuda/pieces" --in x="$pc/x.npy" --in w="$pc/w.npy" \
			--in b="$pc/b.npy" --out y="$pc/g$g.y.npy" --out z="$pc/g$g.z.npy" \
			--out i="$pc/g$g.i.npy" --out s="$pc/g$g.s.npy" --bench 5 &&
			cmpall "$pc/cpu" "$pc/g$g" y z s || return 1
	done
	run "$pc/cuda/pieces" --in x="$pc/x.npy" --in w="$pc/w.npy" --in b="$pc/b.npy" \
		--profile >"$pc/prof" || return 1
	cat "$pc/prof"
	grep -q 'copy to output$' "$pc/prof"
}
ondevice "pieces.ir on cuda (y's copy in pieces, waited for by events): = cpu, graph replays and DPRT_CUDA_GRAPHS=0; --profile's copy to output row" gpupieces

# An index out of range on the device: the kernel records it and the run
# fails as the cpu's does (the same message, but for the op's number in
# each program's IR), exit 1, no output written.
# the Llama of examples/llama with its KV cache (llama_kv.dp: 2 layers,
# one token a run) for cuda: the decoder's step as few kernels (its
# tokens against PyTorch's: make demo-llama on a GPU machine) -- the cache
# written in place (no copy of it, no where over it), q, k and v one GEMV
# kernel, gate and up one, the residual adds in the GEMV epilogues, the
# rotated keys written by index_write's kernel, each RMS norm (one row)
# computed by the GEMV kernel that reads it (5 norms: 33 kernels before),
# and each layer's rotated query and its two cache writes computed by the
# q/k/v GEMV kernel's blocks after their sums (tune cuda.gemv.tail: its
# warps permuted so that a block holds the columns half a head apart that
# the rotation pairs, each element of the three in the block holding the
# columns it reads; 3 kernels a layer before, and with tune cuda.gemv.tail
# 0, where they are one launch of their own); the rotary tables (a product, concatenated with itself, its cos
# and sin: 3 kernels before) computed again in each kernel that reads them
# (plan.c's manyread), the concatenation a second time in a lambda where
# a kernel reaches it at another index; the 2 key
# and value heads read by the 4 query heads in place, through a batch
# stride of 0 (dp-legalize's grouped heads: no expand of the cache, 2
# kernels before); with tune cuda.gemv.norm 0 each norm is its own kernel
# again (20); no GEMV that computes a norm writes over the norm's input,
# which it reads as it writes
# kvtune NAME 'KEY VALUE': llama_kv built for targets/cuda plus that tune
# line, in $tmp/NAME (its mapping $tmp/NAME.target), its output in
# $tmp/NAME.out
kvtune() {
	{ cat "$root/targets/cuda"; echo "tune $2"; } >"$tmp/$1.target" &&
		"$bin/devproc" build "$root/examples/llama/llama_kv.dp" --target "$tmp/$1.target" \
			-C "$tmp/$1" >"$tmp/$1.out" 2>&1
}
decoder() {
	"$bin/devproc" build "$root/examples/llama/llama_kv.dp" --target cuda -C "$tmp/kv" >/dev/null &&
		c=$tmp/kv/llama_kv/5.gpu.cu &&
		grep -q '^ \* 1 cuda partition, 15 kernels;' "$c" &&
		! grep -q '_expand' "$c" &&
		[ "$(grep -A14 '^static const dprt_sdpa attn' "$c" | grep -c '^	{0, 512, 0},$')" -eq 4 ] &&
		[ "$(grep -c '^/\* the GEMV.s blocks, then each block.s elements of the kernels after it' "$c")" -eq 2 ] &&
		[ "$(grep -c '^			k[0-9]*_add_at(i, ys + 0, ' "$c")" -eq 2 ] &&
		[ "$(grep -c '^			k[0-9]*_index_write_at(i, t1x0, ys + 64, ' "$c")" -eq 2 ] &&
		[ "$(grep -c '^			k[0-9]*_index_write_at(i, t2x0, ys + 96, t2y);' "$c")" -eq 2 ] &&
		[ "$(grep -A2 '_slot\[128\] = {   /\* each warp.s unit \*/' "$c" | grep -c '^	0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,$')" -eq 2 ] &&
		! grep -q '_group, ' "$c" && ! grep -q 'kernels in one launch' "$c" &&
		! grep -q '^	DP_LAUNCH(k[0-9]*_\(cos\|sin\|cat\|mul\), ' "$c" &&
		[ "$(grep -c '^	const auto u[0-9]*_0 = \[&\]() {$' "$c")" -eq 4 ] &&
		! grep -q 'DeviceToDevice' "$c" && ! grep -q '_where, ' "$c" &&
		! grep -q '_rms, ' "$c" &&
		[ "$(grep -c '^/\* a is the input of RMS norm %[0-9]*, computed first in each warp \*/' "$c")" -eq 5 ] &&
		[ "$(grep -c '3 sibling products of a in one kernel' "$c")" -eq 2 ] &&
		[ "$(sed '/^#else   \/\* the host half alone/q' "$c" | grep -c 'const float \*__restrict__ bg,')" -eq 2 ] &&
		[ "$(grep -c 'r = dps_add(eacc0, r, 1.0f);' "$c")" -eq 4 ] &&
		[ "$(grep -A1 'dp_pdl_wait();' "$c" | grep -c 'const float eacc0 = e\[n + 0\];')" -eq 4 ] &&
		perl "$gdir/rmsovl.pl" "$c" &&
		kvtune kvt0 'cuda.gemv.tail 0' &&
		c0=$tmp/kvt0/llama_kv/5.gpu.cu &&
		grep -q '^ \* 1 cuda partition, 17 kernels;' "$c0" &&
		[ "$(grep -c '^/\* 3 kernels in one launch, their blocks side by side: k[0-9]*_add, k[0-9]*_index_write, k[0-9]*_index_write \*/' "$c0")" -eq 2 ] &&
		[ "$(grep -c '_add_group, 3, 256, 1)(.*   /\* in place: the state' "$c0")" -eq 2 ] &&
		! grep -q '_slot\[\|ys + ' "$c0" &&
		! kvtune kvt2 'cuda.gemv.tail 2' &&
		grep -q "kvt2.target:$(($(wc -l <"$root/targets/cuda") + 1)):21: tune cuda.gemv.tail 2: expected 0 or 1" "$tmp/kvt2.out" || return 1
	{ cat "$root/targets/cuda"; echo "tune cuda.gemv.norm 0"; } >"$tmp/nonorm.target"
	"$bin/devproc" build "$root/examples/llama/llama_kv.dp" --target "$tmp/nonorm.target" \
		-C "$tmp/kv0" >/dev/null &&
		c=$tmp/kv0/llama_kv/5.gpu.cu &&
		grep -q '^ \* 1 cuda partition, 20 kernels;' "$c" &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_rms, ' "$c")" -eq 5 ] &&
		! grep -q 'a is the input of RMS norm' "$c"
}
check "llama_kv for cuda: 15 kernels for 2 layers (the token and its position read from the staging by two, the rotary tables' product of one term a multiply fused with the cast before it, the tables computed again in each kernel reading them, cache written in place and read in place by grouped heads, each RMS norm in the GEMV reading it, q/k/v and gate/up GEMVs fused, residual adds in GEMV epilogues, their operand read right after the wait, each layer's RoPE and cache writes by the q/k/v kernel's blocks, its warps paired half a head apart); 17 with tune cuda.gemv.tail 0 (those three one launch), 2 refused; 20 with tune cuda.gemv.norm 0" decoder
# by default (tune cuda.pdl 1) the same 15 kernels, the elementwise, copy-in
# and GEMV ones (13 launches; the q/k/v kernels wait again before their
# tails) launched with programmatic dependent launch (runtime/cuda/pdl.cuh), each waiting for the
# kernels before it (the GEMVs with a norm after loading their weights, the
# copy-ins after reading the staging); the kernel library's attention
# launched by the library (with it too); each generated kernel lets the next
# start at its first line (DP_PDL_EARLY), or after its wait with tune
# cuda.pdl late; nvcc compiles it; with tune cuda.pdl 0 the two inputs
# copied in the stream and the 13 kernels, all 11 launches the ordinary way
pdl() {
	c=$tmp/kv/llama_kv/5.gpu.cu &&
		grep -q '^ \* 1 cuda partition, 15 kernels;' "$c" &&
		grep -q '^#include "cuda/pdl.cuh"' "$c" &&
		grep -B1 '^#include "cuda/pdl.cuh"' "$c" | grep -q '^#define DP_PDL_EARLY 1 ' &&
		l=$(grep -c '^	DP_LAUNCH(k[0-9]*_[a-z0-9_]*, [0-9]*, [0-9]*, 1)(' "$c") &&
		[ "$l" -eq 13 ] &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_copyin, 1, 32, 1)(' "$c")" -eq 2 ] &&
		! grep -q 'cudaMemcpyAsync(.*cudaMemcpyHostToDevice' "$c" &&
		! grep -q '_bmm' "$c" &&
		grep -q '^/\* %[0-9]* = aten.mul %[0-9]*, %[0-9]* : f32\[1,8,1\] \*/$' "$c" &&
		[ "$(grep -c 'dp_pdl_wait();' "$c")" -eq 15 ] &&
		[ "$(grep -c '^	DP_LAUNCH(' "$c")" -eq 13 ] &&
		grep -A1 'wp\[t\] = __ldcs(bn + k);' "$c" | grep -q '}' &&
		[ -x "$tmp/kv/llama_kv/llama_kv" ] &&
		# built in halves where configure found a C++ compiler: the host
		# half registers no kernels, the executable holds the device half
		{ [ -z "$hostcxx" ] || { ! nm "$tmp/kv/llama_kv/5.gpu.o" | grep -q '__cudaRegisterFatBinary' &&
			nm "$tmp/kv/llama_kv/llama_kv" | grep -q ' R llama_kv_gpu_fatbin$'; }; } &&
		kvtune kvp0 'cuda.pdl 0' &&
		c0=$tmp/kvp0/llama_kv/5.gpu.cu &&
		grep -q '^ \* 1 cuda partition, 13 kernels;' "$c0" &&
		! grep -q 'pdl' "$c0" && [ "$(grep -c '^	DP_LAUNCH(k[0-9]*_[a-z0-9_]*, .*, 0)(' "$c0")" -eq 11 ] &&
		[ "$(grep -c 'cudaMemcpyAsync(.*cudaMemcpyHostToDevice' "$c0")" -eq 2 ] && ! grep -q '_copyin' "$c0" &&
		{ cat "$root/targets/cuda"; echo "tune cuda.pdl late"; } >"$tmp/pdll.target" &&
		"$bin/devproc" gen "$root/examples/llama/llama_kv.dp" --target "$tmp/pdll.target" \
			-C "$tmp/kvpl" >/dev/null && ninja -C "$tmp/kvpl" llama_kv/5.gpu.cu >/dev/null &&
		cl=$tmp/kvpl/llama_kv/5.gpu.cu &&
		grep -q '^#include "cuda/pdl.cuh"' "$cl" && ! grep -q 'DP_PDL_EARLY' "$cl" &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_[a-z0-9_]*, [0-9]*, [0-9]*, 1)(' "$cl")" -eq 13 ] &&
		! kvtune kvp2 'cuda.pdl 2' &&
		grep -q "kvp2.target:$(($(wc -l <"$root/targets/cuda") + 1)):15: tune cuda.pdl 2: expected 0, 1 or late" "$tmp/kvp2.out"
}
check "llama_kv for cuda by default (tune cuda.pdl 1): the 13 launches of elementwise, copy-in and GEMV kernels launched with programmatic dependent launch, each waiting first, each letting the next start at once (DP_PDL_EARLY); nvcc compiles it; the same launches without DP_PDL_EARLY with tune cuda.pdl late; 11 ordinary launches and two copies with tune cuda.pdl 0; tune cuda.pdl 2 refused at its line and column" pdl
# with tune cuda.gemv.l2 16 each of the 9 GEMV kernels (they hold their
# weights) takes DP_PF<k>, the next GEMV's weights (address and bytes, one
# range: q/k/v's three lie together), which its blocks ask into L2 before
# their wait, a share a block (dp_pdl_l2); the last, none after it; nvcc
# compiles it; by default (0) none; tune cuda.gemv.l2 3 refused at its line
l2pf() {
	kvtune kvl2 'cuda.gemv.l2 16' &&
		c=$tmp/kvl2/llama_kv/5.gpu.cu &&
		[ "$(grep -c ', DP_PF[0-9]*);$' "$c")" -eq 9 ] &&
		[ "$(grep -c '^#define DP_PF[0-7] (const char \*)(g->weights + [0-9]*), [0-9]*u   /\* k[0-9]*_linear.s weights \*/$' "$c")" -eq 8 ] &&
		grep -q '^#define DP_PF3 (const char \*)(g->weights + [0-9]*), 32768u ' "$c" &&
		grep -q '^#define DP_PF8 NULL, 0u   /\* no GEMV after it \*/$' "$c" &&
		[ "$(grep -c '^			dp_pdl_l2(pf + o, pfn - o < sh ? pfn - o : sh);$' "$c")" -eq 9 ] &&
		! grep -q 'DP_PF\|dp_pdl_l2' "$tmp/kv/llama_kv/5.gpu.cu" &&
		! kvtune kvl23 'cuda.gemv.l2 3' &&
		grep -q "kvl23.target:$(($(wc -l <"$root/targets/cuda") + 1)):19: tune cuda.gemv.l2 3: expected 0, 1, 2, 4, 8 or 16" "$tmp/kvl23.out"
}
check "llama_kv for cuda with tune cuda.gemv.l2 16: each GEMV kernel asks the next GEMV's weights into L2 (one range each, none after the last); none by default; tune cuda.gemv.l2 3 refused at its line and column" l2pf
# an i64 .npy of shape $1 (a tuple's text) holding the rest
npy64() {
	perl -e '$s = shift; @v = @ARGV; $d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: $s, }";
		$d .= " " x (117 - length $d) . "\n"; print "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v)' "$@"
}
# tune cuda.gemv.warps 32: the warps of each GEMV kernel of one row take
# 4 columns each where their weights fit (8 blocks of 4 warps, not 16 or
# 32), the output head (4001 columns) one; by default none takes 4; nvcc
# compiles it; tune cuda.gemv.warps 100 refused at its line and column
gvwarps() {
	kvtune kvw32 'cuda.gemv.warps 32' &&
		c=$tmp/kvw32/llama_kv/5.gpu.cu && c0=$tmp/kv/llama_kv/5.gpu.cu &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_linear, 8, 128, 1)(' "$c")" -eq 8 ] &&
		[ "$(grep -c '^	DP_LAUNCH(k[0-9]*_linear, 1001, 128, 1)(' "$c")" -eq 1 ] &&
		[ "$(grep -c '/\* columns n\.\.n+3 \*/' "$c")" -eq 4 ] &&
		! grep -q '^	DP_LAUNCH(k[0-9]*_linear, 8, 128, 1)(' "$c0" &&
		! grep -q '/\* columns n\.\.n+3 \*/' "$c0" &&
		! kvtune kvw100 'cuda.gemv.warps 100' &&
		grep -q "kvw100.target:$(($(wc -l <"$root/targets/cuda") + 1)):22: tune cuda.gemv.warps 100: expected 32, 64, 128, 256, 512, 1024 or 2048" "$tmp/kvw100.out"
}
check "llama_kv for cuda with tune cuda.gemv.warps 32: the GEMV kernels in 8 blocks, their warps taking 4 columns each where the weights fit; tune cuda.gemv.warps 100 refused at its line and column" gvwarps
# samelogits DIR: three tokens in one process (the cache kept between
# them) through the llama_kv built in $tmp/DIR: the same logits bits as
# the default build's
samelogits() {
	for t in 1 2 3; do
		npy64 '(1, 1)' $((t * 7)) >"$tmp/tok$t.npy" && npy64 '(1,)' $((t - 1)) >"$tmp/pos$t.npy" || return 1
	done
	a="--steps 3 --in tok=$tmp/tok1.npy --in tok=$tmp/tok2.npy --in tok=$tmp/tok3.npy"
	a="$a --in pos=$tmp/pos1.npy --in pos=$tmp/pos2.npy --in pos=$tmp/pos3.npy"
	"$tmp/kv/llama_kv/llama_kv" $a --out "logits=$tmp/l2a%d.npy" >/dev/null &&
		"$tmp/$1/llama_kv/llama_kv" $a --out "logits=$tmp/l2b%d.npy" >/dev/null &&
		for t in 1 2 3; do "$bin/npycmp" --exact "$tmp/l2b$t.npy" "$tmp/l2a$t.npy" || return 1; done
}
ondevice "llama_kv on cuda, three tokens in one process: the same logits bits with tune cuda.gemv.l2 16 as without" samelogits kvl2
ondevice "llama_kv on cuda, three tokens in one process: the same logits bits with tune cuda.gemv.warps 32 as without" samelogits kvw32
ondevice "llama_kv on cuda, three tokens in one process: the same logits bits with tune cuda.gemv.tail 0 (the rotary embedding and cache writes a launch of their own) as with the GEMV's tail" samelogits kvt0
# elementwise kernels lowered alone (no nvcc): one over more elements than
# a grid of ints reaches is a grid-stride loop of its own (its 2 GiB input
# copied in the stream); two small independent ones after it are one launch
# of their blocks side by side, after the kernel reading their 32 bytes of
# input from the staging
bigsmall() {
	mkdir -p "$tmp/bs" &&
		printf '%s\n' 'dpir 1.0 bs import' \
			'%0 = input {name="x"} : f32[2,268435456] @cpu' \
			'%1 = aten.relu %0 : f32[2,268435456] @cpu' \
			'%2 = aten.neg %1 : f32[2,268435456] @cpu' \
			'%3 = input {name="s"} : f32[8] @cpu' \
			'%4 = aten.neg %3 : f32[8] @cpu' \
			'%5 = aten.abs %3 : f32[8] @cpu' \
			'return a=%2, b=%4, c=%5' >"$tmp/bs/bs.ir" &&
		lowerir "$tmp/bs/bs.ir" "$tmp/bs" &&
		c=$tmp/bs/5.gpu.cu &&
		grep -q '^ \* 2 cuda partitions, 3 kernels;' "$c" &&
		grep -q '^	if (dprt_cuda_ok(cudaMemcpyAsync(v1, P + 0, 2147483648, cudaMemcpyHostToDevice, ' "$c" &&
		grep -q '^	DP_LAUNCH(k[0-9]*_copyin, 1, 32, 1)((const unsigned long long \*)(P + 2147483648), ' "$c" &&
		grep -q '^	for (long long i = blockIdx.x \* 256LL + threadIdx.x; i < 536870912LL; i += (long long)gridDim.x \* 256) {$' "$c" &&
		grep -q '^/\* 2 kernels in one launch, their blocks side by side: k[0-9]*_neg, k[0-9]*_abs \*/$' "$c" &&
		grep -q '^	DP_LAUNCH(k[0-9]*_neg_group, 2, 256, 1)(' "$c"
}
check "lowering: a kernel past an int grid a grid-stride loop of its own; two small independent kernels one launch" bigsmall
# a one-row product whose matrix a kernel before computes (relu(w)): the
# GEMV reads it only after its wait; a constant matrix (llama_kv's, pdl
# above) loads before it
gemvact() {
	mkdir -p "$tmp/ga" &&
		printf '%s\n' 'dpir 1.0 ga import' \
			'%0 = input {name="x"} : f32[1,64] @cpu' \
			'%1 = input {name="w"} : f32[32,64] @cpu' \
			'%2 = aten.relu %1 : f32[32,64] @cpu' \
			'%3 = aten.linear %0, %2 : f32[1,32] @cpu' \
			'return y=%3' >"$tmp/ga/ga.ir" &&
		lowerir "$tmp/ga/ga.ir" "$tmp/ga" &&
		c=$tmp/ga/5.gpu.cu &&
		awk '/^k[0-9]*_linear\(/ { k = 1 } k && /dp_pdl_wait\(\);/ { w = NR }
			k && /__ldcs\(bn \+ k\)/ { l = NR } k && /^}/ { exit }
			END { exit !(w && l && w < l) }' "$c"
}
check "lowering: a one-row product of a computed matrix reads it after the wait" gemvact
# an operand of a binary op that the cuda target cannot compute (a u8
# product, inlined into the add reading it): the op's error, exit 1, no
# .cu (it once left a kernel naming a variable it never declared)
u8operand() {
	mkdir -p "$tmp/u8" &&
		printf '%s\n' 'dpir 1.0 u import' '%0 = input {name="x"} : f32[4] @cpu' \
			'%1 = cast %0 {dtype="u8"} : u8[4] @cpu' '%2 = aten.mul %1, %1 : u8[4] @cpu' \
			'%3 = cast %2 {dtype="f32"} : f32[4] @cpu' \
			'%4 = aten.add %3, %0 {alpha=1.0} : f32[4] @cpu' 'return y=%4' >"$tmp/u8/u.ir" &&
		! lowerir "$tmp/u8/u.ir" "$tmp/u8" 2>"$tmp/u8/err" &&
		grep -q 'lower_gpu: op 3 (aten.mul): the cuda target has no kernel for u8 tensors' "$tmp/u8/err" &&
		[ ! -e "$tmp/u8/5.gpu.cu" ]
}
check "lowering: an operand the cuda target cannot compute inside a binary op's chain: its error, exit 1, no .cu" u8operand
# where a C++ compiler is: that step's cuda code (the norms in the GEMVs,
# the decode attention of the kernel library: tests/gpu/emux) run on the
# host through the emulator of tests/gpu/emu, one token at position 5 (the
# rotary tables' sines not all 0; the cache's 5 rows before it zeros in
# both builds), its logits against the cpu build's (10-20 s); DIR: the
# cuda build in $tmp/DIR
emustep() {
	b=$tmp/$1/llama_kv
	e=$tmp/emustep$1
	cxx=${CXX:-c++}
	x="-I$root/tests/gpu/emux -I$root/tests/gpu/emu -I$root/runtime"
	mkdir -p "$e" || return 1
	# compiled whole; DP_LAUNCH: tests/gpu/emu/cuda/launch.cuh
	cp "$b/5.gpu.cu" "$e/gpu.cpp" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -include dprt_cuda.h -include emux.h \
			-c "$e/gpu.cpp" -o "$e/gpu.o" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -c "$gdir/emux/emux.cpp" -o "$e/emux.o" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -c "$gdir/emu/emu.cpp" -o "$e/emu.o" &&
		"$bin/dp-link" "$b/4.partition.dpir" "$b/5.cpu.o" "$e/gpu.o" "$e/emu.o" "$e/emux.o" \
			--runtime "$root/lib" --include "$root/runtime" --cc "$cc" -o "$e/llama_kv" &&
		cp "$b/weights.bin" "$e/" &&
		"$bin/devproc" build "$root/examples/llama/llama_kv.dp" --target cpu -C "$tmp/kvc" >/dev/null ||
		return 1
	perl -e 'sub w { my ($f, $shape, @v) = @_;
		my $d = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: $shape, }";
		$d .= " " x (117 - length $d) . "\n"; open my $o, ">:raw", $f or die;
		print $o "\x93NUMPY\x01\x00", pack("v", 118), $d, pack("q<*", @v) }
		w("$ARGV[0]/tok.npy", "(1, 1)", 464); w("$ARGV[0]/pos.npy", "(1,)", 5)' "$e" &&
		"$e/llama_kv" --in tok="$e/tok.npy" --in pos="$e/pos.npy" --out logits="$e/emu.npy" >/dev/null &&
		"$tmp/kvc/llama_kv/llama_kv" --in tok="$e/tok.npy" --in pos="$e/pos.npy" \
			--out logits="$e/cpu.npy" >/dev/null &&
		"$bin/npycmp" --tol 1e-5 "$e/emu.npy" "$e/cpu.npy"
}
# classify's cuda code emulated (its outputs from the staging its kernels
# wrote) against the cpu build's
emuclassify() {
	e=$tmp/emuclassify
	cxx=${CXX:-c++}
	x="-I$root/tests/gpu/emux -I$root/tests/gpu/emu -I$root/runtime"
	mkdir -p "$e" &&
		cp "$bc/classify/5.gpu.cu" "$e/gpu.cpp" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -include dprt_cuda.h -include emux.h \
			-c "$e/gpu.cpp" -o "$e/gpu.o" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -c "$gdir/emux/emux.cpp" -o "$e/emux.o" &&
		$cxx -std=c++17 -O1 -ffp-contract=off -w $x -c "$gdir/emu/emu.cpp" -o "$e/emu.o" &&
		"$bin/dp-link" "$bc/classify/4.partition.dpir" "$bc/classify/5.cpu.o" "$e/gpu.o" "$e/emu.o" \
			"$e/emux.o" --runtime "$root/lib" --include "$root/runtime" --cc "$cc" -o "$e/classify" &&
		cp "$bc/classify/weights.bin" "$e/" || return 1
	for t in "$e/classify" "$bp/classify/classify"; do
		"$t" --in image=examples/classify/image.npy --out logits="$t.logits.npy" \
			--out label="$t.label.npy" >/dev/null || return 1
	done
	"$bin/npycmp" --tol 1e-5 "$e/classify.logits.npy" "$bp/classify/classify.logits.npy" &&
		"$bin/npycmp" --exact "$e/classify.label.npy" "$bp/classify/classify.label.npy"
}
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
	check "classify's cuda code emulated on the host (both outputs written into the staging by their kernels) = the cpu build's" emuclassify
	check "llama_kv's cuda step emulated on the host (norms in the GEMVs, decode attention) = the cpu build's logits" emustep kv
	check "llama_kv's cuda step with tune cuda.gemv.warps 32 (4 columns a warp) emulated on the host = the cpu build's logits" emustep kvw32
else
	skip "classify's cuda code emulated: no C++ compiler for the emulator"
	skip "llama_kv's cuda step emulated: no C++ compiler for the emulator"
	skip "llama_kv's cuda step with tune cuda.gemv.warps 32 emulated: no C++ compiler for the emulator"
fi
if [ -f tests/conformance/c_embedding.pt2 ]; then
	hdr="{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"
	{
		printf '\223NUMPY\001\000\166\000%s' "$hdr"
		printf '%*s\n' $((117 - ${#hdr})) ''
		z='\000\000\000\000\000\000\000'
		printf "\\001$z\\002$z\\003$z\\004$z\\014$z\\365\\377\\377\\377\\377\\377\\377\\377"
	} >"$tmp/badidx.npy"
	check "c_embedding builds for cuda and for the cpu; its kernel records indices out of range" \
		sh -c '"$1" build tests/conformance/c_embedding.dp --target cuda -C "$2/fc" &&
			"$1" build tests/conformance/c_embedding.dp --target cpu -C "$2/fp" &&
			grep -q "dprt_fault_at(" "$2/fc/c_embedding/5.gpu.cu"' sh "$bin/devproc" "$tmp"
	fault() {
		"$tmp/fp/c_embedding/c_embedding" --in in0="$tmp/badidx.npy" --out out="$tmp/fp.npy" \
			2>"$tmp/fp.err" && { echo "the cpu build ran"; return 1; }
		"$tmp/fc/c_embedding/c_embedding" --in in0="$tmp/badidx.npy" --out out="$tmp/fc.npy" \
			2>"$tmp/fc.err"
		rc=$?
		cat "$tmp/fp.err" "$tmp/fc.err"
		[ $rc -eq 1 ] && [ ! -e "$tmp/fc.npy" ] &&
			grep -q '^c_embedding: op [0-9]* (aten.embedding): index 12 is out of range for a dimension of size 10$' "$tmp/fc.err" &&
			[ "$(sed 's/op [0-9]* /op N /' "$tmp/fp.err")" = "$(sed 's/op [0-9]* /op N /' "$tmp/fc.err")" ]
	}
	ondevice "an embedding index out of range on cuda fails the run with the cpu's message (exit 1, no output)" fault
else
	skip "no tests/conformance/c_embedding.pt2"
	skip "no tests/conformance/c_embedding.pt2"
fi
echo "1..$n"
[ $fails -eq 0 ]
