/* conv.cu: 2-D convolution on the device (dprt_cuda_conv, dprt_cuda.h),
 * with the batch norm, residual add and relu or clamp that dp-lower_gpu
 * folded into it; compiled once by make into lib/libdprt_cuda.a, the
 * shapes passed at launch (divisions by them through fastdiv.cuh).
 *
 * The convolution is an implicit GEMM: y[o][p] = sum_k w[o][k]·x̂[k][p] per
 * group, o the output channel (M), p the output pixel with the batch folded
 * in (N), k = (c·KH + r)·KW + s (K), and x̂ = im2col(x) gathered on the fly,
 * never stored.  A block of 128 threads computes a 64x64 tile of y on the
 * tensor cores (mma.sync m16n8k8, tf32 in, fp32 accumulate), 16 of K at a
 * time through a ring of 3 slices in shared memory that cp.async fills
 * two slices ahead (the kernel is latency-bound at batch 1: slices in
 * flight, rather than one loaded into registers, are what keep the tensor
 * cores fed; bench/RESULTS.md has the ring sizes measured).  Where the
 * tiles alone would leave the GPU idle (the
 * late layers at batch 1: few pixels, long K) dp-lower_gpu splits K among
 * up to 32 blocks that write their partial tiles to a workspace, and a
 * second kernel sums them in the order of the splits and applies the
 * epilogue.  With the program's DPRT_CUDA_SPLITK=cluster, on sm_90 and
 * later (init checks, dprt_cuda_convcl_ok), the blocks of a tile run as one
 * thread-block cluster instead and sum their partial tiles through
 * distributed shared memory, each block a share of the rows, in the same
 * order: the same bits, one launch and no workspace round trip per
 * convolution, but no faster on the H100's ResNet-18 (bench/RESULTS.md),
 * so not the default (a convolution split more than 16 ways takes the
 * second kernel all the same).
 *
 * Launches: where the program asks for programmatic dependent launch
 * (g->pdl), a split's sum is launched so, and its GEMM lets it start as
 * the GEMM starts: the sum's blocks wait in place (dp_pdl_wait) while the
 * GEMM works, then run at once (batch 1 on the H200: 2-4% faster,
 * bench/RESULTS.md).  The rest are ordinary launches.
 * DPRT_CUDA_CONV_PDL=0 (for timing) launches the sums the ordinary way
 * too; =dw|nosplit|all launches the depthwise kernel, also the GEMM where
 * K is not split, or every kernel here with programmatic dependent launch:
 * the blocks start while the kernel before works, ask their packed weights
 * into L2, then wait.  On the H200 at batch 1 dw and nosplit changed
 * nothing, all took MobileNetV2 5% faster and ResNet-18 and -50 20% slower
 * (the GEMMs' blocks then start beside the kernel before).
 *
 * Precision, chosen at run time by the program's DPRT_CUDA_CONV (read at
 * init, cuda.c): "fp32" (the default) runs 3xTF32, each operand split into
 * a tf32 part and a tf32 remainder whose three leading products give fp32
 * accuracy (within 1e-5 of PyTorch's fp32 convolutions, as every cuda
 * result is); "tf32" runs plain TF32 (one product; 10-bit mantissas,
 * PyTorch's own default for convolutions on CUDA,
 * torch.backends.cudnn.allow_tf32); "direct" runs a plain fp32 loop per
 * output (slow; a reference).  Depthwise convolutions (one input channel
 * per group, K = KH·KW) run convdw, the direct loop's sums over several
 * outputs of a row a thread (with "direct", the direct loop itself).
 *
 * The weights are constants uploaded at init; init then packs them once on
 * the device (dprt_cuda_convpack) into rows of K rounded up to 16 (zeros
 * past K, so that the GEMM loads them 16 bytes at a time unguarded), with
 * the batch norm folded in: w' = w·a, b' = (cb - mean)·a + beta,
 * a = gamma / sqrt(var + eps).  Weights computed at run time are read where
 * they are, unfolded. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "dprt_cuda.h"
#include "dpscalar.h"   /* dps_clamp */
#include "fastdiv.cuh"
#include "launch.cuh"   /* dp_config */
#include "pdl.cuh"      /* dp_pdl_wait, dp_pdl_trigger, dp_pdl_prefetch */
#include "tc.cuh"       /* cp16, cp4, tcring, tcslice */

enum {
	STAGES = 3,   /* slices of K in the ring */
	DWN = 4,      /* outputs of a row a thread of the depthwise kernel */
	PFK = 512,    /* of a block's K, the first this many weights of a row asked
	                 into L2 before its wait (programmatic dependent launch) */
	CLMAX = 16,   /* splits a cluster sums at most (Hopper's largest cluster;
	                 a convolution split more ways takes convsum) */
	KTAP = 2,     /* conv_gemm's KS for K taken tap by tap (tapk) */
};

/* A convolution's geometry as the kernels read it. */
struct Cv {
	int N, C, H, W, G, O, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW;
	int CG, OG, KK, K, PIX, NP, LDA, PACKED, SPLIT, KCHUNK, RELU;
	int TAPK;  /* the packed weights' K taken tap by tap (tapk) */
	int PDL;   /* launched with programmatic dependent launch: wait (dp_pdl_wait) */
	int TRIG;  /* the GEMM lets its split's sum start its blocks at once */
	float CA, CR, LO, HI;
	dprt_div kk, kw, pix, ow, np;
	dprt_div owq, oh, o;   /* the depthwise kernel's: ceil(OW / DWN), OH, O */
};

/* Whether c's packed weights take K tap by tap, k = (r·KW + s)·CG + c,
 * rather than as PyTorch lays it out, k = (c·KH + r)·KW + s: where the
 * window has several taps and a group's channels are a multiple of 16,
 * so that a slice of 16 of K is 16 channels of one tap, and the implicit
 * GEMM's gathers of x̂ (conv_gemm's KS KTAP) are a tap's check and offset
 * once a slice, then rows hw apart.  The sums over K run in that order.
 * (DPRT_CUDA_CONV=direct reads the weights as PyTorch lays them out:
 * dprt_cuda_convpack keeps that order there.) */
static bool
tapk(const dprt_conv *c)
{
	return c->packed && !c->direct && c->KH * c->KW > 1 && c->G > 0 && c->C / c->G % 16 == 0;
}

static Cv
mkcv(const dprt_conv *c)
{
	Cv P;

	P.N = c->N, P.C = c->C, P.H = c->H, P.W = c->W, P.G = c->G;
	P.O = c->O, P.OH = c->OH, P.OW = c->OW, P.KH = c->KH, P.KW = c->KW;
	P.SH = c->SH, P.SW = c->SW, P.PH = c->PH, P.PW = c->PW, P.DH = c->DH, P.DW = c->DW;
	P.CG = c->C / c->G, P.OG = c->O / c->G, P.KK = c->KH * c->KW, P.K = P.CG * P.KK;
	P.PIX = c->OH * c->OW, P.NP = c->N * P.PIX;
	P.LDA = c->lda, P.PACKED = c->packed, P.SPLIT = c->split, P.KCHUNK = c->kchunk;
	P.TAPK = tapk(c);
	P.RELU = c->relu, P.CA = c->ca, P.CR = c->cr, P.LO = c->lo, P.HI = c->hi;
	P.PDL = 0, P.TRIG = 0;   /* set where the launch is one (dprt_cuda_conv) */
	P.kk = dprt_mkdiv(P.KK > 0 ? P.KK : 1);
	P.kw = dprt_mkdiv(P.KW > 0 ? P.KW : 1);
	P.pix = dprt_mkdiv(P.PIX > 0 ? P.PIX : 1);
	P.ow = dprt_mkdiv(P.OW > 0 ? P.OW : 1);
	P.np = dprt_mkdiv(P.NP > 0 ? P.NP : 1);
	P.owq = dprt_mkdiv(P.OW > 0 ? (P.OW + DWN - 1) / DWN : 1);
	P.oh = dprt_mkdiv(P.OH > 0 ? P.OH : 1);
	P.o = dprt_mkdiv(P.O > 0 ? P.O : 1);
	return P;
}

/* Output channel o at pixel p (batch folded in): bias, residual, relu or
 * clamp (to [LO, HI], a relu's [0, inf], as dpscalar.h's clamp).
 * y = CA·conv + CR·res is written with the factor 1 left out, so that it
 * rounds as the expression with that factor a constant did. */
static __device__ __forceinline__ void
convout(const Cv &P, float acc, int o, int p, const float *__restrict__ bias,
        const float *__restrict__ res, float *__restrict__ y)
{
	int q = dprt_q(P.pix, p);
	int i = (q * P.O + o) * P.PIX + dprt_r(P.pix, p, q);
	float r = acc;

	if (bias)
		r += bias[o];
	if (res) {
		if (P.CA == 1.0f)
			r = r + P.CR * res[i];
		else if (P.CR == 1.0f)
			r = P.CA * r + res[i];
		else
			r = P.CA * r + P.CR * res[i];
	}
	if (P.RELU)
		r = dps_clamp(r, P.LO, P.HI);
	y[i] = r;
}

/* Thread-block clusters (sm_90): this block's rank in its cluster; a barrier
 * of the cluster's blocks that orders their shared-memory writes before
 * the reads after it; the float at shared address p of block q of the
 * cluster.  Builds for older GPUs trap (dprt_cuda_convcl_ok keeps them
 * off). */
static __device__ __forceinline__ unsigned
ctarank(void)
{
	unsigned r = 0;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#else
	__trap();
#endif
	return r;
}

static __device__ __forceinline__ void
clsync(void)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
	asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
	__trap();
#endif
}

static __device__ __forceinline__ float
dsld(const float *p, unsigned q)
{
	float v = 0.0f;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
	unsigned a = (unsigned)__cvta_generic_to_shared(p), b;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(b) : "r"(a), "r"(q));
	asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(b) : "memory");
#else
	__trap();
#endif
	return v;
}

/* The implicit GEMM: a 64x64 tile of y[o][p] per block of 128 threads,
 * 2x2 warps of 32x32, or (BIG) a 128x128 tile per block of 256 threads,
 * 2x4 warps of 64x32, for grids that fill the GPU many times over (at
 * batch 32: fewer loads from memory a product, fewer shared-memory reads a
 * tensor-core instruction); blockIdx = (pixel tile, channel tile, group *
 * SPLIT + split).  K goes through shared memory 16 at a time in a ring of
 * STAGES slices filled by cp.async, so that STAGES - 1 slices are on their
 * way while one is multiplied; operands are rounded to tf32 (and split, in
 * MODE 0: 3xTF32) as the warps read them; MODE 1 is TF32, the weights read
 * by ldmatrix, MODE 2 the same with weights packed already rounded
 * (convpack), the same bits as MODE 1.  Both tiles sum each output over K
 * in the same order, so they give the same bits.  Split K (SPLIT > 1, 64x64
 * only): blockIdx.z = group * SPLIT + split; RED 0 writes the partial tile
 * to ws for convsum, RED 1 runs the SPLIT blocks of a tile as one cluster
 * that sums the partial tiles through distributed shared memory, each
 * block a SPLIT-th of the rows, in the order of the splits (so the same
 * sums as convsum's).  KS: 1 or 3 for a 1x1 or 3x3 window known to the
 * compiler (most of a ResNet's convolutions; a 3x3 window's rows of x̂
 * walked from slice to slice, the taps inside the image a bit mask, with
 * no division per element: ResNet-18 at batch 32 in TF32 12% faster on
 * the H200), 0 for any (divisions by the window through fastdiv), KTAP
 * for any whose packed weights take K tap by tap (tapk: a slice is 16
 * channels of one tap, so its gathers check the tap once and step by a
 * channel's plane).  VB (1x1
 * windows at stride 1, no padding, images of whole rows of 4 pixels): x̂'s
 * rows are x's, copied 16 bytes at a time instead of 4. */
template <int MODE, int RED, int KS, int BIG, int VB = 0>
static __global__ void __launch_bounds__(BIG ? 256 : 128)
conv_gemm(const __grid_constant__ Cv P, const float *__restrict__ x,
          const float *__restrict__ w, const float *__restrict__ bias,
          const float *__restrict__ res, float *__restrict__ y, float *__restrict__ ws)
{
	constexpr int S = STAGES, BM = BIG ? 128 : 64, BN = BM, NT = BIG ? 256 : 128;
	constexpr int MI = BM / 32, WN = BN / 32;   /* 16-row tiles a warp; warps along N */
	constexpr int LA = 16 + 4, LB = BN + 8;     /* padded rows: no bank conflicts */
	__shared__ __align__(16) float sst[BIG ? 4 : S * BM * LA + S * 16 * LB];
	extern __shared__ __align__(16) float sdyn[];   /* BIG: BIGSMEM bytes */
	float *sm = BIG ? sdyn : sst;
	float (*as)[BM][LA] = (float (*)[BM][LA])sm;                 /* w slices [o][k] */
	float (*bs)[16][LB] = (float (*)[16][LB])(sm + S * BM * LA);   /* x̂ slices [k][p] */
	const int OG = P.OG, K = P.K, NP = P.NP;
	constexpr int LWN = BIG ? 2 : 1, LBN = BIG ? 7 : 6;   /* log2 of WN and BN */
	int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp >> LWN, wn = warp & (WN - 1);
	int gq = lane >> 2, tq = lane & 3;
	int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	int grp = blockIdx.z / P.SPLIT, split = blockIdx.z % P.SPLIT;
	int kbeg = split * P.KCHUNK, kend = min(K, kbeg + P.KCHUNK), nk = (kend - kbeg + 15) / 16;
	const float *wg = w + grp * OG * P.LDA;
	/* what this thread copies: x̂ column nb, rows kb..kb+7; w rows am and
	 * am + BM/2, columns ak..ak+3 */
	int nb = tid & (BN - 1), kb = (tid >> LBN) * 8, am = tid >> 2, ak = (tid & 3) * 4;
	int p = n0 + nb, pq = dprt_q(P.pix, p), ppix = dprt_r(P.pix, p, pq);
	int oq = dprt_q(P.ow, ppix);
	int ih0 = oq * P.SH - P.PH, iw0 = dprt_r(P.ow, ppix, oq) * P.SW - P.PW;
	const float *xp = x + (pq * P.C + grp * P.CG) * P.H * P.W;
	/* VB (a 1x1 window, stride 1, no padding, PIX a multiple of 4): x̂'s
	 * rows are x's, 4 pixels at a time from column nv, rows kv and kv + 8 */
	int nv = (tid & (BN / 4 - 1)) * 4, kv = tid >> (LBN - 2), pv = n0 + nv;
	int vq = dprt_q(P.pix, pv);
	const float *xv = x + (vq * P.C + grp * P.CG) * P.PIX + dprt_r(P.pix, pv, vq);
	float acc[MI][4][4];

	/* launched with programmatic dependent launch where the program asks
	 * (g->pdl): the packed weights, constants, are asked into L2 while the
	 * kernel before works; the wait, then nothing is read that a kernel
	 * before wrote */
	if (P.TRIG)   /* a split's sum launched to wait in place (the default): let it start */
		dp_pdl_trigger();
	if (P.PDL) {
		if (P.PACKED) {
			int nl = (min(kend - kbeg, (int)PFK) + 31) / 32, rows = min(BM, OG - m0);
			for (int i = tid; i < rows * nl; i += NT)
				dp_pdl_prefetch(wg + (m0 + i / nl) * P.LDA + kbeg + 32 * (i % nl));
		}
		dp_pdl_wait();
	}
	static_assert(KS == 0 || KS == 1 || KS == KTAP || KS == 3,
	              "windows known to the compiler: 1x1, 3x3; or K tap by tap");
	static_assert(!(RED && BIG), "the clustered sum is the 64x64 tile's");
	static_assert(!(RED && MODE == 2), "the clustered sum rounds its weights itself");
	static_assert(!VB || (KS == 1 && NT / (BN / 4) == 8), "VB: 1x1 windows, 8 rows of chunks");
	static_assert(NT / 4 == BM / 2 && NT / BN * 8 == 16 && (1 << LWN) == WN && (1 << LBN) == BN,
	              "the copies cover the slices");
	for (int i = 0; i < MI; i++)
		for (int j = 0; j < 4; j++)
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;
	/* KS 3: x̂'s rows walked incrementally, not divided out per element:
	 * the next slice's first row of this thread kc = c·9 + kr (kr < 9),
	 * offc the offset of channel c's tap (0, 0) for this pixel, and the
	 * taps inside the image as bits of vm (none past NP) */
	int kc = kbeg + kb, kr0 = 0, offc = 0, dhw = P.DH * P.W;
	unsigned vm = 0;
	/* KTAP: the next slice's tap (tr, ts) and channel tc + kb within the
	 * group; x's offset of that tap for this pixel, and whether it is
	 * inside the image (tin) */
	int tc = 0, tr = 0, ts = 0, toff = 0, hw = P.H * P.W;
	bool tin = false;
	auto tapat = [&]() {
		int ih = ih0 + tr * P.DH, iw = iw0 + ts * P.DW;
		tin = p < NP && ih >= 0 && ih < P.H && iw >= 0 && iw < P.W;
		toff = (tc + kb) * hw + ih * P.W + iw;
	};
	if (KS == KTAP) {
		int t = kbeg / P.CG;
		tc = kbeg - t * P.CG, tr = t / P.KW, ts = t - tr * P.KW;
		tapat();
	}
	if (KS == 3) {
		int c0 = kc / 9;
		kr0 = kc - 9 * c0;
		offc = c0 * P.H * P.W + ih0 * P.W + iw0;
#pragma unroll
		for (int j = 0; j < 9; j++) {
			int ih = ih0 + j / 3 * P.DH, iw = iw0 + j % 3 * P.DW;
			if (p < NP && ih >= 0 && ih < P.H && iw >= 0 && iw < P.W)
				vm |= 1u << j;
		}
	}
	/* slice t into stage t % S (out of range: zeros); t goes 0, 1, 2... */
	auto issue = [&](int t) {
		int k0 = kbeg + 16 * t, st = t % S;
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int m = m0 + am + BM / 2 * h;
			float *dst = &as[st][am + BM / 2 * h][ak];
			if (P.PACKED) {   /* rows of LDA (a multiple of 16) floats */
				cp16(dst, m < OG ? wg + m * P.LDA + k0 + ak : w, m < OG ? 16 : 0);
			} else {
#pragma unroll
				for (int e = 0; e < 4; e++) {
					bool in = m < OG && k0 + ak + e < K;
					cp4(dst + e, in ? wg + m * P.LDA + k0 + ak + e : w, in ? 4 : 0);
				}
			}
		}
		if (VB) {   /* rows kv and kv + 8, pixels pv..pv+3 of one image: 16 bytes */
#pragma unroll
			for (int h = 0; h < 2; h++) {
				int k = k0 + kv + 8 * h;
				bool in = pv < NP && k < K;
				cp16(&bs[st][kv + 8 * h][nv], in ? xv + k * P.PIX : x, in ? 16 : 0);
			}
		} else if (KS == KTAP) {   /* rows of one tap: channels tc + kb .. + 7, hw apart */
			const float *src = xp + toff;
#pragma unroll
			for (int e = 0; e < 8; e++)
				cp4(&bs[st][kb + e][nb], tin ? src + e * hw : x, tin ? 4 : 0);
			tc += 16, toff += 16 * hw;
			if (tc >= P.CG) {   /* the group's channels done: the next tap */
				tc = 0;
				if (++ts == P.KW)
					ts = 0, tr++;
				tapat();
			}
		} else if (KS == 3) {   /* rows kc..kc+7: kr0 + e wraps into the next channel once at most */
#pragma unroll
			for (int e = 0; e < 8; e++) {
				int kr = kr0 + e, o = offc;
				if (kr >= 9)
					kr -= 9, o += P.H * P.W;
				int r = kr * 11 >> 5, q = kr - 3 * r;   /* kr / 3, kr % 3 for kr < 9 */
				bool in = (vm >> kr & 1) && kc + e < K;
				cp4(&bs[st][kb + e][nb], in ? xp + o + r * dhw + q * P.DW : x, in ? 4 : 0);
			}
			kc += 16, kr0 += 7, offc += P.H * P.W;   /* 16 = 9 + 7 */
			if (kr0 >= 9)
				kr0 -= 9, offc += P.H * P.W;
		} else {
#pragma unroll
			for (int e = 0; e < 8; e++) {
				int k = k0 + kb + e, c, r, s;
				if (KS == 1) {
					c = k, r = 0, s = 0;
				} else {
					int kr;
					c = dprt_q(P.kk, k), kr = dprt_r(P.kk, k, c);
					r = dprt_q(P.kw, kr), s = dprt_r(P.kw, kr, r);
				}
				int ih = ih0 + r * P.DH, iw = iw0 + s * P.DW;
				bool in = p < NP && k < K && ih >= 0 && ih < P.H && iw >= 0 && iw < P.W;
				cp4(&bs[st][kb + e][nb], in ? xp + (c * P.H + ih) * P.W + iw : x, in ? 4 : 0);
			}
		}
	};

	tcring<S>(nk, issue, [&](int st) {
		tcslice<MODE == 0 ? 0 : 1, 0, LA, LB, MI, 4, MODE == 2>(acc, as[st], &bs[st][0][0], wm, wn,
		                                                         gq, tq);
	});
	if (RED) {
		constexpr int LR = 64 + 4;
		int R = (64 + P.SPLIT - 1) / P.SPLIT;
		float *red = sm;   /* the partial tile [o][p], over the slices */
		unsigned rank = ctarank();

		__syncthreads();   /* every warp is done with the slices */
#pragma unroll
		for (int i = 0; i < 2; i++)
#pragma unroll
			for (int j = 0; j < 4; j++)
#pragma unroll
				for (int e = 0; e < 4; e++)
					red[(wm * 32 + i * 16 + gq + (e >> 1) * 8) * LR + wn * 32 + j * 8 + 2 * tq + (e & 1)] =
						acc[i][j][e];
		clsync();   /* the cluster's partial tiles are written */
		for (int t = tid; t < R * 64; t += 128) {
			int row = rank * R + t / 64, col = t % 64, m = m0 + row, n = n0 + col;
			if (row >= 64 || m >= OG || n >= NP)
				continue;
			float sum = 0.0f;
			for (int q = 0; q < P.SPLIT; q++)
				sum += dsld(&red[row * LR + col], q);
			convout(P, sum, grp * OG + m, n, bias, res, y);
		}
		clsync();   /* no block leaves while another reads its tile */
	} else {
		/* accumulator e of tile (i, j): row gq (+8 for e >= 2), column 2·tq + e % 2 */
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int j = 0; j < 4; j++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					int m = m0 + wm * 16 * MI + i * 16 + gq + (e >> 1) * 8;
					int n = n0 + wn * 32 + j * 8 + 2 * tq + (e & 1);
					if (m >= OG || n >= NP)
						continue;
					if (P.SPLIT > 1)
						ws[(split * P.O + grp * OG + m) * NP + n] = acc[i][j][e];
					else
						convout(P, acc[i][j][e], grp * OG + m, n, bias, res, y);
				}
	}
}

/* After a split K: the sum of the splits' partial tiles, then the epilogue. */
static __global__ void __launch_bounds__(256)
convsum(const __grid_constant__ Cv P, const float *__restrict__ ws,
        const float *__restrict__ bias, const float *__restrict__ res, float *__restrict__ y)
{
	int i = blockIdx.x * 256 + threadIdx.x;
	float s = 0.0f;

	if (P.PDL)
		dp_pdl_wait();   /* the partial tiles written (programmatic dependent launch) */
	if (i >= P.O * P.NP)
		return;
#pragma unroll 8
	for (int k = 0; k < P.SPLIT; k++)
		s += ws[k * P.O * P.NP + i];
	int o = dprt_q(P.np, i);
	convout(P, s, o, dprt_r(P.np, i, o), bias, res, y);
}

/* One thread per output, fp32 FMAs in order of k; KS 3: a 3x3 window
 * known to the compiler, 0: any. */
template <int KS>
static __global__ void __launch_bounds__(256)
convdirect(const __grid_constant__ Cv P, const float *__restrict__ x,
           const float *__restrict__ w, const float *__restrict__ bias,
           const float *__restrict__ res, float *__restrict__ y)
{
	const int KH = KS ? KS : P.KH, KW = KS ? KS : P.KW;
	int i = blockIdx.x * 256 + threadIdx.x;

	if (i >= P.O * P.NP)
		return;
	int o = dprt_q(P.np, i), p = dprt_r(P.np, i, o);
	int pq = dprt_q(P.pix, p), pix = dprt_r(P.pix, p, pq), oq = dprt_q(P.ow, pix);
	int ih0 = oq * P.SH - P.PH, iw0 = dprt_r(P.ow, pix, oq) * P.SW - P.PW;
	const float *xp = x + (pq * P.C + o / P.OG * P.CG) * P.H * P.W, *wp = w + o * P.LDA;
	float acc = 0.0f;

	for (int c = 0; c < P.CG; c++)
		for (int r = 0; r < KH; r++) {
			int ih = ih0 + r * P.DH;
			if (ih < 0 || ih >= P.H)
				continue;
			for (int s = 0; s < KW; s++) {
				int iw = iw0 + s * P.DW;
				if (iw >= 0 && iw < P.W)
					acc = fmaf(xp[(c * P.H + ih) * P.W + iw], wp[(c * KH + r) * KW + s], acc);
			}
		}
	convout(P, acc, o, p, bias, res, y);
}

/* Depthwise convolutions (one input channel a group: dp-lower_gpu's
 * direct ones): convdirect's sums in its order (window rows, then columns,
 * the taps outside the input skipped), so its bits, but DWN outputs of a
 * row a thread, so that the index arithmetic is a thread's once for them
 * and, with a 3x3 window (KS 3: MobileNets'), its weights sit in registers
 * and at stride ST 1 or 2 without dilation each input row's span is read
 * once for the DWN outputs rather than once per tap (ST 0: any). */
template <int KS, int ST>
static __global__ void __launch_bounds__(256)
convdw(const __grid_constant__ Cv P, const float *__restrict__ x,
       const float *__restrict__ w, const float *__restrict__ bias,
       const float *__restrict__ res, float *__restrict__ y)
{
	const int KH = KS ? KS : P.KH, KW = KS ? KS : P.KW;
	int i = blockIdx.x * 256 + threadIdx.x, nq = (P.OW + DWN - 1) / DWN;

	static_assert(!ST || KS == 3, "spans: the 3x3 window's");
	if (i >= P.N * P.O * P.OH * nq)
		return;
	int t = dprt_q(P.owq, i), ow0 = dprt_r(P.owq, i, t) * DWN;
	int u = dprt_q(P.oh, t), oh = dprt_r(P.oh, t, u);
	int n = dprt_q(P.o, u), o = dprt_r(P.o, u, n);
	const float *xp = x + (n * P.C + o / P.OG * P.CG) * P.H * P.W, *wp = w + o * P.LDA;
	int ih0 = oh * P.SH - P.PH, iw0 = ow0 * P.SW - P.PW;
	float acc[DWN], wr[KS ? KS * KS : 1];

	if (P.PDL)
		dp_pdl_wait();   /* programmatic dependent launch: the input written */

#pragma unroll
	for (int j = 0; j < DWN; j++)
		acc[j] = 0.0f;
#pragma unroll
	for (int k = 0; k < (KS ? KS * KS : 0); k++)
		wr[k] = wp[k];
#pragma unroll
	for (int r = 0; r < KH; r++) {
		int ih = ih0 + r * P.DH;
		if (ih < 0 || ih >= P.H)
			continue;
		const float *xr = xp + ih * P.W;
		if constexpr (ST != 0) {   /* the row's span, each input once */
			constexpr int SPAN = (DWN - 1) * (ST ? ST : 1) + 3;
			float v[SPAN];
			bool in[SPAN];
#pragma unroll
			for (int e = 0; e < SPAN; e++) {
				in[e] = iw0 + e >= 0 && iw0 + e < P.W;
				v[e] = in[e] ? xr[iw0 + e] : 0.0f;
			}
#pragma unroll
			for (int j = 0; j < DWN; j++)
#pragma unroll
				for (int s = 0; s < 3; s++)
					if (in[j * ST + s])
						acc[j] = fmaf(v[j * ST + s], wr[r * 3 + s], acc[j]);
		} else {
#pragma unroll
			for (int j = 0; j < DWN; j++)
				for (int s = 0; s < KW; s++) {
					int iw = iw0 + j * P.SW + s * P.DW;
					if (iw >= 0 && iw < P.W)
						acc[j] = fmaf(xr[iw], KS ? wr[r * KW + s] : wp[r * KW + s], acc[j]);
				}
		}
	}
#pragma unroll
	for (int j = 0; j < DWN; j++)
		if (ow0 + j < P.OW)
			convout(P, acc[j], o, n * P.PIX + oh * P.OW + ow0 + j, bias, res, y);
}

/* At init: weights [O][K] into rows of LDA floats (zeros past K) times a,
 * K in PyTorch's order or, where cg (a group's channels; tapk), tap by
 * tap, rounded to tf32 where rnd, and bias b' = (cb - mean)·a + beta, a = gamma
 * / sqrt(var + eps), where a batch norm is folded (gamma not NULL; else
 * a = 1 and no b'). */
static __global__ void
convpack(float *__restrict__ wout, float *__restrict__ bout, const float *__restrict__ w,
         const float *__restrict__ cb, const float *__restrict__ gamma,
         const float *__restrict__ beta, const float *__restrict__ mean,
         const float *__restrict__ var, float eps, int O, int K, int LDA, int rnd, int cg)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < O * LDA; i += gridDim.x * blockDim.x) {
		int o = i / LDA, k = i % LDA, kk = cg ? K / cg : 1;
		float a = 1.0f;

		if (gamma)   /* as runtime/nn.c's batch norm: invstd first */
			a = 1.0f / sqrtf(var[o] + eps) * gamma[o];
		if (cg && k < K)   /* tap by tap: k = tap·cg + c, from PyTorch's c·kk + tap */
			k = k % cg * kk + k / cg;
		float v = k < K ? w[o * K + k] * a : 0.0f;

		wout[i] = rnd ? tf32(v) : v;
		if (gamma && k == 0)
			bout[o] = beta[o] - mean[o] * a + (cb ? cb[o] * a : 0.0f);
	}
}

static int
errf(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
errf(char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;

	if (errn > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errn, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The check after a launch: "cuda: launch of conv ID[ (sum of N splits)]". */
static int
launched(const dprt_conv *c, int sum, char *err, size_t errn)
{
	cudaError_t e = cudaGetLastError();

	if (e == cudaSuccess)
		return 0;
	if (sum)
		return errf(err, errn, "cuda: launch of conv %d (sum of %d splits): %s", c->id,
		            c->split, cudaGetErrorString(e));
	return errf(err, errn, "cuda: launch of conv %d: %s", c->id, cudaGetErrorString(e));
}

static dim3
gemmgrid(const Cv &P, int tile)
{
	return dim3((P.NP + tile - 1) / tile, (P.OG + tile - 1) / tile, P.G * P.SPLIT);
}

typedef void Gemm(Cv, const float *, const float *, const float *, const float *, float *,
                  float *);

/* Whether x̂'s slices load 16 bytes at a time (conv_gemm's VB): a 1x1
 * window at stride 1 without padding, whole rows of 4 pixels in each image,
 * x 16-byte aligned. */
static bool
vb(const Cv &P, const float *x)
{
	return P.KH == 1 && P.KW == 1 && P.SH == 1 && P.SW == 1 && P.PH == 0 && P.PW == 0 &&
	       P.PIX % 4 == 0 && (uintptr_t)x % 16 == 0;
}

/* The instance of conv_gemm<MODE, RED, ., BIG> for P's window (and, x
 * given, VB where vb says; NULL with DPRT_CUDA_CONV_VEC=0, a reference for
 * timings: 4-byte loads everywhere). */
template <int MODE, int RED, int BIG = 0>
static Gemm *
gemm(const Cv &P, const float *x = NULL)
{
	if (x && !RED && vb(P, x))
		return conv_gemm<MODE, 0, 1, BIG, 1>;
	if (P.TAPK)
		return conv_gemm<MODE, RED, KTAP, BIG>;
	if (P.KH == 1 && P.KW == 1)
		return conv_gemm<MODE, RED, 1, BIG>;
	if (P.KH == 3 && P.KW == 3)
		return conv_gemm<MODE, RED, 3, BIG>;
	return conv_gemm<MODE, RED, 0, BIG>;
}

/* The 128x128 tile's shared memory: STAGES slices of w (128 x 20) and of
 * x̂ (16 x 136), beyond the 48 KiB a kernel has without asking. */
static const int BIGSMEM = STAGES * (128 * 20 + 16 * 136) * (int)sizeof(float);

/* The tile of conv c: want (DPRT_CUDA_CONV_TILE=64|128) where set, else 128 in
 * TF32 where K is not split, there are 128 output channels or more, and
 * the 128x128 tiles fill the GPU twice over (batch 32: ResNet-50 6% faster
 * on the H200).  Not in 3xTF32: there its 149 registers a thread leave one
 * block of 8 warps an SM, and the 64x64 tile's several blocks were 16-21%
 * faster; nor with fewer channels, where half its rows would be idle
 * (bench/RESULTS.md). */
static int
tileof(const Cv &P, int tf32, int want, char *err, size_t errn)
{
	static int sms, raised;
	long long blocks = (long long)((P.NP + 127) / 128) * ((P.OG + 127) / 128) * P.G;

	if (sms == 0 && dprt_cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
	                             "cudaDeviceGetAttribute", err, errn) != 0)
		return -1;
	if (P.SPLIT > 1 || (want ? want == 64 : !tf32 || P.OG < 128 || blocks < 2LL * sms))
		return 64;
	if (!raised) {   /* every instance of the 128x128 tile: the same bytes */
		Gemm *f[] = {
			conv_gemm<0, 0, 0, 1>, conv_gemm<0, 0, 1, 1>, conv_gemm<0, 0, 3, 1>, conv_gemm<0, 0, 1, 1, 1>,
			conv_gemm<1, 0, 0, 1>, conv_gemm<1, 0, 1, 1>, conv_gemm<1, 0, 3, 1>, conv_gemm<1, 0, 1, 1, 1>,
			conv_gemm<2, 0, 0, 1>, conv_gemm<2, 0, 1, 1>, conv_gemm<2, 0, 3, 1>, conv_gemm<2, 0, 1, 1, 1>,
			conv_gemm<0, 0, KTAP, 1>, conv_gemm<1, 0, KTAP, 1>, conv_gemm<2, 0, KTAP, 1>,
		};
		int n = (int)(sizeof f / sizeof *f);

		for (int i = 0; i < n; i++)
			if (dprt_cuda_ok(cudaFuncSetAttribute((const void *)f[i],
			                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
			                                      BIGSMEM),
			                 "cudaFuncSetAttribute", err, errn) != 0)
				return -1;
		raised = 1;
	}
	return 128;
}

/* The cluster launch of MODE's clustered form: clusters of SPLIT blocks
 * along z. */
template <int MODE>
static cudaError_t
clusterlaunch(const Cv &P, cudaStream_t st, const float *x, const float *w, const float *b,
              const float *res, float *y)
{
	cudaLaunchConfig_t c = {};
	cudaLaunchAttribute a[1];

	a[0].id = cudaLaunchAttributeClusterDimension;
	a[0].val.clusterDim.x = 1;
	a[0].val.clusterDim.y = 1;
	a[0].val.clusterDim.z = P.SPLIT;
	c.gridDim = gemmgrid(P, 64);
	c.blockDim = dim3(128, 1, 1);
	c.stream = st;
	c.attrs = a;
	c.numAttrs = 1;
	return cudaLaunchKernelEx(&c, gemm<MODE, 1>(P), P, x, w, b, res, y, (float *)NULL);
}

extern "C" int
dprt_cuda_conv(dprt_cuda *g, const dprt_conv *c, const float *x, const float *w,
               const float *b, const float *res, float *y, float *ws, char *err, size_t errn)
{
	Cv P = mkcv(c);
	char what[64];
	/* programmatic dependent launch where the program asks (g->pdl) and
	 * DPRT_CUDA_CONV_PDL says so (the file's comment) */
	int pdl = g->pdl && g->convpdl >= 1 && g->convpdl <= 3,
	    pdlgemm = g->pdl && (g->convpdl == 3 || (g->convpdl == 2 && c->split == 1)),
	    pdlsum = g->pdl && (g->convpdl == 3 || g->convpdl == 4) && dp_pdl_ok();

	if (P.NP * P.O == 0)
		return 0;
	if (!c->direct && g->conv != DPRT_CONV_DIRECT) {
		if (P.SPLIT > 1 && P.SPLIT <= CLMAX && g->cluster) {
			snprintf(what, sizeof what, "cudaLaunchKernelEx (conv %d)", c->id);
			return dprt_cuda_ok(g->conv == DPRT_CONV_TF32 ?
			                    clusterlaunch<1>(P, g->stream, x, w, b, res, y) :
			                    clusterlaunch<0>(P, g->stream, x, w, b, res, y),
			                    what, err, errn);
		}
		int tile = tileof(P, g->conv == DPRT_CONV_TF32, g->convtile, err, errn);
		const float *vx = g->convvec ? x : NULL;
		if (tile < 0)
			return -1;
		/* TF32 with packed weights: dprt_cuda_convpack rounded them to tf32 */
		Gemm *f = g->conv != DPRT_CONV_TF32 ?
		          (tile == 128 ? gemm<0, 0, 1>(P, vx) : gemm<0, 0>(P, vx)) :
		          P.PACKED ? (tile == 128 ? gemm<2, 0, 1>(P, vx) : gemm<2, 0>(P, vx)) :
		          (tile == 128 ? gemm<1, 0, 1>(P, vx) : gemm<1, 0>(P, vx));

		cudaLaunchAttribute at[1];
		cudaLaunchConfig_t lc;
		P.PDL = pdlgemm && dp_pdl_ok();
		P.TRIG = P.SPLIT > 1 && pdlsum && g->convpdl == 4;
		dp_config(&lc, at, gemmgrid(P, tile), dim3(tile == 128 ? 256 : 128), g->stream, P.PDL);
		lc.dynamicSmemBytes = tile == 128 ? BIGSMEM : 0;
		(void)cudaLaunchKernelEx(&lc, f, P, x, w, b, res, y, ws);
		if (launched(c, 0, err, errn) != 0)
			return -1;
		if (P.SPLIT > 1) {
			P.PDL = pdlsum;
			dp_config(&lc, at, dim3((unsigned)((P.O * P.NP + 255) / 256)), dim3(256), g->stream,
			          P.PDL);
			(void)cudaLaunchKernelEx(&lc, convsum, P, (const float *)ws, b, res, y);
			if (launched(c, 1, err, errn) != 0)
				return -1;
		}
		return 0;
	}
	if (c->direct && g->conv != DPRT_CONV_DIRECT) {   /* depthwise */
		long long nt = (long long)P.N * P.O * P.OH * ((P.OW + DWN - 1) / DWN);
		int k3 = P.KH == 3 && P.KW == 3, d1 = P.DW == 1;
		void (*f)(Cv, const float *, const float *, const float *, const float *, float *) =
			k3 && d1 && P.SW == 1 ? convdw<3, 1> : k3 && d1 && P.SW == 2 ? convdw<3, 2> :
			k3 ? convdw<3, 0> : convdw<0, 0>;

		cudaLaunchAttribute at[1];
		cudaLaunchConfig_t lc;
		P.PDL = pdl && dp_pdl_ok();
		dp_config(&lc, at, dim3((unsigned)((nt + 255) / 256)), dim3(256), g->stream, P.PDL);
		(void)cudaLaunchKernelEx(&lc, f, P, x, w, b, res, y);
		return launched(c, 0, err, errn);
	}
	if (P.KH == 3 && P.KW == 3)
		convdirect<3><<<(P.O * P.NP + 255) / 256, 256, 0, g->stream>>>(P, x, w, b, res, y);
	else
		convdirect<0><<<(P.O * P.NP + 255) / 256, 256, 0, g->stream>>>(P, x, w, b, res, y);
	return launched(c, 0, err, errn);
}

/* Whether MODE's clustered form runs here: built for sm_90 or later (no
 * trap), and a cluster of SPLIT blocks fits on the device (past 8, the
 * non-portable sizes Hopper allows, up to 16). */
template <int MODE>
static bool
clusterfits(const Cv &P)
{
	cudaFuncAttributes fa;
	cudaLaunchConfig_t c = {};
	cudaLaunchAttribute a[1];
	int n = 0;

	Gemm *f = gemm<MODE, 1>(P);

	if (P.SPLIT > CLMAX)
		return false;
	if (cudaFuncGetAttributes(&fa, f) != cudaSuccess || fa.ptxVersion < 90)
		return false;
	if (P.SPLIT > 8 && cudaFuncSetAttribute(f,
	                                        cudaFuncAttributeNonPortableClusterSizeAllowed,
	                                        1) != cudaSuccess)
		return false;
	a[0].id = cudaLaunchAttributeClusterDimension;
	a[0].val.clusterDim.x = 1;
	a[0].val.clusterDim.y = 1;
	a[0].val.clusterDim.z = P.SPLIT;
	c.gridDim = dim3(1, 1, P.SPLIT);
	c.blockDim = dim3(128, 1, 1);
	c.attrs = a;
	c.numAttrs = 1;
	return cudaOccupancyMaxActiveClusters(&n, f, &c) == cudaSuccess && n > 0;
}

extern "C" int
dprt_cuda_convcl_ok(const dprt_conv *c)
{
	Cv P = mkcv(c);
	bool ok = clusterfits<0>(P) && clusterfits<1>(P);

	(void)cudaGetLastError();   /* a refusal above is an answer, not an error */
	return ok;
}

extern "C" int
dprt_cuda_convpack(dprt_cuda *g, const dprt_conv *c, float *wout, float *bout,
                   const float *w, const float *cb, const float *gamma, const float *beta,
                   const float *mean, const float *var, float eps, char *err, size_t errn)
{
	long long n = (long long)c->O * c->lda, blocks = (n + 255) / 256;
	int K = c->C / c->G * c->KH * c->KW;
	char what[64];

	if (dprt_cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize", err, errn) != 0)
		return -1;
	/* in TF32 the implicit GEMM would round each weight at every use: once
	 * here instead (dprt_cuda_conv then takes MODE 2), the same values */
	convpack<<<blocks > 4096 ? 4096 : blocks, 256, 0, g->stream>>>(
		wout, bout, w, cb, gamma, beta, mean, var, eps, c->O, K, c->lda,
		g->conv == DPRT_CONV_TF32 && !c->direct,
		tapk(c) && g->conv != DPRT_CONV_DIRECT ? c->C / c->G : 0);
	snprintf(what, sizeof what, "nn_pack (conv %d)", c->id);
	if (dprt_cuda_launched(what, err, errn) != 0)
		return -1;
	return dprt_cuda_ok(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize", err, errn);
}
