/* gemm.c: single-precision GEMM: packed, cache-blocked, register-blocked (a
 * 6x8 micro-kernel gcc vectorizes), plus unpacked paths for few rows. */
#include <string.h>
#include "dprtint.h"

/*
 * Blocking (BLIS order).  For each NC-wide column block of B and each KC-deep
 * slice of K, the KC×NC block of B is packed into NR-wide panels; for each
 * MC-tall row block of A its MC×KC block is packed into MR-tall panels; the
 * micro-kernel then multiplies one MR×KC panel by one KC×NR panel.  An A
 * panel (6 KB) and a B panel (8 KB) sit in L1, the packed A block (120 KB)
 * in L2, the packed B block (512 KB) in L2/L3.  Packing reads any strides,
 * so transposed operands cost nothing extra; edges are packed with zeros.
 * The two pack buffers are thread-local (632 KB per thread, in static TLS):
 * kernels do not allocate, and concurrent calls from threads are safe.
 */
enum {
	MR = 6, NR = 8,		/* micro-tile: 12 SSE accumulators */
	KC = 256, MC = 120, NC = 512,
	JB = 256,		/* output columns per pass of the axpy path */
	DOTM = 32, W = 64	/* the dot path: most rows, columns per pass */
};

_Static_assert(MC % MR == 0 && NC % NR == 0, "block sizes");

static _Thread_local _Alignas(64) float apack[MC * KC];
static _Thread_local _Alignas(64) float bpack[KC * NC];

/* Packs the mc×kc block of A at a into MR-row panels: panel p, step k holds
 * rows p·MR..p·MR+MR-1 of column k, zero past mc. */
static void
pack_a(int64_t mc, int64_t kc, const float *a, int64_t rsa, int64_t csa, float *dst)
{
	int64_t p, i, k, m;
	const float *ap;

	for (p = 0; p < mc; p += MR, dst += MR * kc) {
		m = mc - p < MR ? mc - p : MR;
		ap = a + p * rsa;
		if (m < MR)
			memset(dst, 0, sizeof *dst * (size_t)(MR * kc));
		if (csa == 1 || rsa != 1) {
			for (i = 0; i < m; i++)
				for (k = 0; k < kc; k++)
					dst[k * MR + i] = ap[i * rsa + k * csa];
		} else {
			for (k = 0; k < kc; k++)
				for (i = 0; i < m; i++)
					dst[k * MR + i] = ap[i + k * csa];
		}
	}
}

/* Packs the kc×nc block of B at b into NR-column panels: panel p, step k
 * holds columns p·NR..p·NR+NR-1 of row k, zero past nc. */
static void
pack_b(int64_t kc, int64_t nc, const float *b, int64_t rsb, int64_t csb, float *dst)
{
	int64_t p, j, k, n;
	const float *bp;

	for (p = 0; p < nc; p += NR, dst += NR * kc) {
		n = nc - p < NR ? nc - p : NR;
		bp = b + p * csb;
		if (n == NR && csb == 1) {
			for (k = 0; k < kc; k++)
				memcpy(dst + k * NR, bp + k * rsb, sizeof *dst * NR);
			continue;
		}
		if (n < NR)
			memset(dst, 0, sizeof *dst * (size_t)(NR * kc));
		if (rsb == 1)
			for (j = 0; j < n; j++)
				for (k = 0; k < kc; k++)
					dst[k * NR + j] = bp[j * csb + k];
		else
			for (k = 0; k < kc; k++)
				for (j = 0; j < n; j++)
					dst[k * NR + j] = bp[k * rsb + j * csb];
	}
}

/* ab = a·b for one MR×kc panel of A and one kc×NR panel of B. */
static void
kernel(int64_t kc, const float *restrict a, const float *restrict b,
       float *restrict ab)
{
	float c[MR][NR] = {{0}};
	int64_t k;
	int i, j;

	for (k = 0; k < kc; k++) {
		for (i = 0; i < MR; i++)
			for (j = 0; j < NR; j++)
				c[i][j] += a[i] * b[j];
		a += MR;
		b += NR;
	}
	for (i = 0; i < MR; i++)
		for (j = 0; j < NR; j++)
			ab[i * NR + j] = c[i][j];
}

/* Where results go: C (strides rsc, csc), alpha, and beta·C0 (NULL: none). */
typedef struct Out {
	float alpha, beta;
	const float *c0;
	int64_t rs0, cs0;
	float *c;
	int64_t rsc, csc;
} Out;

/* Writes an m×n tile ab (rows ldab apart) at (i0, j0).  first: C = alpha·ab
 * + beta·C0 (or alpha·ab); later K slices: C += alpha·ab. */
static void
store(const Out *o, int64_t i0, int64_t j0, int64_t m, int64_t n,
      const float *ab, int64_t ldab, int first)
{
	int64_t i, j;
	float *c;
	const float *c0;
	float alpha, beta;

	alpha = o->alpha;
	beta = o->beta;
	for (i = 0; i < m; i++) {
		c = o->c + (i0 + i) * o->rsc + j0 * o->csc;
		if (!first) {
			for (j = 0; j < n; j++)
				c[j * o->csc] += alpha * ab[i * ldab + j];
		} else if (o->c0) {
			c0 = o->c0 + (i0 + i) * o->rs0 + j0 * o->cs0;
			for (j = 0; j < n; j++)
				c[j * o->csc] = alpha * ab[i * ldab + j] + beta * c0[j * o->cs0];
		} else {
			for (j = 0; j < n; j++)
				c[j * o->csc] = alpha * ab[i * ldab + j];
		}
	}
}

/* The blocked path, any shape and strides. */
static void
gemm_packed(int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa,
            int64_t csa, const float *B, int64_t rsb, int64_t csb, const Out *o)
{
	_Alignas(64) float ab[MR * NR];
	int64_t jc, pc, ic, jr, ir, nc, kc, mc, m, n;

	for (jc = 0; jc < N; jc += NC) {
		nc = N - jc < NC ? N - jc : NC;
		for (pc = 0; pc < K; pc += KC) {
			kc = K - pc < KC ? K - pc : KC;
			pack_b(kc, nc, B + pc * rsb + jc * csb, rsb, csb, bpack);
			for (ic = 0; ic < M; ic += MC) {
				mc = M - ic < MC ? M - ic : MC;
				pack_a(mc, kc, A + ic * rsa + pc * csa, rsa, csa, apack);
				for (jr = 0; jr < nc; jr += NR) {
					n = nc - jr < NR ? nc - jr : NR;
					for (ir = 0; ir < mc; ir += MR) {
						m = mc - ir < MR ? mc - ir : MR;
						kernel(kc, apack + ir * kc, bpack + jr * kc, ab);
						store(o, ic + ir, jc + jr, m, n, ab, NR, pc == 0);
					}
				}
			}
		}
	}
}

/* One dot product of length K in L independent lanes (gcc vectorizes the
 * lane loop, which it would not do for one accumulator without
 * reassociation), summed pairwise at the end. */
static float
dot(int64_t K, const float *restrict a, const float *restrict b)
{
	enum { L = 16 };
	float s[L];
	int64_t k;
	int l, w;

	for (l = 0; l < L; l++)
		s[l] = 0;
	for (k = 0; k + L <= K; k += L)
		for (l = 0; l < L; l++)
			s[l] += a[k + l] * b[k + l];
	for (l = 0; k < K; k++, l++)
		s[l] += a[k] * b[k];
	for (w = L / 2; w > 0; w /= 2)
		for (l = 0; l < w; l++)
			s[l] += s[l + w];
	return s[0];
}

/*
 * C = A·B for few rows (M <= DOTM) whose rows are contiguous along K and B's
 * columns contiguous along K (rsb = 1, a weight stored [N, K]): plain dot
 * products, no packing.  A column of B stays in L1 while every row of A
 * (in L2) meets it.
 */
static void
gemm_dot(int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa,
         const float *B, int64_t csb, const Out *o)
{
	float r[DOTM][W];
	int64_t i, j, j0, n;

	for (j0 = 0; j0 < N; j0 += W) {
		n = N - j0 < W ? N - j0 : W;
		for (j = 0; j < n; j++)
			for (i = 0; i < M; i++)
				r[i][j] = dot(K, A + i * rsa, B + (j0 + j) * csb);
		store(o, 0, j0, M, n, r[0], W, 1);
	}
}

/*
 * y = a · B for one row a (stride csa) and B's rows contiguous (csb = 1):
 * y accumulates JB columns at a time on the stack, four rows of B a step.
 */
static void
gemv_axpy(int64_t N, int64_t K, const float *a, int64_t csa, const float *B,
          int64_t rsb, const Out *o)
{
	float acc[JB];
	const float *b0, *b1, *b2, *b3;
	float a0, a1, a2, a3;
	int64_t j0, j, k, n;

	for (j0 = 0; j0 < N; j0 += JB) {
		n = N - j0 < JB ? N - j0 : JB;
		for (j = 0; j < n; j++)
			acc[j] = 0;
		for (k = 0; k + 4 <= K; k += 4) {
			a0 = a[k * csa];
			a1 = a[(k + 1) * csa];
			a2 = a[(k + 2) * csa];
			a3 = a[(k + 3) * csa];
			b0 = B + k * rsb + j0;
			b1 = b0 + rsb;
			b2 = b1 + rsb;
			b3 = b2 + rsb;
			for (j = 0; j < n; j++)
				acc[j] += (a0 * b0[j] + a1 * b1[j]) + (a2 * b2[j] + a3 * b3[j]);
		}
		for (; k < K; k++) {
			a0 = a[k * csa];
			b0 = B + k * rsb + j0;
			for (j = 0; j < n; j++)
				acc[j] += a0 * b0[j];
		}
		store(o, 0, j0, 1, n, acc, JB, 1);
	}
}

/*
 * C = alpha·A·B + beta·C0.  A single output column is turned into a single
 * row by transposing the whole problem (free with strides).  Up to DOTM rows
 * with both operands contiguous along K (x·Wᵀ with W stored [N, K], the
 * usual linear layer) take dot products; a single row against a row-major B
 * takes axpys; everything else the packed path.  beta = 0 ignores C0 (its
 * NaNs do not leak), as in BLAS.
 */
void
dprt_sgemm(int64_t M, int64_t N, int64_t K, float alpha,
           const float *A, int64_t rsa, int64_t csa,
           const float *B, int64_t rsb, int64_t csb,
           float beta, const float *C0, int64_t rs0, int64_t cs0,
           float *C, int64_t ldc)
{
	Out o;
	int64_t t, i, j;
	const float *p;

	if (M <= 0 || N <= 0)
		return;
	o.alpha = alpha;
	o.beta = beta;
	o.c0 = beta != 0.0f ? C0 : NULL;
	o.rs0 = rs0;
	o.cs0 = cs0;
	o.c = C;
	o.rsc = ldc;
	o.csc = 1;
	if (K <= 0) {
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++)
				C[i * ldc + j] = o.c0 ? beta * o.c0[i * rs0 + j * cs0] : 0.0f;
		return;
	}
	if (N == 1 && M > 1) {		/* C^T = B^T·A^T */
		t = M, M = N, N = t;
		p = A, A = B, B = p;
		t = rsa, rsa = csb, csb = t;
		t = csa, csa = rsb, rsb = t;
		t = o.rs0, o.rs0 = o.cs0, o.cs0 = t;
		t = o.rsc, o.rsc = o.csc, o.csc = t;
	}
	if (M <= DOTM && csa == 1 && rsb == 1) {
		gemm_dot(M, N, K, A, rsa, B, csb, &o);
		return;
	}
	if (M == 1 && csb == 1) {
		gemv_axpy(N, K, A, csa, B, rsb, &o);
		return;
	}
	gemm_packed(M, N, K, A, rsa, csa, B, rsb, csb, &o);
}
