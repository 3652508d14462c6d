/* gemm.cu: a matrix product on the tensor cores, y = alpha·A·B + bias
 * (dprt_cuda_gemm, dprt_cuda.h), for the products dp-lower_gpu would
 * otherwise hand to cuBLASLt with the bias in its epilogue: a linear
 * layer's x·W^T + b, addmm.  Compiled once by make into lib/libdprt_cuda.a.
 * A tuning database's choice (algo=tc, formats/tune.md), or every such
 * product's with the mapping's `tune cuda.mm.tc 1`, not the heuristic's: at
 * batch 1 on the H100 it measured slower than cuBLASLt in fp32 and tf32
 * (DeiT-tiny, ViT-B/16, GPT-2; bench/RESULTS.md; a split of K, tried, was
 * slower still), so `devproc tune` weighs it shape by shape.
 *
 * Why a kernel of our own beside cuBLASLt: in fp32, cuBLAS has no
 * tensor-core product as accurate as fp32 on the H100, so its fp32 products
 * run on the SIMT units; this one runs 3xTF32, as conv.cu's convolutions
 * do (each operand split into a tf32 part and a tf32 remainder whose three
 * leading products give fp32 accuracy).  And at batch 1, where a
 * transformer's products take a few microseconds each, it is launched with
 * programmatic dependent launch like the generated kernels (cuda/pdl.cuh),
 * so that its blocks start while the kernel before it finishes, and the
 * kernel after it (a layer norm, an attention) starts while it finishes;
 * cuBLAS's kernels wait for the stream.  DPRT_CUDA_MM=lt in a program's
 * environment sends every such product to cuBLASLt instead (to compare).
 *
 * The tile loop is conv.cu's: a 64x64 tile of y per block of 128 threads,
 * 2x2 warps of 32x32, mma.sync m16n8k8, K through shared memory 16 at a
 * time in a ring of GS slices that cp.async fills GS - 1 slices ahead.
 * A is read as rows of K (k contiguous); B either as rows of K ([N][K], a
 * linear layer's weight: BT) or as rows of N ([K][N], addmm's operand).
 * Precision: g->tf32 (tune cuda.precision tf32) runs plain TF32 (one
 * product; PyTorch's allow_tf32), else 3xTF32. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprt_cuda.h"
#include "launch.cuh"   /* dp_config */
#include "pdl.cuh"      /* dp_pdl_wait */
#include "tc.cuh"       /* cp16, cp4, tcring, tcslice */

enum { GS = 4 };   /* slices of K in the ring */

/* A product's geometry as the kernel reads it. */
struct Gm {
	int M, N, K;
	long long lda, ldb, ldy;   /* row strides of A [M][K], of B (BT: [N][K], else [K][N]), of y */
	float alpha;
	int vec;                   /* 16-byte copies: A and B 16-byte aligned, lda and ldb
	                              multiples of 4 */
};

/* MODE 0: 3xTF32, 1: TF32.  BT 1: B is [N][K]. */
template <int MODE, int BT>
static __global__ void __launch_bounds__(128)
gemm_tc(const __grid_constant__ Gm P, const float *__restrict__ a, const float *__restrict__ b,
        const float *__restrict__ bias, float *__restrict__ y)
{
	constexpr int S = GS;
	constexpr int LA = 16 + 4, LB = 64 + 8;   /* padded rows: no bank conflicts */
	__shared__ __align__(16) float sm[S * 64 * LA + S * (BT ? 64 * LA : 16 * LB)];
	float (*as)[64][LA] = (float (*)[64][LA])sm;                 /* A slices [m][k] */
	float (*bt)[64][LA] = (float (*)[64][LA])(sm + S * 64 * LA);   /* BT: B slices [n][k] */
	float (*bs)[16][LB] = (float (*)[16][LB])(sm + S * 64 * LA);   /* else [k][n] */
	const int M = P.M, N = P.N, K = P.K, nk = (K + 15) / 16;
	int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp >> 1, wn = warp & 1;
	int gq = lane >> 2, tq = lane & 3;
	int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
	/* what this thread copies: rows am, am + 32 of A (and of BT), columns
	 * ak..ak + 3 of the slice; of B [k][n]: rows kr, kr + 8, columns bc..bc + 3 */
	int am = tid >> 2, ak = (tid & 3) * 4, kr = tid >> 4, bc = (tid & 15) * 4;
	float acc[2][4][4];

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;
	/* rows r0 + am, r0 + am + 32 of the [R][K] operand x (rows of ld) into
	 * d: the slice at k0 */
	auto rows = [&](float (*d)[LA], const float *x, long long ld, int R, int r0, int k0) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int r = am + 32 * h, gr = r0 + r, k = k0 + ak;
			bool in = gr < R && k < K;
			if (P.vec) {
				int n = in ? min(16, 4 * (K - k)) : 0;
				cp16(&d[r][ak], n ? x + gr * ld + k : x, n);
			} else {
#pragma unroll
				for (int e = 0; e < 4; e++) {
					bool ie = in && k + e < K;
					cp4(&d[r][ak + e], ie ? x + gr * ld + k + e : x, ie ? 4 : 0);
				}
			}
		}
	};
	/* slice t into stage t % S (out of range: zeros) */
	auto issue = [&](int t) {
		int k0 = 16 * t, st = t % S;
		rows(as[st], a, P.lda, M, m0, k0);
		if (BT) {
			rows(bt[st], b, P.ldb, N, n0, k0);
		} else {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				int k = k0 + kr + 8 * h, n = n0 + bc;
				bool in = k < K && n < N;
				if (P.vec) {
					int c = in ? min(16, 4 * (N - n)) : 0;
					cp16(&bs[st][kr + 8 * h][bc], c ? b + k * P.ldb + n : b, c);
				} else {
#pragma unroll
					for (int e = 0; e < 4; e++) {
						bool ie = in && n + e < N;
						cp4(&bs[st][kr + 8 * h][bc + e], ie ? b + k * P.ldb + n + e : b,
						    ie ? 4 : 0);
					}
				}
			}
		}
	};

	/* launched with programmatic dependent launch where the program asks
	 * (g->pdl): the kernels before done, their writes seen, before anything
	 * is read; then the kernel after may start its blocks */
	dp_pdl_wait();
	tcring<S>(nk, issue, [&](int st) {
		if (BT)
			tcslice<MODE, 1, LA, LA>(acc, as[st], &bt[st][0][0], wm, wn, gq, tq);
		else
			tcslice<MODE, 0, LA, LB>(acc, as[st], &bs[st][0][0], wm, wn, gq, tq);
	});
	/* accumulator e of tile (i, j): row gq (+8 for e >= 2), column 2·tq + e % 2;
	 * alpha·(A·B) + bias, as cuBLASLt's bias epilogue and aten.addmm round it */
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				int m = m0 + wm * 32 + i * 16 + gq + (e >> 1) * 8;
				int n = n0 + wn * 32 + j * 8 + 2 * tq + (e & 1);
				if (m >= M || n >= N)
					continue;
				float r = acc[i][j][e];
				if (P.alpha != 1.0f)
					r = P.alpha * r;
				if (bias)
					r += bias[n];
				y[(long long)m * P.ldy + n] = r;
			}
}

typedef void Kern(Gm, const float *, const float *, const float *, float *);

/* The 3xTF32 split (dprt_cuda_split3): part j of x[r][c] at
 * y[r·ldy + j·ps + c]; VEC: four columns a thread (C, ldx, ldy and ps
 * multiples of 4, x and y 16-byte aligned); the parts as tf32.cuh's
 * dp_x3put writes them.  Each thread takes SU items
 * (an item: VEC ? four columns : one), blockDim apart, and loads all of them
 * before it stores any, so that SU loads are in flight a thread: one a
 * thread left a batch-32 transformer's splits at 2.3-2.9 TB/s on the H200.
 * I: the index type, 32-bit where R·C fits (a 64-bit division, the row's,
 * is a long sequence of instructions).  Launched with programmatic dependent
 * launch where the program asks (g->pdl), as gemm_tc is: its blocks start
 * while the kernel that writes x finishes. */
enum { SU = 4 };

/* The parts of four values: hi their tf32, lo the tf32 of what is left. */
static __device__ void
split4(float4 v, float4 &h, float4 &l)
{
	h = make_float4(tf32(v.x), tf32(v.y), tf32(v.z), tf32(v.w));
	l = make_float4(x3lo(v.x, h.x), x3lo(v.y, h.y), x3lo(v.z, h.z), x3lo(v.w, h.w));
}

template <int VEC, typename I, int LOMASK>
static __global__ void
split3(const float *__restrict__ x, long long ldx, long long R, long long C,
       float *__restrict__ y, long long ldy, long long ps)
{
	I cw = (I)(VEC ? C / 4 : C), n = (I)R * cw;

	dp_pdl_wait();
	for (I i0 = (I)blockIdx.x * blockDim.x * SU + threadIdx.x; i0 < n;
	     i0 += (I)gridDim.x * blockDim.x * SU) {
		float4 v[SU];   /* VEC ? four columns : one, in .x */
#pragma unroll
		for (int u = 0; u < SU; u++) {
			I i = i0 + (I)u * blockDim.x, r = i / cw, c = (i - r * cw) * (VEC ? 4 : 1);
			if (i < n && VEC)
				v[u] = *(const float4 *)(x + (long long)r * ldx + c);
			else if (i < n)
				v[u].x = x[(long long)r * ldx + c];
		}
#pragma unroll
		for (int u = 0; u < SU; u++) {
			I i = i0 + (I)u * blockDim.x, r = i / cw, c = (i - r * cw) * (VEC ? 4 : 1);
			if (i >= n)
				continue;
			float4 h, l;
			split4(v[u], h, l);   /* a scalar item: three parts wasted, no loads */
#pragma unroll
			for (int j = 0; j < 3; j++) {
				float *d = y + (long long)r * ldy + j * ps + c;
				if (VEC)   /* __stwb: one 16-byte store (the struct's is split in four) */
					__stwb((float4 *)d, LOMASK >> j & 1 ? l : h);
				else
					*d = LOMASK >> j & 1 ? l.x : h.x;
			}
		}
	}
}

extern "C" int
dprt_cuda_split3(dprt_cuda *g, float *y, const float *x, int64_t R, int64_t C, int64_t ldx,
                 int64_t ldy, int64_t ps, int lomask, char *err, size_t errn)
{
	int vec = C % 4 == 0 && ldx % 4 == 0 && ldy % 4 == 0 && ps % 4 == 0 &&
	          ((uintptr_t)x | (uintptr_t)y) % 16 == 0;
	long long n = R * (vec ? C / 4 : C), blocks = (n + 256 * SU - 1) / (256 * SU);
	int narrow = n < (1LL << 31) - 256LL * SU * 8192;   /* i0's last step fits an int */

	if (lomask != 2 && lomask != 4) {   /* the layouts blas.c asks for */
		snprintf(err, errn, "cuda: split3: remainder in part mask %d, not 2 or 4", lomask);
		return -1;
	}
	if (n == 0)
		return 0;
	if (blocks > 8192)
		blocks = 8192;
	cudaLaunchAttribute at[1];
	cudaLaunchConfig_t c;
	long long ldx_ = ldx, R_ = R, C_ = C, ldy_ = ldy, ps_ = ps;
	dp_config(&c, at, dim3((unsigned)blocks), dim3(256), g->stream, g->pdl);
	typedef void Split(const float *, long long, long long, long long, float *, long long,
	                   long long);
	/* [vec][narrow][lomask 4] */
	static Split *const f[2][2][2] = {
		{{split3<0, long long, 2>, split3<0, long long, 4>}, {split3<0, int, 2>, split3<0, int, 4>}},
		{{split3<1, long long, 2>, split3<1, long long, 4>}, {split3<1, int, 2>, split3<1, int, 4>}},
	};
	(void)cudaLaunchKernelEx(&c, f[vec][narrow][lomask == 4], x, ldx_, R_, C_, y, ldy_, ps_);
	return dprt_cuda_launched("split3", err, errn);
}

extern "C" int
dprt_cuda_gemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
               int64_t rsa, int64_t csa, const float *B, int64_t rsb, int64_t csb,
               const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	int bt = rsb == 1 && csb != 1;   /* B[k][n] at n·csb + k: W [N][K] */
	long long ldb = bt ? csb : rsb;
	Gm P;

	if (M * N == 0)
		return 0;
	if (g->mmlt)
		return dprt_cublaslt_bias(g, M, N, K, alpha, A, rsa, csa, B, rsb, csb, bias, C, ldc,
		                          err, errn);
	if (csa != 1 || (!bt && csb != 1) || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX ||
	    (M + 63) / 64 > 65535 || K == 0) {   /* dp-lower_gpu asks for none of these */
		if (errn > 0)
			snprintf(err, errn, "cuda: gemm_tc: a %lldx%lldx%lld product with strides "
			         "%lld, %lld and %lld, %lld is beyond the kernel", (long long)M,
			         (long long)N, (long long)K, (long long)rsa, (long long)csa,
			         (long long)rsb, (long long)csb);
		return -1;
	}
	P.M = (int)M, P.N = (int)N, P.K = (int)K;
	P.lda = rsa, P.ldb = ldb, P.ldy = ldc;
	P.alpha = alpha;
	P.vec = ((uintptr_t)A | (uintptr_t)B) % 16 == 0 && rsa % 4 == 0 && ldb % 4 == 0;
	Kern *f = g->tf32 ? (bt ? gemm_tc<1, 1> : gemm_tc<1, 0>) :
	                    (bt ? gemm_tc<0, 1> : gemm_tc<0, 0>);
	cudaLaunchAttribute at[1];
	cudaLaunchConfig_t c;
	dp_config(&c, at, dim3((unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64)), dim3(128),
	          g->stream, g->pdl);
	(void)cudaLaunchKernelEx(&c, f, P, A, B, bias, C);
	return dprt_cuda_launched("gemm_tc", err, errn);
}
