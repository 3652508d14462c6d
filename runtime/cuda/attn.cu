/* attn.cu: aten.scaled_dot_product_attention on the device
 * (dprt_cuda_sdpa, dprt_cuda.h) as one kernel in the manner of flash
 * attention: scores and softmax are never stored.  A block of 4 warps takes
 * 4 query rows of one batch entry (one row a warp) and walks the keys 32 at
 * a time: the block stages a slice of K and V in shared memory, lane j
 * scores key j, the warp takes the running maximum and rescales what it has
 * (online softmax: o·e^(m-m'), l·e^(m-m')), then adds p_j·v_j to the row's
 * outputs, spread over the lanes.  Causal attention (key j > query i
 * masked, as runtime/nn.c) stops at the block's last row; a boolean mask
 * drops keys, an additive one adds to the scores; a row with every key
 * masked gives zeros, as on the cpu.  Exact fp32.  The kernel is compiled
 * for each mask kind and number of outputs per lane, and once more for
 * head size 64 known to the compiler (ViT, GPT-2).
 *
 * Where those blocks are too few to fill the GPU (DeiT-tiny: 3 heads of 197
 * rows, 150 blocks of 4 warps on 132 SMs, each walking all 197 keys in
 * turn), the keys are split into chunks of whole slices, a block per chunk
 * (blockIdx.z), each writing its row's running maximum, sum and unscaled
 * outputs to the cuBLAS workspace; a second kernel merges the chunks of
 * each row (the same rescaling as between slices).  A tuning database's
 * split=N (dprt_sdpa.split) sets the number of chunks (1: none) over that
 * guess; DPRT_CUDA_ATTN_SPLIT=0 keeps one block per row group.
 *
 * Head size 64 (ViT, GPT-2) runs on the tensor cores instead
 * (attnmma.cuh, in the manner of FlashAttention-2): in TF32 where the
 * mapping's precision is tf32, bf16 or f16, else in 3xTF32 (as accurate as
 * fp32); DPRT_CUDA_ATTN=simt|tf32|3xtf32 overrides the method,
 * DPRT_CUDA_ATTN_RW=1|2|4 its rows a block (16 each of 1, 2 or 4 warps).
 * The same chunks of keys split it where a tuning database says so.
 *
 * A few query rows (DEC_MAXL or fewer: a decoder's step) take the decode
 * kernel of attndec.cuh instead, a warp per row and chunk of keys, the
 * chunks merged by the last block of each row (no second kernel);
 * DPRT_CUDA_ATTN=decode forces it, =simt the kernel above, and
 * DPRT_CUDA_ATTN_CHUNK=keys sets its chunk (a multiple of 32).  On sm_90,
 * where the head size is 64 and a row is one chunk, a row is a cluster of
 * DEC_CLUSTER blocks instead of one block (sdpadec_cl: the same warps and
 * bits, its keys loaded by as many SMs); DPRT_CUDA_ATTN_CLUSTER=1|2|4|8
 * sets the blocks (1: one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprt_cuda.h"
#include "fastdiv.cuh"
#include "launch.cuh"   /* dp_config: the generated kernels' launch configuration */

#include "attn.cuh"

/* NO: outputs per lane ((EV + 31) / 32); MASK: 0 none, 1 bool, 2 added;
 * D: 64 where E = EV = 64, else 0. */
template <int NO, int MASK, int D>
static __global__ void __launch_bounds__(128)
sdpa(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
     const float *__restrict__ v, const void *__restrict__ mask, float *__restrict__ y,
     int chunk, float *__restrict__ part)
{
	extern __shared__ float smem[];
	const int E = D ? D : P.E, EV = D ? D : P.EV, S = P.S;
	float *qs = smem, *ks = smem + 4 * E, *vs = ks + 32 * (E + 1);   /* [4][E], [32][E+1], [32][EV] */
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = blockIdx.y;
	int i = blockIdx.x * 4 + warp;   /* this warp's query row */
	int send = P.CAUSAL ? min(S, (int)blockIdx.x * 4 + 4) : S;   /* keys the block sees */
	int sbeg = (int)blockIdx.z * chunk;   /* this block's chunk of keys (part != NULL) */
	const float *kb = k + boff(P, b, P.kbs), *vb = v + boff(P, b, P.vbs);
	long long mo = MASK ? mbase(P, b) + (long long)i * P.MSL : 0;
	float m = -INFINITY, l = 0.0f, o[NO];

	for (int d = 0; d < NO; d++)
		o[d] = 0.0f;
	if (i < P.L)
		for (int e = lane; e < E; e += 32)
			qs[warp * E + e] = q[boff(P, b, P.qbs) + i * P.QRS + e];
	if (part)
		send = min(send, sbeg + chunk);
	for (int s0 = part ? sbeg : 0; s0 < send; s0 += 32) {
		__syncthreads();   /* the last slice is used */
		for (int t = threadIdx.x; t < 32 * E; t += 128) {
			int r = D ? t / D : dprt_q(P.e, t), e = t - r * E;
			ks[r * (E + 1) + e] = s0 + r < S ? kb[(s0 + r) * P.KRS + e] : 0.0f;
		}
		for (int t = threadIdx.x; t < 32 * EV; t += 128) {
			int r = D ? t / D : dprt_q(P.ev, t), e = t - r * EV;
			vs[r * EV + e] = s0 + r < S ? vb[(s0 + r) * P.VRS + e] : 0.0f;
		}
		__syncthreads();
		if (i >= P.L)
			continue;
		int j = s0 + lane;
		float sc = 0.0f, mt, mn, corr, p, ps;
		bool keep = j < S && !(P.CAUSAL && j > i);

		for (int e = 0; e < E; e++)
			sc = fmaf(qs[warp * E + e], ks[lane * (E + 1) + e], sc);
		sc *= P.SCALE;
		if (MASK == 1 && keep)
			keep = ((const unsigned char *)mask)[mo + (long long)j * P.MSS] != 0;
		if (MASK == 2 && keep)
			sc += ((const float *)mask)[mo + (long long)j * P.MSS];
		if (!keep)
			sc = -INFINITY;
		mt = sc;
		for (int d = 16; d > 0; d >>= 1)
			mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, d));
		mn = fmaxf(m, mt);
		if (mn == -INFINITY)
			continue;   /* every key so far masked (the whole warp) */
		corr = expf(m - mn);
		p = sc == -INFINITY ? 0.0f : expf(sc - mn);
		ps = p;
		for (int d = 16; d > 0; d >>= 1)
			ps += __shfl_xor_sync(0xffffffffu, ps, d);
		l = l * corr + ps;
		for (int d = 0; d < NO; d++)
			o[d] *= corr;
#pragma unroll 8
		for (int t = 0; t < 32; t++) {
			float pt = __shfl_sync(0xffffffffu, p, t);
			for (int d = 0; d < NO; d++)
				if (lane + 32 * d < EV)
					o[d] = fmaf(pt, vs[t * EV + lane + 32 * d], o[d]);
		}
		m = mn;
	}
	if (i < P.L && part) {   /* [chunk][b][i]: m, l, then EV outputs */
		float *pr = part + (((long long)blockIdx.z * gridDim.y + b) * P.L + i) * (EV + 2);
		if (lane == 0) {
			pr[0] = m;
			pr[1] = l;
		}
		for (int d = 0; d < NO; d++)
			if (lane + 32 * d < EV)
				pr[2 + lane + 32 * d] = o[d];
	} else if (i < P.L) {
		for (int d = 0; d < NO; d++)
			if (lane + 32 * d < EV)
				y[boff(P, b, P.ybs) + i * P.YRS + lane + 32 * d] = l > 0.0f ? o[d] / l : 0.0f;
	}
}

/* The chunks of each row merged: a warp per row of the B·L. */
static __global__ void __launch_bounds__(128)
merge(const __grid_constant__ At P, const float *__restrict__ part, float *__restrict__ y,
      int rows, int nchunk, int EV)
{
	int r = blockIdx.x * 4 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
	float m = -INFINITY, l = 0.0f;

	if (r >= rows)
		return;
	int b = dprt_q(P.l, r);
	float *yr = y + boff(P, b, P.ybs) + (long long)(r - b * P.L) * P.YRS;   /* row r */
	for (int c = 0; c < nchunk; c++)
		m = fmaxf(m, part[((long long)c * rows + r) * (EV + 2)]);
	if (m == -INFINITY) {   /* every key masked */
		for (int e = lane; e < EV; e += 32)
			yr[e] = 0.0f;
		return;
	}
	for (int c = 0; c < nchunk; c++) {
		const float *pr = part + ((long long)c * rows + r) * (EV + 2);
		l += pr[0] == -INFINITY ? 0.0f : pr[1] * expf(pr[0] - m);
	}
	for (int e = lane; e < EV; e += 32) {
		float o = 0.0f;
		for (int c = 0; c < nchunk; c++) {
			const float *pr = part + ((long long)c * rows + r) * (EV + 2);
			if (pr[0] != -INFINITY)
				o = fmaf(pr[2 + e], expf(pr[0] - m), o);
		}
		yr[e] = l > 0.0f ? o / l : 0.0f;
	}
}

typedef void Kernel(At, const float *, const float *, const float *, const void *, float *, int,
                    float *);

#include "attnmma.cuh"
#include "attndec.cuh"

/* The instance for (NO, MASK) with any head size. */
template <int MASK>
static Kernel *
pick(int no)
{
	switch (no) {
	case 1: return sdpa<1, MASK, 0>;
	case 2: return sdpa<2, MASK, 0>;
	case 3: return sdpa<3, MASK, 0>;
	case 4: return sdpa<4, MASK, 0>;
	case 5: return sdpa<5, MASK, 0>;
	}
	return NULL;
}

/* The tensor-core instance for RW row groups, SPLIT3, the mask kind and
 * NW warps a block (8: one row group only) (head size 64: ViT, GPT-2,
 * BERT, most models). */
template <int SPLIT3>
static Kernel *
pickmma(int rw, int mask, int nw)
{
	if (nw == 8)
		return rw != 1 ? NULL : mask == 1 ? sdpamma<64, 1, SPLIT3, 1, 8> :
		       mask == 2 ? sdpamma<64, 1, SPLIT3, 2, 8> : sdpamma<64, 1, SPLIT3, 0, 8>;
	switch (rw * 4 + mask) {
	case 4: return sdpamma<64, 1, SPLIT3, 0>;
	case 5: return sdpamma<64, 1, SPLIT3, 1>;
	case 6: return sdpamma<64, 1, SPLIT3, 2>;
	case 8: return sdpamma<64, 2, SPLIT3, 0>;
	case 9: return sdpamma<64, 2, SPLIT3, 1>;
	case 10: return sdpamma<64, 2, SPLIT3, 2>;
	case 16: return sdpamma<64, 4, SPLIT3, 0>;
	case 17: return sdpamma<64, 4, SPLIT3, 1>;
	case 18: return sdpamma<64, 4, SPLIT3, 2>;
	}
	return NULL;
}

typedef void DecKernel(At, const float *, const float *, const float *, const void *, float *,
                       int, float *, unsigned *);

/* The decode kernel's instance (attndec.cuh) for the mask kind, with
 * head size 64 (d64) or any. */
static DecKernel *
pickdec(int no, int mask, int d64)
{
	if (d64)
		return mask == 1   ? sdpadec<2, 1, 64, decwarps(64)>
		       : mask == 2 ? sdpadec<2, 2, 64, decwarps(64)>
		                   : sdpadec<2, 0, 64, decwarps(64)>;
	switch (no * 4 + mask) {
	case 4: return sdpadec<1, 0, 0, decwarps(0)>;
	case 5: return sdpadec<1, 1, 0, decwarps(0)>;
	case 6: return sdpadec<1, 2, 0, decwarps(0)>;
	case 8: return sdpadec<2, 0, 0, decwarps(0)>;
	case 9: return sdpadec<2, 1, 0, decwarps(0)>;
	case 10: return sdpadec<2, 2, 0, decwarps(0)>;
	case 12: return sdpadec<3, 0, 0, decwarps(0)>;
	case 13: return sdpadec<3, 1, 0, decwarps(0)>;
	case 14: return sdpadec<3, 2, 0, decwarps(0)>;
	case 16: return sdpadec<4, 0, 0, decwarps(0)>;
	case 17: return sdpadec<4, 1, 0, decwarps(0)>;
	case 18: return sdpadec<4, 2, 0, decwarps(0)>;
	case 20: return sdpadec<5, 0, 0, decwarps(0)>;
	case 21: return sdpadec<5, 1, 0, decwarps(0)>;
	case 22: return sdpadec<5, 2, 0, decwarps(0)>;
	}
	return NULL;
}

/* The decode kernel of head size 64 as a cluster of cl blocks
 * (sdpadec_cl, attndec.cuh) for the mask kind. */
static DecKernel *
pickdeccl(int mask, int cl)
{
	switch (cl * 4 + mask) {
	case 8: return sdpadec_cl<0, 2>;
	case 9: return sdpadec_cl<1, 2>;
	case 10: return sdpadec_cl<2, 2>;
	case 16: return sdpadec_cl<0, 4>;
	case 17: return sdpadec_cl<1, 4>;
	case 18: return sdpadec_cl<2, 4>;
	case 32: return sdpadec_cl<0, 8>;
	case 33: return sdpadec_cl<1, 8>;
	case 34: return sdpadec_cl<2, 8>;
	}
	return NULL;
}

/* The blocks of a cluster that take a row of the head-size-64 decode
 * kernel where its row is one chunk: DPRT_CUDA_ATTN_CLUSTER=1|2|4|8 where
 * set, else DEC_CLUSTER; 1 (one block of 16 warps, sdpadec) before sm_90. */
static int
clusterdec(void)
{
	static int major = -1;
	const char *env = getenv("DPRT_CUDA_ATTN_CLUSTER");
	int n = env && *env ? atoi(env) : DEC_CLUSTER;

	if (major < 0 &&
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess)
		major = 0;
	return major >= 9 && (n == 2 || n == 4 || n == 8) ? n : 1;
}

/* The decode kernel (attndec.cuh): a block of W warps (decwarps: 16 where
 * the head size is 64, else 8) per query row and chunk of keys.  Chunks of
 * whole slices of 32 keys, as many as make about 4 warps per SM but no
 * fewer than 4 slices a warp (of DEC_SLICE64 keys where the head size is
 * 64) (a tuning database's split=N, DPRT_CUDA_ATTN_CHUNK=keys where set, 1
 * where DPRT_CUDA_ATTN_SPLIT=0), where the cuBLAS workspace holds the
 * partial rows and g->attnct the counters of the last block's merge. */
static int
launchdec(dprt_cuda *g, const dprt_sdpa *a, const At &P, const float *q, const float *k,
          const float *v, const void *mask, float *y, int sms, char *err, size_t errn,
          const char *what)
{
	const char *env = getenv("DPRT_CUDA_ATTN_SPLIT"), *ck = getenv("DPRT_CUDA_ATTN_CHUNK");
	long long rows = (long long)a->B * a->L, st = P.QRS | P.KRS | P.VRS | P.YRS;
	int chunk = a->S, nchunk = 1, d64;

	for (int i = 0; i < P.NB; i++)
		st |= P.qbs[i] | P.kbs[i] | P.vbs[i] | P.ybs[i];
	d64 = a->E == 64 && a->EV == 64 && st % 4 == 0 &&
	      ((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)y) % 16 == 0;
	DecKernel *f = pickdec((a->EV + 31) / 32, a->mask, d64);
	int W = decwarps(d64 ? 64 : 0);   /* the warps of pickdec's kernel */
	if (f == NULL || a->E > DEC_MAXE) {
		if (errn > 0)
			snprintf(err, errn, "cuda: %s: head sizes %d and %d are beyond the kernel's",
			         what, a->E, a->EV);
		return -1;
	}
	if (g->attnct == NULL && g->blasws != NULL) {   /* the first call (not captured) */
		cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
		if (dprt_cuda_ok(cudaStreamIsCapturing(g->stream, &cs), "cudaStreamIsCapturing", err,
		                 errn) != 0)
			return -1;
		if (cs == cudaStreamCaptureStatusNone &&
		    (dprt_cuda_ok(cudaMalloc((void **)&g->attnct, DEC_MAXROWS * sizeof(unsigned)),
		                  "cudaMalloc", err, errn) != 0 ||
		     dprt_cuda_ok(cudaMemsetAsync(g->attnct, 0, DEC_MAXROWS * sizeof(unsigned),
		                                  g->stream), "cudaMemsetAsync", err, errn) != 0))
			return -1;
	}
	if (g->attnct && rows <= DEC_MAXROWS && !(env && strcmp(env, "0") == 0)) {
		/* blocks of W warps: about 4 warps per SM, each with at least
		 * 4 slices of keys to walk before chunks are merged */
		long long want = a->split > 0 ? a->split : (4LL * sms + rows * W - 1) / (rows * W);
		int slice = d64 ? DEC_SLICE64 : 32;   /* the keys a warp takes at a time */
		chunk = (int)((a->S + want - 1) / want);
		if (a->split <= 0 && chunk < 4 * slice * W)
			chunk = 4 * slice * W;
		if (ck && atoi(ck) > 0 && a->split <= 0)
			chunk = atoi(ck);
		chunk = (chunk + 31) / 32 * 32;
		nchunk = (a->S + chunk - 1) / chunk;
		if ((long long)nchunk * rows * (a->EV + 2) * sizeof(float) > DPRT_BLAS_WORKSPACE ||
		    nchunk > 65535)
			chunk = a->S, nchunk = 1;
	}
	/* with programmatic dependent launch where the program asks (g->pdl;
	 * DPRT_CUDA_ATTN_PDL=0 in the environment keeps the ordinary launch):
	 * its blocks start while the kernel before works, and wait for it first */
	const char *pe = getenv("DPRT_CUDA_ATTN_PDL"), *me = getenv("DPRT_CUDA_ATTN_MERGE");
	cudaLaunchAttribute at[2];
	cudaLaunchConfig_t c;
	At Q = P;   /* DPRT_CUDA_ATTN_MERGE=0: warp 0's merge of the block's warps */
	Q.MERGE = !(me && strcmp(me, "0") == 0);
	int cl = d64 && nchunk == 1 && Q.MERGE ? clusterdec() : 1;
	if (cl > 1)
		f = pickdeccl(a->mask, cl), W /= cl;
	dp_config(&c, at, dim3(cl * nchunk, (unsigned)rows), dim3(32 * W), g->stream,
	          g->pdl && !(pe && strcmp(pe, "0") == 0));
	if (cl > 1) {
		at[c.numAttrs].id = cudaLaunchAttributeClusterDimension;
		at[c.numAttrs].val.clusterDim.x = (unsigned)cl;
		at[c.numAttrs].val.clusterDim.y = at[c.numAttrs].val.clusterDim.z = 1;
		c.numAttrs++;
	}
	(void)cudaLaunchKernelEx(&c, f, Q, q, k, v, mask, y, chunk, (float *)g->blasws, g->attnct);
	return dprt_cuda_launched(what, err, errn);
}

/* The method: DPRT_CUDA_ATTN=simt|tf32|3xtf32 where set, else the tensor
 * cores where the head size is the kernel's (64, q and k as wide as v) and
 * the rows of q, k, v and y are 16-byte aligned: in TF32 where the
 * precision is tf32 (or bf16/f16, whose values TF32 holds exactly), else
 * in 3xTF32; where the query rows are DEC_MAXL or fewer (a decode step)
 * and DPRT_CUDA_ATTN is not set, or it says decode, the decode kernel.
 * 0 SIMT, 1 TF32, 2 3xTF32, 3 decode. */
static int
method(const dprt_cuda *g, const dprt_sdpa *a, const At &P, const float *q, const float *k,
       const float *v, const float *y)
{
	const char *env = getenv("DPRT_CUDA_ATTN");
	long long st = P.QRS | P.KRS | P.VRS | P.YRS;
	int mma;

	for (int i = 0; i < P.NB; i++)
		st |= P.qbs[i] | P.kbs[i] | P.vbs[i] | P.ybs[i];
	mma = a->E == 64 && a->EV == 64 && st % 4 == 0 &&
	      ((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)y) % 16 == 0;

	if ((long long)a->B * a->L <= 65535 && env && strcmp(env, "decode") == 0)
		return 3;
	if (env && strcmp(env, "simt") == 0)
		return 0;
	if (a->L <= DEC_MAXL && (long long)a->B * a->L <= 65535 && !env)   /* a few query rows (a decode step): a warp per */
		return 3;               /* row and chunk of keys (attndec.cuh) */
	if (!mma || (a->L < 16 && !env))   /* a few query rows: the SIMT kernel, its keys */
		return 0;                  /* split in chunks to fill the GPU */
	if (env && strcmp(env, "tf32") == 0)
		return 1;
	if (env && strcmp(env, "3xtf32") == 0)
		return 2;
	return g->tf32 ? 1 : 2;
}

/* Chunks of keys: where the blocks are fewer than `fill`, the keys are
 * split into chunks of whole slices of `slice` keys, a block per chunk, as
 * many as make about `want` blocks (or the tuning database's count), where
 * the cuBLAS workspace holds the partial rows; 1: none. */
static int
chunks(const dprt_cuda *g, const dprt_sdpa *a, long long blocks, int slice, long long fill,
       long long want, int *chunk)
{
	const char *env = getenv("DPRT_CUDA_ATTN_SPLIT");
	int n;

	*chunk = a->S;
	if (g->blasws == NULL || (env && strcmp(env, "0") == 0) || a->S <= slice ||
	    (a->split <= 0 && blocks >= fill))
		return 1;
	want = a->split > 0 ? a->split : (want + blocks - 1) / blocks;
	*chunk = (a->S + want - 1) / want;
	*chunk = (*chunk + slice - 1) / slice * slice;
	n = (a->S + *chunk - 1) / *chunk;
	if ((long long)n * a->B * a->L * (a->EV + 2) * sizeof(float) > DPRT_BLAS_WORKSPACE) {
		*chunk = a->S;
		return 1;
	}
	return n;
}

/* The tensor-core kernel: RW from DPRT_CUDA_ATTN_RW (1, 2, 4) where set,
 * else the most rows a block (fewer loads of k and v) that still make a
 * block per SM, else 1, and in 3xTF32 at most 2 (its RW = 4 instances
 * spill at 168 registers: DeiT-tiny and ViT-B/16 at batch 32 2-3% slower
 * whole, bench/RESULTS.md); and with one row group, where the blocks are no
 * more than the SMs, 8 warps a block instead of 4 (DPRT_CUDA_ATTN_NW=4|8
 * where set): each warp then takes half the keys of a chunk, and the SM
 * two warps a scheduler (at batch 1 a warp issued every third cycle with
 * none other beside it: DeiT-tiny's 39 blocks, bench/RESULTS.md). */
static int
launchmma(dprt_cuda *g, const dprt_sdpa *a, const At &P, int split3, const float *q,
          const float *k, const float *v, const void *mask, float *y, int sms, int *nchunk,
          char *err, size_t errn, const char *what)
{
	static int raised[2];   /* the shared-memory limit raised: [split3] */
	const char *env = getenv("DPRT_CUDA_ATTN_RW"), *ne = getenv("DPRT_CUDA_ATTN_NW");
	int rw = env ? atoi(env) : 0, chunk, nw;
	size_t smem = msmem(64);

	if (rw != 1 && rw != 2 && rw != 4) {
		for (rw = split3 ? 2 : 4; rw > 1; rw /= 2)
			if ((long long)(a->L + 16 * rw - 1) / (16 * rw) * a->B >= sms)
				break;
	}
	long long blocks = (long long)(a->L + 16 * rw - 1) / (16 * rw) * a->B;
	nw = rw == 1 && (ne ? atoi(ne) == 8 : blocks <= sms) ? 8 : 4;
	Kernel *f = split3 ? pickmma<1>(rw, a->mask, nw) : pickmma<0>(rw, a->mask, nw);
	if (!raised[split3]) {
		/* every instance of this head size and method: the same bytes,
		 * and the SM's most shared memory (three blocks of 4 warps) */
		static const int rwnw[][2] = {{1, 4}, {2, 4}, {4, 4}, {1, 8}};

		for (int r = 0; r < 4; r++)
			for (int m = 0; m < 3; m++) {
				Kernel *h = split3 ? pickmma<1>(rwnw[r][0], m, rwnw[r][1])
				                   : pickmma<0>(rwnw[r][0], m, rwnw[r][1]);
				if (dprt_cuda_ok(cudaFuncSetAttribute((const void *)h,
				                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
				                                      (int)smem),
				                 "cudaFuncSetAttribute", err, errn) != 0 ||
				    dprt_cuda_ok(cudaFuncSetAttribute((const void *)h,
				                                      cudaFuncAttributePreferredSharedMemoryCarveout,
				                                      cudaSharedmemCarveoutMaxShared),
				                 "cudaFuncSetAttribute", err, errn) != 0)
					return -1;
			}
		raised[split3] = 1;
	}
	/* no chunks unless the tuning database asks: on the H200 the merge's
	 * launch cost more than the wider grid gained (DeiT-tiny, GPT-2's
	 * prefill, batch 1: bench/RESULTS.md) */
	*nchunk = chunks(g, a, blocks, MC, 0, sms, &chunk);
	dim3 grid((a->L + 16 * rw - 1) / (16 * rw), a->B, *nchunk);
	f<<<grid, 32 * nw, smem, g->stream>>>(P, q, k, v, mask, y, chunk,
	                                       *nchunk > 1 ? (float *)g->blasws : NULL);
	return dprt_cuda_launched(what, err, errn);
}

/* P's y made 3xTF32's split of the dense M x K matrix whose bytes y's
 * window is (rows of K: [hi | hi | lo], 3K floats): each stride of y that
 * steps whole rows three times longer, the parts K apart.  0 where y's
 * strides do not part so (its columns' span reaching K) or K is not a
 * multiple of 4 (the kernel's 16-byte stores). */
static int
x3geom(At &P, long long K)
{
	long long span = P.EV - 1;

	if (K % 4 != 0)
		return 0;
	for (int i = 0; i < P.NB; i++)
		if (P.ybs[i] % K)
			span += (P.bdim[i] - 1) * P.ybs[i];
	if (P.YRS % K)
		span += (P.L - 1) * P.YRS;
	if (span >= K)
		return 0;
	for (int i = 0; i < P.NB; i++)
		if (P.ybs[i] % K == 0)
			P.ybs[i] *= 3;
	if (P.YRS % K == 0)
		P.YRS *= 3;
	P.YPS = K;
	return 1;
}

/* dprt_cuda_sdpa, and where x3k (dprt_cuda_sdpa3) y the A of a 3xTF32
 * product with x3k columns: the tensor-core kernel writes A's split into
 * g->s3 where its one launch takes the whole row (no chunks of keys), its
 * blocks are at least the SMs and y's strides part so (x3geom); else y is
 * written and the split kernel splits it; with no splits (g->x3off) y
 * alone, which the product reads. */
static int
sdpa(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k, const float *v,
     const void *mask, float *y, long long x3k, char *err, size_t errn)
{
	static int sms;
	At P;
	Kernel *f;
	int no = (a->EV + 31) / 32;
	size_t smem = sizeof(float) * (4 * (size_t)a->E + 32 * (size_t)(a->E + 1) + 32 * (size_t)a->EV);
	char what[64];
	int how, nchunk = 1, chunk = a->S;

	if ((long long)a->B * a->L * a->EV == 0)
		return 0;
	P = atgeom(a);
	snprintf(what, sizeof what, "attention (op %d)", a->id);
	if (sms == 0 && dprt_cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
	                             "cudaDeviceGetAttribute", err, errn) != 0)
		return -1;
	how = method(g, a, P, q, k, v, y);
	if (x3k && (g->x3off || g->s3 == NULL))
		x3k = 0;   /* the product reads y */
	/* the kernel's own stores only where its blocks fill the GPU (a layer
	 * norm of 25 blocks lost that way: stages/lower_gpu/reduce.c) */
	if (x3k && (how == 1 || how == 2) && a->split <= 0 &&
	    (long long)(a->L + 15) / 16 * a->B >= sms && x3geom(P, x3k)) {
		if (launchmma(g, a, P, how == 2, q, k, v, mask, (float *)g->s3, sms, &nchunk, err,
		              errn, what) != 0)
			return -1;
		if (nchunk > 1) {   /* launchmma splits keys only where the database asks */
			if (errn > 0)
				snprintf(err, errn, "cuda: %s: internal error: chunks of keys and a split "
				         "result", what);
			return -1;
		}
		return 0;
	}
	if (x3k) {   /* y, then its split */
		long long n = (long long)a->B * a->L * a->EV;
		return sdpa(g, a, q, k, v, mask, y, 0, err, errn) != 0 ? -1 :
		       dprt_cuda_split3(g, (float *)g->s3, y, n / x3k, x3k, x3k, 3 * x3k, x3k, 4, err,
		                        errn);
	}
	if (how == 3)
		return launchdec(g, a, P, q, k, v, mask, y, sms, err, errn, what);
	if (how > 0) {
		if (launchmma(g, a, P, how == 2, q, k, v, mask, y, sms, &nchunk, err, errn, what) != 0)
			return -1;
	} else {
		if (a->E == 64 && a->EV == 64)
			f = a->mask == 1 ? sdpa<2, 1, 64> : a->mask == 2 ? sdpa<2, 2, 64> : sdpa<2, 0, 64>;
		else
			f = a->mask == 1 ? pick<1>(no) : a->mask == 2 ? pick<2>(no) : pick<0>(no);
		if (f == NULL || smem > 48 * 1024) {
			if (errn > 0)
				snprintf(err, errn, "cuda: %s: head sizes %d and %d are beyond the kernel's",
				         what, a->E, a->EV);
			return -1;
		}
		nchunk = chunks(g, a, (long long)(a->L + 3) / 4 * a->B, 32, 2LL * sms, 4LL * sms, &chunk);
		f<<<dim3((a->L + 3) / 4, a->B, nchunk), 128, smem, g->stream>>>(
			P, q, k, v, mask, y, chunk, nchunk > 1 ? (float *)g->blasws : NULL);
		if (dprt_cuda_launched(what, err, errn) != 0)
			return -1;
	}
	if (nchunk < 2)
		return 0;
	merge<<<(a->B * a->L + 3) / 4, 128, 0, g->stream>>>(P, (const float *)g->blasws, y,
	                                                     a->B * a->L, nchunk, a->EV);
	return dprt_cuda_launched(what, err, errn);
}

extern "C" int
dprt_cuda_sdpa(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
               const float *v, const void *mask, float *y, char *err, size_t errn)
{
	return sdpa(g, a, q, k, v, mask, y, 0, err, errn);
}

extern "C" int
dprt_cuda_sdpa3(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                const float *v, const void *mask, float *y, int64_t K, char *err, size_t errn)
{
	return sdpa(g, a, q, k, v, mask, y, K, err, errn);
}
