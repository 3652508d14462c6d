/* gemm.c: single-precision GEMM on the thread pool: packed panels,
 * K sliced in DPRT_KC steps, an mr×nr micro-kernel chosen at run time
 * (gemm_avx512.c, gemm_avx2.c, or the portable one here), a fused
 * epilogue (bias, residual, activation); unpacked paths for few rows. */
#include <string.h>
#include "gemm.h"

/*
 * The work is split into tasks of at most NBP column panels × a group of
 * row panels.  A task walks K in DPRT_KC slices: it packs (or points at)
 * its B slice, then for each row panel packs (or points at) the A slice and
 * runs the micro-kernel on each column panel, adding the slice into C (the
 * first slice sets it; the last applies the epilogue).  Every element of C
 * is summed over the same slices in the same order whatever the task split
 * and the thread count, so results are bitwise equal at any count.  Pack
 * buffers are thread-local (static TLS): no allocation.
 */
enum {
	NBP = 8,                /* column panels per task at most */
	JB = 256,               /* output columns per task of the axpy path */
	DOTM = 32, W = 64       /* the dot path: most rows, columns per task */
};

static _Thread_local _Alignas(64) float apack[DPRT_MRMAX * DPRT_KC];
static _Thread_local _Alignas(64) float bpack[DPRT_KC * NBP * DPRT_NRMAX];

/* ---- the portable kernel: 6×8, loops gcc vectorizes ---- */

enum { GMR = 6, GNR = 8 };

static void
kernel_generic(int64_t kc, const float *restrict a, const float *restrict b, int64_t ldb,
               float *restrict ab)
{
	float c[GMR][GNR] = {{0}};
	int64_t k;
	int i, j;

	for (k = 0; k < kc; k++) {
		for (i = 0; i < GMR; i++)
			for (j = 0; j < GNR; j++)
				c[i][j] += a[i] * b[j];
		a += GMR;
		b += ldb;
	}
	for (i = 0; i < GMR; i++)
		for (j = 0; j < GNR; j++)
			ab[i * GNR + j] = c[i][j];
}

static void
kernel_generic_ind(int64_t kc, const float *restrict a, const float *restrict b,
                   const int64_t *off, float *restrict ab)
{
	float c[GMR][GNR] = {{0}};
	int64_t k;
	int i, j;

	for (k = 0; k < kc; k++) {
		const float *bk = b + off[k];
		for (i = 0; i < GMR; i++)
			for (j = 0; j < GNR; j++)
				c[i][j] += a[i] * bk[j];
		a += GMR;
	}
	for (i = 0; i < GMR; i++)
		for (j = 0; j < GNR; j++)
			ab[i * GNR + j] = c[i][j];
}

static void
kernel_generic_rows(int64_t kc, const float *const *ar, const float *restrict b, int64_t ldb,
                    float *restrict ab)
{
	float c[GMR][GNR] = {{0}};
	int64_t k;
	int i, j;

	for (k = 0; k < kc; k++) {
		for (i = 0; i < GMR; i++)
			for (j = 0; j < GNR; j++)
				c[i][j] += ar[i][k] * b[j];
		b += ldb;
	}
	for (i = 0; i < GMR; i++)
		for (j = 0; j < GNR; j++)
			ab[i * GNR + j] = c[i][j];
}

static const dprt_kern kern_generic = { GMR, GNR, kernel_generic, kernel_generic_ind,
                                        kernel_generic_rows };

const dprt_kern *
dprt_kern_get(void)
{
#if defined(__x86_64__)
	switch (dprt_isa()) {
	case DPRT_ISA_AVX512: return &dprt_kern_avx512;
	case DPRT_ISA_AVX2: return &dprt_kern_avx2;
	}
#endif
	return &kern_generic;
}

/* ---- packing ---- */

/* Packs the m×kc block at a (m <= mr) into one mr-row panel slice. */
static void
pack_a1(int mr, int64_t m, int64_t kc, const float *a, int64_t rsa, int64_t csa, float *dst)
{
	int64_t i, k;

	if (m < mr)
		memset(dst, 0, sizeof *dst * (size_t)(mr * kc));
	if (csa == 1 && rsa != 1) {
		for (i = 0; i < m; i++)
			for (k = 0; k < kc; k++)
				dst[k * mr + i] = a[i * rsa + k];
	} else {
		for (k = 0; k < kc; k++)
			for (i = 0; i < m; i++)
				dst[k * mr + i] = a[i * rsa + k * csa];
	}
}

/* Packs the kc×n block at b (n <= nr) into one nr-column panel slice. */
static void
pack_b1(int nr, int64_t kc, int64_t n, const float *b, int64_t rsb, int64_t csb, float *dst)
{
	int64_t j, k;

	if (n == nr && csb == 1) {
		for (k = 0; k < kc; k++)
			memcpy(dst + k * nr, b + k * rsb, sizeof *dst * (size_t)nr);
		return;
	}
	if (n < nr)
		memset(dst, 0, sizeof *dst * (size_t)(nr * kc));
	if (rsb == 1 && csb != 1) {
		for (j = 0; j < n; j++)
			for (k = 0; k < kc; k++)
				dst[k * nr + j] = b[j * csb + k];
	} else {
		for (k = 0; k < kc; k++)
			for (j = 0; j < n; j++)
				dst[k * nr + j] = b[k * rsb + j * csb];
	}
}

void
dprt_gemm_pack_a(const dprt_kern *kr, int64_t M, int64_t K, const float *a, int64_t rsa,
                 int64_t csa, float *dst)
{
	int64_t p;

	for (p = 0; p < M; p += kr->mr, dst += kr->mr * K)
		pack_a1(kr->mr, M - p < kr->mr ? M - p : kr->mr, K, a + p * rsa, rsa, csa, dst);
}

/* ---- the driver ---- */

typedef struct Job {
	const dprt_gemm *g;
	const dprt_kern *kr;
	int64_t mp, np;         /* row and column panels */
	int64_t mg, ng;         /* row panels per task, column panels per task */
	int64_t ntn;            /* tasks along N */
	int64_t ntask;          /* tasks of one product of the batch */
} Job;

/* The epilogue of one row of n values v (into c, the row's place in C): C0
 * term, bias, residual r, activation. */
static inline __attribute__((always_inline)) void
epilogue(const dprt_gemm *g, float *c, const float *v, int64_t n, const float *c0,
         float bias, const float *r)
{
	int64_t j;
	float lo = g->lo, hi = g->hi;

	if (g->alpha != 1.0f || c0) {
		for (j = 0; j < n; j++)
			c[j] = g->alpha * v[j] + (c0 ? g->beta * c0[j * g->cs0] : 0.0f);
		v = c;
	}
	if (r)
		for (j = 0; j < n; j++)
			c[j] = v[j] + bias + r[j];
	else
		for (j = 0; j < n; j++)
			c[j] = v[j] + bias;
	switch (g->act) {
	case DPRT_ACT_RELU:
		for (j = 0; j < n; j++)
			c[j] = c[j] < 0.0f ? 0.0f : c[j];
		break;
	case DPRT_ACT_CLAMP:
		for (j = 0; j < n; j++)
			c[j] = dps_clamp(c[j], lo, hi);
		break;
	case DPRT_ACT_GELU:   /* vectorized: erff measured 40% of a 197x768x3072 layer */
		for (j = 0; j < n; j++)
			c[j] = dprt_gelu_poly(c[j]);
		break;
	case DPRT_ACT_GELU_TANH:   /* vectorized: tanhf per element cost more than the product */
		for (j = 0; j < n; j++)
			c[j] = dprt_gelu_tanh_poly(c[j]);
		break;
	case DPRT_ACT_NONE:
		break;
	default:
		for (j = 0; j < n; j++)
			c[j] = dprt_act(g->act, c[j], lo, hi);
	}
}

/* Writes the m×n tile ab (rows nr apart) into C at (i0, j0): first slice
 * sets, later ones add, the last applies the epilogue.  A wide C (a
 * convolution computed over padded rows) takes its columns in runs that
 * stay within one row, dropping the padding columns. */
static inline __attribute__((always_inline)) void
store(const dprt_gemm *g, int nr, int64_t i0, int64_t j0, int64_t m, int64_t n,
      const float *ab, int first, int last)
{
	int64_t i, j, run, col;
	float tmp[DPRT_NRMAX];

	for (j = 0; j < n; j += run) {
		col = j0 + j;
		run = n - j;
		if (g->wide) {
			int64_t oh = col / g->wide, ow = col - oh * g->wide;
			if (ow >= g->ow) {   /* padding columns up to the row's end */
				run = g->wide - ow < run ? g->wide - ow : run;
				continue;
			}
			run = g->ow - ow < run ? g->ow - ow : run;
			col = oh * g->ow + ow;
		}
		for (i = 0; i < m; i++) {
			float *c = g->c + (i0 + i) * g->ldc + col;
			const float *t = ab + i * nr + j;
			int64_t l;
			if (!last) {
				if (first)
					memcpy(c, t, sizeof *c * (size_t)run);
				else
					for (l = 0; l < run; l++)
						c[l] += t[l];
				continue;
			}
			if (!first) {
				for (l = 0; l < run; l++)
					tmp[l] = c[l] + t[l];
				t = tmp;
			}
			epilogue(g, c, t, run,
			         g->c0 ? g->c0 + (i0 + i) * g->rs0 + (j0 + j) * g->cs0 : NULL,
			         g->bias ? g->bias[i0 + i] : 0.0f,
			         g->res ? g->res + (i0 + i) * g->ldr + col : NULL);
		}
	}
}

static inline __attribute__((always_inline)) void
task_body(void *arg, int64_t t)
{
	const Job *jb = arg;
	const dprt_gemm *g = jb->g;
	const dprt_kern *kr = jb->kr;
	int mr = kr->mr, nr = kr->nr;
	dprt_gemm gb;

	if (g->nbatch > 1) {   /* product t / ntask of the batch */
		int64_t bi = t / jb->ntask;
		gb = *g;
		gb.b += bi * g->sbb;
		gb.c += bi * g->scb;
		if (gb.res)
			gb.res += bi * g->srb;
		g = &gb;
		t %= jb->ntask;
	}
	int64_t tm = t / jb->ntn, tn = t % jb->ntn;
	int64_t p0 = tm * jb->mg, p1 = p0 + jb->mg, q0 = tn * jb->ng, q1 = q0 + jb->ng;
	int64_t pc, kc, p, q, m, n, ldb[NBP], i;
	const float *bs[NBP], *as, *ar[DPRT_MRMAX];
	int inplace = !g->ap && g->csa == 1;   /* A's rows read where they are */
	_Alignas(64) float ab[DPRT_MRMAX * DPRT_NRMAX];

	if (p1 > jb->mp)
		p1 = jb->mp;
	if (q1 > jb->np)
		q1 = jb->np;
	for (pc = 0; pc < g->K; pc += DPRT_KC) {
		kc = g->K - pc < DPRT_KC ? g->K - pc : DPRT_KC;
		for (q = q0; q < q1; q++) {
			n = g->N - q * nr < nr ? g->N - q * nr : nr;
			ldb[q - q0] = nr;
			if (g->bp) {
				bs[q - q0] = g->bp + q * nr * g->K + pc * nr;
			} else if (g->boff) {   /* read in place (copying it into aligned
			                           panels measured 11% slower on Zen 4) */
				bs[q - q0] = g->b + q * nr;
			} else if (n == nr && g->csb == 1) {   /* read in place */
				bs[q - q0] = g->b + pc * g->rsb + q * nr;
				ldb[q - q0] = g->rsb;
			} else {
				float *d = bpack + (q - q0) * nr * kc;
				pack_b1(nr, kc, n, g->b + pc * g->rsb + q * nr * g->csb, g->rsb, g->csb, d);
				bs[q - q0] = d;
			}
		}
		for (p = p0; p < p1; p++) {
			m = g->M - p * mr < mr ? g->M - p * mr : mr;
			if (g->ap) {
				as = g->ap + p * mr * g->K + pc * mr;
			} else if (inplace) {   /* rows past M repeat the last one */
				for (i = 0; i < mr; i++)
					ar[i] = g->a + (p * mr + (i < m ? i : m - 1)) * g->rsa + pc;
				as = NULL;
			} else {
				pack_a1(mr, m, kc, g->a + p * mr * g->rsa + pc * g->csa, g->rsa, g->csa,
				        apack);
				as = apack;
			}
			for (q = q0; q < q1; q++) {
				n = g->N - q * nr < nr ? g->N - q * nr : nr;
				if (g->boff)
					kr->kernel_ind(kc, as, bs[q - q0], g->boff + pc, ab);
				else if (inplace)
					kr->kernel_rows(kc, ar, bs[q - q0], ldb[q - q0], ab);
				else
					kr->kernel(kc, as, bs[q - q0], ldb[q - q0], ab);
				store(g, nr, p * mr, q * nr, m, n, ab, pc == 0, pc + kc >= g->K);
			}
		}
	}
}

static void
task(void *arg, int64_t t)
{
	task_body(arg, t);
}

#if defined(__x86_64__)
/* the same compiled for AVX2 and AVX-512: the epilogue loops vectorize */
__attribute__((target("avx2,fma")))
static void
task_avx2(void *arg, int64_t t)
{
	task_body(arg, t);
}

__attribute__((target("avx512f,avx2,fma")))
static void
task_avx512(void *arg, int64_t t)
{
	task_body(arg, t);
}
#endif

void
dprt_gemm_run(const dprt_gemm *g)
{
	Job jb;
	int64_t want, ntm, nb = g->nbatch > 1 ? g->nbatch : 1;

	if (g->M <= 0 || g->N <= 0)
		return;
	jb.g = g;
	jb.kr = dprt_kern_get();
	jb.mp = (g->M + jb.kr->mr - 1) / jb.kr->mr;
	jb.np = (g->N + jb.kr->nr - 1) / jb.kr->nr;
	/* enough tasks for every thread several times over; split N first (a
	 * B slice packed once), then M */
	want = dprt_threads() > 1 ? (4 * (int64_t)dprt_threads() + nb - 1) / nb : 1;
	jb.ng = jb.np < NBP ? jb.np : NBP;
	while (jb.ng > 1 && (jb.np + jb.ng - 1) / jb.ng < want)
		jb.ng = (jb.ng + 1) / 2;
	jb.ntn = (jb.np + jb.ng - 1) / jb.ng;
	ntm = want > jb.ntn ? (want + jb.ntn - 1) / jb.ntn : 1;
	if (ntm > jb.mp)
		ntm = jb.mp;
	jb.mg = (jb.mp + ntm - 1) / ntm;
	ntm = (jb.mp + jb.mg - 1) / jb.mg;
	jb.ntask = ntm * jb.ntn;
#if defined(__x86_64__)
	if (jb.kr == &dprt_kern_avx512) {
		dprt_parallel(nb * jb.ntask, task_avx512, &jb);
		return;
	}
	if (jb.kr == &dprt_kern_avx2) {
		dprt_parallel(nb * jb.ntask, task_avx2, &jb);
		return;
	}
#endif
	dprt_parallel(nb * jb.ntask, task, &jb);
}

/* ---- few rows: dot products and axpys, split over columns ---- */

/* Where results go, for the unpacked paths: C (strides rsc, csc), alpha,
 * beta·C0 (NULL: none). */
typedef struct Out {
	float alpha, beta;
	const float *c0;
	int64_t rs0, cs0;
	float *c;
	int64_t rsc, csc;
} Out;

static void
store_out(const Out *o, int64_t i0, int64_t j0, int64_t m, int64_t n, const float *ab,
          int64_t ldab)
{
	int64_t i, j;

	for (i = 0; i < m; i++) {
		float *c = o->c + (i0 + i) * o->rsc + j0 * o->csc;
		if (o->c0) {
			const float *c0 = o->c0 + (i0 + i) * o->rs0 + j0 * o->cs0;
			for (j = 0; j < n; j++)
				c[j * o->csc] = o->alpha * ab[i * ldab + j] + o->beta * c0[j * o->cs0];
		} else {
			for (j = 0; j < n; j++)
				c[j * o->csc] = o->alpha * ab[i * ldab + j];
		}
	}
}

/* One dot product of length K in L independent lanes (gcc vectorizes the
 * lane loop), summed pairwise at the end. */
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

typedef struct Small {
	const Out *o;
	int64_t M, N, K;
	const float *A, *B;
	int64_t rsa, csa, rsb, csb;
	int64_t w;              /* the dot path's columns per task (<= W) */
} Small;

/* C = A·B for few rows whose rows are contiguous along K and B's columns
 * contiguous along K (a weight stored [N, K]): W columns per task. */
static void
dot_task(void *arg, int64_t t)
{
	const Small *s = arg;
	float r[DOTM][W];
	int64_t i, j, j0 = t * s->w, n = s->N - j0 < s->w ? s->N - j0 : s->w;

	for (j = 0; j < n; j++)
		for (i = 0; i < s->M; i++)
			r[i][j] = dot(s->K, s->A + i * s->rsa, s->B + (j0 + j) * s->csb);
	store_out(s->o, 0, j0, s->M, n, r[0], W);
}

/* y = a·B for one row a (stride csa) and B's rows contiguous (csb = 1):
 * JB columns per task, four rows of B a step. */
static void
axpy_task(void *arg, int64_t t)
{
	const Small *s = arg;
	float acc[JB];
	const float *b0, *b1, *b2, *b3, *a = s->A;
	float a0, a1, a2, a3;
	int64_t j, k, j0 = t * JB, n = s->N - j0 < JB ? s->N - j0 : JB, K = s->K;
	int64_t csa = s->csa, rsb = s->rsb;

	for (j = 0; j < n; j++)
		acc[j] = 0;
	for (k = 0; k + 4 <= K; k += 4) {
		a0 = a[k * csa];
		a1 = a[(k + 1) * csa];
		a2 = a[(k + 2) * csa];
		a3 = a[(k + 3) * csa];
		b0 = s->B + k * rsb + j0;
		b1 = b0 + rsb;
		b2 = b1 + rsb;
		b3 = b2 + rsb;
		for (j = 0; j < n; j++)
			acc[j] += (a0 * b0[j] + a1 * b1[j]) + (a2 * b2[j] + a3 * b3[j]);
	}
	for (; k < K; k++) {
		a0 = a[k * csa];
		b0 = s->B + k * rsb + j0;
		for (j = 0; j < n; j++)
			acc[j] += a0 * b0[j];
	}
	store_out(s->o, 0, j0, 1, n, acc, JB);
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
	Small s;
	dprt_gemm g;
	int64_t t, i, j;
	const float *p;

	if (M <= 0 || N <= 0)
		return;
	/* a large product, alpha 1 and C0 none or a bias row: oneDNN's where it is */
	if (alpha == 1.0f && K > 0 && ldc >= N &&
	    (beta == 0.0f || (beta == 1.0f && C0 && rs0 == 0 && cs0 == 1)) &&
	    dprt_dnnl_sgemm(M, N, K, A, rsa, csa, B, rsb, csb, beta != 0.0f ? C0 : NULL, C, ldc) > 0)
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
	memset(&g, 0, sizeof g);   /* the packed path takes the problem as given */
	g.M = M, g.N = N, g.K = K;
	g.a = A, g.rsa = rsa, g.csa = csa;
	g.b = B, g.rsb = rsb, g.csb = csb;
	g.c = C, g.ldc = ldc;
	g.alpha = alpha, g.beta = beta;
	g.c0 = o.c0, g.rs0 = rs0, g.cs0 = cs0;
	g.act = DPRT_ACT_NONE;
	if (N == 1 && M > 1) {		/* C^T = B^T·A^T */
		t = M, M = N, N = t;
		p = A, A = B, B = p;
		t = rsa, rsa = csb, csb = t;
		t = csa, csa = rsb, rsb = t;
		t = o.rs0, o.rs0 = o.cs0, o.cs0 = t;
		t = o.rsc, o.rsc = o.csc, o.csc = t;
	}
	s = (Small){&o, M, N, K, A, B, rsa, csa, rsb, csb, W};
	if (M <= DOTM && csa == 1 && rsb == 1) {
		/* narrower tasks when there are few: a decode step's 768 columns
		 * kept 12 of 16 threads busy at 64 a task */
		while (s.w > 8 && (N + s.w - 1) / s.w < 4 * (int64_t)dprt_threads())
			s.w /= 2;
		dprt_parallel((N + s.w - 1) / s.w, dot_task, &s);
		return;
	}
	if (M == 1 && csb == 1) {
		dprt_parallel((N + JB - 1) / JB, axpy_task, &s);
		return;
	}
	dprt_gemm_run(&g);
}

/* ---- linear layers with a fused activation ---- */

typedef struct Act {
	float *y;
	const float *res;       /* added before the activation, or NULL */
	int64_t n, rows;        /* row length, rows per task */
	int64_t M;
	int act;
} Act;

static void
act_task(void *arg, int64_t t)
{
	const Act *a = arg;
	int64_t i, i1 = (t + 1) * a->rows < a->M ? (t + 1) * a->rows : a->M;

	for (i = t * a->rows * a->n; i < i1 * a->n; i++)
		a->y[i] = dprt_act(a->act, a->res ? a->y[i] + a->res[i] : a->y[i], 0.0f, 0.0f);
}

/*
 * y [M, N] = act(x [M, K]·W + bias + res): W is wᵀ for w [N, K] (a linear
 * layer), or w itself for w [K, N] when wt (an addmm's weight); prep, when
 * not NULL, holds it packed by dprt_linear_prep_ex (or oneDNN's layer).
 * Few rows take the dot products (or axpys), then the residual and
 * activation; more the packed path with both in its epilogue.
 */
void
dprt_linear_ex_f32(float *y, const float *x, const float *w, const float *prep,
                   const float *bias, const float *res, int64_t M, int64_t N, int64_t K,
                   int act, int wt)
{
	dprt_gemm g;
	Act a;
	int64_t rsb = wt ? N : 1, csb = wt ? 1 : K;
	int r = prep && M > DOTM && K > 0 ?
		dprt_dnnl_linear_run(y, x, w, prep, bias, res, M, N, K, act, wt) : 0;

	if (r > 0)
		return;
	if (r < 0)   /* oneDNN's layer, run unpacked */
		prep = NULL;
	if (M <= DOTM || K <= 0) {   /* few rows: the dot products, then the activation */
		dprt_sgemm(M, N, K, 1.0f, x, K, 1, w, rsb, csb, bias ? 1.0f : 0.0f, bias, 0, 1, y, N);
		if (act != DPRT_ACT_NONE || res) {
			a = (Act){ y, res, N, 1, M, act };
			dprt_parallel(M, act_task, &a);
		}
		return;
	}
	memset(&g, 0, sizeof g);
	g.M = M, g.N = N, g.K = K;
	g.a = x, g.rsa = K, g.csa = 1;
	if (prep)
		g.bp = prep;
	else
		g.b = w, g.rsb = rsb, g.csb = csb;
	g.c = y, g.ldc = N;
	g.alpha = 1.0f, g.beta = 1.0f;
	g.c0 = bias, g.rs0 = 0, g.cs0 = 1;
	g.res = res, g.ldr = N;
	g.act = act;
	dprt_gemm_run(&g);
}

void
dprt_linear_f32(float *y, const float *x, const float *w, const float *bias, int64_t M,
                int64_t N, int64_t K, int act)
{
	dprt_linear_ex_f32(y, x, w, NULL, bias, NULL, M, N, K, act, 0);
}

int64_t
dprt_linear_prep_floats(int64_t N, int64_t K)
{
	return (N + DPRT_NRMAX - 1) * K;
}

void
dprt_linear_prep_ex(float *prep, const float *w, int64_t N, int64_t K, int wt)
{
	const dprt_kern *kr = dprt_kern_get();
	int64_t q, rsb = wt ? N : 1, csb = wt ? 1 : K;

	if (dprt_dnnl_linear_prep(prep, w, N, K))
		return;   /* oneDNN packs it at the first run (dnnl.c) */
	for (q = 0; q * kr->nr < N; q++)
		pack_b1(kr->nr, K, N - q * kr->nr < kr->nr ? N - q * kr->nr : kr->nr,
		        w + q * kr->nr * csb, rsb, csb, prep + q * kr->nr * K);
}

void
dprt_linear_prep(float *prep, const float *w, int64_t N, int64_t K)
{
	dprt_linear_prep_ex(prep, w, N, K, 0);
}

void
dprt_linear_packed_f32(float *y, const float *x, const float *w, const float *prep,
                       const float *bias, int64_t M, int64_t N, int64_t K, int act)
{
	dprt_linear_ex_f32(y, x, w, prep, bias, NULL, M, N, K, act, 0);
}
