/* attnmma.cuh: attention on the tensor cores, in the manner of
 * FlashAttention-2 (included by attn.cu, which picks it; the same At and
 * the same masks as its SIMT kernel).
 *
 * A block of NW warps (4, or 8 where the blocks are too few to fill the
 * GPU) takes R = 16·RW query rows of one batch entry; its warps are RW
 * row groups of 16 rows times KW = NW/RW key groups.  The
 * block streams the keys in chunks of 64 (K and V rows, cp.async, two
 * shared-memory stages, the next chunk loading while this one is used);
 * the warp of key group kg takes the kg-th 64/KW keys of each chunk.  A
 * warp holds its 16 rows of q as mma.sync m16n8k8 A fragments in
 * registers, computes its scores s = q·kᵀ (16 × 64/KW, tf32 in, fp32 sums)
 * into accumulators, scales and masks them, keeps each row's running
 * maximum m and sum l (online softmax: o·e^(m-m'), l·e^(m-m')) and adds
 * p·v (16 × D) with p taken straight from the score accumulators: the
 * product's sum runs over keys, so the keys are taken in the order the
 * accumulator holds them (column 2t and 2t+1 as the A fragment's t and
 * t+4), with v's rows read in the same order; likewise q·kᵀ runs over the
 * head in the order (2t, 2t+1), so q and k are read as pairs.  At the end
 * the key groups' (m, l, o) go through shared memory and the block writes
 * its rows: o/l, or (with part) m, l and o for attn.cu's merge of chunks
 * split over blocks (blockIdx.z).
 *
 * SPLIT3: 0 TF32 (10-bit mantissas, PyTorch's allow_tf32), 1 3xTF32 (each
 * operand x as hi = tf32(x) plus lo = tf32(x - hi), and hi·hi + hi·lo +
 * lo·hi summed: as accurate as fp32).  Shared rows are padded (k: D+8 so
 * that pairs at row g, column 2t hit distinct banks; v: D+4 so that rows
 * 2t and 2t+1 at column g do).  Needs E = EV = D, D a multiple of 8, and
 * q, k, v and y rows 16-byte aligned (attn.cu checks), read and written
 * through At's strides. */

enum { MC = 64 };   /* keys a chunk */

#include "tc.cuh"   /* msplit, mma, cp16, commit, waitcp: conv.cu's and gemm.cu's too */

/* d += a·b with a [4] and b [2] each as hi and lo */
template <int SPLIT3>
static __device__ __forceinline__ void
mmma3(float *d, const unsigned *ah, const unsigned *al, const unsigned *bh, const unsigned *bl)
{
	if (SPLIT3) {
		mma(d, al, bh);
		mma(d, ah, bl);
	}
	mma(d, ah, bh);
}

/* Shared floats the kernel needs for head size D. */
static inline size_t
msmem(int D)
{
	size_t st = (size_t)MC * (D + 8) + (size_t)MC * (D + 4);

	return 2 * st * sizeof(float);
}

/* On sm_90 a block of 4 warps is held to 168 registers a thread, so that
 * three fit an SM beside their 72 KB of shared memory each (attn.cu asks
 * the most shared memory of the SM): DeiT-tiny at batch 32 has 384 blocks,
 * which at 182 registers (two an SM) took 1.45 waves, now one (its
 * attention 63 -> 47 us in TF32 under Nsight Compute; a few bytes a thread
 * spill in the RW = 4 and 3xTF32 instances, bench/RESULTS.md).  An sm_80
 * SM's 164 KB hold two blocks whatever their registers: no bound there. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
enum { MMA_MINB4 = 1 };
#else
enum { MMA_MINB4 = 3 };
#endif

template <int D, int RW, int SPLIT3, int MASK, int NW = 4>
static __global__ void __launch_bounds__(32 * NW, NW == 4 ? MMA_MINB4 : 1)
sdpamma(const __grid_constant__ At P, const float *__restrict__ q, const float *__restrict__ k,
        const float *__restrict__ v, const void *__restrict__ mask, float *__restrict__ y,
        int chunk, float *__restrict__ part)
{
	constexpr int KW = NW / RW, R = 16 * RW, KS = D + 8, VS = D + 4;
	constexpr int NT = MC / KW / 8;      /* 8-key tiles a warp takes of a chunk */
	constexpr int ND = D / 8;            /* 8-wide tiles of the head */
	static_assert(NW % RW == 0 && MC % (8 * KW) == 0 && NW * 16 * (KS + 2) <= 2 * MC * (KS + VS),
	              "the warps split the chunks' keys; their rows' merge fits the stages");
	extern __shared__ float smem[];
	float *ks0 = smem;   /* stage st: k at + st·MC·(KS + VS), v MC·KS after */
	const int S = P.S, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int rg = warp % RW, kg = warp / RW, g = lane >> 2, t = lane & 3;
	const int b = blockIdx.y, r0 = blockIdx.x * R, i0 = r0 + 16 * rg + g, i1 = i0 + 8;
	const float *kb = k + boff(P, b, P.kbs), *vb = v + boff(P, b, P.vbs);
	const float *qb = q + boff(P, b, P.qbs);
	int sbeg = part ? (int)blockIdx.z * chunk : 0;
	int send = P.CAUSAL ? min(S, r0 + R) : S;
	long long mo0 = 0, mo1 = 0;
	unsigned qh[ND][4], ql[ND][4];
	float o[ND][4], m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

	if (part)
		send = min(send, sbeg + chunk);
	if (MASK) {
		long long mb = mbase(P, b);
		mo0 = mb + (long long)i0 * P.MSL;
		mo1 = mb + (long long)i1 * P.MSL;
	}
	/* q: rows i0 and i1, head columns 8d + 2t and 8d + 2t + 1 */
#pragma unroll
	for (int d = 0; d < ND; d++) {
		float2 x0 = i0 < P.L ? *(const float2 *)&qb[i0 * P.QRS + 8 * d + 2 * t]
		                     : make_float2(0.0f, 0.0f);
		float2 x1 = i1 < P.L ? *(const float2 *)&qb[i1 * P.QRS + 8 * d + 2 * t]
		                     : make_float2(0.0f, 0.0f);
		msplit<SPLIT3>(x0.x, qh[d][0], ql[d][0]);
		msplit<SPLIT3>(x1.x, qh[d][1], ql[d][1]);
		msplit<SPLIT3>(x0.y, qh[d][2], ql[d][2]);
		msplit<SPLIT3>(x1.y, qh[d][3], ql[d][3]);
		o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
	}
	int nch = send > sbeg ? (send - sbeg + MC - 1) / MC : 0;
	/* chunk c of keys into stage c & 1 */
	auto load = [&](int c) {
		int s0 = sbeg + c * MC;
		float *ks = ks0 + (c & 1) * MC * (KS + VS), *vs = ks + MC * KS;
		for (int x = threadIdx.x; x < MC * D / 4; x += 32 * NW) {
			int r = x / (D / 4), e = 4 * (x % (D / 4));
			bool in = s0 + r < S;
			long long row = in ? s0 + r : 0;
			cp16(ks + r * KS + e, kb + row * P.KRS + e, in ? 16 : 0);
			cp16(vs + r * VS + e, vb + row * P.VRS + e, in ? 16 : 0);
		}
		commit();
	};
	if (nch > 0)
		load(0);
	for (int c = 0; c < nch; c++) {
		if (c + 1 < nch) {
			load(c + 1);
			waitcp<1>();
		} else {
			waitcp<0>();
		}
		__syncthreads();   /* chunk c is in */
		const float *ks = ks0 + (c & 1) * MC * (KS + VS) + kg * (MC / KW) * KS;
		const float *vs = ks0 + (c & 1) * MC * (KS + VS) + MC * KS + kg * (MC / KW) * VS;
		const int j0 = sbeg + c * MC + kg * (MC / KW);   /* this warp's first key */
		float s[NT][4];

		/* scores: s[n] holds rows g, g+8 and keys j0 + 8n + 2t, + 1.  The
		 * products of the head's even and odd 8-column tiles, and in 3xTF32
		 * the small products hi·lo and lo·hi, go to accumulators of their
		 * own, summed at the end: chains of tensor-core instructions each
		 * waiting on the one before are a quarter as long as one
		 * accumulator's (ViT-B/16's attention at batch 1: 17.2 -> 16.1 us,
		 * bench/RESULTS.md). */
#pragma unroll
		for (int n = 0; n < NT; n++) {
			float a[SPLIT3 ? 4 : 2][4];

#pragma unroll
			for (int u = 0; u < (SPLIT3 ? 4 : 2); u++)
				a[u][0] = a[u][1] = a[u][2] = a[u][3] = 0.0f;
#pragma unroll
			for (int d = 0; d < ND; d++) {
				float2 x = *(const float2 *)&ks[(8 * n + g) * KS + 8 * d + 2 * t];
				unsigned bh[2], bl[2];
				msplit<SPLIT3>(x.x, bh[0], bl[0]);
				msplit<SPLIT3>(x.y, bh[1], bl[1]);
				mma(a[d & 1], qh[d], bh);
				if constexpr (SPLIT3 != 0) {
					mma(a[2 + (d & 1)], ql[d], bh);
					mma(a[2 + (d & 1)], qh[d], bl);
				}
			}
#pragma unroll
			for (int h = 0; h < 4; h++) {
				s[n][h] = a[0][h] + a[1][h];
				if constexpr (SPLIT3 != 0)
					s[n][h] += a[2][h] + a[3][h];
			}
		}
		/* scale, mask, the rows' maxima */
		float mt0 = -INFINITY, mt1 = -INFINITY;
#pragma unroll
		for (int n = 0; n < NT; n++)
#pragma unroll
			for (int h = 0; h < 4; h++) {
				int j = j0 + 8 * n + 2 * t + (h & 1), i = h < 2 ? i0 : i1;
				float sc = s[n][h] * P.SCALE;
				bool keep = j < S && i < P.L && !(P.CAUSAL && j > i);
				if (MASK == 1 && keep)
					keep = ((const unsigned char *)mask)[(h < 2 ? mo0 : mo1) +
					                                     (long long)j * P.MSS] != 0;
				if (MASK == 2 && keep)
					sc += ((const float *)mask)[(h < 2 ? mo0 : mo1) + (long long)j * P.MSS];
				s[n][h] = keep ? sc : -INFINITY;
				if (h < 2)
					mt0 = fmaxf(mt0, s[n][h]);
				else
					mt1 = fmaxf(mt1, s[n][h]);
			}
		mt0 = fmaxf(mt0, __shfl_xor_sync(0xffffffffu, mt0, 1));
		mt0 = fmaxf(mt0, __shfl_xor_sync(0xffffffffu, mt0, 2));
		mt1 = fmaxf(mt1, __shfl_xor_sync(0xffffffffu, mt1, 1));
		mt1 = fmaxf(mt1, __shfl_xor_sync(0xffffffffu, mt1, 2));
		float mn0 = fmaxf(m0, mt0), mn1 = fmaxf(m1, mt1);
		float b0 = mn0 == -INFINITY ? 0.0f : mn0, b1 = mn1 == -INFINITY ? 0.0f : mn1;
		float c0 = expf(m0 - b0), c1 = expf(m1 - b1);   /* 0 while m is -inf */
		m0 = mn0, m1 = mn1;
		l0 *= c0, l1 *= c1;
#pragma unroll
		for (int d = 0; d < ND; d++) {
			o[d][0] *= c0, o[d][1] *= c0;
			o[d][2] *= c1, o[d][3] *= c1;
		}
		/* p = e^(s - m), then o += p·v over this warp's keys */
#pragma unroll
		for (int n = 0; n < NT; n++) {
			unsigned ph[4], pl[4];
			float p0 = expf(s[n][0] - b0), p1 = expf(s[n][1] - b0);
			float p2 = expf(s[n][2] - b1), p3 = expf(s[n][3] - b1);
			l0 += p0 + p1, l1 += p2 + p3;
			msplit<SPLIT3>(p0, ph[0], pl[0]);   /* row g, key 2t: the A fragment's (g, t) */
			msplit<SPLIT3>(p2, ph[1], pl[1]);   /* (g+8, t) */
			msplit<SPLIT3>(p1, ph[2], pl[2]);   /* (g, t+4): key 2t+1 */
			msplit<SPLIT3>(p3, ph[3], pl[3]);
#pragma unroll
			for (int d = 0; d < ND; d++) {
				unsigned bh[2], bl[2];
				msplit<SPLIT3>(vs[(8 * n + 2 * t) * VS + 8 * d + g], bh[0], bl[0]);
				msplit<SPLIT3>(vs[(8 * n + 2 * t + 1) * VS + 8 * d + g], bh[1], bl[1]);
				mmma3<SPLIT3>(o[d], ph, pl, bh, bl);
			}
		}
		__syncthreads();   /* stage c & 1 is free for chunk c + 2 */
	}
	/* the quad's sums; then each warp's rows through shared memory: o at
	 * [warp][16][D+8], m and l after the NW warps' */
	l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
	l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
	l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
	l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
	float *os = smem, *ml = smem + NW * 16 * KS;
#pragma unroll
	for (int d = 0; d < ND; d++) {
		*(float2 *)&os[(warp * 16 + g) * KS + 8 * d + 2 * t] = make_float2(o[d][0], o[d][1]);
		*(float2 *)&os[(warp * 16 + g + 8) * KS + 8 * d + 2 * t] = make_float2(o[d][2], o[d][3]);
	}
	if (t == 0) {
		ml[2 * (warp * 16 + g)] = m0, ml[2 * (warp * 16 + g) + 1] = l0;
		ml[2 * (warp * 16 + g + 8)] = m1, ml[2 * (warp * 16 + g + 8) + 1] = l1;
	}
	__syncthreads();
	for (int x = threadIdx.x; x < R * D / 4; x += 32 * NW) {
		int rr = x / (D / 4), e = 4 * (x % (D / 4)), i = r0 + rr;
		int w0 = rr / 16, r = rr % 16;   /* row group w0: warps w0 + RW·kg */
		float M = -INFINITY, L = 0.0f;
		float4 O = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

		if (i >= P.L)
			continue;
#pragma unroll
		for (int h = 0; h < KW; h++)
			M = fmaxf(M, ml[2 * ((w0 + RW * h) * 16 + r)]);
#pragma unroll
		for (int h = 0; h < KW; h++) {
			int w = w0 + RW * h;
			float mw = ml[2 * (w * 16 + r)];
			float f = mw == -INFINITY ? 0.0f : expf(mw - M);
			float4 ow = *(const float4 *)&os[(w * 16 + r) * KS + e];
			L += f * ml[2 * (w * 16 + r) + 1];
			O.x += f * ow.x, O.y += f * ow.y, O.z += f * ow.z, O.w += f * ow.w;
		}
		if (part) {   /* [chunk][b][i]: m, l, then D outputs (attn.cu's merge) */
			float *pr = part + (((long long)blockIdx.z * gridDim.y + b) * P.L + i) * (D + 2);
			if (e == 0)
				pr[0] = M, pr[1] = L;
			pr[2 + e] = O.x, pr[3 + e] = O.y, pr[4 + e] = O.z, pr[5 + e] = O.w;
		} else {
			if (L > 0.0f)
				O.x /= L, O.y /= L, O.z /= L, O.w /= L;
			float *yo = y + boff(P, b, P.ybs) + i * P.YRS + e;
			if (P.YPS) {   /* 3xTF32's split of a product's A (dprt_cuda_sdpa3) */
				float4 h = make_float4(tf32(O.x), tf32(O.y), tf32(O.z), tf32(O.w));
				*(float4 *)yo = h;
				*(float4 *)(yo + P.YPS) = h;
				*(float4 *)(yo + 2 * P.YPS) = make_float4(x3lo(O.x, h.x), x3lo(O.y, h.y),
				                                          x3lo(O.z, h.z), x3lo(O.w, h.w));
			} else {
				*(float4 *)yo = O;
			}
		}
	}
}
