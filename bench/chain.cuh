/* chain.cuh: what the single-file CUDA microbenchmarks of bench/ share
 * (gemvchain.cu, attnofuse.cu, qkvattn.cu): a CUDA call checked, a kernel
 * launched with programmatic dependent launch and a cluster size, a
 * captured graph timed; in the kernels, the wait of a generated kernel and
 * a bf16 GEMV's 8-element step; where attn.cuh came first, the decode
 * attention's geometry. */
#ifndef BENCH_CHAIN_CUH
#define BENCH_CHAIN_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

/* x, a CUDA call: on failure, the file, the call and why, and exit 1 */
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s: %s\n", __FILE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

/* Enqueues kernel f on st: grid and block, programmatic dependent launch
 * where pdl (the kernel waits with cudaGridDependencySynchronize), a
 * cluster of that many blocks along x where more than 1, smem bytes of
 * dynamic shared memory. */
static void
chain_launch(cudaStream_t st, const void *f, dim3 grid, int block, int pdl, int cluster,
             void **args, int smem)
{
	cudaLaunchConfig_t c = {};
	cudaLaunchAttribute at[2];

	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = pdl;
	c.gridDim = grid;
	c.blockDim = block;
	c.stream = st;
	c.dynamicSmemBytes = smem;
	c.attrs = at;
	c.numAttrs = 1;
	if (cluster > 1) {
		at[1].id = cudaLaunchAttributeClusterDimension;
		at[1].val.clusterDim.x = cluster;
		at[1].val.clusterDim.y = at[1].val.clusterDim.z = 1;
		c.numAttrs = 2;
	}
	CK(cudaLaunchKernelExC(&c, f, args));
}

/* us a replay of graph gr on st: the mean of 200 replays after 20, timed
 * by CUDA events; gr is destroyed. */
static double
chain_time(cudaStream_t st, cudaGraph_t gr)
{
	cudaGraphExec_t x;
	cudaEvent_t e0, e1;
	float ms;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaGraphInstantiate(&x, gr, 0));
	for (int j = 0; j < 20; j++)
		CK(cudaGraphLaunch(x, st));
	CK(cudaEventRecord(e0, st));
	for (int j = 0; j < 200; j++)
		CK(cudaGraphLaunch(x, st));
	CK(cudaEventRecord(e1, st));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphDestroy(gr));
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	return ms * 1e3 / 200;
}

/* The wait of a kernel that lets the next start at once, as a generated
 * kernel's (DP_PDL_EARLY, runtime/cuda/pdl.cuh). */
static __device__ __forceinline__ void
waitearly(void)
{
#if __CUDA_ARCH__ >= 900
	cudaTriggerProgrammaticLaunchCompletion();
	cudaGridDependencySynchronize();
#endif
}

/* acc plus the 8 products of w's bf16 weights with a (elements 0-3) and b
 * (4-7), in turn. */
static __device__ __forceinline__ void
dot8(float &acc, const uint4 &w, float4 a, float4 b)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&w;
	float2 f0 = __bfloat1622float2(h[0]), f1 = __bfloat1622float2(h[1]);
	float2 f2 = __bfloat1622float2(h[2]), f3 = __bfloat1622float2(h[3]);
	acc = fmaf(f0.x, a.x, acc), acc = fmaf(f0.y, a.y, acc);
	acc = fmaf(f1.x, a.z, acc), acc = fmaf(f1.y, a.w, acc);
	acc = fmaf(f2.x, b.x, acc), acc = fmaf(f2.y, b.y, acc);
	acc = fmaf(f3.x, b.z, acc), acc = fmaf(f3.y, b.w, acc);
}

#ifdef DPRT_ATTN_CUH
/* The decode attention's geometry (runtime/cuda/attn.cuh, included
 * before this file): h heads of one query row of d against s cached keys
 * each, dense, a bool mask of s bytes shared by the heads, scale 1/8. */
static At
chain_decat(int h, int s, int d)
{
	At P;

	memset(&P, 0, sizeof P);
	P.L = 1, P.S = s, P.E = d, P.EV = d, P.CAUSAL = 0, P.NB = 1;
	P.MSL = 0, P.MSS = 1;
	for (int i = 0; i < DPRT_SDPA_MAXB; i++)
		P.bdim[i] = 1;
	P.bdim[0] = h, P.bstr[0] = 0;
	P.qbs[0] = d, P.kbs[0] = (long long)s * d, P.vbs[0] = (long long)s * d, P.ybs[0] = d;
	P.QRS = d, P.KRS = d, P.VRS = d, P.YRS = d, P.YPS = 0;
	P.SCALE = 0.125f, P.MERGE = 1;
	atdivs(&P);
	return P;
}
#endif

#endif
