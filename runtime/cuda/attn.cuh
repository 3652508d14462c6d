/* attn.cuh: what attention's kernels share (attn.cu, attnmma.cuh,
 * attndec.cuh, and the host emulator's tests/gpu/emux): the geometry of a
 * call as the kernels read it (At, made by atgeom) and the offsets of a
 * batch entry. */
#ifndef DPRT_ATTN_CUH
#define DPRT_ATTN_CUH

/* The geometry as the kernel reads it. */
struct At {
	int L, S, E, EV, CAUSAL, NB;
	long long MSL, MSS;
	long long bdim[DPRT_SDPA_MAXB], bstr[DPRT_SDPA_MAXB];
	long long qbs[DPRT_SDPA_MAXB], kbs[DPRT_SDPA_MAXB], vbs[DPRT_SDPA_MAXB];
	long long ybs[DPRT_SDPA_MAXB];
	long long QRS, KRS, VRS, YRS;   /* row strides of q, k, v, y */
	long long YPS;     /* 0, or y is 3xTF32's split of a product's A: each
	                      element's tf32 part at its place and YPS after it,
	                      its remainder 2·YPS after it (dprt_cuda_sdpa3) */
	float SCALE;
	int MERGE;         /* the decode kernel, head size 64, one chunk: 1 merges
	                      the warps in every warp, 0 in warp 0 */
	dprt_div e, ev;
	dprt_div l, bd[DPRT_SDPA_MAXB];   /* L and bdim as fast divisors (atdivs) */
};

/* P's fast divisors, from its L, E, EV and bdim. */
static inline void
atdivs(At *P)
{
	P->e = dprt_mkdiv(P->E > 0 ? P->E : 1);
	P->ev = dprt_mkdiv(P->EV > 0 ? P->EV : 1);
	P->l = dprt_mkdiv(P->L > 0 ? P->L : 1);
	for (int i = 0; i < DPRT_SDPA_MAXB; i++)
		P->bd[i] = dprt_mkdiv(P->bdim[i] > 0 ? P->bdim[i] : 1);
}

/* The geometry of call a as the kernels read it (its first DPRT_SDPA_MAXB
 * batch dimensions; a row stride of 0: dense rows). */
static inline At
atgeom(const dprt_sdpa *a)
{
	At P;
	int nb = a->nb < DPRT_SDPA_MAXB ? a->nb : DPRT_SDPA_MAXB;

	P.L = a->L, P.S = a->S, P.E = a->E, P.EV = a->EV, P.CAUSAL = a->causal, P.NB = nb;
	P.MSL = a->msl, P.MSS = a->mss, P.SCALE = a->scale, P.MERGE = 1;
	for (int i = 0; i < DPRT_SDPA_MAXB; i++) {
		P.bdim[i] = i < nb ? a->bdim[i] : 1;
		P.bstr[i] = i < nb ? a->bstr[i] : 0;
		P.qbs[i] = P.kbs[i] = P.vbs[i] = P.ybs[i] = 0;
	}
	for (int i = nb - 1; i >= 0; i--) {   /* dense where the row stride is 0 */
		long long in = 1;
		for (int j = i + 1; j < nb; j++)
			in *= a->bdim[j];
		P.qbs[i] = a->qrs ? a->qbs[i] : in * a->L * a->E;
		P.kbs[i] = a->krs ? a->kbs[i] : in * a->S * a->E;
		P.vbs[i] = a->vrs ? a->vbs[i] : in * a->S * a->EV;
		P.ybs[i] = a->yrs ? a->ybs[i] : in * a->L * a->EV;
	}
	P.YRS = a->yrs ? a->yrs : a->EV;
	P.YPS = 0;
	P.QRS = a->qrs ? a->qrs : a->E;
	P.KRS = a->krs ? a->krs : a->E;
	P.VRS = a->vrs ? a->vrs : a->EV;
	atdivs(&P);
	return P;
}

/* The offset for batch entry b of a tensor with batch strides bs: the
 * dimensions unrolled, each a fast division, so that a kernel's calls for
 * q, k, v, y and the mask share their divisions. */
static __device__ __forceinline__ long long
boff(const At &P, int b, const long long *bs)
{
	long long o = 0;

#pragma unroll
	for (int k = DPRT_SDPA_MAXB - 1; k >= 0; k--) {   /* in 32 bits: B is at most 65535 (attn.c) */
		if (k >= P.NB)
			continue;
		int q = dprt_q(P.bd[k], b);
		if (bs[k])
			o += (long long)dprt_r(P.bd[k], b, q) * bs[k];
		b = q;
	}
	return o;
}

/* The offset for batch entry b of the mask. */
static __device__ __forceinline__ long long
mbase(const At &P, int b)
{
	return boff(P, b, P.bstr);
}

#endif
