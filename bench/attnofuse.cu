/* attnofuse.cu: what a decode step would gain by one fewer dependent stage
 * a layer: the attention and the output projection after it as one kernel.
 * The ~100M Llama of bench/llm.py (12 layers, 12 heads of 64, a static
 * cache of 512 positions in f32, bf16 weights), one token at position 128.
 * A layer here is a chain of dependent kernels, each launched with
 * programmatic dependent launch and letting the next start at its first
 * line, as the generated code does:
 *   - q: a one-row product x·Wq (768x768) writing q, its weights loaded
 *     into registers before the wait (stages/lower_gpu/mm.c's form, 4
 *     columns a warp); it stands for the q/k/v kernel before the attention;
 *   - the attention, the kernel library's (runtime/cuda/attndec.cuh):
 *     sdpadec_cl, a cluster of 4 blocks of 4 warps a head (the default), or
 *     sdpadec, a block of 16 warps a head;
 *   - o: the output projection y·Wo plus the residual, a one-row product as q.
 * against the same q kernel, then
 *   - fused: one cluster of 12 blocks of 16 warps, block h the attention of
 *     head h (dec64 and the every-warp merge, into its shared memory), then,
 *     after the cluster's barrier, each warp reads the 768 outputs of the 12
 *     blocks (distributed shared memory) and computes 4 columns of the
 *     output projection plus the residual; the block's 64 columns of
 *     weights (96 KB) are copied into its shared memory before its wait
 *     (cp.async), so that the attention keeps its registers.
 * A GPU machine (sm_90) only:
 *
 *   nvcc -O3 -arch=sm_90 -Iruntime bench/attnofuse.cu -o attnofuse && ./attnofuse
 *
 * Prints each variant's final row against the first's (max |difference|),
 * then us for the 12 layers (the mean of 200 graph replays after 20, CUDA
 * events) and us a layer.  On an H100 (2026-12-07, bench/RESULTS.md): the
 * same bits all three; 6.29, 5.51 and 10.80 us a layer: the fused kernel,
 * its projection on 12 SMs, is the slowest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

#include "dprt_cuda.h"
#include "cuda/fastdiv.cuh"
#include "cuda/pdl.cuh"
#include "cuda/attn.cuh"
#include "cuda/attndec.cuh"

#include "chain.cuh"   /* CK, chain_launch, chain_time, waitearly, dot8 */

enum { LAYERS = 12, H = 12, D = 64, S = 512, POS = 128, N = H * D, WARPS = 4, FW = 16 };

/* A warp's 4 columns n..n+3 of a one-row product over K = 768: its lane's
 * 3 16-byte loads of each column's bf16 weights (elements 8·lane + 256·t),
 * the row x's matching pieces by get(k0, float4 *two), the warp's sums. */
struct Wv {
	uint4 w[4][3];
};

static __device__ __forceinline__ void
wload(Wv &v, const uint4 *W, int n)
{
	int lane = threadIdx.x % 32;
#pragma unroll
	for (int c = 0; c < 4; c++)
#pragma unroll
		for (int t = 0; t < 3; t++)
			v.w[c][t] = __ldcs(W + (long long)(n + c) * (N / 8) + lane + 32 * t);
}

/* The sums of the 4 columns from the row's pieces xa, xb (a lane's), into
 * y[n + c] plus rs, lane c's residual (res[n + c], or 0). */
static __device__ __forceinline__ void
wsum(const Wv &v, const float4 (&xa)[3], const float4 (&xb)[3], float rs, float *y, int n)
{
	int lane = threadIdx.x % 32;
	float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
	for (int t = 0; t < 3; t++)
#pragma unroll
		for (int c = 0; c < 4; c++)
			dot8(acc[c], v.w[c][t], xa[t], xb[t]);
#pragma unroll
	for (int c = 0; c < 4; c++) {
		for (int s = 16; s > 0; s /= 2)
			acc[c] += __shfl_xor_sync(0xffffffffu, acc[c], s);
		if (lane == c)
			y[n + c] = rs + acc[c];
	}
}

/* q or o: y = x·W (+ res), a warp 4 columns. */
static __global__ void __launch_bounds__(32 * WARPS)
kgemv(const uint4 *__restrict__ W, const float *__restrict__ x, const float *__restrict__ res,
      float *__restrict__ y)
{
	int lane = threadIdx.x % 32, n = (blockIdx.x * WARPS + threadIdx.x / 32) * 4;
	Wv v;
	float4 xa[3], xb[3];

	wload(v, W, n);
	waitearly();
	float rs = res && lane < 4 ? res[n + lane] : 0.0f;
#pragma unroll
	for (int t = 0; t < 3; t++) {
		const float4 *p = (const float4 *)(x + 8 * lane + 256 * t);
		xa[t] = p[0], xb[t] = p[1];
	}
	wsum(v, xa, xb, rs, y, n);
}

/* The fused attention and output projection: one cluster of H blocks of FW
 * warps; block h is head h. */
template <int MASK>
static __global__ void __launch_bounds__(32 * FW, 1)
kfused(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
       const float *__restrict__ v, const void *__restrict__ mask, const uint4 *__restrict__ Wo,
       const float *__restrict__ res, float *__restrict__ y)
{
#if __CUDA_ARCH__ >= 900
	namespace cg = cooperative_groups;
	__shared__ float ws[FW][2 + 64];
	__shared__ __align__(16) float yh[D];   /* this head's outputs */
	cg::cluster_group cl = cg::this_cluster();
	const int lane = threadIdx.x % 32, w = threadIdx.x / 32, r = (int)cl.block_rank();
	const int n = (r * FW + w) * 4;   /* the warp's 4 columns of the projection */
	int send = P.S;
	const float *kb = k + boff(P, r, P.kbs), *vb = v + boff(P, r, P.vbs);
	const float *qr = q + boff(P, r, P.qbs);
	long long mo = MASK ? mbase(P, r) : 0;
	extern __shared__ uint4 wsm[];   /* the block's 64 columns of Wo, [64][N / 8] */
	Wv wv;

	/* the block's weights into shared memory before the wait (cp.async:
	 * no registers held through the attention) */
	for (int i = threadIdx.x; i < D * (N / 8); i += 32 * FW) {
		unsigned sa = (unsigned)__cvta_generic_to_shared(wsm + i);
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa),
		             "l"(Wo + (long long)(r * D + i / (N / 8)) * (N / 8) + i % (N / 8)));
	}
	asm volatile("cp.async.commit_group;" ::: "memory");
	{   /* the warp's first slice's rows into L2, as sdpadec */
		int j = DEC_SLICE64 * w + lane / 2;
		if (lane / 2 < DEC_SLICE64 && j < send) {
			dp_pdl_prefetch(kb + (long long)j * P.KRS + 32 * (lane & 1));
			dp_pdl_prefetch(vb + (long long)j * P.VRS + 32 * (lane & 1));
		}
	}
	waitearly();
	float rs = lane < 4 ? res[n + lane] : 0.0f;   /* the residual, loaded with the keys */
	dec64<MASK, FW>(P, qr, kb, vb, mask, mo, 0, send, ws[w], w);
	__syncthreads();
	{
		int t = lane & 15, e0 = 4 * w + 2 * (lane >> 4);
		merge16(ws[t][0], ws[t][1], ws[t][2 + e0], ws[t][3 + e0], yh + e0, t);
	}
	asm volatile("cp.async.wait_all;" ::: "memory");
	cl.sync();   /* every head's outputs written and seen, the weights in */
#pragma unroll
	for (int c = 0; c < 4; c++)
#pragma unroll
		for (int t = 0; t < 3; t++)
			wv.w[c][t] = wsm[(4 * w + c) * (N / 8) + lane + 32 * t];
	float4 xa[3], xb[3];
#pragma unroll
	for (int t = 0; t < 3; t++) {   /* elements 8·lane + 256·t: head (that)/64 */
		int e = 8 * lane + 256 * t;
		const float4 *p = (const float4 *)cl.map_shared_rank(yh + e % D, e / D);
		xa[t] = p[0], xb[t] = p[1];
	}
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");   /* read */
	wsum(wv, xa, xb, rs, y, n);
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");   /* the others read ours */
#endif
}

static cudaStream_t st;

static void
launch(const void *f, dim3 grid, int block, int cluster, void **args, int smem = 0)
{
	chain_launch(st, f, grid, block, 1, cluster, args, smem);
}

struct Bufs {
	uint4 *wq, *wo;          /* [LAYERS][N][N] bf16 */
	float *kc, *vc;          /* [LAYERS][H][S][D] */
	unsigned char *mask;     /* [S] */
	float *x[2], *q, *y;
};

/* Enqueues the 12 layers of variant how: 0 q + sdpadec_cl (4) + o, 1 q +
 * sdpadec (16 warps) + o, 2 q + fused. */
static void
layers(const Bufs &b, const At &P, int how)
{
	for (int l = 0; l < LAYERS; l++) {
		const uint4 *wq = b.wq + (size_t)l * N * N / 8, *wo = b.wo + (size_t)l * N * N / 8;
		const float *kc = b.kc + (size_t)l * H * S * D, *vc = b.vc + (size_t)l * H * S * D;
		const float *x = b.x[l % 2], *none = NULL;
		float *x2 = b.x[(l + 1) % 2], *q = b.q, *y = b.y;
		const void *m = b.mask;
		int chunk = S;
		float *part = NULL;
		unsigned *count = NULL;
		{
			void *a[] = {&wq, &x, &none, &q};
			launch((const void *)kgemv, N / (4 * WARPS), 32 * WARPS, 1, a);
		}
		if (how == 2) {
			void *a[] = {(void *)&P, &q, &kc, &vc, &m, &wo, &x, &x2};
			launch((const void *)kfused<1>, H, 32 * FW, H, a, D * N * 2);
			continue;
		}
		void *a[] = {(void *)&P, &q, &kc, &vc, &m, &y, &chunk, &part, &count};
		if (how == 0)
			launch((const void *)sdpadec_cl<1, 4>, dim3(4, H), 32 * (DEC_WARPS64 / 4), 4, a);
		else
			launch((const void *)sdpadec<2, 1, 64, DEC_WARPS64>, dim3(1, H), 32 * DEC_WARPS64, 1, a);
		void *o[] = {&wo, &y, &x, &x2};
		launch((const void *)kgemv, N / (4 * WARPS), 32 * WARPS, 1, o);
	}
}

int
main(void)
{
	static const char *names[] = {"q + attention (cluster of 4 a head) + o",
	                              "q + attention (a block of 16 warps a head) + o",
	                              "q + attention and o fused (a cluster of 12)"};
	Bufs b;
	At P;
	size_t wn = (size_t)LAYERS * N * N, cn = (size_t)LAYERS * H * S * D;
	float *ref = (float *)malloc(N * sizeof(float)), *got = (float *)malloc(N * sizeof(float));

	CK(cudaStreamCreate(&st));
	{   /* random weights and caches, made on the host */
		__nv_bfloat16 *hw = (__nv_bfloat16 *)malloc(wn * 2);
		float *hc = (float *)malloc(cn * sizeof(float));
		unsigned s = 12345;
		for (int which = 0; which < 2; which++) {
			for (size_t i = 0; i < wn; i++) {
				s = s * 1664525u + 1013904223u;
				hw[i] = __float2bfloat16(((int)(s >> 9) % 2001 - 1000) * 3e-5f);
			}
			CK(cudaMalloc(which ? (void **)&b.wo : (void **)&b.wq, wn * 2));
			CK(cudaMemcpy(which ? (void *)b.wo : (void *)b.wq, hw, wn * 2, cudaMemcpyHostToDevice));
		}
		for (int which = 0; which < 2; which++) {
			for (size_t i = 0; i < cn; i++) {
				s = s * 1664525u + 1013904223u;
				hc[i] = ((int)(s >> 9) % 2001 - 1000) * 1e-3f;
			}
			CK(cudaMalloc(which ? (void **)&b.vc : (void **)&b.kc, cn * sizeof(float)));
			CK(cudaMemcpy(which ? b.vc : b.kc, hc, cn * sizeof(float), cudaMemcpyHostToDevice));
		}
		unsigned char hm[S];
		for (int j = 0; j < S; j++)
			hm[j] = j <= POS;
		CK(cudaMalloc((void **)&b.mask, S));
		CK(cudaMemcpy(b.mask, hm, S, cudaMemcpyHostToDevice));
		for (int i = 0; i < N; i++) {
			s = s * 1664525u + 1013904223u;
			ref[i] = ((int)(s >> 9) % 2001 - 1000) * 1e-3f;
		}
		free(hw);
		free(hc);
	}
	CK(cudaMalloc((void **)&b.x[0], N * sizeof(float)));
	CK(cudaMalloc((void **)&b.x[1], N * sizeof(float)));
	CK(cudaMalloc((void **)&b.q, N * sizeof(float)));
	CK(cudaMalloc((void **)&b.y, N * sizeof(float)));
	CK(cudaFuncSetAttribute((const void *)kfused<1>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
	CK(cudaFuncSetAttribute((const void *)kfused<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, D * N * 2));
	P = chain_decat(H, S, D);   /* 12 rows (heads) of one query, 512 keys, a bool mask */

	float x0[N];
	memcpy(x0, ref, sizeof x0);
	for (int how = 0; how < 3; how++) {   /* each once, from the same row: the results */
		CK(cudaMemcpy(b.x[0], x0, sizeof x0, cudaMemcpyHostToDevice));
		layers(b, P, how);
		CK(cudaStreamSynchronize(st));
		CK(cudaMemcpy(how ? got : ref, b.x[LAYERS % 2], N * sizeof(float), cudaMemcpyDeviceToHost));
		double md = 0, mr = 0;
		for (int i = 0; how && i < N; i++) {
			md = fmax(md, fabs((double)got[i] - ref[i]));
			mr = fmax(mr, fabs((double)ref[i]));
		}
		if (how)
			printf("%-48s max|difference| %.3g (max|value| %.3g)\n", names[how], md, mr);
	}
	for (int round = 0; round < 3; round++)
		for (int how = 0; how < 3; how++) {
			cudaGraph_t gr;

			CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
			layers(b, P, how);
			CK(cudaStreamEndCapture(st, &gr));
			double us = chain_time(st, gr);
			printf("round %d  %-48s %7.1f us, %5.2f a layer\n", round + 1, names[how], us,
			       us / LAYERS);
		}
	return 0;
}
