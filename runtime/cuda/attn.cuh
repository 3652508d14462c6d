/* attn.cuh: what attention's kernels share (attn.cu, attnmma.cuh,
 * attndec.cuh): the geometry of a call as the kernels read it (At) and the
 * offsets of a batch entry. */
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
	float SCALE;
	dprt_div e, ev;
};

/* The offset for batch entry b of a tensor with batch strides bs. */
static __device__ __forceinline__ long long
boff(const At &P, int b, const long long *bs)
{
	long long o = 0;

	for (int k = P.NB - 1; k >= 0; k--) {
		if (bs[k])
			o += b % P.bdim[k] * bs[k];
		b /= (int)P.bdim[k];
	}
	return o;
}

/* The mask's offset for batch entry b. */
static __device__ __forceinline__ long long
mbase(const At &P, int b)
{
	return boff(P, b, P.bstr);
}

#endif
