/* nn.c: CPU kernels of the neural-network ops: reductions, batch/layer/RMS
 * norms, 2-D pooling, 2-D convolution (im2col + dprt_sgemm, or direct for
 * depthwise) and scaled dot-product attention. */
#include <math.h>
#include <string.h>
#include "dprtint.h"

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

/* Inference batch norm with per-channel scale and shift (PyTorch's order). */
void
dprt_batchnorm_f32(float *y, const float *x, const float *w, const float *b,
                   const float *mean, const float *var, float eps, int64_t N, int64_t C,
                   int64_t inner)
{
	int64_t n, c, i;

	for (c = 0; c < C; c++) {
		float invstd = 1.0f / sqrtf(var[c] + eps);
		float alpha = invstd * w[c], beta = b[c] - mean[c] * alpha;
		for (n = 0; n < N; n++) {
			const float *xp = x + (n * C + c) * inner;
			float *yp = y + (n * C + c) * inner;
			for (i = 0; i < inner; i++)
				yp[i] = xp[i] * alpha + beta;
		}
	}
}

/* Layer norm: mean and variance of each row in f64, then
 * y = (x·rstd - mean·rstd)·w + b. */
void
dprt_layernorm_f32(float *y, const float *x, const float *w, const float *b,
                   int64_t outer, int64_t n, float eps)
{
	int64_t o, i;

	for (o = 0; o < outer; o++) {
		const float *xp = x + o * n;
		float *yp = y + o * n;
		double s = 0, ss = 0, m;
		float rstd, bias;

		for (i = 0; i < n; i++)
			s += xp[i];
		m = n > 0 ? s / (double)n : 0;
		for (i = 0; i < n; i++)
			ss += (xp[i] - m) * (xp[i] - m);
		rstd = (float)(1.0 / sqrt(ss / (double)(n > 0 ? n : 1) + eps));
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

/* RMS norm, as PyTorch composes it: x · rsqrt(mean(x²) + eps) · w. */
void
dprt_rmsnorm_f32(float *y, const float *x, const float *w, int64_t outer, int64_t n,
                 float eps)
{
	int64_t o, i;

	for (o = 0; o < outer; o++) {
		const float *xp = x + o * n;
		float *yp = y + o * n;
		double ss = 0;
		float r;

		for (i = 0; i < n; i++)
			ss += (double)(xp[i] * xp[i]);
		r = 1.0f / sqrtf((float)(ss / (double)(n > 0 ? n : 1)) + eps);
		for (i = 0; i < n; i++)
			yp[i] = w ? xp[i] * r * w[i] : xp[i] * r;
	}
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

/* Scaled dot-product attention (see dprt.h). */
void
dprt_sdpa_f32(float *y, const float *q, const float *k, const float *v, int64_t B,
              int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int causal,
              const void *mask, int dtype_mask, int nb, const int64_t *bdim,
              const int64_t *mbst, int64_t msl, int64_t mss, float *scratch)
{
	int64_t bidx[DPRT_MAXRANK] = { 0 }, b, i, j;

	for (b = 0; b < B; b++) {
		int64_t mo = mask ? offset(nb, bidx, mbst) : 0;
		/* scores = scale · q kᵀ */
		dprt_sgemm(L, S, E, scale, q + b * L * E, E, 1, k + b * S * E, 1, E, 0.0f, NULL, 0,
		           0, scratch, S);
		for (i = 0; i < L; i++) {
			float *r = scratch + i * S, m = -INFINITY, sum = 0, inv;
			for (j = 0; j < S; j++) {
				int64_t at = mo + i * msl + j * mss;
				if (causal && j > i)
					r[j] = -INFINITY;
				else if (mask && dtype_mask == DPRT_BOOL)
					r[j] = ((const uint8_t *)mask)[at] ? r[j] : -INFINITY;
				else if (mask)
					r[j] += ((const float *)mask)[at];
				if (r[j] > m || r[j] != r[j])
					m = r[j];
			}
			if (m == -INFINITY) {   /* every key masked: zeros */
				memset(r, 0, (size_t)S * sizeof *r);
				continue;
			}
			for (j = 0; j < S; j++) {
				r[j] = expf(r[j] - m);
				sum += r[j];
			}
			inv = 1.0f / sum;
			for (j = 0; j < S; j++)
				r[j] *= inv;
		}
		dprt_sgemm(L, Ev, S, 1.0f, scratch, S, 1, v + b * S * Ev, Ev, 1, 0.0f, NULL, 0, 0,
		           y + b * L * Ev, Ev);
		if (nb > 0)
			next(nb, bidx, bdim);
	}
}
