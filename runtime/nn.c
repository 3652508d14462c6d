/* nn.c: CPU kernels of the neural-network ops: reductions, batch/layer/RMS
 * norms, 2-D pooling, 2-D convolution (im2col + dprt_sgemm, or direct for
 * depthwise) and scaled dot-product attention. */
#include <math.h>
#include <string.h>
#include "gemm.h"

/* ---- reductions ---- */

/* Offset of multi-index idx[0..n-1] with strides st. */
static int64_t
offset(int n, const int64_t *idx, const int64_t *st)
{
	int64_t o = 0;
	int i;

	for (i = 0; i < n; i++)
		o += idx[i] * st[i];
	return o;
}

/* Advances the multi-index idx over dim; 0 once it wraps around. */
static int
next(int n, int64_t *idx, const int64_t *dim)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		if (++idx[i] < dim[i])
			return 1;
		idx[i] = 0;
	}
	return 0;
}

/* Whether element i of x (dtype dt) is nonzero (-0.0 is zero). */
static int
nonzero(const void *x, int dt, int64_t i)
{
	switch (dt) {
	case DPRT_U8: case DPRT_I8: case DPRT_BOOL: return ((const uint8_t *)x)[i] != 0;
	case DPRT_I16: return ((const int16_t *)x)[i] != 0;
	case DPRT_F16: case DPRT_BF16: return (((const uint16_t *)x)[i] & 0x7fff) != 0;
	case DPRT_I32: return ((const int32_t *)x)[i] != 0;
	case DPRT_I64: return ((const int64_t *)x)[i] != 0;
	case DPRT_F32: return ((const float *)x)[i] != 0;
	case DPRT_F64: return ((const double *)x)[i] != 0;
	}
	return 0;
}

/* Sum/mean/any over the reduced axes (see dprt.h). */
void
dprt_reduce(int op, int dtype, void *y, const void *x, int nk, const int64_t *kdim,
            const int64_t *kst, int nr, const int64_t *rdim, const int64_t *rst)
{
	int64_t ki[DPRT_MAXRANK] = { 0 }, ri[DPRT_MAXRANK], cnt = 1, k = 0, base, o;
	int i;

	for (i = 0; i < nk; i++)
		if (kdim[i] == 0)
			return;
	for (i = 0; i < nr; i++)
		cnt *= rdim[i];
	do {
		double acc = 0;
		int64_t iacc = 0;
		int any = 0;

		base = offset(nk, ki, kst);
		memset(ri, 0, sizeof ri);
		if (cnt > 0) {
			/* the innermost reduced axis as a plain loop */
			int64_t n = nr ? rdim[nr - 1] : 1, s = nr ? rst[nr - 1] : 0, j;
			do {
				o = base + offset(nr ? nr - 1 : 0, ri, rst);
				switch (op == DPRT_ANY ? -1 : dtype) {
				case DPRT_F32: {
					const float *p = (const float *)x + o;
					for (j = 0; j < n; j++)
						acc += p[j * s];
					break;
				}
				case DPRT_I64: {
					const int64_t *p = (const int64_t *)x + o;
					for (j = 0; j < n; j++)
						iacc = (int64_t)((uint64_t)iacc + (uint64_t)p[j * s]);
					break;
				}
				case DPRT_I32: {
					const int32_t *p = (const int32_t *)x + o;
					for (j = 0; j < n; j++)
						iacc = (int64_t)((uint64_t)iacc + (uint64_t)(int64_t)p[j * s]);
					break;
				}
				default:
					for (j = 0; j < n && !any; j++)
						any = nonzero(x, dtype, o + j * s);
					break;
				}
			} while (nr > 1 && next(nr - 1, ri, rdim));
		}
		switch (op == DPRT_ANY ? -1 : dtype) {
		case DPRT_F32:
			((float *)y)[k] = (float)(op == DPRT_MEAN ? acc / (double)cnt : acc);
			break;
		case DPRT_I64: ((int64_t *)y)[k] = iacc; break;
		case DPRT_I32: ((int32_t *)y)[k] = (int32_t)iacc; break;
		default: ((uint8_t *)y)[k] = (uint8_t)any; break;
		}
		k++;
	} while (nk > 0 && next(nk, ki, kdim));
}

/* ---- norms ---- */

/* The norms split their rows (or channels) over tasks of a few each. */
typedef struct Norm {
	float *y;
	const float *x, *w, *b, *mean, *var;
	float eps;
	int64_t N, C, n, rows;      /* rows per task */
} Norm;

static int64_t
ntasks(int64_t rows, int64_t *per)
{
	int64_t t = 4 * (int64_t)dprt_threads();

	*per = (rows + t - 1) / t;
	if (*per < 1)
		*per = 1;
	return (rows + *per - 1) / *per;
}

/* Inference batch norm with per-channel scale and shift (PyTorch's order). */
static void
bn_task(void *arg, int64_t t)
{
	const Norm *nm = arg;
	int64_t n, c, i, c1 = (t + 1) * nm->rows < nm->C ? (t + 1) * nm->rows : nm->C;

	for (c = t * nm->rows; c < c1; c++) {
		float invstd = 1.0f / sqrtf(nm->var[c] + nm->eps);
		float alpha = invstd * nm->w[c], beta = nm->b[c] - nm->mean[c] * alpha;
		for (n = 0; n < nm->N; n++) {
			const float *xp = nm->x + (n * nm->C + c) * nm->n;
			float *yp = nm->y + (n * nm->C + c) * nm->n;
			for (i = 0; i < nm->n; i++)
				yp[i] = xp[i] * alpha + beta;
		}
	}
}

void
dprt_batchnorm_f32(float *y, const float *x, const float *w, const float *b,
                   const float *mean, const float *var, float eps, int64_t N, int64_t C,
                   int64_t inner)
{
	Norm nm = { y, x, w, b, mean, var, eps, N, C, inner, 0 };

	dprt_parallel(ntasks(C, &nm.rows), bn_task, &nm);
}

/* Σ x[i], or Σ (x[i] - m)² when sq (f64 in 8 independent lanes, summed
 * pairwise: the compiler vectorizes it; one chain of dependent adds was
 * most of a layer norm). */
static double
sum8(const float *x, int64_t n, int sq, double m)
{
	double s[8] = { 0 };
	int64_t i;
	int l, w;

	if (!sq) {
		for (i = 0; i + 8 <= n; i += 8)
			for (l = 0; l < 8; l++)
				s[l] += x[i + l];
		for (l = 0; i < n; i++, l++)
			s[l] += x[i];
	} else {
		for (i = 0; i + 8 <= n; i += 8)
			for (l = 0; l < 8; l++)
				s[l] += (x[i + l] - m) * (x[i + l] - m);
		for (l = 0; i < n; i++, l++)
			s[l] += (x[i] - m) * (x[i] - m);
	}
	for (w = 4; w > 0; w /= 2)
		for (l = 0; l < w; l++)
			s[l] += s[l + w];
	return s[0];
}

/* Layer norm: mean and variance of each row in f64, then
 * y = (x·rstd - mean·rstd)·w + b. */
static void
ln_task(void *arg, int64_t t)
{
	const Norm *nm = arg;
	int64_t o, i, n = nm->n, o1 = (t + 1) * nm->rows < nm->N ? (t + 1) * nm->rows : nm->N;
	const float *w = nm->w, *b = nm->b;

	for (o = t * nm->rows; o < o1; o++) {
		const float *xp = nm->x + o * n;
		float *yp = nm->y + o * n;
		double s, ss, m;
		float rstd, bias;

		s = sum8(xp, n, 0, 0);
		m = n > 0 ? s / (double)n : 0;
		ss = sum8(xp, n, 1, m);
		rstd = (float)(1.0 / sqrt(ss / (double)(n > 0 ? n : 1) + nm->eps));
		bias = -rstd * (float)m;
		for (i = 0; i < n; i++) {
			float v = xp[i] * rstd + bias;
			if (w)
				v *= w[i];
			if (b)
				v += b[i];
			yp[i] = v;
		}
	}
}

void
dprt_layernorm_f32(float *y, const float *x, const float *w, const float *b,
                   int64_t outer, int64_t n, float eps)
{
	Norm nm = { y, x, w, b, NULL, NULL, eps, outer, 0, n, 0 };

	dprt_parallel(ntasks(outer, &nm.rows), ln_task, &nm);
}

/* RMS norm, as PyTorch composes it: x · rsqrt(mean(x²) + eps) · w. */
static void
rms_task(void *arg, int64_t t)
{
	const Norm *nm = arg;
	int64_t o, i, n = nm->n, o1 = (t + 1) * nm->rows < nm->N ? (t + 1) * nm->rows : nm->N;
	const float *w = nm->w;

	for (o = t * nm->rows; o < o1; o++) {
		const float *xp = nm->x + o * n;
		float *yp = nm->y + o * n;
		double ss = 0;
		float r;

		for (i = 0; i < n; i++)
			ss += (double)(xp[i] * xp[i]);
		r = 1.0f / sqrtf((float)(ss / (double)(n > 0 ? n : 1)) + nm->eps);
		for (i = 0; i < n; i++)
			yp[i] = w ? xp[i] * r * w[i] : xp[i] * r;
	}
}

void
dprt_rmsnorm_f32(float *y, const float *x, const float *w, int64_t outer, int64_t n,
                 float eps)
{
	Norm nm = { y, x, w, NULL, NULL, NULL, eps, outer, 0, n, 0 };

	dprt_parallel(ntasks(outer, &nm.rows), rms_task, &nm);
}

/* ---- pooling ---- */

/* Max pooling; the window starts at the first in-range dilated tap.  One
 * task per plane; columns whose window lies inside the row skip the bound
 * checks. */
typedef struct Pool {
	float *y;
	const float *x;
	int64_t H, W, OH, OW;
	const int64_t *k, *s, *p, *d;
} Pool;

static inline float
maxof(float m, float v)
{
	return v > m || v != v ? v : m;
}

enum { TMAX = 4096 };   /* floats of a row's column maxima */

/* One plane: per output row, the column maxima over the window's rows
 * (-inf in the padding) for a run of output columns, then the maxima over
 * each window's columns; both loops branch-free. */
static void
maxpool_plane(void *arg, int64_t c)
{
	const Pool *pl = arg;
	const int64_t *k = pl->k, *s = pl->s, *p = pl->p, *d = pl->d;
	int64_t H = pl->H, W = pl->W, OW = pl->OW, oh, ow, o0, o1, ih, iw, j, run, span;
	const float *xc = pl->x + c * H * W;
	float *yc = pl->y + c * pl->OH * OW;
	float tmp[TMAX];

	span = (k[1] - 1) * d[1] + 1;
	run = span >= TMAX ? 0 : (TMAX - span) / s[1] + 1;
	if (run > 64)
		run = 64;
	for (oh = 0; oh < pl->OH; oh++) {
		int64_t h0 = oh * s[0] - p[0], h1 = h0 + (k[0] - 1) * d[0] + 1;
		if (h1 > H)
			h1 = H;
		while (h0 < 0)
			h0 += d[0];
		for (o0 = 0; o0 < OW; o0 = o1) {
			int64_t base, n;
			o1 = run > 0 && OW - o0 > run ? o0 + run : OW;
			if (run == 0) {   /* a window too wide for tmp: the plain loop */
				for (ow = 0; ow < OW; ow++) {
					int64_t w0 = ow * s[1] - p[1], w1 = w0 + span;
					float m = -INFINITY;
					if (w1 > W)
						w1 = W;
					while (w0 < 0)
						w0 += d[1];
					for (ih = h0; ih < h1; ih += d[0])
						for (iw = w0; iw < w1; iw += d[1])
							m = maxof(m, xc[ih * W + iw]);
					yc[oh * OW + ow] = m;
				}
				break;
			}
			base = o0 * s[1] - p[1];
			n = (o1 - 1 - o0) * s[1] + span;
			for (j = 0; j < n; j++)
				tmp[j] = -INFINITY;
			for (ih = h0; ih < h1; ih += d[0]) {
				int64_t lo = base < 0 ? -base : 0, hi = base + n > W ? W - base : n;
				const float *r = xc + ih * W + base;
				for (j = lo; j < hi; j++)
					tmp[j] = maxof(tmp[j], r[j]);
			}
			for (ow = o0; ow < o1; ow++) {
				const float *t = tmp + (ow - o0) * s[1];
				float m = -INFINITY;
				for (j = 0; j < k[1]; j++)
					m = maxof(m, t[j * d[1]]);
				yc[oh * OW + ow] = m;
			}
		}
	}
}

void
dprt_maxpool2d_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W,
                   int64_t OH, int64_t OW, const int64_t *k, const int64_t *s,
                   const int64_t *p, const int64_t *d)
{
	Pool pl = { y, x, H, W, OH, OW, k, s, p, d };

	dprt_parallel(NC, maxpool_plane, &pl);
}

/* Average pooling (PyTorch's window clipping and divisors). */
void
dprt_avgpool2d_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W,
                   int64_t OH, int64_t OW, const int64_t *k, const int64_t *s,
                   const int64_t *p, int count_pad, int64_t divisor)
{
	int64_t c, oh, ow, ih, iw;

	for (c = 0; c < NC; c++) {
		const float *xc = x + c * H * W;
		for (oh = 0; oh < OH; oh++)
			for (ow = 0; ow < OW; ow++) {
				int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
				int64_t h1 = h0 + k[0], w1 = w0 + k[1], size, div;
				float sum = 0;
				if (h1 > H + p[0])
					h1 = H + p[0];
				if (w1 > W + p[1])
					w1 = W + p[1];
				size = (h1 - h0) * (w1 - w0);
				h0 = h0 < 0 ? 0 : h0;
				w0 = w0 < 0 ? 0 : w0;
				h1 = h1 > H ? H : h1;
				w1 = w1 > W ? W : w1;
				if (h0 >= h1 || w0 >= w1) {
					y[(c * OH + oh) * OW + ow] = 0;
					continue;
				}
				for (ih = h0; ih < h1; ih++)
					for (iw = w0; iw < w1; iw++)
						sum += xc[ih * W + iw];
				div = divisor ? divisor : count_pad ? size : (h1 - h0) * (w1 - w0);
				y[(c * OH + oh) * OW + ow] = sum / (float)div;
			}
	}
}

/* Adaptive average pooling (sum / kh / kw, as PyTorch divides). */
void
dprt_adaptive_avgpool2d_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W,
                            int64_t OH, int64_t OW)
{
	int64_t c, oh, ow, ih, iw;

	for (c = 0; c < NC; c++) {
		const float *xc = x + c * H * W;
		for (oh = 0; oh < OH; oh++) {
			int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
			for (ow = 0; ow < OW; ow++) {
				int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
				float sum = 0;
				for (ih = h0; ih < h1; ih++)
					for (iw = w0; iw < w1; iw++)
						sum += xc[ih * W + iw];
				y[(c * OH + oh) * OW + ow] = sum / (float)(h1 - h0) / (float)(w1 - w0);
			}
		}
	}
}

/* ---- convolution ---- */

static int
pointwise(const int64_t *k, const int64_t *s, const int64_t *p)
{
	return k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 && p[0] == 0 && p[1] == 0;
}

/* Floats of im2col scratch that dprt_conv2d_f32 needs. */
int64_t
dprt_conv2d_scratch(int64_t C, int64_t OH, int64_t OW, int64_t groups, const int64_t *k,
                    const int64_t *s, const int64_t *p)
{
	if ((groups == C && groups > 1) || pointwise(k, s, p))
		return 0;
	return C / groups * k[0] * k[1] * OH * OW;
}

/* col[(c·k0 + i)·k1 + j][oh·OW + ow] = x[c][oh·s0 - p0 + i·d0][ow·s1 - p1 + j·d1],
 * 0 in the padding. */
static void
im2col(float *col, const float *x, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
       const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d)
{
	int64_t c, i, j, oh, ow, P = OH * OW;

	for (c = 0; c < C; c++)
		for (i = 0; i < k[0]; i++)
			for (j = 0; j < k[1]; j++) {
				float *r = col + ((c * k[0] + i) * k[1] + j) * P;
				for (oh = 0; oh < OH; oh++) {
					int64_t ih = oh * s[0] - p[0] + i * d[0];
					float *ro = r + oh * OW;
					if (ih < 0 || ih >= H) {
						memset(ro, 0, (size_t)OW * sizeof *ro);
						continue;
					}
					const float *xr = x + (c * H + ih) * W;
					int64_t off = j * d[1] - p[1];
					if (s[1] == 1 && off >= 0 && OW + off <= W) {
						memcpy(ro, xr + off, (size_t)OW * sizeof *ro);
						continue;
					}
					for (ow = 0; ow < OW; ow++) {
						int64_t iw = ow * s[1] + off;
						ro[ow] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
					}
				}
			}
}

/* Depthwise convolution: output channel o reads input channel o / (O/C). */
static void
depthwise(float *y, const float *x, const float *w, const float *bias, int64_t N,
          int64_t C, int64_t H, int64_t W, int64_t O, int64_t OH, int64_t OW,
          const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d)
{
	int64_t n, o, oh, ow, i, j, m = O / C;

	for (n = 0; n < N; n++)
		for (o = 0; o < O; o++) {
			const float *xc = x + (n * C + o / m) * H * W, *wo = w + o * k[0] * k[1];
			float *yo = y + (n * O + o) * OH * OW;
			for (oh = 0; oh < OH; oh++)
				for (ow = 0; ow < OW; ow++) {
					float acc = 0;
					for (i = 0; i < k[0]; i++) {
						int64_t ih = oh * s[0] - p[0] + i * d[0];
						if (ih < 0 || ih >= H)
							continue;
						for (j = 0; j < k[1]; j++) {
							int64_t iw = ow * s[1] - p[1] + j * d[1];
							if (iw >= 0 && iw < W)
								acc += xc[ih * W + iw] * wo[i * k[1] + j];
						}
					}
					yo[oh * OW + ow] = acc + (bias ? bias[o] : 0.0f);
				}
		}
}

/* 2-D convolution (see dprt.h). */
void
dprt_conv2d_f32(float *y, const float *x, const float *w, const float *bias, int64_t N,
                int64_t C, int64_t H, int64_t W, int64_t O, int64_t OH, int64_t OW,
                int64_t groups, const int64_t *k, const int64_t *s, const int64_t *p,
                const int64_t *d, float *scratch)
{
	int64_t n, g, Cg = C / groups, Og = O / groups, K = Cg * k[0] * k[1], P = OH * OW;

	if (groups == C && groups > 1) {
		depthwise(y, x, w, bias, N, C, H, W, O, OH, OW, k, s, p, d);
		return;
	}
	for (n = 0; n < N; n++)
		for (g = 0; g < groups; g++) {
			const float *xg = x + (n * C + g * Cg) * H * W, *col = xg;
			if (!pointwise(k, s, p)) {
				im2col(scratch, xg, Cg, H, W, OH, OW, k, s, p, d);
				col = scratch;
			}
			dprt_sgemm(Og, P, K, 1.0f, w + g * Og * K, K, 1, col, P, 1,
			           bias ? 1.0f : 0.0f, bias ? bias + g * Og : NULL, 1, 0,
			           y + (n * O + g * Og) * P, P);
		}
}

/* ---- attention ---- */

/*
 * Scaled dot-product attention (see dprt.h), without the score matrix: a
 * task is one batch entry's block of QB query rows; it walks the keys in
 * blocks of KB (kept in cache across its rows) with the online softmax:
 * each row keeps its running maximum m and sum l and accumulates
 * Σ exp(s - m)·v in its output row, rescaled when m grows, divided by l at
 * the end.  Every row is computed the same way whatever the split.
 */
enum { QB = 16, KB = 64 };

typedef struct Attn {
	float *y;
	const float *q, *k, *v;
	int64_t L, S, E, Ev, nqb;
	float scale;
	int causal, dtype_mask, nb;
	const void *mask;
	const int64_t *bdim, *mbst;
	int64_t msl, mss;
	const int64_t *st;      /* NULL: dense; else for y, q, k, v in turn the nb
	                           batch strides then the row stride */
	float *kt;              /* the keys transposed, each block of KB as kt_block
	                           writes it, block jb of batch entry b at
	                           (b·nkb + jb)·E·KB; NULL: each task makes its own */
	int64_t nkb;            /* blocks of KB keys: ⌈S / KB⌉ */
} Attn;

/* Batch entry b of a task: where its rows of y, q, k, v start, their row
 * strides, its offset in the mask. */
typedef struct Ent {
	float *y;
	const float *q, *k, *v;
	int64_t ry, rq, rk, rv, mo;
} Ent;

static inline __attribute__((always_inline)) void
entry(const Attn *at, int64_t b, Ent *en)
{
	int64_t rem = b, ix, off[4] = { 0 };
	int d, t, nb = at->nb;

	en->mo = 0;
	for (d = nb - 1; d >= 0; d--) {   /* b's index in the batch shape */
		ix = rem % at->bdim[d];
		rem /= at->bdim[d];
		if (at->mask)
			en->mo += ix * at->mbst[d];
		if (at->st)
			for (t = 0; t < 4; t++)
				off[t] += ix * at->st[t * (nb + 1) + d];
	}
	if (at->st) {
		en->y = at->y + off[0], en->ry = at->st[nb];
		en->q = at->q + off[1], en->rq = at->st[2 * nb + 1];
		en->k = at->k + off[2], en->rk = at->st[3 * nb + 2];
		en->v = at->v + off[3], en->rv = at->st[4 * nb + 3];
		return;
	}
	en->y = at->y + b * at->L * at->Ev, en->ry = at->Ev;
	en->q = at->q + b * at->L * at->E, en->rq = at->E;
	en->k = at->k + b * at->S * at->E, en->rk = at->E;
	en->v = at->v + b * at->S * at->Ev, en->rv = at->Ev;
}

/* Whether a bool mask hides every key of [j0, j1) from rows [i0, i1):
 * the block is then skipped (each of its rows would skip it anyway). */
static inline int
hidden(const Attn *at, int64_t mo, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
	const uint8_t *m = at->mask;
	int64_t i, j;

	if (!m || at->dtype_mask != DPRT_BOOL)
		return 0;
	for (i = i0; i < i1; i++)
		for (j = j0; j < j1; j++)
			if (m[mo + i * at->msl + j * at->mss])
				return 0;
	return 1;
}

/* q·k over n in 16 independent lanes, summed pairwise. */
static inline __attribute__((always_inline)) float
adot(const float *restrict a, const float *restrict b, int64_t n)
{
	float s[16] = {0};
	int64_t i;
	int l, w;

	for (i = 0; i + 16 <= n; i += 16)
		for (l = 0; l < 16; l++)
			s[l] += a[i + l] * b[i + l];
	for (l = 0; i < n; i++, l++)
		s[l] += a[i] * b[i];
	for (w = 8; w > 0; w /= 2)
		for (l = 0; l < w; l++)
			s[l] += s[l + w];
	return s[0];
}

static inline __attribute__((always_inline)) void
attn_rows(void *arg, int64_t t)
{
	const Attn *at = arg;
	int64_t b = t / at->nqb, i0 = t % at->nqb * QB, i1 = i0 + QB, L = at->L, S = at->S;
	int64_t E = at->E, Ev = at->Ev, mo, i, j, j0, j1, e;
	float m[QB], l[QB], sc[KB];
	int r;
	Ent en;

	if (i1 > L)
		i1 = L;
	entry(at, b, &en);
	mo = en.mo;
	for (i = i0; i < i1; i++) {
		m[i - i0] = -INFINITY;
		l[i - i0] = 0;
		memset(en.y + i * en.ry, 0, sizeof(float) * (size_t)Ev);
	}
	for (j0 = 0; j0 < S; j0 += KB) {
		if (at->causal && j0 > i1 - 1)
			break;
		if (hidden(at, mo, i0, i1, j0, j0 + KB < S ? j0 + KB : S))
			continue;
		for (i = i0; i < i1; i++) {
			const float *qi = en.q + i * en.rq;
			float *yi = en.y + i * en.ry, mb = -INFINITY, mn, corr;
			r = (int)(i - i0);
			j1 = j0 + KB < S ? j0 + KB : S;
			if (at->causal && j1 > i + 1)
				j1 = i + 1;
			for (j = j0; j < j1; j++) {
				float sv = at->scale * adot(qi, en.k + j * en.rk, E);
				if (at->mask) {
					int64_t o = mo + i * at->msl + j * at->mss;
					if (at->dtype_mask == DPRT_BOOL)
						sv = ((const uint8_t *)at->mask)[o] ? sv : -INFINITY;
					else
						sv += ((const float *)at->mask)[o];
				}
				sc[j - j0] = sv;
				if (sv > mb || sv != sv)
					mb = sv;
			}
			if (j1 <= j0 || mb == -INFINITY)
				continue;   /* every key of the block masked */
			mn = mb > m[r] || mb != mb ? mb : m[r];
			corr = m[r] == -INFINITY ? 0.0f : expf(m[r] - mn);
			if (corr != 1.0f) {
				l[r] *= corr;
				for (e = 0; e < Ev; e++)
					yi[e] *= corr;
			}
			m[r] = mn;
			for (j = j0; j < j1; j++) {
				const float *vj = en.v + j * en.rv;
				float pj = expf(sc[j - j0] - mn);
				l[r] += pj;
				for (e = 0; e < Ev; e++)
					yi[e] += pj * vj[e];
			}
		}
	}
	for (i = i0; i < i1; i++) {
		float *yi = en.y + i * en.ry, inv;
		r = (int)(i - i0);
		if (m[r] == -INFINITY)   /* every key masked: zeros (already) */
			continue;
		inv = 1.0f / l[r];
		for (e = 0; e < Ev; e++)
			yi[e] *= inv;
	}
}

/* 16 floats in one vector (split into narrower ones by the compiler where
 * the target has no 512-bit registers); loaded and stored with memcpy, so
 * no alignment is assumed. */
typedef float v16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));

/* Lane numbers 0..15, f in every lane, and a lane-wise choice: a where
 * m's lane is set (all ones, as comparisons give), else b.  Macros, not
 * functions: a function returning a 64-byte vector has an ABI that
 * depends on the target, which the entry points choose. */
#define VLANE16 ((vi16){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 })
#define VSPLAT16(f) ((v16){ f, f, f, f, f, f, f, f, f, f, f, f, f, f, f, f })
#define VSEL16(m, a, b) ((v16)(((m) & (vi16)(a)) | (~(m) & (vi16)(b))))

/* A lane-wise choice of two vectors' 32 lanes (0-15 a's, 16-31 b's) by a
 * list of 16 constant lane numbers: clang's and GCC 12's
 * __builtin_shufflevector where the compiler has it, GCC's __builtin_shuffle
 * where not. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define VSHUF16(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#endif
#endif
#ifndef VSHUF16
#define VSHUF16(a, b, ...) __builtin_shuffle(a, b, (vi16){ __VA_ARGS__ })
#endif
#define T16_LO1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define T16_HI1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define T16_LO2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define T16_HI2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define T16_LO4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define T16_HI4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define T16_LO8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define T16_HI8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
/* Rows i and i + w (bit w of i clear) of r swap the lanes where bit w of
 * the lane and of the row differ. */
#define T16_STAGE(w, LO, HI)                                   \
	for (i0 = 0; i0 < 16; i0 += 2 * (w))                   \
		for (i = i0; i < i0 + (w); i++) {              \
			v16 a = r[i], c = r[i + (w)];           \
			r[i] = VSHUF16(a, c, LO);               \
			r[i + (w)] = VSHUF16(a, c, HI);         \
		}

/* r[0..15] transposed in place (r[i][j] <-> r[j][i]): a T16_STAGE for each
 * bit of the lane number. */
static inline __attribute__((always_inline)) void
transpose16(v16 *r)
{
	int i0, i;

	T16_STAGE(1, T16_LO1, T16_HI1)
	T16_STAGE(2, T16_LO2, T16_HI2)
	T16_STAGE(4, T16_LO4, T16_HI4)
	T16_STAGE(8, T16_LO8, T16_HI8)
}

/* kt[e·KB + jj] = k[jj·rk + e] for the n keys (at most KB) of a block,
 * zeros for the keys from n to the next multiple of 16: 16 keys by 16 of
 * their elements at a time through transpose16 where vec, element by
 * element otherwise and for the last E % 16. */
static inline __attribute__((always_inline)) void
kt_block(float *restrict kt, const float *k, int64_t rk, int64_t n, int64_t E, const int vec)
{
	int64_t e = 0, jj, nk = (n + 15) / 16 * 16;
	int t;

	if (vec)
		for (; e + 16 <= E; e += 16)
			for (jj = 0; jj < nk; jj += 16) {
				v16 r[16];
				for (t = 0; t < 16; t++)
					if (jj + t < n)
						memcpy(&r[t], k + (jj + t) * rk + e, sizeof r[t]);
					else
						r[t] = (v16){ 0 };
				transpose16(r);
				for (t = 0; t < 16; t++)
					memcpy(kt + (e + t) * KB + jj, &r[t], sizeof r[t]);
			}
	for (; e < E; e++)
		for (jj = 0; jj < nk; jj++)
			kt[e * KB + jj] = jj < n ? k[jj * rk + e] : 0.0f;
}

/* exp of the KB scores less their maximum (<= 0 or -inf, no NaN). */
static inline __attribute__((always_inline)) void
vexp_block(float *restrict p, const float *restrict x)
{
	int j;

	for (j = 0; j < KB; j++)
		p[j] = dprt_exp_le0(x[j]);
}

/*
 * The same as attn_rows for E <= EMAX, vectorized across keys: each block
 * of KB keys transposed (kt[e][j]; once for the whole call into the
 * caller's scratch where it gives one, else by each task for itself), so
 * a row's scores are E multiply-adds of whole vectors, as many vectors as
 * the block has keys (summed over e in order); the block's maximum and
 * NaN test in vectors; exp over the block at once (vexp_block; expf where
 * a score is NaN or +inf); Σ p·v with the row's output held in vectors
 * over up to 64 of its columns (pv_rows).  Every row is computed the same
 * way whatever the split and whoever transposed its keys.
 */
enum { EMAX = 256 };

/* acc[k][c] += q_k · (keys 16c to 16c + 15) for R rows (qr) and the NV
 * vectors of keys of the transposed block kt, summed over e in order;
 * NV and R constants where it is inlined. */
static inline __attribute__((always_inline)) void
qk_rows(v16 (*acc)[KB / 16], const float *const *qr, const float *kt, int64_t E, const int R,
        const int NV)
{
	v16 kv[KB / 16];
	int64_t e;
	int k, c;

	for (e = 0; e < E; e++) {
		for (c = 0; c < NV; c++)
			memcpy(&kv[c], kt + e * KB + c * 16, sizeof kv[c]);
		for (k = 0; k < R; k++) {
			float qe = qr[k][e];
			for (c = 0; c < NV; c++)
				acc[k][c] += qe * kv[c];
		}
	}
}

/* y = y·corr + Σ p·v for R rows (yr, corr, pr) over n keys of v (rows rv
 * apart), output columns e0 to e0 + 16·nc: each key's row of v loaded
 * once for all R rows.  nc and R constants where it is inlined, so that
 * the R·nc sums stay in registers. */
static inline __attribute__((always_inline)) void
pv_rows(float *const *yr, int64_t e0, const float *corr, const float (*pr)[KB],
        const float *v, int64_t rv, int64_t n, const int R, const int nc)
{
	v16 acc[4][4], vv[4];
	int64_t jj;
	int k, c;

	for (k = 0; k < R; k++)
		for (c = 0; c < nc; c++) {
			memcpy(&acc[k][c], yr[k] + e0 + c * 16, sizeof acc[k][c]);
			acc[k][c] *= corr[k];
		}
	for (jj = 0; jj < n; jj++) {
		for (c = 0; c < nc; c++)
			memcpy(&vv[c], v + jj * rv + c * 16, sizeof vv[c]);
		for (k = 0; k < R; k++) {
			float pj = pr[k][jj];
			for (c = 0; c < nc; c++)
				acc[k][c] += pj * vv[c];
		}
	}
	for (k = 0; k < R; k++)
		for (c = 0; c < nc; c++)
			memcpy(yr[k] + e0 + c * 16, &acc[k][c], sizeof acc[k][c]);
}

/* From here to the kernels' entry points, GCC may fuse a multiply and an
 * add into one FMA where the target has it (the AVX2 and AVX-512 entry
 * points): the same for every row whatever the split, so results still do
 * not depend on the thread count; they differ from the generic entry's in
 * the last bits. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif
static _Thread_local _Alignas(64) float attn_kt[EMAX * KB];

static inline __attribute__((always_inline)) void
attn_body(void *arg, int64_t t, const int R)
{
	const Attn *at = arg;
	int64_t b = t / at->nqb, i0 = t % at->nqb * QB, i1 = i0 + QB, L = at->L, S = at->S;
	int64_t E = at->E, Ev = at->Ev, mo, i, j0, j1, e, e0, n, nr[4];
	float m[QB], l[QB], corr[4] = {0};   /* set before use; some compilers cannot tell */
	_Alignas(64) float sc[4][KB], pr[4][KB];
	int r, jj, c, nc, nv, bad, g, k, act[4], same;
	const float *qr[4], *kt;
	float *yr[4];
	Ent en;

	if (E > EMAX) {
		attn_rows(arg, t);
		return;
	}
	if (i1 > L)
		i1 = L;
	entry(at, b, &en);
	mo = en.mo;
	for (i = i0; i < i1; i++) {
		m[i - i0] = -INFINITY;
		l[i - i0] = 0;
		memset(en.y + i * en.ry, 0, sizeof(float) * (size_t)Ev);
	}
	for (j0 = 0; j0 < S; j0 += KB) {
		if (at->causal && j0 > i1 - 1)
			break;
		j1 = j0 + KB < S ? j0 + KB : S;
		if (hidden(at, mo, i0, i1, j0, j1))
			continue;
		nv = (int)((j1 - j0 + 15) / 16);
		if (at->kt) {
			kt = at->kt + (b * at->nkb + j0 / KB) * E * KB;
		} else {
			kt_block(attn_kt, en.k + j0 * en.rk, en.rk, j1 - j0, E, R > 1);
			kt = attn_kt;
		}
		/* R rows at a time (each key vector loaded once for all of them);
		 * every row's sums in the same order as alone */
		for (i = i0; i < i1; i += R) {
			v16 acc[4][KB / 16], s16;
			g = i1 - i < R ? (int)(i1 - i) : R;
			for (k = 0; k < R; k++) {   /* rows past the block repeat its last */
				qr[k] = en.q + (i + (k < g ? k : g - 1)) * en.rq;
				yr[k] = en.y + (i + k) * en.ry;
				for (c = 0; c < KB / 16; c++)
					acc[k][c] = (v16){ 0 };
			}
			switch (nv) {   /* the vectors of 16 keys the block has, a constant */
			case 1: qk_rows(acc, qr, kt, E, R, 1); break;
			case 2: qk_rows(acc, qr, kt, E, R, 2); break;
			case 3: qk_rows(acc, qr, kt, E, R, 3); break;
			default: qk_rows(acc, qr, kt, E, R, KB / 16); break;
			}
			for (k = 0; k < g; k++) {   /* each row's softmax over the block */
				float mb = -INFINITY, mn, ls, *sk = sc[k], *pk = pr[k];
				r = (int)(i + k - i0);
				act[k] = 0;
				n = j1 - j0;
				if (at->causal && j0 + n > i + k + 1)
					n = i + k + 1 - j0;
				nr[k] = n;
				/* the block's scores in vectors: scaled, keys past n at -inf,
				 * their maximum and whether one is NaN lane-wise first */
				v16 sv[KB / 16], mv, nanv = { 0 };
				for (c = 0; c < KB / 16; c++) {
					sv[c] = acc[k][c] * at->scale;
					if ((c + 1) * 16 > n) {
						vi16 past = VLANE16 + c * 16 >= (int)n;
						sv[c] = VSEL16(past, VSPLAT16(-INFINITY), sv[c]);
					}
				}
				if (at->mask) {
					for (c = 0; c < KB / 16; c++)
						memcpy(sk + c * 16, &sv[c], sizeof sv[c]);
					for (jj = 0; jj < n; jj++) {
						int64_t o = mo + (i + k) * at->msl + (j0 + jj) * at->mss;
						if (at->dtype_mask == DPRT_BOOL)
							sk[jj] = ((const uint8_t *)at->mask)[o] ? sk[jj] : -INFINITY;
						else
							sk[jj] += ((const float *)at->mask)[o];
					}
					for (c = 0; c < KB / 16; c++)
						memcpy(&sv[c], sk + c * 16, sizeof sv[c]);
				}
				mv = sv[0];
				for (c = 0; c < KB / 16; c++) {
					vi16 gt = sv[c] > mv;
					mv = VSEL16(gt, sv[c], mv);
					nanv = (v16)((vi16)nanv | (sv[c] != sv[c]));
				}
				bad = 0;
				for (c = 0; c < 16; c++) {
					mb = mv[c] > mb ? mv[c] : mb;
					bad |= ((vi16)nanv)[c] != 0;
				}
				if (bad)
					mb = NAN;
				if (n <= 0 || mb == -INFINITY)
					continue;   /* every key of the block masked */
				act[k] = 1;
				mn = mb > m[r] || mb != mb ? mb : m[r];
				corr[k] = m[r] == -INFINITY ? 0.0f : expf(m[r] - mn);
				m[r] = mn;
				for (c = 0; c < KB / 16; c++) {
					sv[c] -= mn;
					memcpy(sk + c * 16, &sv[c], sizeof sv[c]);
				}
				if (bad || mn == INFINITY)
					for (jj = 0; jj < KB; jj++)
						pk[jj] = jj < n ? expf(sk[jj]) : 0.0f;
				else
					vexp_block(pk, sk);
				s16 = (v16){ 0 };
				for (c = 0; c < KB / 16; c++) {
					v16 pv;
					memcpy(&pv, pk + c * 16, sizeof pv);
					s16 += pv;
				}
				ls = 0;
				for (c = 0; c < 16; c++)
					ls += s16[c];
				l[r] = l[r] * corr[k] + ls;
			}
			same = g == R;
			for (k = 0; k < g; k++)
				same &= act[k] && nr[k] == nr[0];
			/* y = y·corr + Σ p·v, 64 columns (4 vectors) at a time: all R
			 * rows together when they take the same keys, else row by row */
			for (e0 = 0; e0 + 16 <= Ev; e0 += 64) {
				const float *vb = en.v + j0 * en.rv + e0;
				nc = (int)((Ev - e0) / 16 < 4 ? (Ev - e0) / 16 : 4);
				if (same && nc == 4)
					pv_rows(yr, e0, corr, pr, vb, en.rv, nr[0], R, 4);
				else if (same)
					pv_rows(yr, e0, corr, pr, vb, en.rv, nr[0], R, nc);
				else
					for (k = 0; k < g; k++)
						if (act[k] && nc == 4)
							pv_rows(yr + k, e0, corr + k, pr + k, vb, en.rv, nr[k], 1, 4);
						else if (act[k])
							pv_rows(yr + k, e0, corr + k, pr + k, vb, en.rv, nr[k], 1, nc);
			}
			for (k = 0; k < g; k++) {
				if (!act[k])
					continue;
				for (e = Ev / 16 * 16; e < Ev; e++) {
					float ye = yr[k][e] * corr[k];
					for (jj = 0; jj < nr[k]; jj++)
						ye += pr[k][jj] * en.v[(j0 + jj) * en.rv + e];
					yr[k][e] = ye;
				}
			}
		}
	}
	for (i = i0; i < i1; i++) {
		float *yi = en.y + i * en.ry, inv;
		r = (int)(i - i0);
		if (m[r] == -INFINITY)   /* every key masked: zeros (already) */
			continue;
		inv = 1.0f / l[r];
		for (e = 0; e < Ev; e++)
			yi[e] *= inv;
	}
}

/* Task t of the keys' transposition: block t % nkb of batch entry t / nkb
 * into at->kt, as the attention tasks would each make it (vec: 16 by 16). */
static inline __attribute__((always_inline)) void
kt_body(void *arg, int64_t t, const int vec)
{
	const Attn *at = arg;
	int64_t b = t / at->nkb, j0 = t % at->nkb * KB, n = at->S - j0 < KB ? at->S - j0 : KB;
	Ent en;

	entry(at, b, &en);
	kt_block(at->kt + t * at->E * KB, en.k + j0 * en.rk, en.rk, n, at->E, vec);
}

static void
attn_generic(void *arg, int64_t t)
{
	attn_body(arg, t, 1);
}

static void
kt_generic(void *arg, int64_t t)
{
	kt_body(arg, t, 0);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void
attn_avx2(void *arg, int64_t t)
{
	attn_body(arg, t, 2);
}

__attribute__((target("avx512f,avx2,fma")))
static void
attn_avx512(void *arg, int64_t t)
{
	attn_body(arg, t, 4);
}

__attribute__((target("avx2,fma")))
static void
kt_avx2(void *arg, int64_t t)
{
	kt_body(arg, t, 1);
}

__attribute__((target("avx512f,avx2,fma")))
static void
kt_avx512(void *arg, int64_t t)
{
	kt_body(arg, t, 1);
}
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

size_t
dprt_sdpa_scratch_floats(int64_t B, int64_t S, int64_t E)
{
	return E > EMAX ? 0 : (size_t)(B * ((S + KB - 1) / KB) * KB * E);
}

void
dprt_sdpa_f32(float *y, const float *q, const float *k, const float *v, int64_t B,
              int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int causal,
              const void *mask, int dtype_mask, int nb, const int64_t *bdim,
              const int64_t *mbst, int64_t msl, int64_t mss, float *scratch)
{
	dprt_sdpa_strided_f32(y, q, k, v, B, L, S, E, Ev, scale, causal, mask, dtype_mask, nb, bdim,
	                      mbst, msl, mss, NULL, scratch);
}

void
dprt_sdpa_strided_f32(float *y, const float *q, const float *k, const float *v, int64_t B,
                      int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int causal,
                      const void *mask, int dtype_mask, int nb, const int64_t *bdim,
                      const int64_t *mbst, int64_t msl, int64_t mss, const int64_t *st,
                      float *scratch)
{
	Attn at = { y, q, k, v, L, S, E, Ev, (L + QB - 1) / QB, scale, causal, dtype_mask, nb,
	            mask, bdim, mbst, msl, mss, st, E <= EMAX && S > 0 ? scratch : NULL,
	            (S + KB - 1) / KB };
	void (*fn)(void *, int64_t) = attn_generic, (*kf)(void *, int64_t) = kt_generic;

#if defined(__x86_64__)
	if (dprt_isa() == DPRT_ISA_AVX512)
		fn = attn_avx512, kf = kt_avx512;
	else if (dprt_isa() == DPRT_ISA_AVX2)
		fn = attn_avx2, kf = kt_avx2;
#endif
	if (at.kt)   /* the keys transposed once, not once for each block of queries */
		dprt_parallel(B * at.nkb, kf, &at);
	dprt_parallel(B * at.nqb, fn, &at);
}
