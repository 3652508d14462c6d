/* gemm.h: the runtime's GEMM driver and its micro-kernels, shared by gemm.c,
 * gemm_avx2.c, gemm_avx512.c and conv.c. */
#ifndef DPRT_GEMM_H
#define DPRT_GEMM_H

#include <math.h>
#include "dprtint.h"

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
} dprt_gemm;
DPRT_HIDDEN void dprt_gemm_run(const dprt_gemm *g);

/* Packs rows [0, M) of A (strides rsa, csa) over the whole K into mr-row
 * panels at dst (⌈M/mr⌉·mr·K floats). */
DPRT_HIDDEN void dprt_gemm_pack_a(const dprt_kern *kr, int64_t M, int64_t K, const float *a,
                                  int64_t rsa, int64_t csa, float *dst);
/* The activation of the epilogues, as dprt_unary_f32 computes it. */
static inline float
dprt_act(int act, float v, float lo, float hi)
{
	switch (act) {
	case DPRT_ACT_RELU: return v < 0.0f ? 0.0f : v;
	case DPRT_ACT_CLAMP: return v < lo ? lo : v > hi ? hi : v;
	case DPRT_ACT_HARDSWISH: return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
	case DPRT_ACT_SILU: return v / (1.0f + expf(-v));
	case DPRT_ACT_GELU: return v * 0.5f * (1.0f + erff(v * 0.70710678118654752f));
	case DPRT_ACT_GELU_TANH:
		return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	}
	return v;
}

#endif
