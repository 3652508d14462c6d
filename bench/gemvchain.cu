/* gemvchain.cu: the floor of a decode step's one-row products as a chain
 * of dependent kernels.  The ~100M Llama of bench/llm.py has 12 layers of
 * 4 such products in bf16 (q/k/v 2304x768, the output projection 768x768,
 * gate/up 4096x768, down 768x2048: 169.9 MB), each reading the row the one
 * before wrote.  Here they are alone (no norm, attention or epilogue), a
 * warp per C columns, each lane's weights loaded into registers before the
 * wait as the generated GEMVs do (stages/lower_gpu/mm.c), timed as:
 *   - pdl C: one kernel a product, programmatic dependent launch, captured
 *     in a CUDA graph; C = 1, 2, 4, 8 columns a warp; the weights read from
 *     memory (every layer its own), then L2-resident (the first layer's four
 *     matrices read by every layer);
 *   - prefetch D: pdl 1, each kernel also asking the next D products'
 *     weights into L2 before its wait;
 *   - persistent G: one kernel of G blocks of 4 warps running the products
 *     in turn, each block taking its share of a product's blocks; a block
 *     waits for the product before through a counter its blocks add to
 *     once done (no grid-wide barrier), its first share's weights loaded
 *     before that wait;
 *   - wide: one kernel of a block of 32 warps an SM, a warp a column;
 *   - empty: 48 kernels of 192 blocks that only wait (the chain's own cost),
 *     with programmatic dependent launch and without.
 * A GPU machine only:
 *
 *   nvcc -O3 -arch=sm_90 bench/gemvchain.cu -o gemvchain && ./gemvchain
 *
 * Prints a line per variant: us a chain (the mean of 200 graph replays
 * after 20, measured by CUDA events), us a product, and the weights' bytes
 * over that time.  bench/RESULTS.md has its figures (2026-12-02). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "chain.cuh"   /* CK, chain_launch, chain_time */

enum { LAYERS = 12, NP = 4 * LAYERS, WARPS = 4 };

typedef struct Ph {
	const uint4 *w;    /* n rows of k bf16 weights */
	const float *x;    /* the row read */
	float *y;          /* the row written */
	int n, k;
} Ph;

static __constant__ Ph ph[NP];
static Ph hph[NP];

static __device__ __forceinline__ void
pdlwait(void)
{
#if __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
	cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Spins until *done reaches target (the product before: its blocks done). */
static __device__ __forceinline__ void
countwait(const unsigned *done, unsigned target)
{
	if (threadIdx.x == 0) {
		unsigned v;
		do
			asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(done));
		while (v < target);
	}
	__syncthreads();
}

/* C columns of product p from column n0: their KV 16-byte loads a lane
 * first, then the wait (how: 0 the PDL wait, 1 the counter, 2 none), then
 * the sums. */
template <int KV, int C>
static __device__ __forceinline__ void
cols(const Ph &p, int n0, int how, const unsigned *done, unsigned target)
{
	int lane = threadIdx.x % 32;
	uint4 w[C][KV];
	float acc[C];

#pragma unroll
	for (int c = 0; c < C; c++) {
		const uint4 *wr = p.w + (long long)min(n0 + c, p.n - 1) * (p.k / 8);
#pragma unroll
		for (int t = 0; t < KV; t++)
			w[c][t] = __ldg(wr + lane + 32 * t);
		acc[c] = 0.0f;
	}
	if (how == 0)
		pdlwait();
	else if (how == 1)
		countwait(done, target);
#pragma unroll
	for (int t = 0; t < KV; t++) {
		const float4 *xa = (const float4 *)(p.x + (lane + 32 * t) * 8);
		float4 a = xa[0], b = xa[1];
#pragma unroll
		for (int c = 0; c < C; c++) {
			const __nv_bfloat162 *h = (const __nv_bfloat162 *)&w[c][t];
			float2 f0 = __bfloat1622float2(h[0]), f1 = __bfloat1622float2(h[1]);
			float2 f2 = __bfloat1622float2(h[2]), f3 = __bfloat1622float2(h[3]);
			acc[c] += f0.x * a.x + f0.y * a.y + f1.x * a.z + f1.y * a.w + f2.x * b.x +
			          f2.y * b.y + f3.x * b.z + f3.y * b.w;
		}
	}
#pragma unroll
	for (int c = 0; c < C; c++) {
		for (int s = 16; s > 0; s /= 2)
			acc[c] += __shfl_xor_sync(0xffffffffu, acc[c], s);
		if (lane == 0 && n0 + c < p.n)
			p.y[n0 + c] = acc[c] * 1e-3f;
	}
}

template <int C>
static __global__ void __launch_bounds__(32 * WARPS)
kpdl(int i, int ahead)
{
	const Ph &p = ph[i];
	int n0 = (blockIdx.x * WARPS + threadIdx.x / 32) * C;

	for (int j = 1; j <= ahead && i + j < NP; j++) {   /* later weights into L2 */
		const Ph &q = ph[i + j];
		const char *b = (const char *)q.w;
		long long lines = (long long)q.n * q.k * 2 / 128;
		for (long long l = blockIdx.x * 128LL + threadIdx.x; l < lines; l += gridDim.x * 128LL)
			asm volatile("prefetch.global.L2 [%0];" ::"l"(b + l * 128));
	}
	if (p.k == 768)
		cols<3, C>(p, n0, 0, NULL, 0);
	else
		cols<8, C>(p, n0, 0, NULL, 0);
}

static __global__ void __launch_bounds__(32 * WARPS)
kpersist(unsigned *done)
{
	for (int i = 0; i < NP; i++) {
		const Ph &p = ph[i];
		unsigned before = i ? (unsigned)(ph[i - 1].n / WARPS) : 0;
		for (int vb = blockIdx.x; vb < p.n / WARPS; vb += gridDim.x) {
			int n0 = vb * WARPS + threadIdx.x / 32;
			if (p.k == 768)
				cols<3, 1>(p, n0, i ? 1 : 2, done + i - 1, before);
			else
				cols<8, 1>(p, n0, i ? 1 : 2, done + i - 1, before);
			__syncthreads();
			if (threadIdx.x == 0) {
				__threadfence();
				atomicAdd(done + i, 1u);
			}
		}
	}
}

static __global__ void __launch_bounds__(1024, 1)
kwide(unsigned *done)
{
	int warp = threadIdx.x / 32, gw = blockIdx.x * 32 + warp, nw = gridDim.x * 32;

	for (int i = 0; i < NP; i++) {
		const Ph &p = ph[i];
		int first = 1;
		for (int n = gw; n - warp < p.n; n += nw, first = 0) {   /* the same for the block */
			int how = i == 0 || !first ? 2 : 1;   /* past p.n: loads a row, writes none */
			if (p.k == 768)
				cols<3, 1>(p, n, how, done + i - 1, gridDim.x);
			else
				cols<8, 1>(p, n, how, done + i - 1, gridDim.x);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			__threadfence();
			atomicAdd(done + i, 1u);
		}
	}
}

static __global__ void
kempty(int i)
{
	(void)i;
	pdlwait();
}

static cudaStream_t st;
static size_t bytes;

/* Times graph gr and prints the figures. */
static void
timeit(cudaGraph_t gr, const char *what)
{
	double us = chain_time(st, gr);

	printf("%-44s %7.1f us a chain, %5.2f a product, %5.0f GB/s\n", what, us, us / NP,
	       bytes / (us * 1e-6) / 1e9);
}

static void
launch(const void *f, int grid, int block, int pdl, void **args)
{
	chain_launch(st, f, grid, block, pdl, 1, args, 0);
}

static void
pdlchain(int C, int ahead, const char *what)
{
	static const void *k[] = {(const void *)kpdl<1>, (const void *)kpdl<2>,
	                          (const void *)kpdl<4>, (const void *)kpdl<8>};
	cudaGraph_t gr;

	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < NP; i++) {
		void *args[] = {&i, &ahead};
		launch(k[C == 1 ? 0 : C == 2 ? 1 : C == 4 ? 2 : 3],
		       (hph[i].n + WARPS * C - 1) / (WARPS * C), 32 * WARPS, 1, args);
	}
	CK(cudaStreamEndCapture(st, &gr));
	timeit(gr, what);
}

int
main(void)
{
	static const int shape[4][2] = {{2304, 768}, {768, 768}, {4096, 768}, {768, 2048}};
	float *act;
	unsigned *done;
	int sms;
	char what[64];

	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&act, 2 * 8192 * sizeof(float)));
	CK(cudaMemset(act, 0, 2 * 8192 * sizeof(float)));
	CK(cudaMalloc(&done, NP * sizeof(unsigned)));
	for (int i = 0; i < NP; i++) {
		int n = shape[i % 4][0], k = shape[i % 4][1];
		uint4 *w;
		CK(cudaMalloc(&w, (size_t)n * k * 2));
		CK(cudaMemset(w, 0x3c, (size_t)n * k * 2));
		bytes += (size_t)n * k * 2;
		hph[i] = (Ph){w, act + (i % 2) * 8192, act + ((i + 1) % 2) * 8192, n, k};
	}
	CK(cudaMemcpyToSymbol(ph, hph, sizeof hph));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	printf("%d products, %.1f MB of weights, %d SMs\n", NP, bytes / 1e6, sms);

	for (int C = 1; C <= 8; C *= 2) {
		snprintf(what, sizeof what, "pdl, %d column%s a warp", C, C > 1 ? "s" : "");
		pdlchain(C, 0, what);
	}
	{   /* every layer reading the first layer's weights: L2-resident */
		Ph l2[NP];
		memcpy(l2, hph, sizeof l2);
		for (int i = 4; i < NP; i++)
			l2[i].w = hph[i % 4].w;
		CK(cudaMemcpyToSymbol(ph, l2, sizeof l2));
		for (int C = 1; C <= 8; C *= 2) {
			snprintf(what, sizeof what, "pdl, %d column%s a warp, L2-resident", C,
			         C > 1 ? "s" : "");
			pdlchain(C, 0, what);
		}
		CK(cudaMemcpyToSymbol(ph, hph, sizeof hph));
	}
	for (int d = 1; d <= 4; d++) {
		snprintf(what, sizeof what, "prefetch the next %d into L2", d);
		pdlchain(1, d, what);
	}
	for (int mul = 1; mul <= 8; mul *= 2) {
		cudaGraph_t gr;
		CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
		CK(cudaMemsetAsync(done, 0, NP * sizeof(unsigned), st));
		kpersist<<<sms * mul, 32 * WARPS, 0, st>>>(done);
		CK(cudaStreamEndCapture(st, &gr));
		snprintf(what, sizeof what, "persistent, %d blocks", sms * mul);
		timeit(gr, what);
	}
	{
		cudaGraph_t gr;
		CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
		CK(cudaMemsetAsync(done, 0, NP * sizeof(unsigned), st));
		kwide<<<sms, 1024, 0, st>>>(done);
		CK(cudaStreamEndCapture(st, &gr));
		snprintf(what, sizeof what, "wide, %d blocks of 32 warps", sms);
		timeit(gr, what);
	}
	for (int pdl = 1; pdl >= 0; pdl--) {
		cudaGraph_t gr;
		CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
		for (int i = 0; i < NP; i++) {
			void *args[] = {&i};
			launch((const void *)kempty, 192, 128, pdl, args);
		}
		CK(cudaStreamEndCapture(st, &gr));
		timeit(gr, pdl ? "empty kernels, pdl" : "empty kernels, ordinary launches");
	}
	return 0;
}
