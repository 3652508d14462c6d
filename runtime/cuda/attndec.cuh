/* attndec.cuh: attention for a few query rows (a decoder's step: one row
 * per head against a cache of keys), in the manner of flash-decoding.  A
 * block of W warps takes one query row and one chunk of keys (blockIdx.y
 * the row of the B·L, blockIdx.x the chunk); warp w takes the slices w,
 * w + W, ... of the chunk's keys and loads the mask bytes of its first
 * DEC_PRE slices at once, with q, before any key.  The warp keeps the
 * running maximum and sum (online softmax, as attn.cu's kernel) and adds
 * p·v; masked keys are neither read nor added, so a decode step's cache
 * positions past the token cost their mask's byte only.  Two ways through
 * a slice:
 * - head size 64 (D = 64: E = EV = 64, the rows of q, k, v, y 16-byte
 *   aligned, dprt_cuda_sdpa checks): slices of DEC_SLICE64 keys, 8 lanes a
 *   key, each lane 8 elements of the head, as dec64 says;
 * - any head size (D = 0: E up to DEC_MAXE, EV up to 32·NO): slices of 32
 *   keys, lane t scores key t of a slice (q from shared memory), then each
 *   lane adds p_t·v_t for its outputs.
 * The block's warps merge their maxima, sums and outputs through shared
 * memory: warp 0, lane t computing warp t's weight, or, where the head
 * size is 64 and the row has one chunk (P.MERGE, the default), every warp,
 * four outputs each (1.7-2.5% off a ~100M Llama's bf16 decode step on
 * an H100, bench/RESULTS.md).  With one chunk the block writes y; with more
 * it writes its row's maximum, sum and unscaled outputs to part, and the
 * last block of the row to finish (a counter per row, reset by that block
 * for the next launch) merges the chunks (a lane each) and writes y: one
 * kernel, no merge launch.  Exact fp32; a row with every key masked gives
 * zeros.  Needs At and boff (attn.cuh). */
#ifndef DPRT_ATTNDEC_CUH
#define DPRT_ATTNDEC_CUH

#include "cuda/pdl.cuh"   /* dp_pdl_wait, dp_pdl_prefetch (the emulator's in its tests) */

enum {
	DEC_MAXL = 8,        /* query rows (L) that take this kernel by default */
	DEC_MAXE = 256,      /* head size of q and k */
	DEC_MAXROWS = 4096,  /* rows (B·L) that can have chunks: the counters */
	DEC_WARPS = 8,       /* warps of a block (W) in the kernel library */
	DEC_WARPS64 = 16,    /* those of the head-size-64 kernel's: a round of its warps
	                      * takes 256 keys (the kept keys of a position up to 255 in
	                      * one round of each warp, a slice each) */
	DEC_PRE = 4,         /* slices a warp learns its kept keys of before the first */
	DEC_SLICE64 = 16,    /* keys a warp takes at a time where the head size is 64 */
	DEC_CLUSTER = 4,     /* blocks of a cluster that take a head-size-64 row on sm_90
	                      * (sdpadec_cl; 1: one block, sdpadec): 4 measured 1.2%
	                      * faster than 1 on the ~100M Llama's bf16 decode (H100),
	                      * 2 slower, 8 as 4; the same bits */
};

/* The warps of a block of the kernel for head size D (0: any). */
static constexpr int
decwarps(int D)
{
	return D == 64 ? DEC_WARPS64 : DEC_WARPS;
}

/* The index of lane's output d. */
template <int D>
static __device__ __forceinline__ int
decidx(int lane, int d)
{
	return D ? 2 * lane + d : lane + 32 * d;
}

/* Head size 64 (D): warp w's slices of DEC_SLICE64 keys of the chunk, the
 * slices w, w + W, ...  Lane 8g + c takes key g of each 4 of a slice and,
 * of its rows of q, k and v, the elements 4c..4c+3 and 32+4c..32+4c+3
 * (each load 128 bytes a key, whole); a score is the sum of its 8 lanes'
 * products (3 shuffles), and each lane adds p·v for its 8 elements over
 * its keys, the 4 keys' sums added at the end.  The first slice's rows of
 * k and v are asked into L2 before the wait (the kernels before write only
 * the new position's row) and loaded with q and the mask bytes of the
 * first DEC_PRE slices, a key a lane (one trip to memory, masked or not);
 * those become words of kept bits (a ballot: two slices a word, lane t
 * holding word t), so a slice's keys are a shift of a word taken by
 * shuffle.  A later slice's rows are loaded only where a key of it is
 * kept.
 * W and w are the warps that share the chunk and this warp's index among
 * them (a cluster's: sdpadec_cl).  Leaves the warp's maximum, sum and 64
 * outputs in ws. */
template <int MASK, int W>
static __device__ __forceinline__ void
dec64(const At &P, const float *__restrict__ qr, const float *__restrict__ kb,
      const float *__restrict__ vb, const void *__restrict__ mask, long long mo, int s0, int send,
      float *ws, int w)
{
	const int lane = threadIdx.x % 32, g = lane >> 3, c = lane & 7;
	const int SL = DEC_SLICE64, T = DEC_SLICE64 / 4, NP = DEC_PRE / 2;
	float m = -INFINITY, l = 0.0f, o[8];
	float4 K[T][2], V[T][2];
	bool kq[NP];
	unsigned pre = 0;   /* lane t: the kept bits of slices 2t and 2t + 1 */

	static_assert(DEC_SLICE64 == 16 && DEC_PRE % 2 == 0 && DEC_PRE <= 64,
	              "two slices' keys a word of kept bits, a word a lane");
	for (int e = 0; e < 8; e++)
		o[e] = 0.0f;
#pragma unroll
	for (int t = 0; t < NP; t++) {   /* the mask bytes of the first DEC_PRE slices, a key a lane */
		int j = s0 + SL * (w + W * (2 * t + lane / SL)) + lane % SL;
		kq[t] = j < send;
		if (MASK == 1 && kq[t])
			kq[t] = ((const unsigned char *)mask)[mo + (long long)j * P.MSS] != 0;
	}
	float4 qa = *(const float4 *)(qr + 4 * c), qb = *(const float4 *)(qr + 32 + 4 * c);
#pragma unroll
	for (int u = 0; u < T; u++) {   /* the first slice's rows, kept or not */
		int j = s0 + SL * w + 4 * u + g;
		if (j < send) {
			const float *kr = kb + (long long)j * P.KRS + 4 * c, *vr = vb + (long long)j * P.VRS + 4 * c;
			K[u][0] = *(const float4 *)kr, K[u][1] = *(const float4 *)(kr + 32);
			V[u][0] = *(const float4 *)vr, V[u][1] = *(const float4 *)(vr + 32);
		}
	}
#pragma unroll
	for (int t = 0; t < NP; t++) {   /* slices 2t and 2t + 1's kept keys, the low and high halves */
		unsigned x = __ballot_sync(0xffffffffu, kq[t]);
		if (lane == t)
			pre = x;
	}
	int it = 0;
	for (int sb = s0 + SL * w; sb < send; sb += SL * W, it++) {
		unsigned bits;   /* the slice's kept keys: bit 4u + g */
		bool kp[T];
		float sc[T], p[T];

		if (it < DEC_PRE) {
			bits = __shfl_sync(0xffffffffu, pre, it / 2) >> (SL * (it & 1)) & 0xffffu;
		} else {
			int j = sb + lane;
			bool keep = lane < SL && j < send;
			if (MASK == 1 && keep)
				keep = ((const unsigned char *)mask)[mo + (long long)j * P.MSS] != 0;
			bits = __ballot_sync(0xffffffffu, keep);
		}
		if (bits == 0)
			continue;   /* every key of the slice masked: nothing read, nothing to add */
#pragma unroll
		for (int u = 0; u < T; u++)
			kp[u] = bits >> (4 * u + g) & 1u;
		if (it > 0) {
#pragma unroll
			for (int u = 0; u < T; u++)
				if (kp[u]) {
					int j = sb + 4 * u + g;
					const float *kr = kb + (long long)j * P.KRS + 4 * c,
					            *vr = vb + (long long)j * P.VRS + 4 * c;
					K[u][0] = *(const float4 *)kr, K[u][1] = *(const float4 *)(kr + 32);
					V[u][0] = *(const float4 *)vr, V[u][1] = *(const float4 *)(vr + 32);
				}
		}
		float mt = -INFINITY;
#pragma unroll
		for (int u = 0; u < T; u++) {
			float d0 = qa.x * K[u][0].x, d1 = qb.x * K[u][1].x;
			d0 = fmaf(qa.y, K[u][0].y, d0), d1 = fmaf(qb.y, K[u][1].y, d1);
			d0 = fmaf(qa.z, K[u][0].z, d0), d1 = fmaf(qb.z, K[u][1].z, d1);
			d0 = fmaf(qa.w, K[u][0].w, d0), d1 = fmaf(qb.w, K[u][1].w, d1);
			d0 += d1;
			for (int x = 1; x < 8; x <<= 1)
				d0 += __shfl_xor_sync(0xffffffffu, d0, x);
			sc[u] = -INFINITY;
			if (kp[u]) {
				sc[u] = d0 * P.SCALE;
				if (MASK == 2)
					sc[u] += ((const float *)mask)[mo + (long long)(sb + 4 * u + g) * P.MSS];
			}
			mt = fmaxf(mt, sc[u]);
		}
		mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 8));
		mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 16));
		if (mt == -INFINITY)
			continue;   /* every score of the slice -inf: nothing to add */
		float mn = fmaxf(m, mt), corr = expf(m - mn), ps = 0.0f;
#pragma unroll
		for (int u = 0; u < T; u++) {
			p[u] = sc[u] == -INFINITY ? 0.0f : expf(sc[u] - mn);
			ps += p[u];
		}
		ps += __shfl_xor_sync(0xffffffffu, ps, 8);
		ps += __shfl_xor_sync(0xffffffffu, ps, 16);
		l = fmaf(l, corr, ps);
		for (int e = 0; e < 8; e++)
			o[e] *= corr;
#pragma unroll
		for (int u = 0; u < T; u++)
			if (p[u] != 0.0f) {   /* a kept key's row of v only */
				o[0] = fmaf(p[u], V[u][0].x, o[0]), o[1] = fmaf(p[u], V[u][0].y, o[1]);
				o[2] = fmaf(p[u], V[u][0].z, o[2]), o[3] = fmaf(p[u], V[u][0].w, o[3]);
				o[4] = fmaf(p[u], V[u][1].x, o[4]), o[5] = fmaf(p[u], V[u][1].y, o[5]);
				o[6] = fmaf(p[u], V[u][1].z, o[6]), o[7] = fmaf(p[u], V[u][1].w, o[7]);
			}
		m = mn;
	}
	for (int e = 0; e < 8; e++) {   /* the 4 keys' sums */
		o[e] += __shfl_xor_sync(0xffffffffu, o[e], 8);
		o[e] += __shfl_xor_sync(0xffffffffu, o[e], 16);
	}
	if (lane == 0)
		ws[0] = m, ws[1] = l;
	if (g == 0)
		for (int e = 0; e < 4; e++)
			ws[2 + 4 * c + e] = o[e], ws[2 + 32 + 4 * c + e] = o[4 + e];
}

/* The every-warp merge of 16 warps' outputs (sdpadec, sdpadec_cl): lane t
 * + 16h holds warp t's maximum mt, sum lt and two outputs a0, a1 (of the
 * pair y2[0], y2[1]); the maximum over t, each warp's weight, the sums
 * over t by shuffles (a tree); lanes t = 0 store the pair. */
static __device__ __forceinline__ void
merge16(float mt, float lt, float a0, float a1, float *y2, int t)
{
	float mm = mt;
	for (int d = 8; d > 0; d >>= 1)
		mm = fmaxf(mm, __shfl_xor_sync(0xffffffffu, mm, d));
	float wt = mt == -INFINITY ? 0.0f : expf(mt - mm);
	float ll = lt * wt, b0 = a0 * wt, b1 = a1 * wt;
	for (int d = 8; d > 0; d >>= 1) {
		ll += __shfl_xor_sync(0xffffffffu, ll, d);
		b0 += __shfl_xor_sync(0xffffffffu, b0, d);
		b1 += __shfl_xor_sync(0xffffffffu, b1, d);
	}
	if (t == 0) {
		y2[0] = ll > 0.0f ? b0 / ll : 0.0f;
		y2[1] = ll > 0.0f ? b1 / ll : 0.0f;
	}
}

template <int NO, int MASK, int D, int W>
static __global__ void __launch_bounds__(32 * W)
sdpadec(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
        const float *__restrict__ v, const void *__restrict__ mask, float *__restrict__ y,
        int chunk, float *__restrict__ part, unsigned *__restrict__ count)
{
	__shared__ float qs[D ? 1 : DEC_MAXE];
	__shared__ float ws[W][2 + 32 * NO];   /* each warp's m, l and outputs, for the merge */
	const int E = P.E, EV = D ? D : P.EV, nchunk = gridDim.x;
	int lane = threadIdx.x % 32, w = threadIdx.x / 32, r = blockIdx.y, c = blockIdx.x;
	int b = dprt_q(P.l, r), i = r - b * P.L;
	int s0 = c * chunk, send = min(P.S, s0 + chunk);
	const float *kb = k + boff(P, b, P.kbs), *vb = v + boff(P, b, P.vbs);
	const float *qr = q + boff(P, b, P.qbs) + (long long)i * P.QRS;
	long long mo = MASK ? mbase(P, b) + (long long)i * P.MSL : 0;
	float m = -INFINITY, l = 0.0f, o[NO];

	if (P.CAUSAL)
		send = min(send, i + 1);
	if (D) {   /* the warp's first slice's rows of k and v asked into L2: the
		    * kernels before write the new position's only */
		int j = s0 + DEC_SLICE64 * w + lane / 2;
		if (lane / 2 < DEC_SLICE64 && j < send) {
			dp_pdl_prefetch(kb + (long long)j * P.KRS + 32 * (lane & 1));
			dp_pdl_prefetch(vb + (long long)j * P.VRS + 32 * (lane & 1));
		}
	}
	/* launched with programmatic dependent launch (g->pdl), as the
	 * generated kernels are: the kernels before done, their writes seen,
	 * before anything is read; then the kernel after may start its blocks */
	dp_pdl_wait();
	for (int d = 0; d < NO; d++)
		o[d] = 0.0f;
	if (D) {
		dec64<MASK, W>(P, qr, kb, vb, mask, mo, s0, send, ws[w], w);
	} else {
		/* which keys of the warp's first DEC_PRE slices are kept: their mask
		 * bytes loaded at once, with q, before any key (one trip to memory) */
		bool pre[DEC_PRE];
#pragma unroll
		for (int t = 0; t < DEC_PRE; t++) {
			int j = s0 + 32 * (w + W * t) + lane;
			pre[t] = j < send;
			if (MASK == 1 && pre[t])
				pre[t] = ((const unsigned char *)mask)[mo + (long long)j * P.MSS] != 0;
		}
		for (int e = threadIdx.x; e < E; e += 32 * W)
			qs[e] = qr[e];
		__syncthreads();
		int it = 0;
		for (int sb = s0 + 32 * w; sb < send; sb += 32 * W, it++) {   /* warp w's slices of the chunk */
			int j = sb + lane, nt = min(32, send - sb);
			float sc = -INFINITY, mt, mn, corr, p, ps;
			bool keep = j < send;

			if (it < DEC_PRE) {
#pragma unroll
				for (int t = 0; t < DEC_PRE; t++)
					if (t == it)
						keep = pre[t];
			} else if (MASK == 1 && keep) {
				keep = ((const unsigned char *)mask)[mo + (long long)j * P.MSS] != 0;
			}
			unsigned kept = __ballot_sync(0xffffffffu, keep);
			if (kept == 0)
				continue;   /* every key of the slice masked: nothing read, nothing to add */
			if (keep) {
				const float *kr = kb + (long long)j * P.KRS;
				sc = 0.0f;
				for (int e = 0; e < E; e++)
					sc = fmaf(qs[e], kr[e], sc);
				sc *= P.SCALE;
				if (MASK == 2)
					sc += ((const float *)mask)[mo + (long long)j * P.MSS];
			}
			mt = sc;
			for (int d = 16; d > 0; d >>= 1)
				mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, d));
			if (mt == -INFINITY)
				continue;   /* every score of the slice -inf: nothing to add */
			mn = fmaxf(m, mt);
			corr = expf(m - mn);
			p = sc == -INFINITY ? 0.0f : expf(sc - mn);
			ps = p;
			for (int d = 16; d > 0; d >>= 1)
				ps += __shfl_xor_sync(0xffffffffu, ps, d);
			l = l * corr + ps;
			for (int d = 0; d < NO; d++)
				o[d] *= corr;
			/* p·v over the slice's keys, the keys with p > 0 */
			unsigned live = __ballot_sync(0xffffffffu, p != 0.0f);
			for (int t = 0; t < nt; t++) {
				float pt = __shfl_sync(0xffffffffu, p, t);
				if (!(live >> t & 1u))
					continue;   /* the same for every lane */
				const float *vr = vb + (long long)(sb + t) * P.VRS;
				for (int d = 0; d < NO; d++)
					if (lane + 32 * d < EV)
						o[d] = fmaf(pt, vr[lane + 32 * d], o[d]);
			}
			m = mn;
		}
	}
	if (D || W > 1) {   /* the block's warps merged by warp 0, through shared memory */
		if (!D) {   /* (dec64 left its warp's there) */
			if (lane == 0) {
				ws[w][0] = m;
				ws[w][1] = l;
			}
			for (int d = 0; d < NO; d++)
				if (decidx<D>(lane, d) < EV)
					ws[w][2 + decidx<D>(lane, d)] = o[d];
		}
		__syncthreads();
		if (D == 64 && W == 16 && P.MERGE && nchunk == 1) {
			/* every warp at once, not warp 0 alone: lane t + 16h of
			 * warp w takes warp t's maximum, sum and outputs 4w + 2h and
			 * 4w + 2h + 1, summed over t by shuffles (a tree, not warp
			 * order: not the same bits as warp 0's merge); lanes 0 and
			 * 16 write the warp's 4 outputs */
			int t = lane & 15, e0 = 4 * w + 2 * (lane >> 4);
			merge16(ws[t][0], ws[t][1], ws[t][2 + e0], ws[t][3 + e0],
			        y + boff(P, b, P.ybs) + (long long)i * P.YRS + e0, t);
			return;
		}
		if (w != 0)
			return;
		/* lane t takes warp t's maximum and sum and computes its weight
		 * (one exp a lane, not W in turn, as the chunks' merge below
		 * does a lane a chunk); the sums add them in warp order, the
		 * weights passed by shuffle; lane % W keeps every lane's load in
		 * the array, so that it needs no branch (as measured) */
		static_assert(W <= 32, "a warp's maximum a lane");
		float mt = lane < W ? ws[lane % W][0] : -INFINITY, lt = lane < W ? ws[lane % W][1] : 0.0f;
		m = mt;
		for (int d = 16; d > 0; d >>= 1)
			m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
		float wt = mt == -INFINITY ? 0.0f : expf(mt - m);
		l = 0.0f;
		for (int d = 0; d < NO; d++)
			o[d] = 0.0f;
		if (m != -INFINITY) {
#pragma unroll
			for (int t = 0; t < W; t++) {
				float wv = __shfl_sync(0xffffffffu, wt, t), lv = __shfl_sync(0xffffffffu, lt, t);
				l = fmaf(lv, wv, l);
				for (int d = 0; d < NO; d++)
					if (decidx<D>(lane, d) < EV)
						o[d] = fmaf(ws[t][2 + decidx<D>(lane, d)], wv, o[d]);
			}
		}
	}
	float *yr = y + boff(P, b, P.ybs) + (long long)i * P.YRS;
	if (nchunk == 1) {
		for (int d = 0; d < NO; d++)
			if (decidx<D>(lane, d) < EV)
				yr[decidx<D>(lane, d)] = l > 0.0f ? o[d] / l : 0.0f;
		return;
	}
	/* part: [row][chunk] of m, l, then EV outputs */
	float *pr = part + ((long long)r * nchunk + c) * (EV + 2);
	if (lane == 0) {
		pr[0] = m;
		pr[1] = l;
	}
	for (int d = 0; d < NO; d++)
		if (decidx<D>(lane, d) < EV)
			pr[2 + decidx<D>(lane, d)] = o[d];
	__threadfence();   /* this lane's partial seen before the count */
	__syncwarp();
	unsigned last = 0;
	if (lane == 0)
		last = atomicAdd(&count[r], 1u) == (unsigned)nchunk - 1;
	if (!__shfl_sync(0xffffffffu, last, 0))
		return;
	__threadfence();   /* the other blocks' partials, after their counts */
	if (lane == 0)
		count[r] = 0;   /* for the next launch */
	/* the merge: the chunks' maxima and sums a lane each (32 at a time),
	 * then each lane's outputs summed over the chunks in chunk order, the
	 * weight of chunk t passed from its lane; every load of a round of 32
	 * chunks independent of the others */
	const float *p0 = part + (long long)r * nchunk * (EV + 2);
	m = -INFINITY;
	for (int t = lane; t < nchunk; t += 32)
		m = fmaxf(m, __ldcg(p0 + (long long)t * (EV + 2)));
	for (int d = 16; d > 0; d >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
	if (m == -INFINITY) {   /* every key masked */
		for (int e = lane; e < EV; e += 32)
			yr[e] = 0.0f;
		return;
	}
	l = 0.0f;
	for (int t = lane; t < nchunk; t += 32) {
		const float *pt = p0 + (long long)t * (EV + 2);
		float mt = __ldcg(pt);
		l += mt == -INFINITY ? 0.0f : __ldcg(pt + 1) * expf(mt - m);
	}
	for (int d = 16; d > 0; d >>= 1)
		l += __shfl_xor_sync(0xffffffffu, l, d);
	float s[NO];
	for (int d = 0; d < NO; d++)
		s[d] = 0.0f;
	for (int t0 = 0; t0 < nchunk; t0 += 32) {
		int nt = min(32, nchunk - t0);
		float mt = lane < nt ? __ldcg(p0 + (long long)(t0 + lane) * (EV + 2)) : -INFINITY;
		float wl = mt == -INFINITY ? 0.0f : expf(mt - m);   /* chunk t0 + lane's weight */
#pragma unroll 8
		for (int t = 0; t < nt; t++) {
			const float *pt = p0 + (long long)(t0 + t) * (EV + 2) + 2;
			float w = __shfl_sync(0xffffffffu, wl, t);
			for (int d = 0; d < NO; d++)
				if (lane + 32 * d < EV)
					s[d] = fmaf(__ldcg(pt + lane + 32 * d), w, s[d]);
		}
	}
	for (int d = 0; d < NO; d++)
		if (lane + 32 * d < EV)
			yr[lane + 32 * d] = l > 0.0f ? s[d] / l : 0.0f;
}

#ifdef __CUDACC__
#include <cooperative_groups.h>

/* Head size 64 and one chunk a row (sdpadec's default case), as a cluster
 * of C blocks of 16/C warps (sm_90) instead of one block of 16: the same 16
 * warps, each the slices it has in sdpadec (warp w of block c is warp
 * w·C + c), so a row's keys are loaded by C SMs, not one (a decode step at
 * position 128 reads 66 KB of f32 keys and values a head).  After the keys
 * the cluster's warps merge as sdpadec's every-warp merge does, each
 * reading the 16 warps' maxima, sums and its 4 outputs from the blocks'
 * shared memory (distributed shared memory): the same sums in the same
 * order, so the same bits as sdpadec.  A block leaves only once the others
 * have read its shared memory (the cluster barrier's arrive after the
 * reads, its wait before the end).  Needs At, boff (attn.cuh). */
template <int MASK, int C>
static __global__ void __launch_bounds__(32 * (DEC_WARPS64 / C))
sdpadec_cl(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
           const float *__restrict__ v, const void *__restrict__ mask, float *__restrict__ y,
           int chunk, float *__restrict__ part, unsigned *__restrict__ count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	namespace cg = cooperative_groups;
	constexpr int NW = DEC_WARPS64, W = NW / C;
	static_assert(NW == 16 && NW % C == 0, "the every-warp merge: 16 warps, 4 outputs each");
	__shared__ float ws[W][2 + 64];
	cg::cluster_group cl = cg::this_cluster();
	const int lane = threadIdx.x % 32, w = threadIdx.x / 32, r = blockIdx.y;
	const int gw = w * C + (int)cl.block_rank();   /* the warp among the cluster's */
	int b = dprt_q(P.l, r), i = r - b * P.L, send = P.S;
	const float *kb = k + boff(P, b, P.kbs), *vb = v + boff(P, b, P.vbs);
	const float *qr = q + boff(P, b, P.qbs) + (long long)i * P.QRS;
	long long mo = MASK ? mbase(P, b) + (long long)i * P.MSL : 0;

	(void)chunk, (void)part, (void)count;
	if (P.CAUSAL)
		send = min(send, i + 1);
	{   /* the warp's first slice's rows asked into L2, as sdpadec */
		int j = DEC_SLICE64 * gw + lane / 2;
		if (lane / 2 < DEC_SLICE64 && j < send) {
			dp_pdl_prefetch(kb + (long long)j * P.KRS + 32 * (lane & 1));
			dp_pdl_prefetch(vb + (long long)j * P.VRS + 32 * (lane & 1));
		}
	}
	dp_pdl_wait();
	dec64<MASK, NW>(P, qr, kb, vb, mask, mo, 0, send, ws[w], gw);
	cl.sync();   /* every block's ws written and seen */
	int t = lane & 15, e0 = 4 * gw + 2 * (lane >> 4);
	const float *src = cl.map_shared_rank(&ws[t / C][0], t % C);   /* warp t's */
	float mt = src[0], lt = src[1], a0 = src[2 + e0], a1 = src[3 + e0];
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");   /* read */
	merge16(mt, lt, a0, a1, y + boff(P, b, P.ybs) + (long long)i * P.YRS + e0, t);
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");   /* the others read ours */
#else
	(void)P, (void)q, (void)k, (void)v, (void)mask, (void)y, (void)chunk, (void)part, (void)count;
#endif
}
#endif

#endif
