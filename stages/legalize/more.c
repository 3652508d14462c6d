/* more.c: decompositions of the sorting, product, statistics, distance,
 * scatter-by-mask and bag ops of formats/ops.h (their rows are in the
 * table of rules.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "legalize.h"

#define X(i) (z->map[op->in[i]])
#define IT(i) (&z->in->val[op->in[i]].t)
#define OT (&z->in->val[op->out[0]].t)

static int
axis(int64_t d, int r)
{
	return (int)(d < 0 ? d + r : d);
}

static int
bindk(Lz *z, const Op *op, int k, int v)
{
	if (v < 0)
		return -1;
	z->map[op->out[k]] = v;
	return 0;
}

/* A reduction (aten.sum, aten.mean, aten.any) of x over dims. */
static int
reduce(Lz *z, int kind, int x, const int64_t *dims, int n, int keep)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, kind, &x, 1);
	dp_setints(z->out, k, "dim", dims, n);
	dp_seti(z->out, k, "keepdim", keep);
	return lz_end(z, k);
}

/* aten.arange(n) in i64. */
static int
arange(Lz *z, int64_t start, int64_t end, int64_t step)
{
	int k = lz_begin(z, Aarange, NULL, 0);

	dp_setf(z->out, k, "start", (double)start);
	dp_setf(z->out, k, "end", (double)end);
	dp_setf(z->out, k, "step", (double)step);
	dp_sets(z->out, k, "dtype", "i64");
	return lz_end(z, k);
}

/* aten.full of t's shape and dtype. */
static int
full(Lz *z, const Type *t, double v)
{
	int k = lz_begin(z, Afull, NULL, 0);

	dp_setints(z->out, k, "size", t->dim, t->rank);
	dp_setf(z->out, k, "value", v);
	dp_sets(z->out, k, "dtype", dp_dtype_name[t->dtype]);
	return lz_end(z, k);
}

static int
where(Lz *z, int c, int a, int b)
{
	int in[3] = { c, a, b };

	if (c < 0 || a < 0 || b < 0)
		return -1;
	return lz_end(z, lz_begin(z, Awhere, in, 3));
}

/* topk(x, k, dim, largest): aten.sort along dim (descending when largest:
 * equal keys keep their index order), both results sliced to [0, k). */
int
r_topk(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int x = X(0), d = t->rank ? axis(dp_geti(op, "dim", -1), t->rank) : 0, j, v, ix;
	int64_t k = dp_geti(op, "k", 0);

	j = lz_begin(z, Asort, &x, 1);
	dp_seti(z->out, j, "dim", d);
	dp_seti(z->out, j, "descending", dp_geti(op, "largest", 1) != 0);
	if ((v = lz_end(z, j)) < 0)
		return -1;
	ix = z->out->op[j].out[1];
	if (t->rank && k < t->dim[d]) {
		v = lz_slice(z, v, d, 0, k, 1);
		ix = lz_slice(z, ix, d, 0, k, 1);
	}
	return bindk(z, op, 0, v) || bindk(z, op, 1, ix) ? -1 : 0;
}

/* The product of x along d, kept as a dim of size 1: halves multiplied
 * pairwise, ⌈log2 n⌉ rounds of two slices and an aten.mul (an odd
 * element carried by an aten.cat). */
static int
prodalong(Lz *z, int x, int d)
{
	int64_t n = lz_type(z, x)->dim[d];

	while (x >= 0 && n > 1) {
		int64_t h = n / 2;
		int p = lz_op2(z, Amul, lz_slice(z, x, d, 0, h, 1), lz_slice(z, x, d, h, 2 * h, 1));
		if (n % 2) {
			int xs[2] = { p, lz_slice(z, x, d, 2 * h, n, 1) };
			p = xs[0] < 0 || xs[1] < 0 ? -1 : lz_cat(z, xs, 2, d);
		}
		x = p;
		n = h + n % 2;
	}
	return x;
}

/* prod over dim (absent: all): integers and bool cast to i64, then
 * prodalong per reduced dim; an empty product is 1. */
int
r_prod(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	const Attr *dim = dp_attr(op, "dim");
	int x = lz_cast(z, X(0), OT->dtype), i;

	if (dp_numel(t) == 0 || dp_numel(OT) == 0)
		return bindk(z, op, 0, full(z, OT, 1));
	if (t->rank == 0)
		return bindk(z, op, 0, x);
	if (!dim) {
		int64_t n = dp_numel(t);
		x = prodalong(z, lz_view(z, x, &n, 1), 0);
	} else
		for (i = 0; i < dim->n; i++)
			x = prodalong(z, x, axis(dim->ints[i], t->rank));
	return bindk(z, op, 0, lz_view(z, x, OT->dim, OT->rank));
}

/* Batch norm with the batch's statistics: mean and biased variance over
 * every dim but 1, (x − mean)·rsqrt(var + eps)·weight + bias. */
int
r_bnstats(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t dims[DP_MAXRANK], c[DP_MAXRANK];
	int n = 0, i, x = X(0), m, xc, var, y;

	for (i = 0; i < t->rank; i++) {
		c[i] = i == 1 ? t->dim[1] : 1;
		if (i != 1)
			dims[n++] = i;
	}
	m = reduce(z, Amean, x, dims, n, 1);
	xc = lz_op2(z, Asub, x, m);
	var = reduce(z, Amean, lz_op2(z, Amul, xc, xc), dims, n, 1);
	var = lz_op1(z, Arsqrt, lz_op2(z, Aadd, var, lz_scalar(z, dp_getf(op, "eps", 1e-5), t->dtype)));
	y = lz_op2(z, Amul, xc, var);
	y = lz_op2(z, Amul, y, lz_view(z, X(1), c, t->rank));
	return bindk(z, op, 0, lz_op2(z, Aadd, y, lz_view(z, X(2), c, t->rank)));
}

/* The p-norm distances of the rows of a [B, P, M] and b [B, R, M]: their
 * differences [B, P, R, M] (memory B·P·R·M), then p = 2: √Σd², p = 1:
 * Σ|d|, p = 0: the count of nonzero d, p = ∞: max |d|, else (Σ|d|^p)^(1/p). */
static int
dist(Lz *z, int a, int b, double p)
{
	const Type *ta = lz_type(z, a), *tb = lz_type(z, b);
	int r = ta->rank, i, d;
	int64_t va[DP_MAXRANK + 1], vb[DP_MAXRANK + 1], last = r;

	for (i = 0; i < r - 1; i++)
		va[i] = vb[i] = ta->dim[i];
	va[r - 1] = ta->dim[r - 2];
	va[r - 2] = ta->dim[r - 2];
	va[r - 1] = 1;
	va[r] = ta->dim[r - 1];
	vb[r - 2] = 1;
	vb[r - 1] = tb->dim[r - 2];
	vb[r] = tb->dim[r - 1];
	d = lz_op2(z, Asub, lz_view(z, a, va, r + 1), lz_view(z, b, vb, r + 1));
	if (p == 2)
		return lz_op1(z, Asqrt, reduce(z, Asum, lz_op2(z, Amul, d, d), &last, 1, 0));
	d = lz_op1(z, Aabs, d);
	if (p == 1)
		return reduce(z, Asum, d, &last, 1, 0);
	if (p == 0)
		return reduce(z, Asum, lz_cast(z, lz_op2(z, Ane, d, lz_scalar(z, 0, ta->dtype)), ta->dtype),
		              &last, 1, 0);
	if (isinf(p)) {
		int j;
		if (d < 0)
			return -1;
		j = lz_begin(z, Oargmax, &d, 1);
		dp_seti(z->out, j, "dim", r);
		dp_seti(z->out, j, "keepdim", 1);
		int in[2] = { d, lz_end(z, j) };
		if (in[1] < 0)
			return -1;
		j = lz_begin(z, Agather, in, 2);
		dp_seti(z->out, j, "dim", r);
		d = lz_end(z, j);
		return d < 0 ? -1 : reduce(z, Asum, d, &last, 1, 0);
	}
	d = reduce(z, Asum, lz_op2(z, Apow, d, lz_scalar(z, p, ta->dtype)), &last, 1, 0);
	return lz_op2(z, Apow, d, lz_scalar(z, 1 / p, ta->dtype));
}

/* cdist(a, b, p): dist of the rows (a rank-2 pair viewed with a batch of 1). */
int
r_cdist(Lz *z, const Op *op)
{
	int a = X(0), b = X(1);

	if (IT(0)->rank == 2) {
		int64_t va[3] = { 1, IT(0)->dim[0], IT(0)->dim[1] }, vb[3] = { 1, IT(1)->dim[0], IT(1)->dim[1] };
		a = lz_view(z, a, va, 3);
		b = lz_view(z, b, vb, 3);
		if (a < 0 || b < 0)
			return -1;
	}
	return bindk(z, op, 0, lz_view(z, dist(z, a, b, dp_getf(op, "p", 2)), OT->dim, OT->rank));
}

/* pdist(x, p): the [N, N] distances viewed flat, an aten.index at the
 * flat positions i·N + j, i < j (an aten.cat of N − 1 aten.arange). */
int
r_pdist(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t N = t->dim[0], v3[3] = { 1, N, t->dim[1] }, nn = N * N, i;
	int x, d, *pieces, k, in[2];

	if (N < 2)
		return bindk(z, op, 0, full(z, OT, 0));
	x = lz_view(z, X(0), v3, 3);
	d = lz_view(z, dist(z, x, x, dp_getf(op, "p", 2)), &nn, 1);
	pieces = dp_alloc(z->out->arena, (size_t)N, sizeof *pieces);
	for (i = 0; i < N - 1; i++)
		if ((pieces[i] = arange(z, i * N + i + 1, i * N + N, 1)) < 0)
			return -1;
	in[0] = d;
	in[1] = N - 1 > 1 ? lz_cat(z, pieces, (int)(N - 1), 0) : pieces[0];
	if (in[0] < 0 || in[1] < 0)
		return -1;
	k = lz_begin(z, Aindex, in, 2);
	dp_seti(z->out, k, "dim", 0);
	return bindk(z, op, 0, lz_end(z, k));
}

/* masked_scatter(x, mask, src): the mask expanded to x's shape and viewed
 * flat, its running count (aten.cumsum in i64) − 1 the position in src
 * viewed flat of each masked element: aten.where(mask, src[pos], x). */
int
r_maskscat(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t n = dp_numel(t), ns = dp_numel(IT(2));
	int m, pos, k, in[2];

	if (n == 0)
		return bindk(z, op, 0, X(0));
	m = lz_view(z, lz_expand(z, X(1), t->dim, t->rank), &n, 1);
	if (ns == 0)
		return bindk(z, op, 0, X(0));   /* nothing to scatter: the mask must be all false */
	pos = lz_cast(z, m, DP_I64);
	if (pos < 0)
		return -1;
	k = lz_begin(z, Acumsum, &pos, 1);
	dp_seti(z->out, k, "dim", 0);
	pos = lz_op2(z, Asub, lz_end(z, k), lz_scalar(z, 1, DP_I64));
	pos = lz_op2(z, Amaximum, pos, lz_scalar(z, 0, DP_I64));
	pos = lz_op2(z, Aminimum, pos, lz_scalar(z, (double)(ns - 1), DP_I64));
	in[0] = lz_view(z, X(2), &ns, 1);
	in[1] = pos;
	if (in[0] < 0 || in[1] < 0)
		return -1;
	k = lz_begin(z, Aindex, in, 2);
	dp_seti(z->out, k, "dim", 0);
	return bindk(z, op, 0, lz_view(z, where(z, m, lz_end(z, k), lz_view(z, X(0), &n, 1)),
	                               t->dim, t->rank));
}

/* embedding_bag(weight [V, D], indices [L], offsets, mode): bag b holds
 * the positions offsets[b] <= t < next[b] (the next offset; the last bag
 * ends at L, or at the last offset with include_last_offset): a [B, L]
 * membership by comparison with aten.arange(L); sum: membership · rows
 * (aten.mm); mean: that ÷ max(count, 1); max: aten.argmax over L of the
 * rows where members (−∞ elsewhere), gathered, 0 for an empty bag. */
int
r_embbag(Lz *z, const Op *op)
{
	const Type *tw = IT(0);
	int64_t L = IT(1)->dim[0], B = OT->dim[0], D = tw->dim[1], mode = dp_geti(op, "mode", 0);
	int last = dp_geti(op, "include_last_offset", 0) != 0, off, nx, t, mem, rows, y, cnt;
	int64_t vb[2] = { B, 1 }, vl[2] = { 1, L };

	if (B == 0)
		return bindk(z, op, 0, full(z, OT, 0));
	if (L == 0)
		return bindk(z, op, 0, full(z, OT, 0));
	off = lz_cast(z, X(2), DP_I64);
	if (last)
		nx = lz_slice(z, off, 0, 1, B + 1, 1);
	else {
		int64_t one = 1;
		int xs[2] = { lz_slice(z, off, 0, 1, B, 1), lz_view(z, lz_scalar(z, (double)L, DP_I64),
		                                                    &one, 1) };
		nx = B > 1 ? (xs[0] < 0 || xs[1] < 0 ? -1 : lz_cat(z, xs, 2, 0)) : xs[1];
	}
	off = lz_view(z, lz_slice(z, off, 0, 0, B, 1), vb, 2);
	nx = lz_view(z, nx, vb, 2);
	t = lz_view(z, arange(z, 0, L, 1), vl, 2);
	mem = lz_op2(z, Aand, lz_op2(z, Ale, off, t), lz_op2(z, Alt, t, nx));   /* [B, L] */
	rows = lz_op2(z, Aembedding, X(0), X(1));                               /* [L, D] */
	if (mode != 2) {
		y = lz_op2(z, Amm, lz_cast(z, mem, tw->dtype), rows);
		if (mode == 1) {
			int64_t one = 1;
			cnt = reduce(z, Asum, lz_cast(z, mem, tw->dtype), &one, 1, 1);
			y = lz_op2(z, Adiv, y, lz_op2(z, Amaximum, cnt, lz_scalar(z, 1, tw->dtype)));
		}
		return bindk(z, op, 0, y);
	}
	int64_t v3[3] = { B, L, 1 }, r3[3] = { 1, L, D }, one = 1, ax = 1;
	int masked = where(z, lz_view(z, mem, v3, 3), lz_view(z, rows, r3, 3),
	                   lz_scalar(z, -INFINITY, tw->dtype));   /* [B, L, D] */
	int k, in[2], any;
	if (masked < 0)
		return -1;
	k = lz_begin(z, Oargmax, &masked, 1);
	dp_seti(z->out, k, "dim", 1);
	dp_seti(z->out, k, "keepdim", 1);
	in[0] = masked;
	in[1] = lz_end(z, k);
	if (in[1] < 0)
		return -1;
	k = lz_begin(z, Agather, in, 2);
	dp_seti(z->out, k, "dim", 1);
	y = lz_view(z, lz_end(z, k), OT->dim, OT->rank);
	any = reduce(z, Aany, mem, &ax, 1, 1);   /* [B, 1] */
	(void)one;
	return bindk(z, op, 0, where(z, any, y, lz_scalar(z, 0, tw->dtype)));
}

/* aten.select of x along d at i. */
static int
sel(Lz *z, int x, int d, int64_t i)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aselect, &x, 1);
	dp_seti(z->out, k, "dim", d);
	dp_seti(z->out, k, "index", i);
	return lz_end(z, k);
}

/* Zeros of x's type with n along d. */
static int
zerosalong(Lz *z, int x, int d, int64_t n)
{
	Type t = *lz_type(z, x);

	t.dim[d] = n;
	return full(z, &t, 0);
}

/* out[h] = x[(h − off) / s] where that is a multiple of s inside x, else 0,
 * for h in [0, n) along d: x spread by s (aten.cat with zeros along a new
 * axis, viewed), shifted by off (zeros before, or a slice), cut or padded
 * with zeros to n. */
static int
place(Lz *z, int x, int d, int64_t s, int64_t off, int64_t n)
{
	Type t;
	int64_t len;

	if (x < 0)
		return -1;
	t = *lz_type(z, x);
	len = t.dim[d];
	if (s > 1) {
		int64_t v[DP_MAXRANK + 1], w[DP_MAXRANK];
		int r = t.rank, xs[2];
		for (int i = 0, j = 0; i < r; i++) {
			v[j++] = t.dim[i];
			if (i == d)
				v[j++] = 1;
		}
		xs[0] = lz_view(z, x, v, r + 1);
		if (xs[0] < 0)
			return -1;
		xs[1] = zerosalong(z, xs[0], d + 1, s - 1);
		if (xs[1] < 0)
			return -1;
		memcpy(w, t.dim, sizeof w);
		w[d] = len * s;
		x = lz_view(z, lz_cat(z, xs, 2, d + 1), w, r);
		len *= s;
	}
	if (off > 0) {
		int xs[2] = { zerosalong(z, x, d, off), x };
		if (xs[0] < 0)
			return -1;
		x = lz_cat(z, xs, 2, d);
		len += off;
	} else if (off < 0) {
		if (-off >= len)
			return zerosalong(z, x, d, n);
		x = lz_slice(z, x, d, -off, len, 1);
		len += off;
	}
	if (len > n)
		x = lz_slice(z, x, d, 0, n, 1);
	else if (len < n && x >= 0) {
		int xs[2] = { x, zerosalong(z, x, d, n - len) };
		if (xs[1] < 0)
			return -1;
		x = lz_cat(z, xs, 2, d);
	}
	return x;
}

/* col2im (torch.nn.functional.fold): x [N, C·kh·kw, L] viewed [N, C, kh,
 * kw, nh, nw]; each kernel offset's [N, C, nh, nw] placed at rows
 * i·stride + ki·dilation − padding (place, per axis), the kh·kw planes
 * summed. */
int
r_col2im(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	const Attr *o = dp_attr(op, "output_size");
	int64_t k[2], dl[2], pd[2], st[2], n[2], v[6];
	int b = t->rank == 3, x, sum = -1;

	dp_pair(op, "kernel_size", 1, k);
	dp_pair(op, "dilation", 1, dl);
	dp_pair(op, "padding", 0, pd);
	dp_pair(op, "stride", 1, st);
	for (int i = 0; i < 2; i++) {
		int64_t span = o->ints[i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1;
		n[i] = span < 0 ? 0 : span / st[i] + 1;
	}
	v[0] = b ? t->dim[0] : 1;
	v[1] = t->dim[b] / (k[0] * k[1]);
	v[2] = k[0];
	v[3] = k[1];
	v[4] = n[0];
	v[5] = n[1];
	x = lz_view(z, X(0), v, 6);
	for (int64_t ki = 0; ki < k[0]; ki++)
		for (int64_t kj = 0; kj < k[1]; kj++) {
			int p = sel(z, sel(z, x, 2, ki), 2, kj);   /* [N, C, nh, nw] */
			p = place(z, p, 2, st[0], ki * dl[0] - pd[0], o->ints[0]);
			p = place(z, p, 3, st[1], kj * dl[1] - pd[1], o->ints[1]);
			sum = sum < 0 && ki + kj == 0 ? p : lz_op2(z, Aadd, sum, p);
		}
	return bindk(z, op, 0, lz_view(z, sum, OT->dim, OT->rank));
}

/* A rank-0 f32 constant. */
static int
f(Lz *z, double v)
{
	return lz_scalar(z, v, DP_F32);
}

/* The source coordinate along an axis of size n of grid coordinates g
 * (PyTorch's grid_sampler_2d on the cpu): unnormalized, then clipped
 * (border) or reflected and clipped (reflection). */
static int
gridcoord(Lz *z, int g, int64_t n, int ac, int pad)
{
	double m = (double)(n - 1);
	int c = ac ? lz_op2(z, Amul, lz_op2(z, Aadd, g, f(z, 1)), f(z, m / 2))
	           : lz_op2(z, Asub, lz_op2(z, Amul, lz_op2(z, Aadd, g, f(z, 1)), f(z, (double)n / 2)),
	                    f(z, 0.5));
	if (pad == 2) {   /* reflect over [lo, lo + span] */
		double lo = ac ? 0 : -0.5, span = ac ? m : (double)n;
		if (span <= 0)
			c = lz_op2(z, Amul, c, f(z, 0));
		else {
			int a = lz_op1(z, Aabs, lz_op2(z, Asub, c, f(z, lo)));
			int extra = lz_op2(z, Afmod, a, f(z, span));
			int flips = lz_op1(z, Afloor, lz_op2(z, Adiv, a, f(z, span)));
			int even = lz_op2(z, Aeq, lz_op2(z, Afmod, flips, f(z, 2)), f(z, 0));
			c = where(z, even, lz_op2(z, Aadd, extra, f(z, lo)),
			          lz_op2(z, Aadd, lz_op2(z, Asub, f(z, span), extra), f(z, lo)));
		}
	}
	if (pad >= 1)
		c = lz_op2(z, Aminimum, lz_op2(z, Amaximum, c, f(z, 0)), f(z, m));
	return c;
}

/* x [N, C, H·W] gathered at the corner (xc, yc) [N, P] (f32 integers),
 * times weight w [N, P] where the corner is inside the image (else 0):
 * [N, C, P]. */
static int
corner(Lz *z, int xf, int xc, int yc, int w, int64_t H, int64_t W)
{
	const Type *t = lz_type(z, xf);
	int64_t N = t->dim[0], C = t->dim[1], P = lz_type(z, xc)->dim[1];
	int64_t v1[3] = { N, 1, P }, e[3] = { N, C, P };
	int in = lz_op2(z, Aand, lz_op2(z, Aand, lz_op2(z, Age, xc, f(z, 0)),
	                                 lz_op2(z, Ale, xc, f(z, (double)(W - 1)))),
	                lz_op2(z, Aand, lz_op2(z, Age, yc, f(z, 0)),
	                       lz_op2(z, Ale, yc, f(z, (double)(H - 1)))));
	int cx = lz_op2(z, Aminimum, lz_op2(z, Amaximum, xc, f(z, 0)), f(z, (double)(W - 1)));
	int cy = lz_op2(z, Aminimum, lz_op2(z, Amaximum, yc, f(z, 0)), f(z, (double)(H - 1)));
	int ix = lz_op2(z, Aadd, lz_op2(z, Amul, lz_cast(z, cy, DP_I64), lz_scalar(z, (double)W, DP_I64)),
	                lz_cast(z, cx, DP_I64));
	int k, g[2];

	ix = lz_expand(z, lz_view(z, ix, v1, 3), e, 3);
	w = where(z, in, w, f(z, 0));
	g[0] = xf;
	g[1] = ix;
	if (g[1] < 0)
		return -1;
	k = lz_begin(z, Agather, g, 2);
	dp_seti(z->out, k, "dim", 2);
	return lz_op2(z, Amul, lz_end(z, k), lz_view(z, w, v1, 3));
}

/* grid_sampler_2d(x [N, C, H, W], grid [N, Ho, Wo, 2]): source coordinates
 * per output pixel (gridcoord), then nearest (rounded half to even) or
 * the four bilinear corners, each an aten.gather of x viewed [N, C, H·W]
 * weighted by its area (0 outside the image), summed. */
int
r_gridsamp(Lz *z, const Op *op)
{
	const Type *t = IT(0), *tg = IT(1);
	int64_t N = t->dim[0], H = t->dim[2], W = t->dim[3], P = tg->dim[1] * tg->dim[2];
	int64_t v[3] = { N, t->dim[1], H * W }, vp[2] = { N, P };
	int ac = dp_geti(op, "align_corners", 0) != 0, pad = (int)dp_geti(op, "padding_mode", 0);
	int xf = lz_view(z, X(0), v, 3), g = lz_view(z, X(1), (int64_t[3]){ N, P, 2 }, 3);
	int ix = gridcoord(z, sel(z, g, 2, 0), W, ac, pad), iy = gridcoord(z, sel(z, g, 2, 1), H, ac, pad);
	int y;

	if (dp_geti(op, "interpolation_mode", 0) == 1) {
		y = corner(z, xf, lz_op1(z, Around, ix), lz_op1(z, Around, iy), lz_op2(z, Aadd,
		           lz_op2(z, Amul, ix, f(z, 0)), f(z, 1)), H, W);
	} else {
		int x0 = lz_op1(z, Afloor, ix), y0 = lz_op1(z, Afloor, iy);
		int x1 = lz_op2(z, Aadd, x0, f(z, 1)), y1 = lz_op2(z, Aadd, y0, f(z, 1));
		int dx1 = lz_op2(z, Asub, x1, ix), dx0 = lz_op2(z, Asub, ix, x0);
		int dy1 = lz_op2(z, Asub, y1, iy), dy0 = lz_op2(z, Asub, iy, y0);
		y = corner(z, xf, x0, y0, lz_op2(z, Amul, dx1, dy1), H, W);
		y = lz_op2(z, Aadd, y, corner(z, xf, x1, y0, lz_op2(z, Amul, dx0, dy1), H, W));
		y = lz_op2(z, Aadd, y, corner(z, xf, x0, y1, lz_op2(z, Amul, dx1, dy0), H, W));
		y = lz_op2(z, Aadd, y, corner(z, xf, x1, y1, lz_op2(z, Amul, dx0, dy0), H, W));
	}
	(void)vp;
	return bindk(z, op, 0, lz_view(z, y, OT->dim, OT->rank));
}

/* histc(x, bins, min, max): PyTorch's bin of each element,
 * ⌊(x − min)·bins/(max − min)⌋ in x's dtype (x = max: the last bin),
 * elements outside [min, max] (and NaN) counted nowhere: an aten.eq of the
 * bins with aten.arange(bins), [n, bins] bools, summed over the elements. */
int
r_histc(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t bins = dp_geti(op, "bins", 100), n = 1, flat[1], col[2], row[2];
	double lo = dp_getf(op, "min", 0), hi = dp_getf(op, "max", 0);
	int dt = t->dtype, x, pos, in, k, b;

	for (int i = 0; i < t->rank; i++)
		n *= t->dim[i];
	flat[0] = n;
	x = lz_view(z, X(0), flat, 1);
	pos = lz_op2(z, Adiv, lz_op2(z, Amul, lz_op2(z, Asub, x, lz_scalar(z, lo, dt)),
	                             lz_scalar(z, (double)bins, dt)),
	             lz_scalar(z, dt == DP_F32 ? (double)((float)hi - (float)lo) : hi - lo, dt));
	pos = lz_cast(z, pos, DP_I64);
	pos = where(z, lz_op2(z, Aeq, pos, lz_scalar(z, (double)bins, DP_I64)),
	            lz_scalar(z, (double)(bins - 1), DP_I64), pos);
	in = lz_op2(z, Aand, lz_op2(z, Age, x, lz_scalar(z, lo, dt)), lz_op2(z, Ale, x, lz_scalar(z, hi, dt)));
	col[0] = n, col[1] = 1, row[0] = 1, row[1] = bins;
	b = lz_op2(z, Aand, lz_op2(z, Aeq, lz_view(z, pos, col, 2), lz_view(z, arange(z, 0, bins, 1), row, 2)),
	           lz_view(z, in, col, 2));
	b = lz_cast(z, b, DP_I64);
	k = reduce(z, Asum, b, (int64_t[]){ 0 }, 1, 0);
	return bindk(z, op, 0, lz_cast(z, k, dt));
}

/* grouped_mm(a [M,K], b [G,K,N], offsets [G]): row i of a by b's group
 * g(i) = Σⱼ [offsetsⱼ <= i] (the rows of group g are offsets[g−1] up to
 * offsets[g], in order); rows past the last offset are 0.  Every group's
 * product is computed (an aten.bmm of a expanded to [G,M,K]: G times a
 * grouped product's work) and row i's taken at g(i)·M + i. */
int
r_groupedmm(Lz *z, const Op *op)
{
	const Type *ta = IT(0), *tb = IT(1);
	int64_t M = ta->dim[0], K = ta->dim[1], G = tb->dim[0], N = tb->dim[2];
	int64_t v3[3] = { 1, M, K }, e3[3] = { G, M, K }, fl[2] = { G * M, N }, col[2] = { M, 1 };
	int64_t row[2] = { 1, G }, one = 1;
	int a, y, g, ix, k;

	a = lz_view(z, X(0), v3, 3);
	k = lz_begin(z, Aexpand, &a, 1);
	dp_setints(z->out, k, "size", e3, 3);
	a = lz_end(z, k);
	y = lz_view(z, lz_op2(z, Abmm, a, X(1)), fl, 2);
	g = lz_op2(z, Ale, lz_view(z, lz_cast(z, X(2), DP_I64), row, 2),
	           lz_view(z, arange(z, 0, M, 1), col, 2));
	g = reduce(z, Asum, lz_cast(z, g, DP_I64), &one, 1, 0);
	ix = lz_op2(z, Aadd, lz_op2(z, Amul, lz_op2(z, Aminimum, g, lz_scalar(z, (double)(G - 1), DP_I64)),
	                             lz_scalar(z, (double)M, DP_I64)),
	            arange(z, 0, M, 1));
	{
		int in[2] = { y, ix };
		if (y < 0 || ix < 0)
			return -1;
		k = lz_begin(z, Aindex, in, 2);
		dp_seti(z->out, k, "dim", 0);
		y = lz_end(z, k);
	}
	return bindk(z, op, 0, where(z, lz_view(z, lz_op2(z, Alt, g, lz_scalar(z, (double)G, DP_I64)), col, 2),
	                             y, lz_scalar(z, 0, ta->dtype)));
}
