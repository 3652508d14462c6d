/* kernels.c: CPU kernels other than GEMM and casts: normalize, permute, argmax,
 * softmax, broadcasting binary ops and relu. */
#include <math.h>
#include <string.h>
#include "dprtint.h"

/* y = (x·scale - mean[c]) / std[c] over x viewed as [outer, C, inner]. */
void
dprt_normalize(float *y, const void *x, int dtype_x, int64_t outer, int64_t C,
               int64_t inner, float scale, const float *mean, const float *std)
{
	const uint8_t *xu;
	const float *xf;
	int64_t o, c, i, base;
	float m, s;

	xu = x;
	xf = x;
	for (o = 0; o < outer; o++)
		for (c = 0; c < C; c++) {
			m = mean[c];
			s = std[c];
			base = (o * C + c) * inner;
			if (dtype_x == DPRT_U8)
				for (i = 0; i < inner; i++)
					y[base + i] = ((float)xu[base + i] * scale - m) / s;
			else
				for (i = 0; i < inner; i++)
					y[base + i] = (xf[base + i] * scale - m) / s;
		}
}

/* ---- permute ---- */

enum { TILE = 16 };	/* side of the square tiles of a strided transpose */

/* Copies n elements of size es from x (stride sx elements) to dense y.  The
 * copies are fixed-size memcpy (plain moves once compiled), so any element
 * type may pass through without breaking aliasing rules. */
static void
gather(char *y, const char *x, int64_t sx, int64_t n, int es)
{
	int64_t i;

#define G(ES) \
	for (i = 0; i < n; i++) \
		memcpy(y + i * (ES), x + i * sx * (ES), (ES)); \
	break;
	switch (es) {
	case 1: G(1)
	case 2: G(2)
	case 4: G(4)
	case 8: G(8)
	default: G(es)
	}
#undef G
}

/* One tile of a 2-D transpose: y[a·sya + b] = x[a + b·sxb], a < na, b < nb. */
static void
tile(char *y, int64_t sya, const char *x, int64_t sxb, int64_t na, int64_t nb,
     int es)
{
	int64_t a, b;

#define T2(ES) \
	for (a = 0; a < na; a++) \
		for (b = 0; b < nb; b++) \
			memcpy(y + (a * sya + b) * (ES), x + (a + b * sxb) * (ES), (ES)); \
	break;
	switch (es) {
	case 1: T2(1)
	case 2: T2(2)
	case 4: T2(4)
	case 8: T2(8)
	default: T2(es)
	}
#undef T2
}

/*
 * y's axis i is x's axis perm[i].  Axes of size 1 are dropped and output axes
 * that stay adjacent in x are merged, so the loops run over the fewest axes.
 * If the last axis is contiguous in x, rows are memcpy'd; if x's contiguous
 * axis is elsewhere, the two are transposed tile by tile; else a strided
 * gather.  perm is assumed to be a permutation of 0..rank-1.
 */
enum { PCHUNK = 16384 };   /* elements per task at least */

static void perm_run(char *yc, const char *xc, int es, int r, const int64_t *n,
                     const int64_t *s);

typedef struct Perm {
	char *y;
	const char *x;
	int es, r;
	int64_t n[DPRT_MAXRANK], s[DPRT_MAXRANK];
	int64_t per;   /* indices of output axis 0 per task */
} Perm;

static void
perm_task(void *arg, int64_t t)
{
	const Perm *p = arg;
	int64_t n[DPRT_MAXRANK], i0 = t * p->per, inner = 1;
	int k;

	memcpy(n, p->n, sizeof n);
	n[0] = p->n[0] - i0 < p->per ? p->n[0] - i0 : p->per;
	for (k = 1; k < p->r; k++)
		inner *= n[k];
	perm_run(p->y + i0 * inner * p->es, p->x + i0 * p->s[0] * p->es, p->es, p->r, n, p->s);
}

void
dprt_permute(void *y, const void *x, int es, int rank, const int64_t *dim,
             const int64_t *perm)
{
	int64_t xs[DPRT_MAXRANK], n[DPRT_MAXRANK], s[DPRT_MAXRANK];
	int64_t total;
	int r, i;
	char *yc;
	const char *xc;

	yc = y;
	xc = x;
	total = 1;
	for (i = rank - 1; i >= 0; i--) {
		xs[i] = total;
		total *= dim[i];
	}
	if (total == 0)
		return;
	/* output axes as (size, x stride), size-1 axes dropped, merged */
	r = 0;
	for (i = 0; i < rank; i++) {
		int64_t d = dim[perm[i]], st = xs[perm[i]];
		if (d == 1)
			continue;
		if (r > 0 && s[r - 1] == st * d) {
			n[r - 1] *= d;
			s[r - 1] = st;
		} else {
			n[r] = d;
			s[r] = st;
			r++;
		}
	}
	if (r <= 1) {
		memcpy(y, x, (size_t)total * (size_t)es);
		return;
	}
	if (total >= 2 * PCHUNK && n[0] > 1 && dprt_threads() > 1) {   /* split output axis 0 */
		Perm pm = { yc, xc, es, r, {0}, {0}, 0 };
		int64_t inner = total / n[0];
		memcpy(pm.n, n, sizeof n);
		memcpy(pm.s, s, sizeof s);
		pm.per = (PCHUNK + inner - 1) / inner;
		dprt_parallel((n[0] + pm.per - 1) / pm.per, perm_task, &pm);
		return;
	}
	perm_run(yc, xc, es, r, n, s);
}

static void
perm_run(char *yc, const char *xc, int es, int r, const int64_t *n, const int64_t *s)
{
	int64_t ys[DPRT_MAXRANK], idx[DPRT_MAXRANK];
	int64_t total, run, xo, yo, a0, b0, na, nb;
	int i, j, k;

	for (total = 1, k = 0; k < r; k++)
		total *= n[k];
	ys[r - 1] = 1;
	for (i = r - 2; i >= 0; i--)
		ys[i] = ys[i + 1] * n[i + 1];
	for (j = 0; j < r && s[j] != 1; j++)
		;	/* j: the output axis that is contiguous in x */

	if (s[r - 1] == 1) {		/* contiguous rows of n[r-1] */
		run = n[r - 1] * es;
		memset(idx, 0, sizeof idx);
		for (yo = 0; yo < total; yo += n[r - 1]) {
			xo = 0;
			for (k = 0; k < r - 1; k++)
				xo += idx[k] * s[k];
			memcpy(yc + yo * es, xc + xo * es, (size_t)run);
			for (k = r - 2; k >= 0 && ++idx[k] == n[k]; k--)
				idx[k] = 0;
		}
		return;
	}
	if (j == r) {			/* cannot happen for a dense x */
		memset(idx, 0, sizeof idx);
		for (yo = 0; yo < total; yo += n[r - 1]) {
			xo = 0;
			for (k = 0; k < r - 1; k++)
				xo += idx[k] * s[k];
			gather(yc + yo * es, xc + xo * es, s[r - 1], n[r - 1], es);
			for (k = r - 2; k >= 0 && ++idx[k] == n[k]; k--)
				idx[k] = 0;
		}
		return;
	}
	/* tiled transpose of output axes j (x stride 1) and r-1 (y stride 1),
	 * for every index of the other axes */
	memset(idx, 0, sizeof idx);
	for (;;) {
		xo = yo = 0;
		for (k = 0; k < r - 1; k++)
			if (k != j) {
				xo += idx[k] * s[k];
				yo += idx[k] * ys[k];
			}
		for (a0 = 0; a0 < n[j]; a0 += TILE) {
			na = n[j] - a0 < TILE ? n[j] - a0 : TILE;
			for (b0 = 0; b0 < n[r - 1]; b0 += TILE) {
				nb = n[r - 1] - b0 < TILE ? n[r - 1] - b0 : TILE;
				tile(yc + (yo + a0 * ys[j] + b0) * es, ys[j],
				     xc + (xo + a0 + b0 * s[r - 1]) * es, s[r - 1],
				     na, nb, es);
			}
		}
		for (k = r - 2; k >= 0; k--) {
			if (k == j)
				continue;
			if (++idx[k] < n[k])
				break;
			idx[k] = 0;
		}
		if (k < 0)
			break;
	}
}

/* ---- reductions along the middle axis of [outer, n, inner] ---- */

/* First index of the maximum; a NaN beats everything, the first NaN wins. */
void
dprt_argmax_f32(int64_t *y, const float *x, int64_t outer, int64_t n, int64_t inner)
{
	int64_t o, k, i, best;
	const float *xo;
	float bv, v;

	for (o = 0; o < outer; o++) {
		xo = x + o * n * inner;
		if (inner == 1) {
			best = 0;
			bv = n > 0 ? xo[0] : 0;
			for (k = 1; k < n && bv == bv; k++) {
				v = xo[k];
				if (v > bv || v != v) {
					bv = v;
					best = k;
				}
			}
			y[o] = best;
			continue;
		}
		for (i = 0; i < inner; i++)
			y[o * inner + i] = 0;
		for (k = 1; k < n; k++)
			for (i = 0; i < inner; i++) {
				bv = xo[y[o * inner + i] * inner + i];
				v = xo[k * inner + i];
				if (bv == bv && (v > bv || v != v))
					y[o * inner + i] = k;
			}
	}
}

/* Numerically stable softmax: exp(x - max) / sum; the sum is kept in f32
 * lanes per inner index (the inner == 1 path sums in f64). */
static void
softmax_rows(float *y, const float *x, int64_t o0, int64_t o1, int64_t n, int64_t inner)
{
	enum { W = 256 };	/* inner columns per pass (stack tile) */
	float m[W], sum[W];
	int64_t o, k, i, i0, w;
	const float *xo;
	float *yo, mx, r;
	double s;

	for (o = o0; o < o1; o++) {
		xo = x + o * n * inner;
		yo = y + o * n * inner;
		if (inner == 1) {
			if (n <= 0)
				continue;
			mx = xo[0];
			for (k = 1; k < n; k++)
				mx = xo[k] > mx ? xo[k] : mx;
			for (k = 0; k < n; k++)	/* a NaN makes the row NaN */
				if (xo[k] != xo[k])
					mx = NAN;
			s = 0;
			for (k = 0; k < n; k++) {
				yo[k] = expf(xo[k] - mx);
				s += yo[k];
			}
			r = (float)(1.0 / s);
			for (k = 0; k < n; k++)
				yo[k] *= r;
			continue;
		}
		for (i0 = 0; i0 < inner; i0 += W) {
			w = inner - i0 < W ? inner - i0 : W;
			for (i = 0; i < w; i++) {
				m[i] = -INFINITY;
				sum[i] = 0;
			}
			for (k = 0; k < n; k++)
				for (i = 0; i < w; i++) {
					float v = xo[k * inner + i0 + i];
					m[i] = v > m[i] || v != v ? v : m[i];
				}
			for (k = 0; k < n; k++)
				for (i = 0; i < w; i++) {
					float e = expf(xo[k * inner + i0 + i] - m[i]);
					yo[k * inner + i0 + i] = e;
					sum[i] += e;
				}
			for (i = 0; i < w; i++)
				sum[i] = 1.0f / sum[i];
			for (k = 0; k < n; k++)
				for (i = 0; i < w; i++)
					yo[k * inner + i0 + i] *= sum[i];
		}
	}
}

typedef struct Smax {
	float *y;
	const float *x;
	int64_t outer, n, inner, per;
} Smax;

static void
softmax_task(void *arg, int64_t t)
{
	const Smax *c = arg;
	int64_t o1 = (t + 1) * c->per < c->outer ? (t + 1) * c->per : c->outer;

	softmax_rows(c->y, c->x, t * c->per, o1, c->n, c->inner);
}

/* The rows (outer) in tasks of at least 16384 elements on the pool: each
 * row's arithmetic is the same at any split. */
void
dprt_softmax_f32(float *y, const float *x, int64_t outer, int64_t n, int64_t inner)
{
	int64_t row = n * inner > 0 ? n * inner : 1;
	Smax c = { y, x, outer, n, inner, (16384 + row - 1) / row };

	if (outer < 2 || dprt_threads() == 1)
		softmax_rows(y, x, 0, outer, n, inner);
	else
		dprt_parallel((outer + c.per - 1) / c.per, softmax_task, &c);
}

/* ---- elementwise ---- */

/* One row of n outputs: y[i] = a[i·sa] op b[i·sb]. */
static void
binrow(int op, float *y, const float *a, int64_t sa, const float *b, int64_t sb,
       int64_t n, float alpha)
{
	int64_t i;

#define LOOPS(E) \
	if (sa == 1 && sb == 1) \
		for (i = 0; i < n; i++) { float u = a[i], v = b[i]; y[i] = E; } \
	else if (sa == 1 && sb == 0) { \
		float v = b[0]; \
		for (i = 0; i < n; i++) { float u = a[i]; y[i] = E; } \
	} else if (sa == 0 && sb == 1) { \
		float u = a[0]; \
		for (i = 0; i < n; i++) { float v = b[i]; y[i] = E; } \
	} else \
		for (i = 0; i < n; i++) { float u = a[i * sa], v = b[i * sb]; y[i] = E; }

	switch (op) {
	case DPRT_ADD:
		if (alpha == 1.0f) {
			LOOPS(u + v)
		} else {
			LOOPS(u + alpha * v)
		}
		break;
	case DPRT_SUB: LOOPS(u - v) break;
	case DPRT_MUL: LOOPS(u * v) break;
	case DPRT_DIV: LOOPS(u / v) break;
	default: break;
	}
#undef LOOPS
}

/*
 * Broadcasting binary op over the output shape dim (dense C order).  Axes of
 * size 1 are dropped and neighbours merged where both a's and b's strides
 * allow, so the all-contiguous case is one loop over every element.
 */
typedef struct Bin {
	int op, r;
	float *y;
	const float *a, *b;
	float alpha;
	int64_t n[DPRT_MAXRANK], as[DPRT_MAXRANK], bs[DPRT_MAXRANK];
	int64_t per;   /* rows per task, or (one row) elements per task */
} Bin;

static void
bin_task(void *arg, int64_t t)
{
	const Bin *c = arg;
	int64_t idx[DPRT_MAXRANK], row, end, q, ao, bo, len = c->n[c->r - 1], nrow = 1;
	int k, r = c->r;

	if (r == 1) {
		int64_t lo = t * c->per, m = len - lo < c->per ? len - lo : c->per;
		binrow(c->op, c->y + lo, c->a + lo * c->as[0], c->as[0], c->b + lo * c->bs[0],
		       c->bs[0], m, c->alpha);
		return;
	}
	for (k = 0; k < r - 1; k++)
		nrow *= c->n[k];
	row = t * c->per;
	end = row + c->per < nrow ? row + c->per : nrow;
	for (q = row, k = r - 2; k >= 0; k--) {
		idx[k] = q % c->n[k];
		q /= c->n[k];
	}
	for (; row < end; row++) {
		ao = bo = 0;
		for (k = 0; k < r - 1; k++) {
			ao += idx[k] * c->as[k];
			bo += idx[k] * c->bs[k];
		}
		binrow(c->op, c->y + row * len, c->a + ao, c->as[r - 1], c->b + bo, c->bs[r - 1], len,
		       c->alpha);
		for (k = r - 2; k >= 0 && ++idx[k] == c->n[k]; k--)
			idx[k] = 0;
	}
}

void
dprt_binary_f32(int op, float *y, const float *a, const int64_t *sa,
                const float *b, const int64_t *sb, int rank,
                const int64_t *dim, float alpha)
{
	int64_t n[DPRT_MAXRANK], as[DPRT_MAXRANK], bs[DPRT_MAXRANK];
	int64_t idx[DPRT_MAXRANK], total, yo, ao, bo;
	int r, i, k;

	r = 0;
	total = 1;
	for (i = 0; i < rank; i++) {
		total *= dim[i];
		if (dim[i] == 1)
			continue;
		if (r > 0 && as[r - 1] == sa[i] * dim[i] && bs[r - 1] == sb[i] * dim[i]) {
			n[r - 1] *= dim[i];
			as[r - 1] = sa[i];
			bs[r - 1] = sb[i];
		} else {
			n[r] = dim[i];
			as[r] = sa[i];
			bs[r] = sb[i];
			r++;
		}
	}
	if (total <= 0)
		return;
	if (r == 0) {
		binrow(op, y, a, 0, b, 0, 1, alpha);
		return;
	}
	if (total >= 2 * PCHUNK && dprt_threads() > 1) {   /* rows, or pieces of one, in tasks */
		Bin c = { op, r, y, a, b, alpha, {0}, {0}, {0}, 0 };
		int64_t len = n[r - 1];
		memcpy(c.n, n, sizeof n);
		memcpy(c.as, as, sizeof as);
		memcpy(c.bs, bs, sizeof bs);
		c.per = r == 1 ? PCHUNK : (PCHUNK + len - 1) / len;
		dprt_parallel(((r == 1 ? len : total / len) + c.per - 1) / c.per, bin_task, &c);
		return;
	}
	memset(idx, 0, sizeof idx);
	for (yo = 0; yo < total; yo += n[r - 1]) {
		ao = bo = 0;
		for (k = 0; k < r - 1; k++) {
			ao += idx[k] * as[k];
			bo += idx[k] * bs[k];
		}
		binrow(op, y + yo, a + ao, as[r - 1], b + bo, bs[r - 1], n[r - 1], alpha);
		for (k = r - 2; k >= 0 && ++idx[k] == n[k]; k--)
			idx[k] = 0;
	}
}

/* y = max(x, 0), keeping NaN. */
void
dprt_relu_f32(float *y, const float *x, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
