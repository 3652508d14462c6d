#!/usr/bin/env python3
"""stamps_patch.py TREE: makes TREE, a copy of this checkout, record in-graph
timestamps of a CUDA program's kernels, for bench/stamps.py.  Never run it on
the checkout itself.

Each kernel that waits with dp_pdl_wait (runtime/cuda/pdl.cuh: every
generated elementwise, GEMV and bmm kernel, and the decode attention) has
thread 0 of each block record %globaltimer on entering the wait and on
leaving it, with the kernel's grid and block sizes, in a ring of 2^19
records in device memory (one ring for the program's kernels, one for the
kernel library's attention); an executable built from TREE writes both
rings at exit to $DP_STAMP_OUT and $DP_STAMP_OUT.attn.  The figures are
those of the graph as it runs (programmatic dependent launch and all),
which Nsight Compute's per-kernel times are not.

Usage, on the GPU machine (bench/RESULTS.md has an example):
    cp -a . /tmp/s && python3 bench/stamps_patch.py /tmp/s && make -C /tmp/s -j16
    (cd /tmp/s && python3 bench/llm.py --skip-cpu --devproc-only --build-only --dir /tmp/ns)
    DP_STAMP_OUT=/tmp/st /tmp/ns/cuda.bf16/decode/decode --in ids=... --in pos=... --bench 20
    python3 bench/stamps.py /tmp/st /tmp/ns/cuda.bf16/decode/5.gpu.cu
"""
import os
import sys

if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)
t = sys.argv[1]
if os.path.realpath(t) == os.path.realpath(os.path.join(os.path.dirname(__file__), "..")):
    sys.exit("stamps_patch.py: %s is this checkout; patch a copy (cp -a . /tmp/s)" % t)
p = t + "/runtime/cuda/pdl.cuh"; s = open(p).read()
glob = r'''
#define DP_STAMPN (1 << 19)
__device__ unsigned long long dp_stamps[4 * DP_STAMPN];
__device__ unsigned int dp_nstamp;
static __device__ __forceinline__ unsigned long long dp_gt(void)
{ unsigned long long x; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(x)); return x; }
'''
s = s.replace("#define DPRT_PDL_CUH\n", "#define DPRT_PDL_CUH\n" + glob, 1)
# both orders of dp_pdl_wait (DP_PDL_EARLY or not): the wait itself stamped
old = '''	cudaGridDependencySynchronize();
'''
new = '''	unsigned long long t0 = dp_gt();
	cudaGridDependencySynchronize();
	unsigned long long t1 = dp_gt();
	if (threadIdx.x == 0 && threadIdx.y == 0) {
		unsigned i = atomicAdd(&dp_nstamp, 1u) % DP_STAMPN, sm;
		asm("mov.u32 %0, %%smid;" : "=r"(sm));
		dp_stamps[4 * i] = t0;
		dp_stamps[4 * i + 1] = t1;
		dp_stamps[4 * i + 2] = (unsigned long long)gridDim.x * gridDim.y * gridDim.z |
		                       (unsigned long long)blockDim.x << 32;
		dp_stamps[4 * i + 3] = sm;
	}
'''
assert s.count(old) == 2; s = s.replace(old, new); open(p, "w").write(s)
p = t + "/runtime/cuda/attn.cu"; s = open(p).read()
s += r'''
#include <stdlib.h>
extern "C" void
dprt_attn_stamps(const char *path)
{
	static unsigned long long h[4 * DP_STAMPN];
	unsigned n = 0;
	cudaDeviceSynchronize();
	cudaMemcpyFromSymbol(&n, dp_nstamp, sizeof n);
	cudaMemcpyFromSymbol(h, dp_stamps, sizeof h);
	FILE *f = fopen(path, "wb");
	if (!f) return;
	fwrite(&n, 4, 1, f);
	fwrite(h, 8, 4 * (size_t)(n < DP_STAMPN ? n : DP_STAMPN), f);
	fclose(f);
}
'''
open(p, "w").write(s)
p = t + "/runtime/cuda/launch.cuh"; s = open(p).read()
old = '''template <typename F>
struct dp_go;'''
new = r'''extern "C" void dprt_attn_stamps(const char *path);
static void
dp_stamp_dump(void)
{
	const char *out = getenv("DP_STAMP_OUT");
	static unsigned long long h[4 << 19];
	unsigned n = 0;
	void *pn = dp_symbol("dp_nstamp"), *ps = dp_symbol("dp_stamps");
	char a[512];
	if (!out || !pn || !ps) { fprintf(stderr, "stamps: none (%p %p)\n", pn, ps); return; }
	cudaDeviceSynchronize();
	cudaMemcpy(&n, pn, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(h, ps, sizeof h, cudaMemcpyDeviceToHost);
	FILE *f = fopen(out, "wb");
	if (!f) return;
	fwrite(&n, 4, 1, f);
	fwrite(h, 8, 4 * (size_t)(n < (1u << 19) ? n : (1u << 19)), f);
	fclose(f);
	snprintf(a, sizeof a, "%s.attn", out);
	dprt_attn_stamps(a);
	fprintf(stderr, "stamps: %u records to %s\n", n, out);
}

template <typename F>
struct dp_go;'''
assert old in s; s = s.replace(old, new, 1)
old = '''		return e == cudaSuccess ? 0 : -1;
	}();'''
new = '''		if (e == cudaSuccess)
			atexit(dp_stamp_dump);
		return e == cudaSuccess ? 0 : -1;
	}();'''
assert old in s; s = s.replace(old, new, 1)
s = s.replace('#include <stdio.h>\n', '#include <stdio.h>\n#include <stdlib.h>\nstatic void dp_stamp_dump(void);\n', 1)
open(p, "w").write(s)
print("patched", t)
