/* conv.c: 2-D convolution with weights prepared once (packed for the GEMM
 * micro-kernel, batch norm folded in) and a fused epilogue (bias, residual
 * add, activation): im2col straight into the GEMM's B panels (a 1×1 stride-1
 * convolution reads its input in place), or a direct, vectorized depthwise
 * kernel.  Work is split on the thread pool into tasks whose arithmetic
 * does not depend on the split. */
#include <math.h>
#include <string.h>
#include "gemm.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { NRBOUND = 32 };   /* a multiple of every kernel's nr */

static int
isdepthwise(const dprt_conv *cv)
{
	return cv->groups == cv->C && cv->groups > 1 && cv->O % cv->C == 0;
}

static int
ispointwise(const dprt_conv *cv)
{
	return cv->k[0] == 1 && cv->k[1] == 1 && cv->s[0] == 1 && cv->s[1] == 1 &&
	       cv->p[0] == 0 && cv->p[1] == 0;
}

/* Rows of K of one group, and the floats of one group's packed A (for any
 * kernel: ⌈Og/mr⌉·mr ≤ Og + DPRT_MRMAX - 1). */
static int64_t
kg(const dprt_conv *cv)
{
	return cv->C / cv->groups * cv->k[0] * cv->k[1];
}

static int64_t
apanels(const dprt_conv *cv)
{
	return (cv->O / cv->groups + DPRT_MRMAX - 1) * kg(cv);
}

/* The phase images' size (see phase_task). */
static void
phasedims(const dprt_conv *cv, int64_t *Hq, int64_t *Wq)
{
	*Hq = (cv->H + 2 * cv->p[0] + cv->s[0] - 1) / cv->s[0];
	*Wq = (cv->W + 2 * cv->p[1] + cv->s[1] - 1) / cv->s[1];
}

int64_t
dprt_conv_prep_floats(const dprt_conv *cv)
{
	if (isdepthwise(cv))
		return cv->O * cv->k[0] * cv->k[1] + cv->O;
	return cv->groups * apanels(cv) + cv->O;
}

/* The scratch of our kernels, without the plain copies of blocked operands. */
static int64_t
ownscratch(const dprt_conv *cv)
{
	int64_t Hq, Wq;

	if (isdepthwise(cv) || ispointwise(cv))
		return 0;
	phasedims(cv, &Hq, &Wq);   /* the offsets (int64), the phases (of every
	                              image without groups), slack */
	return 2 * kg(cv) + (cv->groups == 1 ? cv->N : 1) * cv->C / cv->groups * cv->s[0] *
	       cv->s[1] * Hq * Wq + NRBOUND;
}

/* Then, 64-byte aligned, plain copies of a blocked x, y and res, for when
 * our kernels run a convolution between blocked activations. */
int64_t
dprt_conv_scratch_floats(const dprt_conv *cv)
{
	int64_t n = (ownscratch(cv) + 15) / 16 * 16;

	if (cv->lay & DPRT_LAY_X)
		n += (cv->N * cv->C * cv->H * cv->W + 15) / 16 * 16;
	if (cv->lay & DPRT_LAY_Y)
		n += (cv->res ? 2 : 1) * ((cv->N * cv->O * cv->OH * cv->OW + 15) / 16 * 16);
	return n;
}

/* ---- the blocked layout (dprt.h) ---- */

typedef struct Blk {
	float *y;
	const float *x;
	int64_t C, HW, B, CB;   /* CB = ⌈C/B⌉ */
	int toblk;
} Blk;

/* One block of channels of one image: plain <-> blocked. */
static void
blk_task(void *arg, int64_t t)
{
	const Blk *b = arg;
	int64_t n = t / b->CB, cb = t % b->CB, B = b->B, HW = b->HW, c, i, m;
	float *blk;
	const float *pl;

	m = b->C - cb * B < B ? b->C - cb * B : B;
	if (b->toblk) {
		blk = b->y + (n * b->CB + cb) * HW * B;
		pl = b->x + (n * b->C + cb * B) * HW;
		for (i = 0; i < HW; i++) {
			for (c = 0; c < m; c++)
				blk[i * B + c] = pl[c * HW + i];
			for (; c < B; c++)
				blk[i * B + c] = 0.0f;
		}
	} else {
		const float *bx = b->x + (n * b->CB + cb) * HW * B;
		float *py = b->y + (n * b->C + cb * B) * HW;
		for (c = 0; c < m; c++)
			for (i = 0; i < HW; i++)
				py[c * HW + i] = bx[i * B + c];
	}
}

/* y = x from plain to blocked (toblk) or back, block B. */
static void
reblock(float *y, const float *x, int64_t N, int64_t C, int64_t HW, int64_t B, int toblk)
{
	Blk b = { y, x, C, HW, B, (C + B - 1) / B, toblk };

	dprt_parallel(N * b.CB, blk_task, &b);
}

enum { POOLROWS = 8 };   /* output rows a task */

typedef struct BPool {
	float *y;
	const float *x;
	int64_t H, W, OH, OW, B;
	const int64_t *k, *s, *p, *d;
	int64_t RB;             /* row chunks of a plane */
} BPool;

static inline __attribute__((always_inline)) void
bpool_plane(const BPool *bp, int64_t t)
{
	int64_t B = bp->B, H = bp->H, W = bp->W, OH = bp->OH, OW = bp->OW, oh, ow, ih, iw, c;
	const int64_t *k = bp->k, *s = bp->s, *p = bp->p, *d = bp->d;
	int64_t r0 = t % bp->RB * POOLROWS, r1 = r0 + POOLROWS < OH ? r0 + POOLROWS : OH;
	const float *x = bp->x + t / bp->RB * H * W * B;
	float *y = bp->y + t / bp->RB * OH * OW * B;

	for (oh = r0; oh < r1; oh++) {
		int64_t h0 = oh * s[0] - p[0], h1 = h0 + (k[0] - 1) * d[0] + 1;
		if (h1 > H)
			h1 = H;
		while (h0 < 0)
			h0 += d[0];
		for (ow = 0; ow < OW; ow++) {
			int64_t w0 = ow * s[1] - p[1], w1 = w0 + (k[1] - 1) * d[1] + 1;
			float m[16];
			if (w1 > W)
				w1 = W;
			while (w0 < 0)
				w0 += d[1];
			for (c = 0; c < B; c++)
				m[c] = -INFINITY;
			for (ih = h0; ih < h1; ih += d[0])
				for (iw = w0; iw < w1; iw += d[1]) {
					const float *v = x + (ih * W + iw) * B;
					for (c = 0; c < B; c++)   /* NaN propagates */
						m[c] = v[c] > m[c] || v[c] != v[c] ? v[c] : m[c];
				}
			for (c = 0; c < B; c++)
				y[(oh * OW + ow) * B + c] = m[c];
		}
	}
}

static void
bpool_generic(void *arg, int64_t t)
{
	bpool_plane(arg, t);
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx2,fma")))
static void
bpool_avx512(void *arg, int64_t t)
{
	bpool_plane(arg, t);
}
#endif

void
dprt_maxpool2d_blk_f32(float *y, const float *x, int64_t N, int64_t C, int64_t H, int64_t W,
                       int64_t OH, int64_t OW, const int64_t *k, const int64_t *s,
                       const int64_t *p, const int64_t *d)
{
	int64_t B = dprt_conv_block();
	BPool bp = { y, x, H, W, OH, OW, B, k, s, p, d, (OH + POOLROWS - 1) / POOLROWS };
	void (*fn)(void *, int64_t) = bpool_generic;

	if (B == 0) {
		dprt_maxpool2d_f32(y, x, N * C, H, W, OH, OW, k, s, p, d);
		return;
	}
#if defined(__x86_64__)
	if (dprt_isa() == DPRT_ISA_AVX512)
		fn = bpool_avx512;
#endif
	dprt_parallel(N * ((C + B - 1) / B) * bp.RB, fn, &bp);
}

typedef struct Gap {
	float *y;
	const float *x;
	int64_t C, H, W, B, CB;
} Gap;

/* Channel block t of one image: the sum in the plain kernel's order. */
static void
gap_task(void *arg, int64_t t)
{
	const Gap *g = arg;
	int64_t B = g->B, HW = g->H * g->W, n = t / g->CB, cb = t % g->CB, c, i, m;
	const float *x = g->x + t * HW * B;
	float s[16];

	m = g->C - cb * B < B ? g->C - cb * B : B;
	for (c = 0; c < B; c++)
		s[c] = 0.0f;
	for (i = 0; i < HW; i++)
		for (c = 0; c < B; c++)
			s[c] += x[i * B + c];
	for (c = 0; c < m; c++)
		g->y[n * g->C + cb * B + c] = s[c] / (float)g->H / (float)g->W;
}

void
dprt_gap_blk_f32(float *y, const float *x, int64_t N, int64_t C, int64_t H, int64_t W)
{
	int64_t B = dprt_conv_block();
	Gap g = { y, x, C, H, W, B, B ? (C + B - 1) / B : 0 };

	if (B == 0) {
		dprt_adaptive_avgpool2d_f32(y, x, N * C, H, W, 1, 1);
		return;
	}
	dprt_parallel(N * g.CB, gap_task, &g);
}

/* ---- 1×1 convolutions between 16-blocked activations (AVX-512) ----
 * A GEMM straight on the blocks: the weights packed once as [⌈O/16⌉][C][16]
 * (the last block as wide as its channels), the bias before them; a tile is
 * up to PWNP output pixels of one row (of the whole plane at stride 1) by
 * up to PWNOB blocks of 16 output channels, PWNOB·PWNP zmm accumulators, a
 * step broadcasting each pixel's input channel once and loading each
 * block's weights once; each output is one sum over the channels in order,
 * whatever the tiles and tasks; bias, residual and activation in the
 * epilogue, the padding channels written 0.  Tasks: a group of PWNOB
 * blocks (the weights they share) by a run of tiles.  Four blocks by 7
 * pixels beat two by 14 at 16 threads (bench/RESULTS.md). */
enum { PWNP = 7, PWNOB = 4, PWTT = 16, PWALIGN = 16 };

static int
pwblocked(const dprt_conv *cv)
{
	return dprt_conv_block() == 16 && dprt_isa() == DPRT_ISA_AVX512 && cv->groups == 1 &&
	       cv->C >= 3 && cv->k[0] == 1 && cv->k[1] == 1 && cv->p[0] == 0 && cv->p[1] == 0 &&
	       cv->s[1] <= 2 && cv->lay == (DPRT_LAY_X | DPRT_LAY_Y) &&
	       !dprt_dnnl_pw(cv->N);
}

/* The weights' offset in the prep (after the bias, aligned). */
static int64_t
pwwoff(const dprt_conv *cv)
{
	return (cv->O + PWALIGN - 1) / PWALIGN * PWALIGN;
}

typedef struct Pw {
	const dprt_conv *cv;
	float *y;
	const float *x, *w, *bias, *res;
	int64_t OB, NOB, NG;    /* output blocks; blocks a group, groups */
	int64_t NR, RW, TR;     /* rows, pixels a row, tiles a row */
	int64_t TT, NCH;        /* tiles a task, chunks of tiles a group */
} Pw;

#if defined(__x86_64__)
/* An activation other than ReLU and clamp on one vector, lane by lane. */
__attribute__((target("avx512f,avx2,fma"), noinline))
static __m512
pw_act(__m512 v, int act, float lo, float hi)
{
	float f[16];
	int c;

	_mm512_storeu_ps(f, v);
	for (c = 0; c < 16; c++)
		f[c] = dprt_act(act, f[c], lo, hi);
	return _mm512_loadu_ps(f);
}

/* One tile: NP pixels from pixel (r, ow0) by NOB blocks from block ob; the
 * pixels PS floats apart in x (16 · the stride), the blocks' weights 16·C
 * floats apart, rows of 16 (FULL 0: one block of rows mo floats, masked).
 * The sums in NOB·NP zmm registers, the epilogue on them. */
__attribute__((target("avx512f,avx2,fma")))
static inline __attribute__((always_inline)) void
pw_tile(const Pw *a, int64_t n, int64_t ob, int64_t r, int64_t ow0, int NOB, int NP, int FULL,
        int PS)
{
	const dprt_conv *cv = a->cv;
	int64_t C = cv->C, CB = (C + 15) / 16, HW = cv->H * cv->W, OP = cv->OH * cv->OW;
	int64_t pix, in, mo = cv->O - ob * 16 < 16 ? cv->O - ob * 16 : 16, cb, c, cn;
	__mmask16 m = FULL ? 0xffff : (__mmask16)((1u << mo) - 1);
	__m512 s[PWNOB][PWNP], v[PWNOB];
	const float *x, *w = a->w + ob * 16 * C;
	int act = cv->act, p, b;

	if (a->NR == 1)   /* stride 1, the plane one row */
		in = ow0, pix = ow0;
	else
		in = r * cv->s[0] * cv->W + ow0 * cv->s[1], pix = r * cv->OW + ow0;
	x = a->x + n * CB * HW * 16 + in * 16;
#pragma GCC unroll 4
	for (b = 0; b < NOB; b++)
#pragma GCC unroll 7
		for (p = 0; p < NP; p++)
			s[b][p] = _mm512_setzero_ps();
	for (cb = 0; cb < C; cb += 16, x += HW * 16) {
		cn = C - cb < 16 ? C - cb : 16;
		for (c = 0; c < cn; c++) {
			if (FULL) {
#pragma GCC unroll 4
				for (b = 0; b < NOB; b++)
					v[b] = _mm512_loadu_ps(w + b * 16 * C);
				w += 16;
			} else {
				v[0] = _mm512_maskz_loadu_ps(m, w);
				w += mo;
			}
#pragma GCC unroll 7
			for (p = 0; p < NP; p++) {
				__m512 xv = _mm512_set1_ps(x[p * PS + c]);
#pragma GCC unroll 4
				for (b = 0; b < NOB; b++)
					s[b][p] = _mm512_fmadd_ps(v[b], xv, s[b][p]);
			}
		}
	}
#pragma GCC unroll 4
	for (b = 0; b < NOB; b++) {
		int64_t o = (n * a->OB + ob + b) * OP * 16 + pix * 16;
		float *y = a->y + o;
		const float *res = a->res ? a->res + o : NULL;
		__m512 bias = _mm512_maskz_loadu_ps(m, a->bias + (ob + b) * 16);
		__m512 lo = _mm512_set1_ps(cv->lo), hi = _mm512_set1_ps(cv->hi);
#pragma GCC unroll 7
		for (p = 0; p < NP; p++) {
			__m512 t = _mm512_add_ps(s[b][p], bias);
			if (res)
				t = _mm512_add_ps(t, _mm512_loadu_ps(res + p * 16));
			if (act == DPRT_ACT_RELU)   /* as dprt_act: NaN stays */
				t = _mm512_max_ps(_mm512_setzero_ps(), t);
			else if (act == DPRT_ACT_CLAMP)
				t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));
			else if (act != DPRT_ACT_NONE)
				t = pw_act(t, act, cv->lo, cv->hi);
			if (!FULL)
				t = _mm512_maskz_mov_ps(m, t);
			_mm512_storeu_ps(y + p * 16, t);
		}
	}
}

/* The tile functions: pwfns[FULL][NOB - 1][NP - 1] (FULL 0, the last
 * block's, only with NOB 1). */
typedef void (*Pwfn)(const Pw *, int64_t, int64_t, int64_t, int64_t);
#define PWFN(F, NOB, NP) \
__attribute__((target("avx512f,avx2,fma"))) \
static void \
pw_##F##_##NOB##_##NP(const Pw *a, int64_t n, int64_t ob, int64_t r, int64_t ow0) \
{ \
	if (a->cv->s[1] == 1) \
		pw_tile(a, n, ob, r, ow0, NOB, NP, F, 16); \
	else \
		pw_tile(a, n, ob, r, ow0, NOB, NP, F, 32); \
}
#define PWFNS(F, NOB) \
	PWFN(F, NOB, 1) PWFN(F, NOB, 2) PWFN(F, NOB, 3) PWFN(F, NOB, 4) PWFN(F, NOB, 5) \
	PWFN(F, NOB, 6) PWFN(F, NOB, 7)
#define PWTAB(F, NOB) \
	{ pw_##F##_##NOB##_1, pw_##F##_##NOB##_2, pw_##F##_##NOB##_3, pw_##F##_##NOB##_4, \
	  pw_##F##_##NOB##_5, pw_##F##_##NOB##_6, pw_##F##_##NOB##_7 }
PWFNS(0, 1)
PWFNS(1, 1)
PWFNS(1, 2)
PWFNS(1, 3)
PWFNS(1, 4)
static const Pwfn pwfns[2][PWNOB][PWNP] = {
	{ PWTAB(0, 1) },
	{ PWTAB(1, 1), PWTAB(1, 2), PWTAB(1, 3), PWTAB(1, 4) },
};

/* Task t: image n, group g of output blocks (the last, partial block a
 * group of its own), a chunk of TT tiles (the tiles of a row as even as
 * they go: the first RW mod TR one pixel wider). */
static void
pw_task(void *arg, int64_t t)
{
	const Pw *a = arg;
	int64_t n = t / (a->NG * a->NCH), g = t / a->NCH % a->NG, ch = t % a->NCH;
	int64_t full = a->cv->O / 16, ob = g * a->NOB, nob = full - ob < a->NOB ? full - ob : a->NOB;
	int64_t base = a->RW / a->TR, ext = a->RW % a->TR, i, i1 = (ch + 1) * a->TT, f = 1;

	if (ob >= full)   /* the partial block */
		ob = full, nob = 1, f = 0;
	if (i1 > a->NR * a->TR)
		i1 = a->NR * a->TR;
	for (i = ch * a->TT; i < i1; i++) {
		int64_t r = i / a->TR, k = i % a->TR;
		int64_t ow0 = k * base + (k < ext ? k : ext), np = base + (k < ext);
		pwfns[f][nob - 1][np - 1](a, n, ob, r, ow0);
	}
}
#endif

static void
pw_blocked(const dprt_conv *cv, float *y, const float *x, const float *prep, const float *res)
{
#if defined(__x86_64__)
	Pw a = { cv, y, x, prep + pwwoff(cv), prep, res, (cv->O + 15) / 16, PWNOB, 0, 0, 0, 0, 0,
	         0 };
	int64_t ntile, full = cv->O / 16;

	a.NG = (full + a.NOB - 1) / a.NOB + (cv->O % 16 != 0);
	if (cv->s[0] == 1 && cv->s[1] == 1)
		a.NR = 1, a.RW = cv->OH * cv->OW;
	else
		a.NR = cv->OH, a.RW = cv->OW;
	a.TR = (a.RW + PWNP - 1) / PWNP;
	ntile = a.NR * a.TR;
	/* TT: the shortest schedule in tiles a thread (each thread a task at
	 * a time), then the fewest tasks (a group's weights read by fewer
	 * threads), up to PWTT tiles a task */
	{
		int64_t nt = dprt_threads(), best = -1, tt, tasks, span;
		for (tt = 1; tt <= ntile && tt <= PWTT; tt++) {
			tasks = cv->N * a.NG * ((ntile + tt - 1) / tt);
			span = (tasks + nt - 1) / nt * tt;
			if (best < 0 || span <= best)
				best = span, a.TT = tt;
		}
	}
	a.NCH = (ntile + a.TT - 1) / a.TT;
	dprt_parallel(cv->N * a.NG * a.NCH, pw_task, &a);
#endif
}

/* Packs the weights of a pwblocked convolution (bias folded as in
 * dprt_conv_prep). */
static void
pw_prep(const dprt_conv *cv, float *prep, const float *w, const float *bias, const float *bnw,
        const float *bnb, const float *bnm, const float *bnv, float eps)
{
	int64_t O = cv->O, C = cv->C, o, c;
	float *wp = prep + pwwoff(cv);

	for (o = 0; o < O; o++) {
		float a = 1.0f, b = bias ? bias[o] : 0.0f;
		int64_t ob = o / 16, mo = O - ob * 16 < 16 ? O - ob * 16 : 16;
		if (bnw) {
			a = 1.0f / sqrtf(bnv[o] + eps) * bnw[o];
			b = (b - bnm[o]) * a + bnb[o];
		}
		prep[o] = b;
		for (c = 0; c < C; c++)
			wp[ob * 16 * C + c * mo + o % 16] = bnw ? w[o * C + c] * a : w[o * C + c];
	}
}

void
dprt_conv_prep(const dprt_conv *cv, float *prep, const float *w, const float *bias,
               const float *bnw, const float *bnb, const float *bnm, const float *bnv,
               float eps)
{
	int64_t O = cv->O, Og = O / cv->groups, K = kg(cv), o, k, g;
	int64_t taps = isdepthwise(cv) ? cv->k[0] * cv->k[1] : K;
	float *bf;

	if (pwblocked(cv)) {   /* fits: O·C + ⌈O/16⌉·16 <= (O + MRMAX - 1)·C + O */
		pw_prep(cv, prep, w, bias, bnw, bnb, bnm, bnv, eps);
		return;
	}
	if (dprt_dnnl_conv_prep(cv, prep, w, bias, bnw, bnb, bnm, bnv, eps))
		return;   /* oneDNN runs it (dnnl.c) */
	/* the folded bias after the weights; depthwise weights stay [O, taps] */
	bf = isdepthwise(cv) ? prep + O * taps : prep + cv->groups * apanels(cv);
	for (o = 0; o < O; o++) {
		float a = 1.0f, b = bias ? bias[o] : 0.0f;
		if (bnw) {
			float invstd = 1.0f / sqrtf(bnv[o] + eps);
			a = invstd * bnw[o];
			b = (b - bnm[o]) * a + bnb[o];
		}
		bf[o] = b;
		if (isdepthwise(cv)) {
			for (k = 0; k < taps; k++)
				prep[o * taps + k] = w[o * taps + k] * a;
		}
	}
	if (isdepthwise(cv))
		return;
	/* each group's Og×K block into mr-row panels, row o scaled by its a */
	const dprt_kern *kr = dprt_kern_get();
	for (g = 0; g < cv->groups; g++) {
		float *dst = prep + g * apanels(cv);
		int64_t p, i, m;
		for (p = 0; p < Og; p += kr->mr, dst += kr->mr * K) {
			m = Og - p < kr->mr ? Og - p : kr->mr;
			memset(dst, 0, sizeof *dst * (size_t)(kr->mr * K));
			for (i = 0; i < m; i++) {
				int64_t oo = g * Og + p + i;
				float a = 1.0f;
				if (bnw)
					a = 1.0f / sqrtf(bnv[oo] + eps) * bnw[oo];
				for (k = 0; k < K; k++)
					dst[k * kr->mr + i] = bnw ? w[oo * K + k] * a : w[oo * K + k];
			}
		}
	}
}

/* ---- the phase copy of the direct path ----
 * The input, padded, split into s0×s1 phases: phase (a, b) of channel c is
 * the Hq×Wq image xp[c][s0·u + a][s1·v + b].  Tap (i, j) of output pixel
 * (oh, ow) then reads phase ((i·d0) mod s0, (j·d1) mod s1) at (oh + i·d0 div
 * s0, ow + j·d1 div s1): for a fixed tap, consecutive pixels of a row are
 * consecutive floats, so the GEMM reads B in place over rows Wq wide. */

typedef struct Phase {
	const dprt_conv *cv;
	const float *x;         /* one image, one group: [Cg, H, W] */
	float *dst;             /* [Cg, s0, s1, Hq, Wq] */
	int64_t Hq, Wq;
} Phase;

static void
phase_task(void *arg, int64_t c)
{
	const Phase *ph = arg;
	const dprt_conv *cv = ph->cv;
	int64_t H = cv->H, W = cv->W, s0 = cv->s[0], s1 = cv->s[1], p0 = cv->p[0], p1 = cv->p[1];
	int64_t Hq = ph->Hq, Wq = ph->Wq, a, b, u, v, lo, hi;
	const float *x = ph->x + c * H * W;

	for (a = 0; a < s0; a++)
		for (b = 0; b < s1; b++) {
			float *d = ph->dst + ((c * s0 + a) * s1 + b) * Hq * Wq;
			/* columns v with 0 <= s1·v + b - p1 < W */
			lo = p1 - b > 0 ? (p1 - b + s1 - 1) / s1 : 0;
			hi = (W + p1 - b + s1 - 1) / s1;
			if (hi > Wq)
				hi = Wq;
			if (lo > hi)
				lo = hi;
			for (u = 0; u < Hq; u++) {
				int64_t h = s0 * u + a - p0;
				float *r = d + u * Wq;
				const float *xr = x + h * W + b - p1;
				if (h < 0 || h >= H) {
					memset(r, 0, sizeof *r * (size_t)Wq);
					continue;
				}
				memset(r, 0, sizeof *r * (size_t)lo);
				if (s1 == 1)
					memcpy(r + lo, xr + lo, sizeof *r * (size_t)(hi - lo));
				else
					for (v = lo; v < hi; v++)
						r[v] = xr[s1 * v];
				memset(r + hi, 0, sizeof *r * (size_t)(Wq - hi));
			}
		}
}

/* ---- depthwise ---- */

typedef struct Dw {
	const dprt_conv *cv;
	float *y;
	const float *x, *w, *bias, *res;
} Dw;

/* Output plane t = n·O + o. */
static inline __attribute__((always_inline)) void
dw_plane(const Dw *dw, int64_t t)
{
	const dprt_conv *cv = dw->cv;
	int64_t O = cv->O, m = O / cv->C, n = t / O, o = t % O, H = cv->H, W = cv->W;
	int64_t OH = cv->OH, OW = cv->OW, k0 = cv->k[0], k1 = cv->k[1], s1 = cv->s[1];
	const float *xc = dw->x + (n * cv->C + o / m) * H * W, *wo = dw->w + o * k0 * k1;
	const float *res = dw->res ? dw->res + t * OH * OW : NULL;
	float *restrict yo = dw->y + t * OH * OW, bias = dw->bias[o];
	int64_t oh, ow, i, j;

	for (oh = 0; oh < OH; oh++) {
		float *restrict row = yo + oh * OW;
		for (ow = 0; ow < OW; ow++)
			row[ow] = 0.0f;
		for (i = 0; i < k0; i++) {
			int64_t ih = oh * cv->s[0] - cv->p[0] + i * cv->d[0];
			if (ih < 0 || ih >= H)
				continue;
			for (j = 0; j < k1; j++) {
				int64_t off = j * cv->d[1] - cv->p[1], lo = 0, hi;
				const float *restrict xr = xc + ih * W + off;
				float wv = wo[i * k1 + j];
				if (off < 0)
					lo = (-off + s1 - 1) / s1;
				hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / s1 + 1;
				if (hi > OW)
					hi = OW;
				if (s1 == 1)
					for (ow = lo; ow < hi; ow++)
						row[ow] += wv * xr[ow];
				else if (s1 == 2)
					for (ow = lo; ow < hi; ow++)
						row[ow] += wv * xr[2 * ow];
				else
					for (ow = lo; ow < hi; ow++)
						row[ow] += wv * xr[ow * s1];
			}
		}
		if (res)
			for (ow = 0; ow < OW; ow++)
				row[ow] = dprt_act(cv->act, row[ow] + bias + res[oh * OW + ow], cv->lo, cv->hi);
		else
			for (ow = 0; ow < OW; ow++)
				row[ow] = dprt_act(cv->act, row[ow] + bias, cv->lo, cv->hi);
	}
}

static void
dw_generic(void *arg, int64_t t)
{
	dw_plane(arg, t);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void
dw_avx2(void *arg, int64_t t)
{
	dw_plane(arg, t);
}

__attribute__((target("avx512f,avx2,fma")))
static void
dw_avx512(void *arg, int64_t t)
{
	dw_plane(arg, t);
}
#endif

/* ---- depthwise between blocked activations ----
 * Task t: image n, channel block cb, rows [r0, r0 + DWROWS) of the output;
 * the block's weights gathered as [tap][B] first, pixels a B-wide vector
 * each (B = 16 or 8, a constant of the inlined body). */
enum { DWROWS = 4, TAPMAX = 64 };

typedef struct DwB {
	const dprt_conv *cv;
	float *y;
	const float *x, *w, *bias, *res;
	int64_t CB, RB;         /* channel blocks, row chunks */
} DwB;

/* B floats as one vector (GCC's and Clang's vector extension); loads and
 * stores through memcpy, which compiles to unaligned vector moves. */
typedef float dwv16 __attribute__((vector_size(64)));
typedef float dwv8 __attribute__((vector_size(32)));

enum { DWRUN = 8 };   /* output pixels a step of the inner loop */

/* The activation of a row of n pixels of B channels, the padding
 * channels (from m on) 0. */
static inline __attribute__((always_inline)) void
dwb_act(const dprt_conv *cv, float *restrict row, int64_t n, int64_t B, int64_t m)
{
	float lo = cv->lo, hi = cv->hi;
	int64_t e, c;

	n *= B;
	if (cv->act == DPRT_ACT_RELU)
		for (e = 0; e < n; e++)
			row[e] = row[e] < 0.0f ? 0.0f : row[e];
	else if (cv->act == DPRT_ACT_CLAMP)
		for (e = 0; e < n; e++)
			row[e] = dps_clamp(row[e], lo, hi);
	else if (cv->act != DPRT_ACT_NONE)
		for (e = 0; e < n; e++)
			row[e] = dprt_act(cv->act, row[e], lo, hi);
	if (m < B)
		for (e = 0; e < n; e += B)
			for (c = m; c < B; c++)
				row[e + c] = 0.0f;
}

/* The epilogue of pixel (oh, ow) but for the activation (dwb_act, per
 * row): bias, residual, the store. */
#define DWB_OUT(B, V, acc, oh, ow) do { \
	V v_ = (acc) + bias, r_; \
	if (res) { \
		memcpy(&r_, res + ((oh) * OW + (ow)) * B, sizeof r_); \
		v_ += r_; \
	} \
	memcpy(y + ((oh) * OW + (ow)) * B, &v_, sizeof v_); \
} while (0)

/* R pixels from (oh, ow), all their taps inside the row. */
#define DWB_RUN(B, V, R) do { \
	for (q = 0; q < R; q++) \
		acc[q] = zero; \
	for (i = 0; i < k0; i++) { \
		int64_t ih = oh * cv->s[0] - cv->p[0] + i * cv->d[0]; \
		const float *xr; \
		if (ih < 0 || ih >= H) \
			continue; \
		xr = x + (ih * W + ow * s1 - p1) * B; \
		for (j = 0; j < k1; j++) { \
			V wv = w[i * k1 + j]; \
			for (q = 0; q < R; q++) { \
				memcpy(&xv, xr + (q * s1 + j * d1) * B, sizeof xv); \
				acc[q] += wv * xv; \
			} \
		} \
	} \
	for (q = 0; q < R; q++) \
		DWB_OUT(B, V, acc[q], oh, ow + q); \
	ow += R; \
} while (0)

/* The task's body for block B, vector types V and VI: DWRUN pixels at a
 * time where all their taps are inside the row (DWRUN / 2 where fewer
 * remain: the short rows of the late layers), one at a time (taps
 * outside skipped) at the edges; taps summed in the same order either way. */
#define DWB_BODY(B, V) \
	const dprt_conv *cv = a->cv; \
	int64_t n = t / (a->CB * a->RB), cb = t / a->RB % a->CB, r0 = t % a->RB * DWROWS; \
	int64_t H = cv->H, W = cv->W, OH = cv->OH, OW = cv->OW, k0 = cv->k[0], k1 = cv->k[1]; \
	int64_t s1 = cv->s[1], p1 = cv->p[1], d1 = cv->d[1]; \
	int64_t taps = k0 * k1, oh, ow, i, j, c, q, r1 = r0 + DWROWS < OH ? r0 + DWROWS : OH; \
	int64_t m = cv->C - cb * B < B ? cv->C - cb * B : B, olo, ohi; \
	const float *x = a->x + (n * a->CB + cb) * H * W * B; \
	const float *res = a->res ? a->res + (n * a->CB + cb) * OH * OW * B : NULL; \
	float *y = a->y + (n * a->CB + cb) * OH * OW * B; \
	V w[TAPMAX], bias, acc[DWRUN], xv, zero; \
	float f[B]; \
	for (i = 0; i < taps; i++) { \
		for (c = 0; c < B; c++) \
			f[c] = c < m ? a->w[(cb * B + c) * taps + i] : 0.0f; \
		memcpy(&w[i], f, sizeof f); \
	} \
	for (c = 0; c < B; c++) \
		f[c] = c < m ? a->bias[cb * B + c] : 0.0f; \
	memcpy(&bias, f, sizeof f); \
	zero = bias - bias; \
	/* the pixels whose taps all fall inside a row: [olo, ohi) */ \
	olo = (p1 + s1 - 1) / s1; \
	ohi = W - 1 + p1 - (k1 - 1) * d1 < 0 ? 0 : (W - 1 + p1 - (k1 - 1) * d1) / s1 + 1; \
	if (ohi > OW) \
		ohi = OW; \
	for (oh = r0; oh < r1; dwb_act(cv, y + oh * OW * B, OW, B, m), oh++) \
		for (ow = 0; ow < OW;) { \
			if (ow >= olo && ow + DWRUN <= ohi) { \
				DWB_RUN(B, V, DWRUN); \
				continue; \
			} \
			if (ow >= olo && ow + DWRUN / 2 <= ohi) { \
				DWB_RUN(B, V, DWRUN / 2); \
				continue; \
			} \
			acc[0] = zero; \
			for (i = 0; i < k0; i++) { \
				int64_t ih = oh * cv->s[0] - cv->p[0] + i * cv->d[0]; \
				if (ih < 0 || ih >= H) \
					continue; \
				for (j = 0; j < k1; j++) { \
					int64_t iw = ow * s1 - p1 + j * d1; \
					if (iw < 0 || iw >= W) \
						continue; \
					memcpy(&xv, x + (ih * W + iw) * B, sizeof xv); \
					acc[0] += w[i * k1 + j] * xv; \
				} \
			} \
			DWB_OUT(B, V, acc[0], oh, ow); \
			ow++; \
		}

static inline __attribute__((always_inline)) void
dwb16(const DwB *a, int64_t t)
{
	DWB_BODY(16, dwv16)
}

static inline __attribute__((always_inline)) void
dwb8(const DwB *a, int64_t t)
{
	DWB_BODY(8, dwv8)
}

static void
dwb16_generic(void *arg, int64_t t)
{
	dwb16(arg, t);
}

static void
dwb8_generic(void *arg, int64_t t)
{
	dwb8(arg, t);
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx2,fma")))
static void
dwb16_avx512(void *arg, int64_t t)
{
	dwb16(arg, t);
}

__attribute__((target("avx2,fma")))
static void
dwb8_avx2(void *arg, int64_t t)
{
	dwb8(arg, t);
}
#endif

/* Whether the blocked depthwise kernel takes cv (x, y, res blocked). */
static int
dwblocked(const dprt_conv *cv)
{
	return isdepthwise(cv) && cv->O == cv->C && cv->lay == (DPRT_LAY_X | DPRT_LAY_Y) &&
	       cv->k[0] * cv->k[1] <= TAPMAX;
}

static void
dw_blocked(const dprt_conv *cv, int64_t B, float *y, const float *x, const float *prep,
           const float *res)
{
	DwB a = { cv, y, x, prep, prep + cv->O * cv->k[0] * cv->k[1], res, (cv->C + B - 1) / B,
	          (cv->OH + DWROWS - 1) / DWROWS };
	void (*fn)(void *, int64_t) = B == 16 ? dwb16_generic : dwb8_generic;

#if defined(__x86_64__)
	if (B == 16 && dprt_isa() == DPRT_ISA_AVX512)
		fn = dwb16_avx512;
	else if (B == 8 && dprt_isa() != DPRT_ISA_GENERIC)
		fn = dwb8_avx2;
#endif
	dprt_parallel(cv->N * a.CB * a.RB, fn, &a);
}

/* ---- the convolution ---- */

static void conv_own(const dprt_conv *cv, float *y, const float *x, const float *prep,
                     const float *res, float *scratch);

void
dprt_conv_run(const dprt_conv *cv, float *y, const float *x, const float *prep,
              const float *res, float *scratch)
{
	int64_t B = dprt_conv_block(), n, ny = cv->N * cv->O * cv->OH * cv->OW;
	float *at, *px = NULL, *py = NULL, *pr = NULL;

	switch (dprt_dnnl_conv_run(cv, y, x, prep, res)) {
	case 1:
		return;
	case -1:   /* oneDNN failed: no result (cannot happen short of memory) */
		for (n = 0; n < ny; n++)
			y[n] = NAN;
		return;
	}
	if (B == 0 || !cv->lay) {
		conv_own(cv, y, x, prep, res, scratch);
		return;
	}
	if (dwblocked(cv)) {
		dw_blocked(cv, B, y, x, prep, res);
		return;
	}
	if (pwblocked(cv)) {
		pw_blocked(cv, y, x, prep, res);
		return;
	}
	/* blocked operands through plain copies in the scratch */
	at = scratch + (ownscratch(cv) + 15) / 16 * 16;
	if (cv->lay & DPRT_LAY_X) {
		px = at;
		at += (cv->N * cv->C * cv->H * cv->W + 15) / 16 * 16;
		reblock(px, x, cv->N, cv->C, cv->H * cv->W, B, 0);
	}
	if (cv->lay & DPRT_LAY_Y) {
		py = at;
		at += (ny + 15) / 16 * 16;
		if (res) {
			pr = at;
			reblock(pr, res, cv->N, cv->O, cv->OH * cv->OW, B, 0);
		}
	}
	conv_own(cv, py ? py : y, px ? px : x, prep, py ? pr : res, scratch);
	if (py)
		reblock(y, py, cv->N, cv->O, cv->OH * cv->OW, B, 1);
}

/* Our kernels, on plain x, y and res. */
static void
conv_own(const dprt_conv *cv, float *y, const float *x, const float *prep,
         const float *res, float *scratch)
{
	int64_t n, g, P = cv->OH * cv->OW, K = kg(cv), Og = cv->O / cv->groups;
	int64_t Cg = cv->C / cv->groups, HW = cv->H * cv->W;
	int64_t *off = (int64_t *)scratch;
	dprt_gemm gm;
	Phase ph;

	if (isdepthwise(cv)) {
		Dw dw = { cv, y, x, prep, prep + cv->O * cv->k[0] * cv->k[1], res };
		void (*fn)(void *, int64_t) = dw_generic;
#if defined(__x86_64__)
		if (dprt_isa() == DPRT_ISA_AVX512)
			fn = dw_avx512;
		else if (dprt_isa() == DPRT_ISA_AVX2)
			fn = dw_avx2;
#endif
		dprt_parallel(cv->N * cv->O, fn, &dw);
		return;
	}
	memset(&gm, 0, sizeof gm);
	gm.M = Og, gm.N = P, gm.K = K;
	gm.ldc = P;
	gm.alpha = 1.0f;
	gm.ldr = P;
	gm.act = cv->act, gm.lo = cv->lo, gm.hi = cv->hi;
	if (ispointwise(cv)) {
		gm.rsb = P, gm.csb = 1;
	} else {
		int64_t s0 = cv->s[0], s1 = cv->s[1], k;
		phasedims(cv, &ph.Hq, &ph.Wq);
		for (k = 0; k < K; k++) {   /* row k = (c·k0 + i)·k1 + j */
			int64_t j = k % cv->k[1], i = k / cv->k[1] % cv->k[0], c = k / cv->k[1] / cv->k[0];
			int64_t ri = i * cv->d[0], rj = j * cv->d[1];
			off[k] = ((c * s0 + ri % s0) * s1 + rj % s1) * ph.Hq * ph.Wq +
			         ri / s0 * ph.Wq + rj / s1;
		}
		ph.cv = cv;
		ph.dst = scratch + 2 * K;
		memset(ph.dst + (cv->groups == 1 ? cv->N : 1) * Cg * s0 * s1 * ph.Hq * ph.Wq, 0,
		       sizeof(float) * NRBOUND);
		gm.boff = off;
		gm.N = (cv->OH - 1) * ph.Wq + cv->OW;
		gm.wide = ph.Wq, gm.ow = cv->OW;
	}
	if (cv->groups == 1 && cv->N > 1) {   /* the batch's products in one job */
		gm.nbatch = cv->N;
		gm.scb = gm.srb = cv->O * P;
		if (ispointwise(cv)) {
			gm.b = x;
			gm.sbb = cv->C * HW;
		} else {   /* every image's phases (channel n·C + c of the batch) */
			ph.x = x;
			dprt_parallel(cv->N * Cg, phase_task, &ph);
			gm.b = ph.dst;
			gm.sbb = Cg * cv->s[0] * cv->s[1] * ph.Hq * ph.Wq;
		}
		gm.ap = prep;
		gm.bias = prep + apanels(cv);
		gm.c = y;
		gm.res = res;
		dprt_gemm_run(&gm);
		return;
	}
	for (n = 0; n < cv->N; n++)
		for (g = 0; g < cv->groups; g++) {
			const float *xg = x + (n * cv->C + g * Cg) * HW;
			if (ispointwise(cv)) {
				gm.b = xg;
			} else {
				ph.x = xg;
				dprt_parallel(Cg, phase_task, &ph);
				gm.b = ph.dst;
			}
			gm.ap = prep + g * apanels(cv);
			gm.bias = prep + cv->groups * apanels(cv) + g * Og;
			gm.c = y + (n * cv->O + g * Og) * P;
			gm.res = res ? res + (n * cv->O + g * Og) * P : NULL;
			dprt_gemm_run(&gm);
		}
}
