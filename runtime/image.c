/* image.c: image kernels: PIL-exact bilinear resize with a centre crop,
 * and top-k selection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dprtint.h"

enum {
	PREC = 22,             /* fraction bits of the fixed-point weights */
	MAXSIDE = 1 << 24      /* the largest resize size (formats/image.c) */
};

/* One pass of the resize along an axis: for each output index j of the
 * window, the first input index lo[j], the count n[j] and n[j] weights at
 * w[j * kmax]. */
typedef struct Pass {
	int64_t *lo, *n;
	int32_t *w;
	int kmax;
} Pass;

static double
tri(double x)
{
	if (x < 0)
		x = -x;
	return x < 1 ? 1 - x : 0;
}

/* The weights that make outputs [from, from + cnt) of out from in samples:
 * output j is centred at input (j + 0.5)·scale; the triangle spans
 * ±max(scale, 1) there; weights sum to 1, then become fixed point. */
static int
pass(Pass *p, int64_t in, int64_t out, int64_t from, int64_t cnt)
{
	double scale = (double)in / (double)out, fs = scale < 1 ? 1 : scale;
	double support = fs, ss = 1 / fs, wt[64], *w = wt;
	int64_t j, t;

	p->kmax = (int)ceil(support) * 2 + 1;
	p->lo = malloc(sizeof *p->lo * (size_t)cnt);
	p->n = malloc(sizeof *p->n * (size_t)cnt);
	p->w = malloc(sizeof *p->w * (size_t)cnt * (size_t)p->kmax);
	if (p->kmax > 64)
		w = malloc(sizeof *w * (size_t)p->kmax);
	if (!p->lo || !p->n || !p->w || !w) {
		if (w != wt)
			free(w);
		return -1;
	}
	for (j = 0; j < cnt; j++) {
		double c = ((double)(from + j) + 0.5) * scale, sum = 0;
		int64_t lo = (int64_t)(c - support + 0.5), hi = (int64_t)(c + support + 0.5);
		int32_t *k = p->w + j * p->kmax;

		if (lo < 0)
			lo = 0;
		if (hi > in)
			hi = in;
		if (hi - lo > p->kmax)
			hi = lo + p->kmax;
		for (t = 0; t < hi - lo; t++)
			sum += w[t] = tri(((double)(t + lo) - c + 0.5) * ss);
		for (t = 0; t < hi - lo; t++) {
			double f = sum != 0 ? w[t] / sum : w[t];
			k[t] = (int32_t)(f < 0 ? -0.5 + f * (1 << PREC) : 0.5 + f * (1 << PREC));
		}
		p->lo[j] = lo;
		p->n[j] = hi - lo;
	}
	if (w != wt)
		free(w);
	return 0;
}

static void
freepass(Pass *p)
{
	free(p->lo);
	free(p->n);
	free(p->w);
}

static uint8_t
clip8(int64_t v)
{
	if (v <= 0)
		return 0;
	if (v >= (int64_t)256 << PREC)
		return 255;
	return (uint8_t)(v >> PREC);
}

/* The window [top, top + ch) × [left, left + cw) of x resized to oh × ow:
 * horizontal pass over the rows the vertical pass reads (into tmp), then
 * the vertical pass; an axis whose size does not change is not filtered
 * (PIL skips it too: its weights would be the identity). */
static int
resize(uint8_t *y, const dprt_image *x, int64_t oh, int64_t ow, int64_t top, int64_t left,
       int64_t ch, int64_t cw)
{
	Pass h = {0}, v = {0};
	int64_t c = x->c, r0, r1, i, j, t, k;
	uint8_t *tmp = NULL;
	int rc = -1;

	if (x->h != oh) {
		if (pass(&v, x->h, oh, top, ch) != 0)
			goto done;
		r0 = v.lo[0];
		r1 = v.lo[ch - 1] + v.n[ch - 1];
	} else {
		r0 = top;
		r1 = top + ch;
	}
	if (x->w != ow && pass(&h, x->w, ow, left, cw) != 0)
		goto done;
	tmp = malloc((size_t)(r1 - r0) * (size_t)cw * (size_t)c + 1);
	if (!tmp)
		goto done;
	for (i = r0; i < r1; i++) {
		const uint8_t *row = x->data + (size_t)i * (size_t)x->w * (size_t)c;
		uint8_t *o = tmp + (size_t)(i - r0) * (size_t)cw * (size_t)c;
		if (x->w == ow) {
			memcpy(o, row + left * c, (size_t)(cw * c));
			continue;
		}
		for (j = 0; j < cw; j++) {
			const int32_t *w = h.w + j * h.kmax;
			const uint8_t *src = row + h.lo[j] * c;
			for (k = 0; k < c; k++) {
				int64_t acc = (int64_t)1 << (PREC - 1);
				for (t = 0; t < h.n[j]; t++)
					acc += (int64_t)src[t * c + k] * w[t];
				o[j * c + k] = clip8(acc);
			}
		}
	}
	for (i = 0; i < ch; i++) {
		uint8_t *o = y + (size_t)i * (size_t)cw * (size_t)c;
		if (x->h == oh) {
			memcpy(o, tmp + (size_t)i * (size_t)cw * (size_t)c, (size_t)(cw * c));
			continue;
		}
		const int32_t *w = v.w + i * v.kmax;
		const uint8_t *src = tmp + (size_t)(v.lo[i] - r0) * (size_t)cw * (size_t)c;
		for (j = 0; j < cw * c; j++) {
			int64_t acc = (int64_t)1 << (PREC - 1);
			for (t = 0; t < v.n[i]; t++)
				acc += (int64_t)src[t * cw * c + j] * w[t];
			o[j] = clip8(acc);
		}
	}
	rc = 0;
done:
	freepass(&h);
	freepass(&v);
	free(tmp);
	return rc;
}

void
dprt_resize_size(int64_t h, int64_t w, const int64_t *size, int nsize, int64_t *oh,
                 int64_t *ow)
{
	int64_t s, sh, lo, l;

	if (nsize == 2) {
		*oh = size[0], *ow = size[1];
		return;
	}
	s = size[0];
	sh = w <= h ? w : h;
	lo = w <= h ? h : w;
	l = (int64_t)((double)s * (double)lo / (double)sh);
	*oh = w <= h ? l : s;
	*ow = w <= h ? s : l;
}

int64_t
dprt_center(int64_t m, int64_t n)
{
	int64_t d = m - n, q = d / 2;

	return d % 2 == 0 || q % 2 == 0 ? q : q + 1;
}

int
dprt_resize_u8(uint8_t *y, const dprt_image *x, const int64_t *size, int nsize,
               int64_t ch, int64_t cw, const char *what, char *err, size_t errn)
{
	int64_t oh, ow, n;

	if (!x->data || x->h < 1 || x->w < 1 || x->c < 1 ||
	    dprt_numel(3, (const int64_t[]){x->h, x->w, x->c}, &n) < 0 || n > ((int64_t)1 << 40))
		return dprt_errf(err, errn, "%s: bad image size %lldx%lldx%lld", what,
		                 (long long)x->h, (long long)x->w, (long long)x->c);
	dprt_resize_size(x->h, x->w, size, nsize, &oh, &ow);
	if (oh < ch || ow < cw)
		return dprt_errf(err, errn, "%s: the %lldx%lld image resized to %lldx%lld is "
		                 "smaller than the %lldx%lld crop", what, (long long)x->h,
		                 (long long)x->w, (long long)oh, (long long)ow, (long long)ch,
		                 (long long)cw);
	if (ch == 0 || cw == 0)
		return 0;
	if (resize(y, x, oh, ow, dprt_center(oh, ch), dprt_center(ow, cw), ch, cw) != 0)
		return dprt_errf(err, errn, "%s: out of memory resizing a %lldx%lld image", what,
		                 (long long)x->h, (long long)x->w);
	return 0;
}

/* ---- top-k ---- */

/* Whether a ranks above b: NaN above every number. */
static int
above(float a, float b)
{
	return isnan(a) ? !isnan(b) : a > b;
}

void
dprt_topk_f32(float *y, int64_t *idx, const float *x, int64_t outer, int64_t n,
              int64_t inner, int64_t k)
{
	int64_t o, i, j, m, p, q;

	for (o = 0; o < outer; o++)
		for (i = 0; i < inner; i++) {
			float *yv = y + o * k * inner + i;
			int64_t *yi = idx + o * k * inner + i;
			const float *xv = x + o * n * inner + i;
			for (m = j = 0; j < n; j++) {
				float v = xv[j * inner];
				if (m == k && !above(v, yv[(k - 1) * inner]))
					continue;
				for (p = 0; p < m && !above(v, yv[p * inner]); p++)
					;   /* after the equal ones: they have lower indices */
				if (m < k)
					m++;
				for (q = m - 1; q > p; q--) {
					yv[q * inner] = yv[(q - 1) * inner];
					yi[q * inner] = yi[(q - 1) * inner];
				}
				yv[p * inner] = v;
				yi[p * inner] = j;
			}
		}
}
