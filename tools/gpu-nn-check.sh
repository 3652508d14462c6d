#!/bin/sh
# gpu-nn-check.sh: the neural-network kernels of the cuda target on a real
# GPU (run on the GPU machine after `sh tools/device-setup.sh && make -j16`):
#
#  1. correctness: the per-op conformance cases of convolution, pooling,
#     bmm/matmul and attention (tests/conformance, PyTorch's references in
#     refs.npz), tests/data/cnn and tinylm, and ResNet-18 (the narrow
#     fixture and the full-width one, exported here by
#     tools/export_resnet.py --full) built for --target cuda, run under each
#     convolution method (DPRT_CUDA_CONV=fp32, tf32, direct) and compared
#     with bin/npycmp: fp32 and direct to the cases' tolerance (1e-5; 1e-4
#     for the ResNets' 20 layers), tf32 to 2e-2 (10-bit mantissas);
#  2. speed: ResNet-18 batch 1, 224x224, host to host (input on the host,
#     output back on the host), the program's --bench median under fp32 and
#     tf32, and PyTorch on the same GPU: eager (TF32 convolutions, its
#     default; and fp32) and torch.compile(mode="reduce-overhead").
#
# With STAGES="3 4 ...", also times the full ResNet-18 with each size of the
# convolution kernel's ring of K slices; with PROFILE=1, each kernel's time
# (Nsight Compute) and PyTorch's kernels for the same network (torch.profiler).
# Prints a summary; with OUT set, writes it and every log under $OUT.
# Usage: sh tools/gpu-nn-check.sh [BENCH_RUNS]   (default 2000)
set -u
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
runs=${1:-2000}
out=${OUT:-$root/gpu-nn-check.out}
mkdir -p "$out" || exit 1
w=$(mktemp -d) || exit 1
trap 'rm -rf "$w"' EXIT
sum=$out/summary.txt
: >"$sum"
pass=0
fail=0
say() { echo "$*" | tee -a "$sum"; }
ok() { pass=$((pass + 1)); say "ok   $*"; }
bad() { fail=$((fail + 1)); say "FAIL $*"; }

say "== gpu-nn-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi -L 2>&1 | tee -a "$sum"
python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)' 2>&1 | tee -a "$sum"

# ---- the models and their references (PyTorch, fp32 on the CPU)
say "== exporting the full ResNet-18 (tools/export_resnet.py --full)"
mkdir -p "$w/rn"
python3 tools/export_resnet.py "$w/rn" --full >"$out/export.log" 2>&1 || say "export failed: see $out/export.log"
cp examples/imagenet/resnet18_narrow.pt2 "$w/rn/" 2>/dev/null
cat >"$w/ref.py" <<'EOF'
import sys, numpy as np, torch
torch.manual_seed(0)
x = torch.randn(1, 3, 224, 224)
np.save(sys.argv[1] + "/x.npy", x.numpy())
for name in ("resnet18_narrow", "resnet18"):
    try:
        m = torch.export.load(f"{sys.argv[1]}/{name}.pt2").module()
    except Exception as e:
        print(name, "not loaded:", e)
        continue
    with torch.no_grad():
        np.save(f"{sys.argv[1]}/{name}.out.npy", m(x).numpy())
EOF
python3 "$w/ref.py" "$w/rn" >"$out/ref.log" 2>&1 || say "references failed: see $out/ref.log"
rn=
for m in resnet18_narrow resnet18; do
	[ -f "$w/rn/$m.pt2" ] || continue
	printf 'input x: f32[1,3,224,224]\ny = model("%s.pt2", x)\noutput y\n' "$m" >"$w/rn/$m.dp"
	rn="$rn $w/rn/$m.dp"
done

# ---- one build of everything for the cuda target
conf=$(ls tests/conformance/c_*.dp | grep -E '/c_(conv|max_pool|avg_pool|adaptive_avg|bmm|matmul|sdpa)')
say "== building for --target cuda: $(echo $conf | wc -w) conformance cases, cnn, tinylm, the ResNets"
for p in $conf tests/data/cnn.dp tests/data/tinylm.dp $rn; do   # one graph; -k 0
	echo "$p"
done >"$w/list"
"$bin/devproc" gen $(cat "$w/list") --target cuda -C "$w/b" >"$out/build.log" 2>&1 &&
	ninja -C "$w/b" -k 0 >>"$out/build.log" 2>&1 ||
	say "some builds failed: see $out/build.log"
cp "$w/b/resnet18/5.gpu.cu" "$out/resnet18.gpu.cu" 2>/dev/null

# check NAME EXE TOL REF OUT ARGS...: runs EXE (its output OUT) under each
# convolution method (one run where the program has no convolution) and
# compares with REF.
check() {
	name=$1 exe=$2 tol=$3 ref=$4 o=$5
	shift 5
	if [ ! -x "$exe" ]; then
		bad "$name: not built"
		return
	fi
	modes=fp32
	grep -q 'dprt_cuda_conv(' "$(dirname "$exe")/5.gpu.cu" 2>/dev/null && modes="fp32 tf32 direct"
	grep -q 'dprt_cuda_convcl_ok(' "$(dirname "$exe")/5.gpu.cu" 2>/dev/null &&
		modes="$modes fp32:cluster tf32:cluster"   # split K summed in thread-block clusters
	for mode in $modes; do
		t=$tol
		case $mode in tf32*) t=2e-2 ;; esac
		case $mode in *:cluster) splitk=cluster ;; *) splitk=sum ;; esac
		if ! DPRT_CUDA_CONV=${mode%:cluster} DPRT_CUDA_SPLITK=$splitk "$exe" "$@" --out "$o=$w/got.npy" >"$w/run.log" 2>&1; then
			bad "$name [$mode]: does not run: $(head -c 300 "$w/run.log")"
			cat "$w/run.log" >>"$out/fail.log"
			continue
		fi
		if r=$("$bin/npycmp" --tol "$t" "$w/got.npy" "$ref" 2>&1); then
			ok "$name [$mode]: $r"
		else
			bad "$name [$mode]: $r"
		fi
		case $mode in
		fp32|tf32) cp "$w/got.npy" "$w/got.$mode.npy" ;;
		*:cluster)   # the same bits as the second kernel's sum
			if r=$("$bin/npycmp" --exact "$w/got.npy" "$w/got.${mode%:cluster}.npy" 2>&1); then
				ok "$name [$mode]: equal to [${mode%:cluster}]"
			else
				bad "$name [$mode]: not equal to [${mode%:cluster}]: $r"
			fi ;;
		esac
	done
}

say "== conformance (PyTorch's references)"
cc -O2 -o "$w/npzx" tests/conformance/npzx.c && mkdir -p "$w/refs" &&
	"$w/npzx" tests/conformance/refs.npz "$w/refs" >/dev/null 2>&1 || say "cannot unpack refs.npz"
for dp in $conf; do
	n=$(basename "$dp" .dp)
	ref=$(sed -n 's/^# ref //p' "$dp")
	tol=$(sed -n 's/^# tol //p' "$dp")
	set --
	for i in $(sed -n 's/^input \([a-z0-9_]*\):.*/\1/p' "$dp"); do
		set -- "$@" --in "$i=$w/refs/$ref.$i.npy"
	done
	check "$n" "$w/b/$n/$n" "${tol:-1e-5}" "$w/refs/$ref.out.npy" out "$@"
done
say "== models"
check cnn "$w/b/cnn/cnn" 1e-5 tests/data/cnn/out.npy y --in x=tests/data/cnn/in0.npy
check tinylm "$w/b/tinylm/tinylm" 1e-5 tests/data/tinylm/out.npy logits --in ids=tests/data/tinylm/in0.npy
for m in resnet18_narrow resnet18; do
	check "$m" "$w/b/$m/$m" 1e-4 "$w/rn/$m.out.npy" y --in "x=$w/rn/x.npy"
done

# ---- speed
say "== ResNet-18 batch 1, host to host, median of $runs runs"
for m in resnet18 resnet18_narrow; do
	for mode in tf32 fp32 tf32:cluster fp32:cluster; do
		[ -x "$w/b/$m/$m" ] || continue
		case $mode in *:cluster) splitk=cluster ;; *) splitk=sum ;; esac
		r=$(DPRT_CUDA_CONV=${mode%:cluster} DPRT_CUDA_SPLITK=$splitk "$w/b/$m/$m" --in "x=$w/rn/x.npy" \
			--bench "$runs" 2>&1 | grep bench:)
		say "devproc  $m  DPRT_CUDA_CONV=${mode%:cluster} DPRT_CUDA_SPLITK=$splitk: ${r:-failed}"
	done
done
cat >"$w/bench.py" <<'EOF'
import sys, time, statistics, torch
runs = int(sys.argv[2])
x = torch.randn(1, 3, 224, 224).pin_memory()

def bench(f, n):
    for _ in range(50):
        f()
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e6, min(t) * 1e6

for name in ("resnet18", "resnet18_narrow"):
    try:
        m = torch.export.load(f"{sys.argv[1]}/{name}.pt2").module().cuda()   # eval semantics already: exported in eval mode
    except Exception as e:
        print(name, "not loaded:", e)
        continue
    torch.backends.cudnn.benchmark = True
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        with torch.no_grad():
            med, lo = bench(lambda: m(x.cuda(non_blocking=True)).cpu(), runs)
        print(f"pytorch  {name}  eager {'tf32' if tf32 else 'fp32'}: median {med:.1f} us, min {lo:.1f} us", flush=True)
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        c = torch.compile(m, mode="reduce-overhead")
        with torch.no_grad():
            for _ in range(5):
                c(x.cuda()).cpu()
            med, lo = bench(lambda: c(x.cuda(non_blocking=True)).cpu(), runs)
        print(f"pytorch  {name}  torch.compile reduce-overhead (tf32 convs): median {med:.1f} us, min {lo:.1f} us", flush=True)
    except Exception as e:
        print(name, "torch.compile failed:", str(e)[:300])
EOF
python3 "$w/bench.py" "$w/rn" "$runs" 2>"$out/torch.log" | tee -a "$sum"

# ---- with STAGES="2 3 ...": the full ResNet-18 again with its convolution
# ring of that many slices (the kernel's NN_STAGES, compiled in by nvcc -D)
if [ -n "${STAGES:-}" ] && [ -x "$w/b/resnet18/resnet18" ]; then
	link=$(ninja -C "$w/b" -t commands resnet18/resnet18 | tail -n 1)
	for st in $STAGES; do
		(cd "$w/b" && nvcc -O3 -arch=sm_90 -DNN_STAGES=$st -I"$root/runtime" -c resnet18/5.gpu.cu \
			-o resnet18/5.gpu.o && sh -c "$link") >"$out/stages$st.log" 2>&1 || { say "NN_STAGES=$st: build failed"; continue; }
		for mode in tf32 fp32; do
			r=$(DPRT_CUDA_CONV=$mode "$w/b/resnet18/resnet18" --in "x=$w/rn/x.npy" --bench "$runs" 2>&1 | grep bench:)
			say "devproc  resnet18  NN_STAGES=$st DPRT_CUDA_CONV=$mode: ${r:-failed}"
		done
	done
	(cd "$w/b" && nvcc -O3 -arch=sm_90 -I"$root/runtime" -c resnet18/5.gpu.cu -o resnet18/5.gpu.o &&
		sh -c "$link") >>"$out/stages.log" 2>&1
fi

# ---- with PROFILE=1: each kernel's time under Nsight Compute (graphs off,
# so that every launch is its own; clocks and caches left as they run)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ -n "${PROFILE:-}" ] && [ -x "$ncu" ] && [ -x "$w/b/resnet18/resnet18" ]; then
	DPRT_CUDA_CONV=tf32 DPRT_CUDA_GRAPHS=0 "$ncu" --metrics gpu__time_duration.sum --csv \
		--clock-control none --cache-control none \
		--launch-skip 20 --launch-count 117 "$w/b/resnet18/resnet18" --in "x=$w/rn/x.npy" \
		--bench 2 >"$out/ncu.csv" 2>"$out/ncu.log"
	awk -F'","' '/gpu__time_duration/ { n = $5; sub(/\(.*/, "", n); t[n] += $NF; c[n]++ }
		END { for (k in t) { printf "%12.1f  %3d  %s\n", t[k], c[k], k; s += t[k] }
		      printf "%12.1f  all kernels (ns)\n", s }' "$out/ncu.csv" |
		sort -rn | tee -a "$sum"
fi

# ---- with PROFILE=1: PyTorch's kernels for the same network (torch.profiler,
# eager, TF32 convolutions through cuDNN), summed by kernel name
if [ -n "${PROFILE:-}" ]; then
	cat >"$w/prof.py" <<'EOF'
import sys, torch
from torch.profiler import profile, ProfilerActivity
m = torch.export.load(f"{sys.argv[1]}/resnet18.pt2").module().cuda()
x = torch.randn(1, 3, 224, 224).cuda()
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = True
with torch.no_grad():
    for _ in range(20):
        m(x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(10):
            m(x)
        torch.cuda.synchronize()
tot = {}
for e in p.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        k = e.name[:90]
        t, c = tot.get(k, (0.0, 0))
        tot[k] = (t + e.device_time / 10, c + 1)
print(f"pytorch kernels per forward: {sum(t for t, _ in tot.values()):.1f} us")
for k, (t, c) in sorted(tot.items(), key=lambda kv: -kv[1][0]):
    print(f"{t:12.1f}  {c // 10:3d}  {k}")
EOF
	python3 "$w/prof.py" "$w/rn" 2>"$out/prof.log" | tee -a "$sum"
fi

say "== $pass passed, $fail failed (logs in $out)"
[ $fail -eq 0 ]
