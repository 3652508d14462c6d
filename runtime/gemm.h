/* gemm.h: the runtime's GEMM driver and its micro-kernels, shared by gemm.c,
 * gemm_avx2.c, gemm_avx512.c and conv.c. */
#ifndef DPRT_GEMM_H
#define DPRT_GEMM_H

#include <math.h>
#include <string.h>
#include "dprtint.h"
#include "dpscalar.h"   /* dps_relu, dps_clamp: the epilogues' */

/*
 * A micro-kernel: ab (mr×nr, rows nr apart) = a·b over kc steps, a an
 * mr-row panel slice (step k at a + k·mr), b an nr-column slice (step k at
 * b + k·ldb: ldb = nr for a packed panel, the row stride of B read in
 * place).  Packed operands: A in mr-row panels over the whole K (panel p at
 * p·mr·K, step k at + k·mr), B in nr-column panels (panel q at q·nr·K,
 * step k at + k·nr), padded with zeros past M and N.
 */
typedef void dprt_ukernel(int64_t kc, const float *a, const float *b, int64_t ldb,
                          float *ab);
/* The same with step k of B at b + off[k] (a convolution reading its input
 * in place, dprt_gemm.boff). */
typedef void dprt_ukernel_ind(int64_t kc, const float *a, const float *b, const int64_t *off,
                              float *ab);
/* The same with row i of A read in place at ar[i] (step k at ar[i][k]). */
typedef void dprt_ukernel_rows(int64_t kc, const float *const *ar, const float *b, int64_t ldb,
                               float *ab);
typedef struct dprt_kern {
	int mr, nr;
	dprt_ukernel *kernel;
	dprt_ukernel_ind *kernel_ind;
	dprt_ukernel_rows *kernel_rows;
} dprt_kern;

enum { DPRT_MRMAX = 8, DPRT_NRMAX = 32, DPRT_KC = 256 };

/* The kernel this process uses (dprt_isa). */
DPRT_HIDDEN const dprt_kern *dprt_kern_get(void);
DPRT_HIDDEN extern const dprt_kern dprt_kern_avx2, dprt_kern_avx512;

/* C = act(alpha·A·B + beta·C0 + bias[i] + res[i, j]), in tasks on the pool. */
typedef struct dprt_gemm {
	int64_t M, N, K;
	const float *ap;                /* A packed (mr-row panels), or NULL: */
	const float *a;                 /* A read through strides rsa, csa */
	int64_t rsa, csa;
	const float *bp;                /* B packed (nr-column panels), or NULL: */
	const float *b;                 /* B read through strides rsb, csb, or */
	int64_t rsb, csb;
	const int64_t *boff;            /* row k of B at b + boff[k] (K entries; columns
	                                   contiguous, readable up to nr - 1 past N) */
	int64_t wide, ow;               /* wide > 0: column j of C is pixel (j / wide,
	                                   j % wide) of a row-major plane ow wide; columns
	                                   with j % wide >= ow are dropped */
	float *c;                       /* C, rows ldc apart */
	int64_t ldc;
	float alpha, beta;
	const float *c0;                /* NULL: no beta·C0 term */
	int64_t rs0, cs0;
	const float *bias;              /* per row, or NULL */
	const float *res;               /* rows ldr apart, or NULL */
	int64_t ldr;
	int act;                        /* DPRT_ACT_* */
	float lo, hi;
	int64_t nbatch;                 /* > 1: that many products, the i-th with b,
	                                   c and res advanced by i·sbb, i·scb, i·srb
	                                   floats (A, bias, C0 shared), in one job */
	int64_t sbb, scb, srb;
} dprt_gemm;
DPRT_HIDDEN void dprt_gemm_run(const dprt_gemm *g);

/* Packs rows [0, M) of A (strides rsa, csa) over the whole K into mr-row
 * panels at dst (⌈M/mr⌉·mr·K floats). */
DPRT_HIDDEN void dprt_gemm_pack_a(const dprt_kern *kr, int64_t M, int64_t K, const float *a,
                                  int64_t rsa, int64_t csa, float *dst);
/*
 * exp(x) for x <= 0 (or -inf), in straight-line code that the compiler
 * vectorizes when it is called in a loop: x = n·ln 2 + r, |r| <= ln2/2,
 * exp(r) by Cephes' degree-7 polynomial, times 2ⁿ built in the exponent
 * bits; below -87 (the last normal float) it gives 0.  Within 2 ulp of expf.
 * Not for NaN.
 */
static inline __attribute__((always_inline)) float
dprt_exp_le0(float x)
{
	float v = x < -87.0f ? -87.0f : x;
	float t = v * 1.44269504088896341f + 12582912.0f;   /* 1.5·2²³: rounds */
	float n = t - 12582912.0f, r, e;
	int32_t bits = ((int32_t)n + 127) << 23;

	r = v - n * 0.693359375f;
	r = r - n * -2.12194440e-4f;
	e = 1.9875691500e-4f;
	e = e * r + 1.3981999507e-3f;
	e = e * r + 8.3334519073e-3f;
	e = e * r + 4.1665795894e-2f;
	e = e * r + 1.6666665459e-1f;
	e = e * r + 5.0000001201e-1f;
	e = e * r * r + r + 1.0f;
	memcpy(&t, &bits, sizeof t);
	return x < -87.0f ? 0.0f : e * t;
}

/* GELU (erf form) in straight-line code for vectorized loops: erf by
 * Abramowitz and Stegun's 7.1.26 (absolute error under 1.5e-7, so the
 * result is within 1.5e-7·|v| of v·½(1 + erf(v/√2))). */
static inline __attribute__((always_inline)) float
dprt_gelu_poly(float v)
{
	float x = v * 0.70710678118654752f, ax = x < 0.0f ? -x : x;
	float t = 1.0f / (1.0f + 0.3275911f * ax), p, erf;

	p = 1.061405429f;
	p = p * t - 1.453152027f;
	p = p * t + 1.421413741f;
	p = p * t - 0.284496736f;
	p = p * t + 0.254829592f;
	erf = 1.0f - p * t * dprt_exp_le0(-ax * ax);
	return v * 0.5f * (1.0f + (x < 0.0f ? -erf : erf));
}

/*
 * tanh in straight-line code for vectorized loops: below |x| = 0.5 its
 * Taylor series to x¹⁵ (the next term is under 5e-9 of the value), above
 * it (1 − e)/(1 + e) with e = exp(−2|x|) (dprt_exp_le0; no cancellation
 * there, 1 − e >= 0.63), the sign put back.  Within 3 ulp of tanhf; NaN
 * gives NaN.
 */
static inline __attribute__((always_inline)) float
dprt_tanh_poly(float x)
{
	float ax = x < 0.0f ? -x : x, z = x * x, p, e, big, r;

	p = -5.9002744e-4f;                  /* −6404582/10854718875, the x¹⁷ term */
	p = p * z + 1.4558344e-3f;           /* 929569/638512875 */
	p = p * z - 3.5921280e-3f;           /* −21844/6081075 */
	p = p * z + 8.8632355e-3f;           /* 1382/155925 */
	p = p * z - 2.1869488e-2f;           /* −62/2835 */
	p = p * z + 5.3968254e-2f;           /* 17/315 */
	p = p * z - 1.3333334e-1f;           /* −2/15 */
	p = p * z + 3.3333334e-1f;           /* 1/3 */
	p = x * (1.0f - z * p);   /* odd: −0 stays −0 */
	e = dprt_exp_le0(ax > 44.0f ? -88.0f : -2.0f * ax);
	big = (1.0f - e) / (1.0f + e);
	r = ax < 0.5f ? p : x < 0.0f ? -big : big;
	return x != x ? x : r;
}

/* 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))), step by step as the
 * decomposed form computes it (GPT-2's NewGELU), tanh by dprt_tanh_poly. */
static inline __attribute__((always_inline)) float
dprt_gelu_tanh_poly(float v)
{
	float c = v + (v * v * v) * 0.044715f;

	return (0.5f * v) * (1.0f + dprt_tanh_poly(c * 0.7978845608028654f));
}

/* The activation of the epilogues, as dprt_unary_f32 computes it. */
static inline float
dprt_act(int act, float v, float lo, float hi)
{
	switch (act) {
	case DPRT_ACT_RELU: return dps_relu(v, 0.0f, 0.0f);
	case DPRT_ACT_CLAMP: return dps_clamp(v, lo, hi);
	case DPRT_ACT_HARDSWISH: return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
	case DPRT_ACT_SILU: return v / (1.0f + expf(-v));
	case DPRT_ACT_GELU: return v * 0.5f * (1.0f + erff(v * 0.70710678118654752f));
	case DPRT_ACT_GELU_TANH:
		return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	}
	return v;
}

#endif
