/* qkvattn.cu: what a decode step would gain by one fewer dependent stage a
 * layer where no bandwidth moves onto fewer SMs: the q/k/v product (with
 * its RMS norm, RoPE and cache writes) and the attention as one kernel, a
 * cluster a head.  The ~100M Llama of bench/llm.py (12 layers, 12 heads of
 * 64, hidden 768, MLP 2048, a static cache of 512 positions in f32, bf16
 * weights), one token at position 128.  A layer is a chain of dependent
 * kernels, each launched with programmatic dependent launch and letting
 * the next start at its first line, as the generated code does (the
 * kernel library's attention after its wait, as it does):
 *   - base: qkv, the norm and the 2304-column product (4 columns a warp,
 *     weights in registers before the wait, stages/lower_gpu/mm.c's form),
 *     each block's 16 columns a head's pairs half a head apart, then the
 *     block's tail: RoPE of q and k, q stored, k and v written into the
 *     cache at the position (the generated q/k/v kernel's tail); the
 *     attention, runtime/cuda/attndec.cuh's sdpadec_cl (a cluster of 4
 *     blocks of 4 warps a head, the default); o, the output projection
 *     plus the residual; gate/up with the norm and silu(g)·u; down plus
 *     the residual;
 *   - fused C: one cluster of C blocks a head (12 clusters) doing the
 *     head's 192 columns of the q/k/v product, its weights copied into
 *     shared memory before the wait (cp.async: 72 KB a block for C = 4, 36
 *     for 8), the norm, the sums, RoPE, q into every block of the cluster
 *     (distributed shared memory), k and v into the cache, the cluster's
 *     barrier, then the attention as sdpadec_cl (dec64 over the cluster's
 *     16 warps, the every-warp merge through distributed shared memory);
 *     then o, gate/up and down as base; letting the next kernel start at
 *     once, as a generated kernel, or after its wait, as the attention.
 * The same arithmetic in the same order in both, so the same bits.
 * A GPU machine (sm_90) only:
 *
 *   nvcc -O3 -arch=sm_90 -Iruntime bench/qkvattn.cu -o qkvattn && ./qkvattn
 *
 * Prints each variant's final row against base's (max |difference|), then
 * us for the 12 layers (the mean of 200 graph replays after 20, CUDA
 * events) and us a layer, three rounds.  On an H100 (2026-12-07,
 * bench/RESULTS.md): the same bits; base 13.46 us a layer, the fused
 * kernel 14.98-16.11 (a cluster of 4 letting the next start after its
 * wait the least slow), base without the attention 11.16: one stage fewer
 * costs more than it saves. */
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

enum { LAYERS = 12, H = 12, D = 64, S = 512, POS = 128, N = H * D, F = 2048, WARPS = 4,
       KT = N / 256 /* 16-byte loads a lane of a row of 768 */ };

static __device__ __forceinline__ float
wsum(float a)
{
	for (int s = 16; s > 0; s /= 2)
		a += __shfl_xor_sync(0xffffffffu, a, s);
	return a;
}

/* A lane's pieces of a row of K (elements 8·lane + 256·t, 8 a piece), and,
 * where g, the row's RMS norm times g (eps 1e-6), a warp's own. */
template <int K>
static __device__ __forceinline__ void
rowload(const float *__restrict__ x, const float *__restrict__ g, float4 (&xa)[K / 256],
        float4 (&xb)[K / 256])
{
	int lane = threadIdx.x % 32;
#pragma unroll
	for (int t = 0; t < K / 256; t++) {
		const float4 *p = (const float4 *)(x + 8 * lane + 256 * t);
		xa[t] = p[0], xb[t] = p[1];
	}
	if (!g)
		return;
	float ss = 0.0f;
#pragma unroll
	for (int t = 0; t < K / 256; t++)
		ss += xa[t].x * xa[t].x + xa[t].y * xa[t].y + xa[t].z * xa[t].z + xa[t].w * xa[t].w +
		      xb[t].x * xb[t].x + xb[t].y * xb[t].y + xb[t].z * xb[t].z + xb[t].w * xb[t].w;
	float rn = rsqrtf(wsum(ss) / K + 1e-6f);
#pragma unroll
	for (int t = 0; t < K / 256; t++) {
		const float4 *p = (const float4 *)(g + 8 * lane + 256 * t);
		float4 ga = p[0], gb = p[1];
		xa[t].x *= rn * ga.x, xa[t].y *= rn * ga.y, xa[t].z *= rn * ga.z, xa[t].w *= rn * ga.w;
		xb[t].x *= rn * gb.x, xb[t].y *= rn * gb.y, xb[t].z *= rn * gb.z, xb[t].w *= rn * gb.w;
	}
}

/* A one-row product over K, a warp CW columns, its weights in registers
 * before the wait: y[n] = x·W[n] (+ res[n]); GATE: the warp's columns are
 * gate rows m, m+1 and up rows m, m+1 (W, W2), y[m] = silu(g)·u. */
template <int K, int CW, bool NORM, bool GATE, bool RES>
static __global__ void __launch_bounds__(32 * WARPS)
kgemv(const uint4 *__restrict__ W, const uint4 *__restrict__ W2, const float *__restrict__ x,
      const float *__restrict__ g, const float *__restrict__ res, float *__restrict__ y)
{
	int lane = threadIdx.x % 32, wi = blockIdx.x * WARPS + threadIdx.x / 32;
	uint4 w[CW][K / 256];
	float4 xa[K / 256], xb[K / 256];
	float acc[CW];

#pragma unroll
	for (int c = 0; c < CW; c++) {
		const uint4 *row = GATE ? (c < CW / 2 ? W : W2) + (long long)(wi * CW / 2 + c % (CW / 2)) * (K / 8)
		                        : W + (long long)(wi * CW + c) * (K / 8);
#pragma unroll
		for (int t = 0; t < K / 256; t++)
			w[c][t] = __ldcs(row + lane + 32 * t);
	}
	waitearly();
	float rs = RES && lane < CW ? res[wi * CW + lane] : 0.0f;
	rowload<K>(x, NORM ? g : NULL, xa, xb);
#pragma unroll
	for (int c = 0; c < CW; c++) {
		acc[c] = 0.0f;
#pragma unroll
		for (int t = 0; t < K / 256; t++)
			dot8(acc[c], w[c][t], xa[t], xb[t]);
	}
#pragma unroll
	for (int c = 0; c < CW; c++)
		acc[c] = wsum(acc[c]);
	if (GATE && lane < CW / 2) {
		float gv = lane == 0 ? acc[0] : acc[1], uv = lane == 0 ? acc[CW / 2] : acc[CW / 2 + 1];
		y[wi * CW / 2 + lane] = gv / (1.0f + expf(-gv)) * uv;
	}
#pragma unroll
	for (int c = 0; c < CW; c++)
		if (!GATE && lane == c)
			y[wi * CW + c] = rs + acc[c];
}

/* Column jj (0..2·half-1) of a block's share of a head: the pairs half a
 * head apart, half of them from half·r. */
static __device__ __forceinline__ int
coldim(int jj, int half, int r)
{
	return jj < half ? half * r + jj : 32 + half * r + (jj - half);
}

/* RoPE of column j (dimension d) of a block's columns in ys, half a head
 * apart from its pair (j ± half). */
static __device__ __forceinline__ float
rope(const float *ys, int j, int jj, int half, int d, const float *cs, const float *sn)
{
	float c = cs[d % 32], s = sn[d % 32];
	return jj < half ? ys[j] * c - ys[j + half] * s : ys[j] * c + ys[j - half] * s;
}

/* base's q/k/v kernel: 144 blocks of 4 warps, block b type b/48 (q, k, v),
 * head (b%48)/4, share r = b%4 (its 16 columns: 8r.., 32+8r..), a warp 4
 * columns; then the tail. */
static __global__ void __launch_bounds__(32 * WARPS)
kqkv(const uint4 *__restrict__ W, const float *__restrict__ x, const float *__restrict__ g,
     const float *__restrict__ cs, const float *__restrict__ sn, float *__restrict__ q,
     float *__restrict__ kc, float *__restrict__ vc)
{
	__shared__ float ys[16];
	int lane = threadIdx.x % 32, w = threadIdx.x / 32, b = blockIdx.x;
	int t = b / 48, h = b % 48 / 4, r = b % 4;
	uint4 wr[4][KT];
	float4 xa[KT], xb[KT];
	float acc[4];

#pragma unroll
	for (int c = 0; c < 4; c++) {
		int d = coldim(4 * w + c, 8, r);
		const uint4 *row = W + (long long)((t * H + h) * D + d) * (N / 8);
#pragma unroll
		for (int u = 0; u < KT; u++)
			wr[c][u] = __ldcs(row + lane + 32 * u);
	}
	waitearly();
	rowload<N>(x, g, xa, xb);
#pragma unroll
	for (int c = 0; c < 4; c++) {
		acc[c] = 0.0f;
#pragma unroll
		for (int u = 0; u < KT; u++)
			dot8(acc[c], wr[c][u], xa[u], xb[u]);
	}
#pragma unroll
	for (int c = 0; c < 4; c++) {
		acc[c] = wsum(acc[c]);
		if (lane == c)
			ys[4 * w + c] = acc[c];
	}
	__syncthreads();
	int j = threadIdx.x;
	if (j >= 16)
		return;
	int d = coldim(j, 8, r);
	if (t == 0)
		q[h * D + d] = rope(ys, j, j, 8, d, cs, sn);
	else if (t == 1)
		kc[((long long)h * S + POS) * D + d] = rope(ys, j, j, 8, d, cs, sn);
	else
		vc[((long long)h * S + POS) * D + d] = ys[j];
}

/* fused: a cluster of C blocks of 16/C warps a head (blockIdx.y); block r
 * takes, of each of q, k, v, the columns coldim(0..64/C-1, 32/C, r), a
 * warp 12 of the block's 192/C. */
template <int C, bool EARLY>
static __global__ void __launch_bounds__(32 * (16 / C), 1)
kfused(const __grid_constant__ At P, const uint4 *__restrict__ W, const float *__restrict__ x,
       const float *__restrict__ g, const float *__restrict__ cs, const float *__restrict__ sn,
       float *__restrict__ kc, float *__restrict__ vc, const void *__restrict__ mask,
       float *__restrict__ y)
{
#if __CUDA_ARCH__ >= 900
	namespace cg = cooperative_groups;
	constexpr int NW = DEC_WARPS64, WB = NW / C, NC = 192 / C, PT = 64 / C, HALF = 32 / C;
	static_assert(NC == 12 * WB, "12 columns a warp");
	__shared__ float ws[WB][2 + 64];
	__shared__ __align__(16) float qs[D];
	__shared__ float ys[NC];
	extern __shared__ uint4 wsm[];   /* [NC][N / 8] */
	cg::cluster_group cl = cg::this_cluster();
	const int lane = threadIdx.x % 32, w = threadIdx.x / 32, h = blockIdx.y;
	const int r = (int)cl.block_rank(), gw = w * C + r;
	const float *kb = kc + (long long)h * S * D, *vb = vc + (long long)h * S * D;
	int send = P.S;

	for (int i = threadIdx.x; i < NC * (N / 8); i += 32 * WB) {   /* the weights, before the wait */
		int j = i / (N / 8), t = j / PT, d = coldim(j % PT, HALF, r);
		unsigned sa = (unsigned)__cvta_generic_to_shared(wsm + i);
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa),
		             "l"(W + (long long)((t * H + h) * D + d) * (N / 8) + i % (N / 8)));
	}
	asm volatile("cp.async.commit_group;" ::: "memory");
	{   /* the warp's first slice's rows into L2, as sdpadec_cl */
		int j = DEC_SLICE64 * gw + lane / 2;
		if (lane / 2 < DEC_SLICE64 && j < send) {
			dp_pdl_prefetch(kb + (long long)j * D + 32 * (lane & 1));
			dp_pdl_prefetch(vb + (long long)j * D + 32 * (lane & 1));
		}
	}
	if (EARLY) {
		waitearly();
	} else {   /* as the kernel library's attention: the next starts after the wait */
		cudaGridDependencySynchronize();
		cudaTriggerProgrammaticLaunchCompletion();
	}
	float4 xa[KT], xb[KT];
	float acc[12];
	rowload<N>(x, g, xa, xb);
	asm volatile("cp.async.wait_all;" ::: "memory");
	__syncthreads();
#pragma unroll
	for (int c = 0; c < 12; c++) {
		acc[c] = 0.0f;
#pragma unroll
		for (int u = 0; u < KT; u++)
			dot8(acc[c], wsm[(12 * w + c) * (N / 8) + lane + 32 * u], xa[u], xb[u]);
	}
#pragma unroll
	for (int c = 0; c < 12; c++) {
		acc[c] = wsum(acc[c]);
		if (lane == c)
			ys[12 * w + c] = acc[c];
	}
	__syncthreads();
	for (int j = threadIdx.x; j < NC; j += 32 * WB) {   /* the tail */
		int t = j / PT, jj = j % PT, d = coldim(jj, HALF, r);
		if (t == 0) {
			float v = rope(ys, j, jj, HALF, d, cs, sn);
			for (int rr = 0; rr < C; rr++)
				cl.map_shared_rank(qs, rr)[d] = v;
		} else if (t == 1) {
			kc[((long long)h * S + POS) * D + d] = rope(ys, j, jj, HALF, d, cs, sn);
		} else {
			vc[((long long)h * S + POS) * D + d] = ys[j];
		}
	}
	cl.sync();   /* q whole in every block, the cache's new rows written */
	dec64<1, NW>(P, qs, kb, vb, mask, 0, 0, send, ws[w], gw);
	cl.sync();
	int t = lane & 15, e0 = 4 * gw + 2 * (lane >> 4);
	const float *src = cl.map_shared_rank(&ws[t / C][0], t % C);
	float mt = src[0], lt = src[1], a0 = src[2 + e0], a1 = src[3 + e0];
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
	merge16(mt, lt, a0, a1, y + h * D + e0, t);
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

static cudaStream_t st;

static void
launch(const void *f, dim3 grid, int block, int cluster, void **args, int smem = 0)
{
	chain_launch(st, f, grid, block, 1, cluster, args, smem);
}

struct Bufs {
	uint4 *wqkv, *wo, *wg, *wu, *wd;   /* per layer: [3N][N], [N][N], [F][N], [F][N], [N][F] */
	float *kc, *vc;                    /* [LAYERS][H][S][D] */
	unsigned char *mask;               /* [S] */
	float *g, *cs, *sn;                /* the norms' weight [N], cos and sin at POS [32] */
	float *x[2], *q, *y, *xo, *hmid;
};

/* The 12 layers of variant how: 0 base, 1 and 2 fused C = 4 and 8 letting
 * the next kernel start at once, 3 and 4 the same after their wait, 5 base
 * without the attention (o reads q: what the attention's stage costs). */
static void
layers(const Bufs &b, const At &P, int how)
{
	const uint4 *none = NULL;
	const float *nof = NULL;
	for (int l = 0; l < LAYERS; l++) {
		const uint4 *wqkv = b.wqkv + (size_t)l * 3 * N * N / 8, *wo = b.wo + (size_t)l * N * N / 8;
		const uint4 *wg = b.wg + (size_t)l * F * N / 8, *wu = b.wu + (size_t)l * F * N / 8;
		const uint4 *wd = b.wd + (size_t)l * N * F / 8;
		float *kc = b.kc + (size_t)l * H * S * D, *vc = b.vc + (size_t)l * H * S * D;
		const float *x = b.x[l % 2];
		float *x2 = b.x[(l + 1) % 2], *q = b.q, *y = b.y, *xo = b.xo, *hm = b.hmid;
		const void *m = b.mask;
		int chunk = S;
		float *part = NULL;
		unsigned *count = NULL;
		if (how == 0 || how == 5) {
			void *a[] = {&wqkv, &x, (void *)&b.g, (void *)&b.cs, (void *)&b.sn, how ? &y : &q, &kc, &vc};
			launch((const void *)kqkv, 144, 32 * WARPS, 1, a);
			const float *kcc = kc, *vcc = vc, *qc = q;
			void *a2[] = {(void *)&P, &qc, &kcc, &vcc, &m, &y, &chunk, &part, &count};
			if (how == 0)
				launch((const void *)sdpadec_cl<1, 4>, dim3(4, H), 32 * (DEC_WARPS64 / 4), 4, a2);
		} else {
			static const void *f[] = {(const void *)kfused<4, true>, (const void *)kfused<8, true>,
			                          (const void *)kfused<4, false>, (const void *)kfused<8, false>};
			int C = how % 2 ? 4 : 8;
			void *a[] = {(void *)&P, &wqkv, &x, (void *)&b.g, (void *)&b.cs, (void *)&b.sn, &kc, &vc, &m, &y};
			launch(f[how - 1], dim3(C, H), 32 * (16 / C), C, a, (192 / C) * N * 2);
		}
		{   /* o plus the residual */
			void *a[] = {&wo, &none, &y, &nof, &x, &xo};
			launch((const void *)kgemv<N, 1, false, false, true>, N / WARPS, 32 * WARPS, 1, a);
		}
		{   /* gate/up with the norm */
			void *a[] = {&wg, &wu, &xo, (void *)&b.g, &nof, &hm};
			launch((const void *)kgemv<N, 4, true, true, false>, F / 2 / WARPS, 32 * WARPS, 1, a);
		}
		{   /* down plus the residual */
			void *a[] = {&wd, &none, &hm, &nof, &xo, &x2};
			launch((const void *)kgemv<F, 1, false, false, true>, N / WARPS, 32 * WARPS, 1, a);
		}
	}
}

static unsigned seed = 12345;

static float
rnd(float scale)
{
	seed = seed * 1664525u + 1013904223u;
	return ((int)(seed >> 9) % 2001 - 1000) * scale;
}

static uint4 *
weights(size_t n)
{
	__nv_bfloat16 *hw = (__nv_bfloat16 *)malloc(n * 2);
	uint4 *d;
	for (size_t i = 0; i < n; i++)
		hw[i] = __float2bfloat16(rnd(3e-5f));
	CK(cudaMalloc((void **)&d, n * 2));
	CK(cudaMemcpy(d, hw, n * 2, cudaMemcpyHostToDevice));
	free(hw);
	return d;
}

static float *
floats(size_t n, float scale, float base)
{
	float *h = (float *)malloc(n * sizeof(float)), *d;
	for (size_t i = 0; i < n; i++)
		h[i] = base + rnd(scale);
	CK(cudaMalloc((void **)&d, n * sizeof(float)));
	CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
	free(h);
	return d;
}

int
main(void)
{
	static const char *names[] = {"base: qkv+tail, attention (cluster of 4), o, gate/up, down",
	                              "fused qkv+attention, a cluster of 4 a head",
	                              "fused qkv+attention, a cluster of 8 a head",
	                              "fused, a cluster of 4, the next after the wait",
	                              "fused, a cluster of 8, the next after the wait",
	                              "base without the attention (another result)"};
	enum { NV = 6 };
	Bufs b;
	At P;
	size_t cn = (size_t)LAYERS * H * S * D;
	float *ref = (float *)malloc(N * sizeof(float)), *got = (float *)malloc(N * sizeof(float));
	float *kc0 = (float *)malloc(cn * sizeof(float)), *vc0 = (float *)malloc(cn * sizeof(float));

	CK(cudaStreamCreate(&st));
	b.wqkv = weights((size_t)LAYERS * 3 * N * N);
	b.wo = weights((size_t)LAYERS * N * N);
	b.wg = weights((size_t)LAYERS * F * N);
	b.wu = weights((size_t)LAYERS * F * N);
	b.wd = weights((size_t)LAYERS * N * F);
	b.kc = floats(cn, 1e-3f, 0.0f);
	b.vc = floats(cn, 1e-3f, 0.0f);
	b.g = floats(N, 1e-4f, 1.0f);
	CK(cudaMemcpy(kc0, b.kc, cn * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(vc0, b.vc, cn * sizeof(float), cudaMemcpyDeviceToHost));
	{
		float hcs[32], hsn[32];
		for (int i = 0; i < 32; i++) {
			double f = POS * pow(10000.0, -2.0 * i / D);
			hcs[i] = (float)cos(f), hsn[i] = (float)sin(f);
		}
		CK(cudaMalloc((void **)&b.cs, sizeof hcs));
		CK(cudaMalloc((void **)&b.sn, sizeof hsn));
		CK(cudaMemcpy(b.cs, hcs, sizeof hcs, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(b.sn, hsn, sizeof hsn, cudaMemcpyHostToDevice));
		unsigned char hm[S];
		for (int j = 0; j < S; j++)
			hm[j] = j <= POS;
		CK(cudaMalloc((void **)&b.mask, S));
		CK(cudaMemcpy(b.mask, hm, S, cudaMemcpyHostToDevice));
	}
	float x0[N];
	for (int i = 0; i < N; i++)
		x0[i] = rnd(1e-3f);
	CK(cudaMalloc((void **)&b.x[0], N * sizeof(float)));
	CK(cudaMalloc((void **)&b.x[1], N * sizeof(float)));
	CK(cudaMalloc((void **)&b.q, N * sizeof(float)));
	CK(cudaMalloc((void **)&b.y, N * sizeof(float)));
	CK(cudaMalloc((void **)&b.xo, N * sizeof(float)));
	CK(cudaMalloc((void **)&b.hmid, F * sizeof(float)));
	CK(cudaFuncSetAttribute((const void *)kfused<4, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * N * 2));
	CK(cudaFuncSetAttribute((const void *)kfused<8, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, 24 * N * 2));
	CK(cudaFuncSetAttribute((const void *)kfused<4, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * N * 2));
	CK(cudaFuncSetAttribute((const void *)kfused<8, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, 24 * N * 2));
	P = chain_decat(H, S, D);   /* 12 rows (heads) of one query, 512 keys, a bool mask */

	for (int how = 0; how < NV; how++) {   /* each once, from the same row and cache: the results */
		CK(cudaMemcpy(b.x[0], x0, sizeof x0, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(b.kc, kc0, cn * sizeof(float), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(b.vc, vc0, cn * sizeof(float), cudaMemcpyHostToDevice));
		layers(b, P, how);
		CK(cudaStreamSynchronize(st));
		CK(cudaMemcpy(how ? got : ref, b.x[LAYERS % 2], N * sizeof(float), cudaMemcpyDeviceToHost));
		double md = 0, mr = 0;
		for (int i = 0; i < N; i++) {
			md = fmax(md, fabs((double)got[i] - ref[i]));
			mr = fmax(mr, fabs((double)ref[i]));
		}
		if (how)
			printf("%-62s max|difference| %.3g (max|value| %.3g)\n", names[how], md, mr);
	}
	for (int round = 0; round < 3; round++)
		for (int how = 0; how < NV; how++) {
			cudaGraph_t gr;

			CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
			layers(b, P, how);
			CK(cudaStreamEndCapture(st, &gr));
			double us = chain_time(st, gr);
			printf("round %d  %-62s %7.1f us, %5.2f a layer\n", round + 1, names[how], us,
			       us / LAYERS);
		}
	return 0;
}
