/* attndec.cuh: attention for a few query rows (a decoder's step: one row
 * per head against a cache of keys), in the manner of flash-decoding.  A
 * block of W warps takes one query row and one chunk of keys (blockIdx.y
 * the row of the B·L, blockIdx.x the chunk); warp w takes the slices w,
 * w + W, ... of 32 keys of the chunk, and loads the mask bytes of its
 * first DEC_PRE slices at once, with q, before any key.  Lane t scores key
 * t of a slice (its row of k read whole, 16-byte loads where the head size
 * is 64; where it is, the value rows of the slice's kept keys are loaded
 * in the same trip to memory), the warp keeps the running maximum and sum
 * (online softmax, as attn.cu's kernel) and adds p_t·v_t (each lane two
 * outputs where the head size is 64: the even and the odd keys of a slice
 * in two sums, and the score's products in four, for shorter chains).
 * Masked keys are neither read nor added: a decode step's cache positions
 * past the token cost their mask's byte only.  The block's warps merge their
 * maxima, sums and outputs through shared memory (warp 0).  With one
 * chunk the block writes y; with more it writes its row's maximum, sum and
 * unscaled outputs to part, and the last block of the row to finish (a
 * counter per row, reset by that block for the next launch) merges the
 * chunks (a lane each) and writes y: one kernel, no merge launch.  Exact
 * fp32; a row with every key masked gives zeros.  D: 64 where E = EV = 64
 * and the rows of q, k, v, y are 16-byte aligned (dprt_cuda_sdpa checks),
 * else 0 (any E up to DEC_MAXE, EV up to 32·NO).  Needs At and boff
 * (attn.cuh). */
#ifndef DPRT_ATTNDEC_CUH
#define DPRT_ATTNDEC_CUH

enum {
	DEC_MAXL = 8,        /* query rows (L) that take this kernel by default */
	DEC_MAXE = 256,      /* head size of q and k */
	DEC_MAXROWS = 4096,  /* rows (B·L) that can have chunks: the counters */
	DEC_WARPS = 8,       /* warps of a block (W) in the kernel library */
	DEC_PRE = 4,         /* slices a warp learns its kept keys of before the first */
};

/* The index of lane's output d. */
template <int D>
static __device__ __forceinline__ int
decidx(int lane, int d)
{
	return D ? 2 * lane + d : lane + 32 * d;
}

template <int NO, int MASK, int D, int W>
static __global__ void __launch_bounds__(32 * W)
sdpadec(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
        const float *__restrict__ v, const void *__restrict__ mask, float *__restrict__ y,
        int chunk, float *__restrict__ part, unsigned *__restrict__ count)
{
	__shared__ float qs[DEC_MAXE];
	__shared__ float ws[W][2 + 32 * NO];   /* each warp's m, l and outputs, for the merge */
	const int E = D ? D : P.E, EV = D ? D : P.EV, nchunk = gridDim.x;
	int lane = threadIdx.x % 32, w = threadIdx.x / 32, r = blockIdx.y, c = blockIdx.x;
	int b = r / P.L, i = r - b * P.L;
	int s0 = c * chunk, send = min(P.S, s0 + chunk);
	const float *kb = k + boff(P, b, P.kbs), *vb = v + boff(P, b, P.vbs);
	const float *qr = q + boff(P, b, P.qbs) + (long long)i * P.QRS;
	long long mo = MASK ? mbase(P, b) + (long long)i * P.MSL : 0;
	float m = -INFINITY, l = 0.0f, o[NO];

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	/* launched with programmatic dependent launch (g->pdl): the kernels
	 * before done, their writes seen, before anything is read; then the
	 * kernel after may start its blocks (it waits for this one to finish) */
	cudaGridDependencySynchronize();
	cudaTriggerProgrammaticLaunchCompletion();
#endif
	for (int d = 0; d < NO; d++)
		o[d] = 0.0f;
	if (P.CAUSAL)
		send = min(send, i + 1);
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
		float2 x[D ? 32 : 1];
		if (D) {   /* the kept keys' rows of v loaded with their rows of k */
#pragma unroll
			for (int t = 0; t < 32; t++)
				if (t < nt && (kept >> t & 1u))
					x[t] = *(const float2 *)(vb + (long long)(sb + t) * P.VRS + 2 * lane);
		}
		if (keep) {
			const float *kr = kb + (long long)j * P.KRS;
			sc = 0.0f;
			if (D) {   /* four sums side by side, not one chain of D */
				float s4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
				for (int e = 0; e < D; e += 4) {
					float4 y4 = *(const float4 *)(kr + e);
					s4[0] = fmaf(qs[e], y4.x, s4[0]);
					s4[1] = fmaf(qs[e + 1], y4.y, s4[1]);
					s4[2] = fmaf(qs[e + 2], y4.z, s4[2]);
					s4[3] = fmaf(qs[e + 3], y4.w, s4[3]);
				}
				sc = (s4[0] + s4[1]) + (s4[2] + s4[3]);
			} else {
				for (int e = 0; e < E; e++)
					sc = fmaf(qs[e], kr[e], sc);
			}
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
		if (D) {   /* even and odd keys summed apart, then added */
			float e0 = 0.0f, e1 = 0.0f, d0 = 0.0f, d1 = 0.0f;
#pragma unroll
			for (int t = 0; t < 32; t += 2) {
				float pt = __shfl_sync(0xffffffffu, p, t), pu = __shfl_sync(0xffffffffu, p, t + 1);
				if (t < nt && (live >> t & 1u)) {
					e0 = fmaf(pt, x[t].x, e0);
					e1 = fmaf(pt, x[t].y, e1);
				}
				if (t + 1 < nt && (live >> (t + 1) & 1u)) {
					d0 = fmaf(pu, x[t + 1].x, d0);
					d1 = fmaf(pu, x[t + 1].y, d1);
				}
			}
			o[0] += e0 + d0;
			o[1] += e1 + d1;
		} else {
			for (int t = 0; t < nt; t++) {
				float pt = __shfl_sync(0xffffffffu, p, t);
				if (!(live >> t & 1u))
					continue;   /* the same for every lane */
				const float *vr = vb + (long long)(sb + t) * P.VRS;
				for (int d = 0; d < NO; d++)
					if (lane + 32 * d < EV)
						o[d] = fmaf(pt, vr[lane + 32 * d], o[d]);
			}
		}
		m = mn;
	}
	if (W > 1) {   /* the block's warps merged by warp 0, through shared memory */
		if (lane == 0) {
			ws[w][0] = m;
			ws[w][1] = l;
		}
		for (int d = 0; d < NO; d++)
			if (decidx<D>(lane, d) < EV)
				ws[w][2 + decidx<D>(lane, d)] = o[d];
		__syncthreads();
		if (w != 0)
			return;
		m = -INFINITY;
		for (int t = 0; t < W; t++)
			m = fmaxf(m, ws[t][0]);
		l = 0.0f;
		for (int d = 0; d < NO; d++)
			o[d] = 0.0f;
		for (int t = 0; m != -INFINITY && t < W; t++) {
			float mt = ws[t][0], wt = mt == -INFINITY ? 0.0f : expf(mt - m);
			l = fmaf(ws[t][1], wt, l);
			for (int d = 0; d < NO; d++)
				if (decidx<D>(lane, d) < EV)
					o[d] = fmaf(ws[t][2 + decidx<D>(lane, d)], wt, o[d]);
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

#endif
