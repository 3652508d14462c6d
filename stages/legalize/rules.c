/* rules.c: the rewrite table of the legalize stage: aliases to their one
 * canonical form (every reshape an aten.view with its result's sizes, every
 * transpose an aten.permute, aten.matmul rank-promoted into aten.mm or
 * aten.bmm between views), attribute defaults filled (pooling windows), and
 * each composite op of formats/ops.h decomposed into primitives.  An op
 * with no row is copied unchanged. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "legalize.h"

typedef int Rewrite(Lz *z, const Op *op);

#define X(i) (z->map[op->in[i]])
#define IT(i) (&z->in->val[op->in[i]].t)
#define OT (&z->in->val[op->out[0]].t)

/* Binds op's result to out value v (-1 passes an error on). */
static int
bind(Lz *z, const Op *op, int v)
{
	if (v < 0)
		return -1;
	z->map[op->out[0]] = v;
	return 0;
}

static int
axis(int64_t d, int r)
{
	return (int)(d < 0 ? d + r : d);
}

/* ---- canonical forms ---- */

/* reshape, flatten, aten.reshape, aten.view (its -1 resolved), aten.t of
 * a vector: aten.view to the result's sizes. */
static int
r_view(Lz *z, const Op *op)
{
	return bind(z, op, lz_view(z, X(0), OT->dim, OT->rank));
}

/* aten.t, aten.transpose, permute: aten.permute with dims >= 0; one that
 * keeps the order of the axes longer than 1 (it moves only axes of size 1,
 * as a decoder's [1, 1, H, D] -> [1, H, 1, D] does) is the same bytes: an
 * aten.view. */
static int
r_permute(Lz *z, const Op *op)
{
	int64_t p[DP_MAXRANK], last = -1;
	int r = IT(0)->rank, i, a, b, same = 1;
	const Attr *d = dp_attr(op, "dims");

	if (r < 2 && op->kind != Opermute && op->kind != Apermute)
		return r_view(z, op);
	for (i = 0; i < r; i++)
		p[i] = d ? axis(d->ints[i], r) : i;
	if (op->kind == At || op->kind == Atranspose) {
		a = op->kind == At ? 0 : axis(dp_geti(op, "dim0", 0), r);
		b = op->kind == At ? 1 : axis(dp_geti(op, "dim1", 0), r);
		p[a] = b;
		p[b] = a;
	}
	for (i = 0; i < r; i++)
		if (IT(0)->dim[p[i]] != 1) {
			same &= p[i] > last;
			last = p[i];
		}
	if (same)
		return r_view(z, op);
	return bind(z, op, lz_permute(z, X(0), p, r));
}

/* aten.expand to the operand's own sizes: the operand. */
static int
r_expand(Lz *z, const Op *op)
{
	if (dp_type_eq(IT(0), OT))
		return bind(z, op, X(0));
	return lz_copy(z, op);
}

/* Whether a product whose left operand has type t sums over one term (K is
 * 1: an outer product, as a rotary embedding's frequencies by its
 * positions). */
static int
oneterm(const Type *t)
{
	return t->rank >= 2 && t->dim[t->rank - 1] == 1;
}

/* A matrix product of a by b (kind aten.mm or aten.bmm), or aten.mul of
 * the two where it sums over one term: the same value, exactly, as an
 * elementwise op that fuses with those around it, not a product kernel. */
static int
product(Lz *z, int kind, int a, int b)
{
	return lz_op2(z, a >= 0 && oneterm(lz_type(z, a)) ? Amul : kind, a, b);
}

/* aten.mm and aten.bmm: aten.mul where K is 1, else unchanged. */
static int
r_product(Lz *z, const Op *op)
{
	return oneterm(IT(0)) ? bind(z, op, product(z, op->kind, X(0), X(1))) : lz_copy(z, op);
}

/* Binds op's result to x, viewed to the result's sizes where they differ. */
static int
bindas(Lz *z, const Op *op, int x)
{
	if (x >= 0 && dp_type_eq(lz_type(z, x), OT))
		return bind(z, op, x);
	return bind(z, op, lz_view(z, x, OT->dim, OT->rank));
}

/* aten.matmul: the rank promotion of torch.matmul, once.  A vector operand
 * becomes a matrix (and its axis is dropped from the result), 2-D by 2-D is
 * aten.mm, N-D by 2-D is one aten.mm over the flattened rows, and the rest
 * aten.bmm over the broadcast batch axes (expanded where they differ). */
static int
r_matmul(Lz *z, const Op *op)
{
	const Type *ta = IT(0), *tb = IT(1);
	int a = X(0), b = X(1), ra = ta->rank, rb = tb->rank, i, nb;
	int64_t s[DP_MAXRANK], K = ta->dim[ra - 1], B = 1;
	Type bt;

	if (ra == 1) {
		int64_t v[2] = { 1, K };
		a = lz_view(z, a, v, 2);
		ra = 2;
	}
	if (rb == 1) {
		int64_t v[2] = { tb->dim[0], 1 };
		b = lz_view(z, b, v, 2);
		rb = 2;
	}
	ta = lz_type(z, a);
	tb = lz_type(z, b);
	if (rb == 2) {   /* rows of a by one matrix */
		int64_t v[2] = { 1, K };
		for (i = 0; i < ra - 1; i++)
			v[0] *= ta->dim[i];
		if (ra > 2)
			a = lz_view(z, a, v, 2);
		return bindas(z, op, product(z, Amm, a, b));
	}
	/* batched: broadcast the batch axes of both into bt */
	nb = (ra > rb ? ra : rb) - 2;
	memset(&bt, 0, sizeof bt);
	bt.rank = (uint8_t)nb;
	for (i = 0; i < nb; i++) {
		int ia = i - (nb - (ra - 2)), ib = i - (nb - (rb - 2));
		int64_t da = ia >= 0 ? ta->dim[ia] : 1, db = ib >= 0 ? tb->dim[ib] : 1;
		bt.dim[i] = da == 1 ? db : da;
		B *= bt.dim[i];
	}
	for (int k = 0; k < 2; k++) {
		int *x = k ? &b : &a;
		const Type *t = lz_type(z, *x);
		int same = t->rank == nb + 2;
		for (i = 0; i < nb; i++) {
			s[i] = bt.dim[i];
			same &= t->rank == nb + 2 && t->dim[i] == bt.dim[i];
		}
		s[nb] = t->dim[t->rank - 2];
		s[nb + 1] = t->dim[t->rank - 1];
		int64_t v[3] = { B, s[nb], s[nb + 1] };
		if (!same)
			*x = lz_expand(z, *x, s, nb + 2);
		if (nb != 1 || !same)
			*x = lz_view(z, *x, v, 3);
	}
	return bindas(z, op, product(z, Abmm, a, b));
}

/* Pooling: stride (empty: the kernel), padding and dilation as (h, w)
 * pairs. */
static int
r_pool(Lz *z, const Op *op)
{
	int64_t k[2], v[2];
	int j;

	if (lz_copy(z, op) != 0)
		return -1;
	j = z->out->nop - 1;
	dp_pair(op, "kernel_size", 1, k);
	dp_setints(z->out, j, "kernel_size", k, 2);
	if (dp_attr(op, "stride") && dp_attr(op, "stride")->n > 0)
		dp_pair(op, "stride", 1, v);
	else
		memcpy(v, k, sizeof v);
	dp_setints(z->out, j, "stride", v, 2);
	if (op->kind == Amaxpool) {
		dp_pair(op, "dilation", 1, v);
		dp_setints(z->out, j, "dilation", v, 2);
	}
	dp_pair(op, "padding", 0, v);
	dp_setints(z->out, j, "padding", v, 2);
	return 0;
}

/* A 1-D aten.convolution (x [N, C, L], w [O, C/g, k]) as the 2-D one of
 * x viewed [N, C, 1, L] by w viewed [O, C/g, 1, k], stride, padding and
 * dilation (1, s), (0, p), (1, d), the result viewed [N, O, L']: the same
 * sums in the same order. */
static int
conv1d(Lz *z, const Op *op)
{
	const Type *tx = IT(0), *tw = IT(1);
	int64_t x4[4] = { tx->dim[0], tx->dim[1], 1, tx->dim[2] };
	int64_t w4[4] = { tw->dim[0], tw->dim[1], 1, tw->dim[2] }, v[2];
	int in[3], k;
	static const char *const keys[3] = { "stride", "padding", "dilation" };

	in[0] = lz_view(z, X(0), x4, 4);
	in[1] = lz_view(z, X(1), w4, 4);
	if (op->nin > 2)
		in[2] = X(2);
	if (in[0] < 0 || in[1] < 0)
		return -1;
	k = lz_begin(z, Aconv, in, op->nin);
	for (int i = 0; i < 3; i++) {
		dp_pair(op, keys[i], i == 1 ? 0 : 1, v);
		v[1] = v[0];
		v[0] = i == 1 ? 0 : 1;
		dp_setints(z->out, k, keys[i], v, 2);
	}
	dp_seti(z->out, k, "groups", dp_geti(op, "groups", 1));
	return bindas(z, op, lz_end(z, k));
}

static int block(Lz *z, int x, int d, int64_t n, double value);
static int take(Lz *z, int x, int d, int idx);

/* The 3 values of a 3-D convolution's attribute (one value: 3 times). */
static void
triple(const Op *op, const char *key, int64_t def, int64_t out[3])
{
	const Attr *a = dp_attr(op, key);

	for (int i = 0; i < 3; i++)
		out[i] = !a || a->n == 0 ? def : a->ints[a->n == 1 ? 0 : i];
}

/* A 3-D convolution as one 2-D convolution over the depth taps stacked
 * along the channels: x [N, C, D, H, W] and w [O, Cg, KD, KH, KW].  For
 * each depth tap kd, the input planes it reads at each output depth od
 * (od·sd + kd·dd − pd, zero planes where that falls in the padding: a
 * strided aten.slice between aten.full blocks), [N, C, OD, H, W]; the KD of
 * them concatenated group by group, [N, G, KD, Cg, OD, H, W], permuted to
 * [N, OD, G, KD, Cg, H, W] and viewed [N·OD, G·KD·Cg, H, W]; the weight
 * permuted to [O, KD, Cg, KH, KW] and viewed [O, KD·Cg, KH, KW]; the 2-D
 * convolution with (H, W)'s stride, padding and dilation and the groups,
 * [N·OD, O, OH, OW], viewed [N, OD, O, OH, OW] and permuted to the result.
 * Each output sums over (kd, c, kh, kw). */
static int
conv3dv(Lz *z, int x, int w, int b, const int64_t st[3], const int64_t pd[3],
        const int64_t dl[3], int64_t G, const Type *ot)
{
	const Type *tx = lz_type(z, x), *tw = lz_type(z, w);
	int64_t v[7], pm[7] = { 0, 4, 1, 2, 3, 5, 6 }, pw[5] = { 0, 2, 1, 3, 4 };
	int64_t N = tx->dim[0], D = tx->dim[2], H = tx->dim[3], W = tx->dim[4];
	int64_t O = tw->dim[0], Cg = tw->dim[1], KD = tw->dim[2], KH = tw->dim[3], KW = tw->dim[4];
	int64_t OD = ot->dim[2], OH = ot->dim[3], OW = ot->dim[4], kd, two[2];
	int in[3] = { -1, -1, b }, xs[3], k, y, *parts;

	parts = dp_alloc(z->out->arena, (size_t)KD, sizeof *parts);
	for (kd = 0; kd < KD; kd++) {
		int64_t off = kd * dl[0] - pd[0], lo = 0, hi = OD;
		int m = 0;
		while (lo < OD && lo * st[0] + off < 0)
			lo++;
		while (hi > lo && (hi - 1) * st[0] + off >= D)
			hi--;
		if (lo > 0)
			xs[m++] = block(z, x, 2, lo, 0);
		if (hi > lo)
			xs[m++] = lz_slice(z, x, 2, lo * st[0] + off, (hi - 1) * st[0] + off + 1, st[0]);
		if (hi < OD)
			xs[m++] = block(z, x, 2, OD - hi, 0);
		y = m == 1 ? xs[0] : lz_cat(z, xs, m, 2);
		v[0] = N, v[1] = G, v[2] = 1, v[3] = Cg, v[4] = OD, v[5] = H, v[6] = W;
		parts[kd] = lz_view(z, y, v, 7);
		if (parts[kd] < 0)
			return -1;
	}
	y = KD == 1 ? parts[0] : lz_cat(z, parts, (int)KD, 2);
	v[0] = N * OD, v[1] = G * KD * Cg, v[2] = H, v[3] = W;
	in[0] = lz_view(z, lz_permute(z, y, pm, 7), v, 4);
	v[0] = O, v[1] = KD * Cg, v[2] = KH, v[3] = KW;
	in[1] = lz_view(z, lz_permute(z, w, pw, 5), v, 4);
	if (in[0] < 0 || in[1] < 0)
		return -1;
	k = lz_begin(z, Aconv, in, b >= 0 ? 3 : 2);
	two[0] = st[1], two[1] = st[2];
	dp_setints(z->out, k, "stride", two, 2);
	two[0] = pd[1], two[1] = pd[2];
	dp_setints(z->out, k, "padding", two, 2);
	two[0] = dl[1], two[1] = dl[2];
	dp_setints(z->out, k, "dilation", two, 2);
	dp_seti(z->out, k, "groups", G);
	v[0] = N, v[1] = OD, v[2] = O, v[3] = OH, v[4] = OW;
	return lz_permute(z, lz_view(z, lz_end(z, k), v, 5), pw, 5);
}

static int
conv3d(Lz *z, const Op *op)
{
	int64_t st[3], pd[3], dl[3];

	triple(op, "stride", 1, st);
	triple(op, "padding", 0, pd);
	triple(op, "dilation", 1, dl);
	return bind(z, op, conv3dv(z, X(0), X(1), op->nin > 2 ? X(2) : -1, st, pd, dl,
	                           dp_geti(op, "groups", 1), OT));
}

/* A transposed convolution (1-, 2- or 3-D; ConvTranspose) as the direct one
 * it equals: x with stride − 1 zeros after each element of each spatial
 * axis (a view with an axis of 1, aten.cat with a zero block, the trailing
 * zeros sliced off), padded by dilation·(k − 1) − padding on each side
 * (output_padding more at the end; a slice where negative); the weight
 * [C, O/g, k...] regrouped to [O, C/g, k...] (view, permute) and reversed
 * along each spatial axis (aten.index); then stride 1, no padding, the
 * dilation and groups, and the bias.  Each output sums the same products
 * as PyTorch's (in another order). */
static int
convtr(Lz *z, const Op *op)
{
	const Type *tx = IT(0), *tw = IT(1);
	int n = tx->rank - 2, x = X(0), w = X(1), b = op->nin > 2 ? X(2) : -1, in[3], k;
	int64_t st[3], pd[3], dl[3], opd[3], one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
	int64_t G = dp_geti(op, "groups", 1), C = tx->dim[1], O = OT->dim[1], v[DP_MAXRANK];
	int64_t pm[DP_MAXRANK];
	static const char *const keys[4] = { "stride", "padding", "dilation", "output_padding" };
	int64_t *vals[4] = { st, pd, dl, opd }, defs[4] = { 1, 0, 1, 0 };

	for (int j = 0; j < 4; j++) {
		const Attr *a = dp_attr(op, keys[j]);
		for (int i = 0; i < n; i++)
			vals[j][i] = !a || a->n == 0 ? defs[j] : a->ints[a->n == 1 ? 0 : i];
	}
	for (int i = 0; i < n && x >= 0; i++) {
		int a = 2 + i, r = lz_type(z, x)->rank;
		int64_t L = lz_type(z, x)->dim[a], kk = tw->dim[a], lo, hi, m;
		if (st[i] > 1 && L > 0) {   /* zeros between the elements */
			int xs[2];
			for (int j = 0, q = 0; j < r; j++) {
				v[q++] = lz_type(z, x)->dim[j];
				if (j == a)
					v[q++] = 1;
			}
			xs[0] = lz_view(z, x, v, r + 1);
			xs[1] = xs[0] < 0 ? -1 : block(z, xs[0], a + 1, st[i] - 1, 0);
			for (int j = 0; j < r; j++)   /* [.., L, st, ..] viewed [.., L·st, ..] */
				v[j] = j < a ? v[j] : j == a ? L * st[i] : v[j + 1];
			x = lz_slice(z, lz_view(z, lz_cat(z, xs, 2, a + 1), v, r), a, 0, (L - 1) * st[i] + 1, 1);
		}
		m = x < 0 ? 0 : lz_type(z, x)->dim[a];
		lo = dl[i] * (kk - 1) - pd[i], hi = lo + opd[i];
		if (lo < 0 || hi < 0)
			x = lz_slice(z, x, a, lo < 0 ? -lo : 0, hi < 0 ? m + hi : m, 1);
		if (lo > 0 || hi > 0) {
			int xs[3], c = 0;
			if (lo > 0)
				xs[c++] = block(z, x, a, lo, 0);
			xs[c++] = x;
			if (hi > 0)
				xs[c++] = block(z, x, a, hi, 0);
			x = lz_cat(z, xs, c, a);
		}
	}
	/* the weight: [C, O/g, k...] -> [g, C/g, O/g, k...] -> [g, O/g, C/g, k...] -> [O, C/g, k...] */
	v[0] = G, v[1] = C / G, v[2] = O / G;
	for (int i = 0; i < n; i++)
		v[3 + i] = tw->dim[2 + i];
	pm[0] = 0, pm[1] = 2, pm[2] = 1;
	for (int i = 0; i < n; i++)
		pm[3 + i] = 3 + i;
	w = lz_permute(z, lz_view(z, w, v, n + 3), pm, n + 3);
	v[0] = O, v[1] = C / G;
	for (int i = 0; i < n; i++)
		v[2 + i] = tw->dim[2 + i];
	w = lz_view(z, w, v, n + 2);
	for (int i = 0; i < n; i++) {   /* each spatial axis reversed */
		int64_t kk = tw->dim[2 + i];
		if (kk < 2)
			continue;
		k = lz_begin(z, Aarange, NULL, 0);
		dp_setf(z->out, k, "start", (double)(kk - 1));
		dp_setf(z->out, k, "end", -1);
		dp_setf(z->out, k, "step", -1);
		dp_sets(z->out, k, "dtype", "i64");
		w = take(z, w, 2 + i, lz_end(z, k));
	}
	if (x < 0 || w < 0)
		return -1;
	if (n == 3)
		return bind(z, op, conv3dv(z, x, w, b, one, zero, dl, G, OT));
	if (n == 1) {   /* viewed with a height of 1 */
		const Type *t = lz_type(z, x), *u = lz_type(z, w);
		int64_t x4[4] = { t->dim[0], t->dim[1], 1, t->dim[2] }, w4[4] = { u->dim[0], u->dim[1], 1, u->dim[2] };
		x = lz_view(z, x, x4, 4);
		w = lz_view(z, w, w4, 4);
	}
	in[0] = x, in[1] = w, in[2] = b;
	k = lz_begin(z, Aconv, in, b >= 0 ? 3 : 2);
	dp_setints(z->out, k, "stride", one, 2);
	dp_setints(z->out, k, "padding", zero, 2);
	v[0] = 1, v[1] = dl[n == 1 ? 0 : 1];
	if (n == 2)
		v[0] = dl[0];
	dp_setints(z->out, k, "dilation", v, 2);
	dp_seti(z->out, k, "groups", G);
	return bindas(z, op, lz_end(z, k));
}

/* aten.convolution whose windows tile its input (a 2-D kernel larger than
 * 1x1 and its stride alike, no padding, dilation 1, one group, H and W
 * multiples of the kernel: a vision transformer's patch embedding) as one
 * product: x [N, C, H, W] viewed [N, C, H', kh, W', kw] and permuted to
 * the patches [N·H'·W', C·kh·kw], aten.linear by the weight viewed
 * [O, C·kh·kw] (and the bias), the result viewed [N, H', W', O] and
 * permuted to [N, O, H', W'].  The sums run over k = (c·kh + r)·kw + s, as
 * the convolution's.  A product is what the targets run best at this shape
 * (few output pixels, K of hundreds: at batch 1 a convolution kernel's
 * tiles leave most of the GPU idle); the permutes are read in place by the
 * kernels around it.  Any other convolution is copied unchanged. */
static int
r_conv(Lz *z, const Op *op)
{
	const Type *tx, *tw;
	int64_t k[2], st[2], pd[2], dl[2], N, C, O, H, W, v6[6], pm[6] = { 0, 2, 4, 1, 3, 5 };
	int64_t r2[2], w2[2], r4[4], pm4[4] = { 0, 3, 1, 2 };
	int p, y, in[3];

	if (op->nin < 2)
		return lz_copy(z, op);
	if (dp_geti(op, "transposed", 0))
		return convtr(z, op);
	tx = IT(0), tw = IT(1);
	if (tx->rank == 3 && tw->rank == 3)
		return conv1d(z, op);
	if (tx->rank == 5 && tw->rank == 5)
		return conv3d(z, op);
	if (tx->rank != 4 || tw->rank != 4 || dp_geti(op, "groups", 1) != 1)
		return lz_copy(z, op);
	k[0] = tw->dim[2], k[1] = tw->dim[3];
	dp_pair(op, "stride", 1, st);
	dp_pair(op, "padding", 0, pd);
	dp_pair(op, "dilation", 1, dl);
	N = tx->dim[0], C = tx->dim[1], H = tx->dim[2], W = tx->dim[3], O = tw->dim[0];
	if (k[0] * k[1] <= 1 || st[0] != k[0] || st[1] != k[1] || pd[0] || pd[1] || dl[0] != 1 ||
	    dl[1] != 1 || H % k[0] || W % k[1] || tw->dim[1] != C || N * H * W == 0 ||
	    (op->nin > 2 && IT(2)->rank != 1))
		return lz_copy(z, op);
	v6[0] = N, v6[1] = C, v6[2] = H / k[0], v6[3] = k[0], v6[4] = W / k[1], v6[5] = k[1];
	p = lz_permute(z, lz_view(z, X(0), v6, 6), pm, 6);
	r2[0] = N * (H / k[0]) * (W / k[1]), r2[1] = C * k[0] * k[1];
	w2[0] = O, w2[1] = r2[1];
	in[0] = lz_view(z, p, r2, 2);
	in[1] = lz_view(z, X(1), w2, 2);
	if (op->nin > 2)
		in[2] = X(2);
	if (in[0] < 0 || in[1] < 0)
		return -1;
	y = lz_end(z, lz_begin(z, Alinear, in, op->nin > 2 ? 3 : 2));
	r4[0] = N, r4[1] = H / k[0], r4[2] = W / k[1], r4[3] = O;
	return bindas(z, op, lz_permute(z, lz_view(z, y, r4, 4), pm4, 4));
}

/* ---- decompositions ---- */

static int take(Lz *z, int x, int d, int idx);

static int
r_unflatten(Lz *z, const Op *op)
{
	return r_view(z, op);
}

/* expand_as(x, other): expand(x, other's sizes). */
static int
r_expandas(Lz *z, const Op *op)
{
	return bind(z, op, lz_expand(z, X(0), OT->dim, OT->rank));
}

/* addcmul(s, a, b, value) = s + value·a·b; addcdiv: s + value·a/b. */
static int
r_addcmul(Lz *z, const Op *op)
{
	double v = dp_getf(op, "value", 1);
	int t = X(1);

	if (v != 1)
		t = lz_op2(z, Amul, lz_scalar(z, v, IT(1)->dtype), t);
	t = lz_op2(z, op->kind == Aaddcmul ? Amul : Adiv, t, X(2));
	return bind(z, op, lz_op2(z, Aadd, X(0), t));
}

/* masked_fill(x, mask, value) = where(mask, value, x). */
static int
r_maskfill(Lz *z, const Op *op)
{
	int v = op->nin == 3 ? X(2) : lz_scalar(z, dp_getf(op, "value", 0), IT(0)->dtype);
	int in[3] = { X(1), v, X(0) }, k;

	if (v < 0)
		return -1;
	k = lz_begin(z, Awhere, in, 3);
	return bind(z, op, lz_end(z, k));
}

/* fill(x, value) = full_like(x, value); a rank-0 tensor value expanded. */
static int
r_fill(Lz *z, const Op *op)
{
	int x = X(0), k;

	if (op->nin == 2)
		return bind(z, op, lz_expand(z, X(1), OT->dim, OT->rank));
	k = lz_begin(z, Afulllike, &x, 1);

	dp_setf(z->out, k, "value", dp_getf(op, "value", 0));
	return bind(z, op, lz_end(z, k));
}

/* A sum or mean over dim (empty: all) of x. */
static int
reduce(Lz *z, int kind, int x, const Attr *dim, int keep)
{
	int k = lz_begin(z, kind, &x, 1);
	int64_t none = 0;

	if (x < 0)
		return -1;
	dp_setints(z->out, k, "dim", dim ? dim->ints : &none, dim ? dim->n : 0);
	dp_seti(z->out, k, "keepdim", keep);
	return lz_end(z, k);
}

/* linalg_vector_norm: ord 2 = √Σx², ord 1 = Σ|x|. */
static int
r_vecnorm(Lz *z, const Op *op)
{
	double ord = dp_getf(op, "ord", 2);
	const Attr *dim = dp_attr(op, "dim");
	int keep = (int)dp_geti(op, "keepdim", 0);

	if (ord == 2)
		return bind(z, op, lz_op1(z, Asqrt, reduce(z, Asum, lz_op2(z, Amul, X(0), X(0)), dim,
		                                           keep)));
	if (ord == 1)
		return bind(z, op, reduce(z, Asum, lz_op1(z, Aabs, X(0)), dim, keep));
	return lz_fail(z, "ord %g is not supported (1 or 2)", ord);
}

/* var(x, dim, correction) = Σ(x − mean)² / (n − correction). */
static int
r_var(Lz *z, const Op *op)
{
	const Attr *dim = dp_attr(op, "dim");
	const Type *t = IT(0);
	int64_t n = 1;
	int d = lz_op2(z, Asub, X(0), reduce(z, Amean, X(0), dim, 1));
	double c = dp_getf(op, "correction", 1);

	for (int i = 0; i < t->rank; i++)
		if (!dim || dim->n == 0)
			n *= t->dim[i];
	for (int i = 0; dim && i < dim->n; i++)
		n *= t->dim[axis(dim->ints[i], t->rank)];
	d = reduce(z, Asum, lz_op2(z, Amul, d, d), dim, (int)dp_geti(op, "keepdim", 0));
	return bind(z, op, lz_op2(z, Adiv, d, lz_scalar(z, n - c > 0 ? n - c : 0, t->dtype)));
}

/* group_norm(x [N,C,...], w, b, G): layer norm of x viewed [N, G, rest],
 * then the per-channel affine on x's shape. */
static int
r_groupnorm(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t G = dp_geti(op, "num_groups", 1), v[3] = { t->dim[0], G, dp_numel(t) / t->dim[0] / G };
	int64_t cs[DP_MAXRANK];
	int x, k, i;

	x = lz_view(z, X(0), v, 3);
	if (x < 0)
		return -1;
	k = lz_begin(z, Alayernorm, &x, 1);
	dp_setints(z->out, k, "normalized_shape", &v[2], 1);
	dp_setf(z->out, k, "eps", dp_getf(op, "eps", 1e-5));
	x = lz_view(z, lz_end(z, k), t->dim, t->rank);
	cs[0] = t->dim[1];
	for (i = 2; i < t->rank; i++)
		cs[i - 1] = 1;
	if (op->nin > 1)
		x = lz_op2(z, Amul, x, lz_view(z, X(1), cs, t->rank - 1));
	if (op->nin > 2)
		x = lz_op2(z, Aadd, x, lz_view(z, X(2), cs, t->rank - 1));
	return bind(z, op, x);
}

/* A filled block of x's shape but n along dim d. */
static int
block(Lz *z, int x, int d, int64_t n, double value)
{
	Type t = *lz_type(z, x);
	int k = lz_begin(z, Afull, NULL, 0);

	t.dim[d] = n;
	dp_setints(z->out, k, "size", t.dim, t.rank);
	dp_setf(z->out, k, "value", value);
	dp_sets(z->out, k, "dtype", dp_dtype_name[t.dtype]);
	return lz_end(z, k);
}

/* The i64 indices into a dim of n that reflect / replicate padding by lo
 * and hi reads: j = i − lo for i < lo + n + hi, then reflect: n−1 − |n−1 −
 * |j||, replicate: j clamped to [0, n−1]. */
static int
padindex(Lz *z, int64_t n, int64_t lo, int64_t hi, int reflect)
{
	int k = lz_begin(z, Aarange, NULL, 0), j, m;

	dp_setf(z->out, k, "start", (double)-lo);
	dp_setf(z->out, k, "end", (double)(n + hi));
	dp_setf(z->out, k, "step", 1);
	dp_sets(z->out, k, "dtype", "i64");
	j = lz_end(z, k);
	if (!reflect) {
		if (j < 0)
			return -1;
		k = lz_begin(z, Aclamp, &j, 1);
		dp_setf(z->out, k, "min", 0);
		dp_setf(z->out, k, "max", (double)(n - 1));
		return lz_end(z, k);
	}
	m = lz_scalar(z, (double)(n - 1), DP_I64);
	j = lz_op2(z, Asub, m, lz_op1(z, Aabs, lz_op2(z, Asub, m, lz_op1(z, Aabs, j))));
	return j;
}

/* constant_pad_nd and the other modes of pad, per padded dim (last
 * first): constant, a slice for a negative pad and filled blocks
 * concatenated for a positive one; circular, the wrapped slices
 * concatenated; reflect and replicate, a gather of padindex's indices. */
static int
r_pad(Lz *z, const Op *op)
{
	const Attr *p = dp_attr(op, "pad");
	const char *mode = dp_gets(op, "mode");
	double val = dp_getf(op, "value", 0);
	int x = X(0), r = IT(0)->rank, md;

	md = !mode || !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 :
	     !strcmp(mode, "replicate") ? 2 : !strcmp(mode, "circular") ? 3 : -1;
	if (md < 0)
		return lz_fail(z, "mode \"%s\" is not supported (constant, reflect, replicate, "
		               "circular)", mode);
	for (int i = 0; i < p->n / 2 && x >= 0; i++) {
		int d = r - 1 - i;
		int64_t lo = p->ints[2 * i], hi = p->ints[2 * i + 1], n = lz_type(z, x)->dim[d];
		if (md != 0 && (lo < 0 || hi < 0 || (md != 2 && (lo > n - (md == 1) ||
		                                                  hi > n - (md == 1)))))
			return lz_fail(z, "%s padding of %lld and %lld does not fit a dim of %lld", mode,
			               (long long)lo, (long long)hi, (long long)n);
		if (md == 1 || md == 2) {
			if (lo || hi)
				x = take(z, x, d, padindex(z, n, lo, hi, md == 1));
			continue;
		}
		if (lo < 0 || hi < 0)
			x = lz_slice(z, x, d, lo < 0 ? -lo : 0, hi < 0 ? n + hi : n, 1);
		if (lo > 0 || hi > 0) {
			int xs[3], m = 0;
			if (lo > 0)
				xs[m++] = md ? lz_slice(z, x, d, n - lo, n, 1) : block(z, x, d, lo, val);
			xs[m++] = x;
			if (hi > 0)
				xs[m++] = md ? lz_slice(z, x, d, 0, hi, 1) : block(z, x, d, hi, val);
			x = lz_cat(z, xs, m, d);
		}
	}
	return bind(z, op, x);
}

/* roll: per dim, the last s elements then the others (no dims: of the
 * flattened tensor, viewed back). */
static int
r_roll(Lz *z, const Op *op)
{
	const Attr *sh = dp_attr(op, "shifts"), *dims = dp_attr(op, "dims");
	const Type *t = IT(0);
	int x = X(0), flat = !dims || dims->n == 0;

	if (flat) {
		int64_t n = dp_numel(t);
		x = lz_view(z, x, &n, 1);
	}
	for (int i = 0; i < sh->n && x >= 0; i++) {
		int d = flat ? 0 : axis(dims->ints[i], t->rank);
		int64_t n = lz_type(z, x)->dim[d], s;
		if (n == 0)
			continue;
		s = ((sh->ints[i] % n) + n) % n;
		if (s == 0)
			continue;
		int xs[2];
		xs[0] = lz_slice(z, x, d, n - s, n, 1);
		xs[1] = lz_slice(z, x, d, 0, n - s, 1);
		x = lz_cat(z, xs, 2, d);
	}
	if (flat)
		x = lz_view(z, x, t->dim, t->rank);
	return bind(z, op, x);
}

/* diff(x, n, dim[, prepend][, append]): x with prepend and append
 * concatenated along dim, then n times x[1:] − x[:-1]. */
static int
r_diff(Lz *z, const Op *op)
{
	int d = axis(dp_geti(op, "dim", -1), IT(0)->rank), x = X(0);
	int64_t n = dp_geti(op, "n", 1);

	if (op->nin > 1) {
		int xs[3], m = 0, j = 1;
		if (dp_geti(op, "prepend", 0))
			xs[m++] = X(j++);
		xs[m++] = X(0);
		if (dp_geti(op, "append", 0))
			xs[m++] = X(j);
		x = lz_cat(z, xs, m, d);
	}

	for (int64_t i = 0; i < n && x >= 0; i++) {
		int64_t m = lz_type(z, x)->dim[d];
		int lo, hi;
		if (m == 0)
			break;
		lo = lz_slice(z, x, d, 0, m - 1, 1);
		hi = lz_slice(z, x, d, 1, m, 1);
		x = lz_op2(z, Asub, hi, lo);
	}
	return bind(z, op, x);
}

/* slice_scatter(x, src, dim, start, end, 1): x's head, src, x's tail. */
static int
r_slicescat(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int d = axis(dp_geti(op, "dim", 0), t->rank);
	int64_t n = t->dim[d], s = dp_geti(op, "start", 0), e = dp_geti(op, "end", n);
	int xs[3], m = 0;

	if (dp_geti(op, "step", 1) != 1)
		return lz_fail(z, "only step 1 is supported");
	s = s < 0 ? (s + n < 0 ? 0 : s + n) : s > n ? n : s;
	e = e < 0 ? (e + n < 0 ? 0 : e + n) : e > n ? n : e;
	if (e < s)
		e = s;
	if (s > 0)
		xs[m++] = lz_slice(z, X(0), d, 0, s, 1);
	xs[m++] = X(1);
	if (e < n)
		xs[m++] = lz_slice(z, X(0), d, e, n, 1);
	return bind(z, op, lz_cat(z, xs, m, d));
}

/* select_scatter(x, src, dim, index): src given its axis back, then as
 * slice_scatter of one. */
static int
r_selscat(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int d = axis(dp_geti(op, "dim", 0), t->rank);
	int64_t n = t->dim[d], i = dp_geti(op, "index", 0), sz[DP_MAXRANK];
	int xs[3], m = 0;

	if (i < 0)
		i += n;
	memcpy(sz, t->dim, sizeof sz);
	sz[d] = 1;
	if (i > 0)
		xs[m++] = lz_slice(z, X(0), d, 0, i, 1);
	xs[m++] = lz_view(z, X(1), sz, t->rank);
	if (i + 1 < n)
		xs[m++] = lz_slice(z, X(0), d, i + 1, n, 1);
	return bind(z, op, lz_cat(z, xs, m, d));
}

/* log_softmax = log(softmax). */
static int
r_logsoftmax(Lz *z, const Op *op)
{
	int x = X(0), k = lz_begin(z, Osoftmax, &x, 1);

	dp_seti(z->out, k, "dim", dp_geti(op, "dim", 0));
	return bind(z, op, lz_op1(z, Alog, lz_end(z, k)));
}

/* isnan(x) = x != x; isinf(x) = |x| == inf. */
static int
r_isnan(Lz *z, const Op *op)
{
	int inf, a;

	if (op->kind == Aisnan)
		return bind(z, op, lz_op2(z, Ane, X(0), X(0)));
	inf = lz_scalar(z, INFINITY, IT(0)->dtype);
	a = lz_op1(z, Aabs, X(0));
	return bind(z, op, lz_op2(z, Aeq, a, inf));
}

/* On bool tensors, a product is a logical and and a sum (alpha 1) a
 * logical or (PyTorch's decompositions of isfinite multiply masks). */
static int
r_boolarith(Lz *z, const Op *op)
{
	if (IT(0)->dtype != DP_BOOL || IT(1)->dtype != DP_BOOL ||
	    (op->kind == Aadd && dp_getf(op, "alpha", 1) != 1))
		return lz_copy(z, op);
	return bind(z, op, lz_op2(z, op->kind == Amul ? Aand : Aor, X(0), X(1)));
}

/* elu = scale · (x > 0 ? x : alpha·(exp(input_scale·x) − 1)). */
static int
r_elu(Lz *z, const Op *op)
{
	int dt = IT(0)->dtype, x = X(0), e, in[3];
	double al = dp_getf(op, "alpha", 1), sc = dp_getf(op, "scale", 1);
	double is = dp_getf(op, "input_scale", 1);

	e = is == 1 ? x : lz_op2(z, Amul, x, lz_scalar(z, is, dt));
	e = lz_op1(z, Aexpm1, e);
	if (al != 1)
		e = lz_op2(z, Amul, e, lz_scalar(z, al, dt));
	in[0] = lz_op2(z, Agt, x, lz_scalar(z, 0, dt));
	in[1] = x;
	in[2] = e;
	if (in[0] < 0 || e < 0)
		return -1;
	x = lz_end(z, lz_begin(z, Awhere, in, 3));
	if (sc != 1)
		x = lz_op2(z, Amul, x, lz_scalar(z, sc, dt));
	return bind(z, op, x);
}

/* The i64 indices ⌊i·in/out⌋ (f32 arithmetic, PyTorch's nearest rule),
 * i < out. */
static int
nearest(Lz *z, int64_t in, int64_t out, double sf)
{
	int k = lz_begin(z, Aarange, NULL, 0), a, c;

	dp_setf(z->out, k, "start", 0);
	dp_setf(z->out, k, "end", (double)out);
	dp_setf(z->out, k, "step", 1);
	dp_sets(z->out, k, "dtype", "f32");
	a = lz_end(z, k);
	c = lz_scalar(z, sf > 0 ? (double)(float)(1.0 / sf) : (double)((float)in / (float)out), DP_F32);
	a = lz_op2(z, Amul, a, c);
	c = lz_scalar(z, (double)(in - 1), DP_F32);
	a = lz_op2(z, Aminimum, lz_op1(z, Afloor, a), c);
	if (a < 0)
		return -1;
	k = lz_begin(z, Ocast, &a, 1);
	dp_sets(z->out, k, "dtype", "i64");
	return lz_end(z, k);
}

/* x gathered along dim d at idx (aten.index). */
static int
take(Lz *z, int x, int d, int idx)
{
	int in[2] = { x, idx }, k;

	if (x < 0 || idx < 0)
		return -1;
	k = lz_begin(z, Aindex, in, 2);
	dp_seti(z->out, k, "dim", d);
	return lz_end(z, k);
}

/* The index I checked against a dimension of n, its negative values
 * counted from the end (as PyTorch's index ops take them): ar, the
 * dimension's aten.arange (lz_arange), gathered at I (aten.index), whose
 * kernels report a value outside [-n, n), the cpu's as an error, cuda's
 * through the fault flag, so that an index out of range stops the run
 * instead of writing nothing or the wrong row. */
static int
inrange(Lz *z, int I, int ar)
{
	return I < 0 ? -1 : take(z, ar, 0, I);
}

/* The index I with its negative values counted from the end of a
 * dimension of n (I + n where I < 0), unchecked: elementwise, so that it
 * fuses where the index_write that reads it does (a KV cache's write in a
 * GEMV's tail); a value still outside [0, n) writes nothing there. */
static int
fromend(Lz *z, int I, int64_t n)
{
	int in[3];

	in[0] = lz_op2(z, Alt, I, lz_scalar(z, 0, DP_I64));
	in[1] = lz_op2(z, Aadd, I, lz_scalar(z, (double)n, DP_I64));
	in[2] = I;
	if (in[0] < 0 || in[1] < 0)
		return -1;
	return lz_end(z, lz_begin(z, Awhere, in, 3));
}

/* upsample_nearest2d: a gather along H and one along W. */
static int
r_upnearest(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int x = X(0);

	if (OT->dim[2] != t->dim[2])   /* (the same size: PyTorch copies, whatever the scale) */
		x = take(z, x, 2, nearest(z, t->dim[2], OT->dim[2], dp_getf(op, "scale_h", 0)));
	if (OT->dim[3] != t->dim[3])
		x = take(z, x, 3, nearest(z, t->dim[3], OT->dim[3], dp_getf(op, "scale_w", 0)));
	if (x == X(0))
		x = lz_op1(z, Aclone, x);
	return bind(z, op, x);
}

/* flip: a gather of the reversed indices along each dim. */
static int
r_flip(Lz *z, const Op *op)
{
	const Attr *dims = dp_attr(op, "dims");
	int x = X(0), r = IT(0)->rank;

	for (int i = 0; i < dims->n && x >= 0; i++) {
		int d = axis(dims->ints[i], r), k = lz_begin(z, Aarange, NULL, 0);
		dp_setf(z->out, k, "start", (double)(IT(0)->dim[d] - 1));
		dp_setf(z->out, k, "end", -1);
		dp_setf(z->out, k, "step", -1);
		dp_sets(z->out, k, "dtype", "i64");
		x = take(z, x, d, lz_end(z, k));
	}
	if (x == X(0))
		x = lz_op1(z, Aclone, x);
	return bind(z, op, x);
}

/* repeat: x viewed with a 1 before each dim, expanded by the repeats,
 * viewed as the result. */
static int
r_repeat(Lz *z, const Op *op)
{
	const Attr *rp = dp_attr(op, "repeats");
	const Type *t = IT(0);
	int64_t v[2 * DP_MAXRANK], e[2 * DP_MAXRANK];
	int n = rp->n, i;

	if (2 * n > DP_MAXRANK)
		return lz_fail(z, "rank %d is too high for repeat (at most %d)", n, DP_MAXRANK / 2);
	for (i = 0; i < n; i++) {
		int j = i - (n - t->rank);
		v[2 * i] = 1;
		v[2 * i + 1] = j >= 0 ? t->dim[j] : 1;
		e[2 * i] = rp->ints[i];
		e[2 * i + 1] = v[2 * i + 1];
	}
	return bind(z, op, lz_view(z, lz_expand(z, lz_view(z, X(0), v, 2 * n), e, 2 * n),
	                           OT->dim, OT->rank));
}

/* repeat_interleave: x viewed with a 1 after dim (flat: [n, 1]), expanded
 * by the repeats there, viewed as the result. */
static int
r_repeatil(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t v[DP_MAXRANK], e[DP_MAXRANK], r = dp_geti(op, "repeats", 1);
	int n = 0;

	if (!dp_attr(op, "dim")) {
		v[0] = e[0] = dp_numel(t), v[1] = 1, e[1] = r, n = 2;
	} else {
		int d = axis(dp_geti(op, "dim", 0), t->rank);
		if (t->rank >= DP_MAXRANK)
			return lz_fail(z, "rank %d is too high for repeat_interleave (at most %d)",
			               t->rank, DP_MAXRANK - 1);
		for (int i = 0; i < t->rank; i++) {
			v[n] = e[n] = t->dim[i], n++;
			if (i == d)
				v[n] = 1, e[n] = r, n++;
		}
	}
	return bind(z, op, lz_view(z, lz_expand(z, lz_view(z, X(0), v, n), e, n), OT->dim, OT->rank));
}

/* unfold(x, dimension d, size, step): x gathered along d (aten.index) at
 * i·step + j for the window i and its element j ([n, size] from two
 * aten.arange, viewed flat), viewed with d as [n, size], the size axis
 * moved last (aten.permute). */
static int
r_unfold(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int r = t->rank, d = r ? axis(dp_geti(op, "dimension", 0), r) : 0;
	int64_t sz = dp_geti(op, "size", 1), st = dp_geti(op, "step", 1), n = OT->dim[r ? d : 0];
	int64_t v[DP_MAXRANK], p[DP_MAXRANK], c[2] = { n, 1 }, w[2] = { 1, sz }, f = n * sz;
	int x = X(0), k, a, b;

	if (r == 0)
		return bindas(z, op, x);
	k = lz_begin(z, Aarange, NULL, 0);
	dp_setf(z->out, k, "start", 0);
	dp_setf(z->out, k, "end", (double)(n * st));
	dp_setf(z->out, k, "step", (double)st);
	dp_sets(z->out, k, "dtype", "i64");
	a = lz_view(z, lz_end(z, k), c, 2);
	k = lz_begin(z, Aarange, NULL, 0);
	dp_setf(z->out, k, "start", 0);
	dp_setf(z->out, k, "end", (double)sz);
	dp_setf(z->out, k, "step", 1);
	dp_sets(z->out, k, "dtype", "i64");
	b = lz_view(z, lz_end(z, k), w, 2);
	x = take(z, x, d, lz_view(z, lz_op2(z, Aadd, a, b), &f, 1));
	for (int i = 0, j = 0; i < r; i++) {
		v[j++] = i == d ? n : t->dim[i];
		if (i == d)
			v[j++] = sz;
	}
	for (int i = 0, j = 0; i <= r; i++)   /* the axes but d + 1, then d + 1 */
		if (i != d + 1)
			p[j++] = i;
	p[r] = d + 1;
	return bind(z, op, lz_permute(z, lz_view(z, x, v, r + 1), p, r + 1));
}

/* cat and stack of more than LZ_CATMAX tensors: cats of cats (lz_cat); a
 * stack's operands viewed with the new axis of 1 first. */
static int
r_bigcat(Lz *z, const Op *op)
{
	int n = op->nin, *xs, d;
	const Type *t = IT(0);

	if (n <= LZ_CATMAX)
		return lz_copy(z, op);
	d = axis(dp_geti(op, "dim", 0), t->rank + (op->kind == Astack));
	xs = dp_alloc(z->out->arena, (size_t)n, sizeof *xs);
	for (int i = 0; i < n; i++) {
		xs[i] = X(i);
		if (op->kind == Astack) {
			int64_t v[DP_MAXRANK];
			t = IT(i);
			for (int j = 0, k = 0; j <= t->rank; j++)
				v[j] = j == d ? 1 : t->dim[k++];
			xs[i] = lz_view(z, xs[i], v, t->rank + 1);
		}
	}
	return bind(z, op, lz_cat(z, xs, n, d));
}

/* baddbmm(s, b1, b2) = beta·s + alpha·bmm(b1, b2); s is not read where beta
 * is 0 (as PyTorch: its NaNs do not reach the result). */
static int
r_baddbmm(Lz *z, const Op *op)
{
	double a = dp_getf(op, "alpha", 1), b = dp_getf(op, "beta", 1);
	int dt = IT(1)->dtype, y = product(z, Abmm, X(1), X(2)), s = X(0);

	if (a != 1)
		y = lz_op2(z, Amul, y, lz_scalar(z, a, dt));
	if (b == 0)
		return bindas(z, op, y);
	if (b != 1)
		s = lz_op2(z, Amul, s, lz_scalar(z, b, dt));
	return bind(z, op, lz_op2(z, Aadd, s, y));
}

/* copy(x, src): src cast to x's dtype, expanded to x's shape. */
static int
r_copyto(Lz *z, const Op *op)
{
	int s = X(1);

	if (IT(1)->dtype != IT(0)->dtype) {
		int k = lz_begin(z, Ocast, &s, 1);
		dp_sets(z->out, k, "dtype", dp_dtype_name[IT(0)->dtype]);
		s = lz_end(z, k);
	}
	return bind(z, op, lz_expand(z, s, OT->dim, OT->rank));
}

/* as_strided that describes a view: the strides of a permutation of a
 * dense shape (sizes of 1 with any stride), offset 0, every element of x:
 * a view then a permute. */
static int
r_asstrided(Lz *z, const Op *op)
{
	const Attr *sz = dp_attr(op, "size"), *st = dp_attr(op, "stride");
	int n = sz->n, ord[DP_MAXRANK], i, j;
	int64_t v[DP_MAXRANK], p[DP_MAXRANK], m = 1;

	if (dp_geti(op, "storage_offset", 0) != 0)
		return lz_fail(z, "a storage offset is not supported");
	for (i = 0; i < n; i++)
		ord[i] = i;
	for (i = 1; i < n; i++)   /* axes by stride, largest first (stable) */
		for (j = i; j > 0 && st->ints[ord[j]] > st->ints[ord[j - 1]]; j--) {
			int k = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = k;
		}
	for (i = n - 1; i >= 0; i--) {
		int a = ord[i];
		if (sz->ints[a] != 1 && st->ints[a] != m)
			return lz_fail(z, "strides that do not describe a view of the input are not "
			               "supported");
		m *= sz->ints[a];
	}
	if (m != dp_numel(IT(0)))
		return lz_fail(z, "a view of part of the input is not supported");
	for (i = 0; i < n; i++) {
		v[i] = sz->ints[ord[i]];
		for (j = 0; j < n; j++)
			if (ord[j] == i)
				p[i] = j;
	}
	return bind(z, op, lz_permute(z, lz_view(z, X(0), v, n), p, n));
}

/* all(x) = not(any(not(x))). */
static int
r_all(Lz *z, const Op *op)
{
	int x = lz_op1(z, Anot, X(0)), k;
	const Attr *dim = dp_attr(op, "dim");
	int64_t none = 0;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aany, &x, 1);
	dp_setints(z->out, k, "dim", dim ? dim->ints : &none, dim ? dim->n : 0);
	dp_seti(z->out, k, "keepdim", dp_geti(op, "keepdim", 0));
	return bind(z, op, lz_op1(z, Anot, lz_end(z, k)));
}

/* argmax/argmin (the first index of the largest / smallest; argmin is
 * argmax of −x): over x flattened when no dim is given. */
static int
r_argmax(Lz *z, const Op *op)
{
	const Attr *d = dp_attr(op, "dim");
	int x = op->kind == Aargmin ? lz_op1(z, Aneg, X(0)) : X(0), k;
	int64_t n = dp_numel(IT(0));

	if (!d)
		x = lz_view(z, x, &n, 1);
	if (x < 0)
		return -1;
	k = lz_begin(z, Oargmax, &x, 1);
	dp_seti(z->out, k, "dim", d ? d->i : 0);
	dp_seti(z->out, k, "keepdim", d ? dp_geti(op, "keepdim", 0) : 0);
	x = lz_end(z, k);
	if (!d && x >= 0 && !dp_type_eq(lz_type(z, x), OT))
		x = lz_view(z, x, OT->dim, OT->rank);
	return bind(z, op, x);
}

/* A rank-1 f32 arange: start, start + 1, ... (n values). */
static int
ramp(Lz *z, double start, int64_t n)
{
	int k = lz_begin(z, Aarange, NULL, 0);

	dp_setf(z->out, k, "start", start);
	dp_setf(z->out, k, "end", start + (double)n);
	dp_setf(z->out, k, "step", 1);
	dp_sets(z->out, k, "dtype", "f32");
	return lz_end(z, k);
}

static int
toi64(Lz *z, int x)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Ocast, &x, 1);
	dp_sets(z->out, k, "dtype", "i64");
	return lz_end(z, k);
}

/* Linear interpolation along dim d of x (rank r) from in to out samples,
 * PyTorch's rule: the source s = scale·i (align_corners) or max(scale·(i +
 * 0.5) − 0.5, 0), i0 = ⌊s⌋, i1 = min(i0 + 1, in − 1), y = x[i0]·(1 − λ) +
 * x[i1]·λ with λ = s − i0, all in f32. */
/* PyTorch's source position of each of out samples from in (f32): scale·i
 * (align_corners) or scale·(i + 0.5) − 0.5, scale (in − 1)/(out − 1), or
 * 1/sf where the model gave a scale factor sf (> 0), else in/out. */
static int
source(Lz *z, int64_t in, int64_t out, int align, double sf)
{
	double sc = align ? (out > 1 ? (double)(float)(in - 1) / (float)(out - 1) : 0)
	            : sf > 0 ? (double)(float)(1.0 / sf) : (double)((float)in / (float)out);
	int s = lz_op2(z, Amul, ramp(z, align ? 0 : 0.5, out), lz_scalar(z, sc, DP_F32));

	return align ? s : lz_op2(z, Asub, s, lz_scalar(z, 0.5, DP_F32));
}

static int
lerp(Lz *z, int x, int d, int r, int64_t in, int64_t out, int align, double sf)
{
	int s = source(z, in, out, align, sf), c, i0, i1, l, l0, y0, y1, k;
	int64_t v[DP_MAXRANK];

	if (!align)   /* clamped at 0 for linear interpolation, not for cubic */
		s = lz_op2(z, Amaximum, s, lz_scalar(z, 0, DP_F32));
	i0 = lz_op1(z, Afloor, s);
	l = lz_op2(z, Asub, s, i0);
	l0 = lz_op2(z, Asub, lz_scalar(z, 1, DP_F32), l);
	c = lz_scalar(z, (double)(in - 1), DP_F32);
	i1 = lz_op2(z, Aadd, i0, lz_scalar(z, 1, DP_F32));
	i1 = lz_op2(z, Aminimum, i1, c);
	for (k = 0; k < r - d; k++)
		v[k] = k == 0 ? out : 1;
	l = lz_view(z, l, v, r - d);
	l0 = lz_view(z, l0, v, r - d);
	y1 = lz_op2(z, Amul, take(z, x, d, toi64(z, i1)), l);
	y0 = lz_op2(z, Amul, take(z, x, d, toi64(z, i0)), l0);
	return lz_op2(z, Aadd, y0, y1);
}

/* The cubic convolution kernel of PyTorch's bicubic upsampling (A =
 * -0.75) at distance u: near (|u| <= 1) ((A + 2)·u − (A + 3))·u·u + 1,
 * else ((A·u − 5A)·u + 8A)·u − 4A; u an f32 tensor. */
static int
cubicw(Lz *z, int u, int near)
{
	const double A = -0.75;
	int w;

	if (near) {
		w = lz_op2(z, Amul, lz_scalar(z, A + 2, DP_F32), u);
		w = lz_op2(z, Asub, w, lz_scalar(z, A + 3, DP_F32));
		w = lz_op2(z, Amul, lz_op2(z, Amul, w, u), u);
		return lz_op2(z, Aadd, w, lz_scalar(z, 1, DP_F32));
	}
	w = lz_op2(z, Amul, lz_scalar(z, A, DP_F32), u);
	w = lz_op2(z, Asub, w, lz_scalar(z, 5 * A, DP_F32));
	w = lz_op2(z, Aadd, lz_op2(z, Amul, w, u), lz_scalar(z, 8 * A, DP_F32));
	return lz_op2(z, Asub, lz_op2(z, Amul, w, u), lz_scalar(z, 4 * A, DP_F32));
}

/* Cubic convolution along dim d of x (rank r) from in to out samples, as
 * PyTorch's upsample_bicubic2d: the source s = scale·i (align_corners) or
 * scale·(i + 0.5) − 0.5 (not clamped), i0 = ⌊s⌋, t = s − i0; the taps
 * i0 − 1 .. i0 + 2 clamped to [0, in − 1], weighted by the kernel at t + 1,
 * t, 1 − t, 2 − t and summed in that order, in f32. */
static int
cubic(Lz *z, int x, int d, int r, int64_t in, int64_t out, int align, double sf)
{
	int s = source(z, in, out, align, sf), i0, t, t1, u[4], y = -1, k;
	int64_t v[DP_MAXRANK];

	i0 = lz_op1(z, Afloor, s);
	t = lz_op2(z, Asub, s, i0);
	t1 = lz_op2(z, Asub, lz_scalar(z, 1, DP_F32), t);
	u[0] = cubicw(z, lz_op2(z, Aadd, t, lz_scalar(z, 1, DP_F32)), 0);
	u[1] = cubicw(z, t, 1);
	u[2] = cubicw(z, t1, 1);
	u[3] = cubicw(z, lz_op2(z, Aadd, t1, lz_scalar(z, 1, DP_F32)), 0);
	for (k = 0; k < r - d; k++)
		v[k] = k == 0 ? out : 1;
	for (k = 0; k < 4; k++) {
		int at = lz_op2(z, Aadd, i0, lz_scalar(z, k - 1, DP_F32));
		at = lz_op2(z, Amaximum, at, lz_scalar(z, 0, DP_F32));
		at = lz_op2(z, Aminimum, at, lz_scalar(z, (double)(in - 1), DP_F32));
		int p = lz_op2(z, Amul, take(z, x, d, toi64(z, at)), lz_view(z, u[k], v, r - d));
		y = k ? lz_op2(z, Aadd, y, p) : p;
	}
	return y;
}

/* upsample_bilinear2d: interpolation along H, then along W;
 * upsample_bicubic2d: along W, then along H (PyTorch's order: each of the
 * four rows interpolated first). */
static int
r_upsample(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int x = X(0), al = (int)dp_geti(op, "align_corners", 0), cub = op->kind == Aupbicubic;

	for (int i = 0; i < 2; i++) {
		int d = cub ? 3 - i : 2 + i;
		double sf = dp_getf(op, d == 2 ? "scale_h" : "scale_w", 0);
		if (OT->dim[d] != t->dim[d] || (!al && sf > 0 && (float)(1.0 / sf) != 1.0f))
			x = (cub ? cubic : lerp)(z, x, d, 4, t->dim[d], OT->dim[d], al, sf);
	}
	if (x == X(0))
		x = lz_op1(z, Aclone, x);
	return bind(z, op, x);
}

/* Sums operand x (letters l) over the letters neither the output nor the
 * other operand has; drops them from l. */
static int
sumout(Lz *z, int x, char *l, const char *other, const char *out)
{
	int64_t d[DP_MAXRANK];
	int n = 0, k, j = 0;

	for (k = 0; l[k]; k++)
		if (!strchr(out, l[k]) && !strchr(other, l[k]))
			d[n++] = k;
	if (n == 0 || x < 0)
		return x;
	k = lz_begin(z, Asum, &x, 1);
	dp_setints(z->out, k, "dim", d, n);
	dp_seti(z->out, k, "keepdim", 0);
	x = lz_end(z, k);
	for (k = 0; l[k]; k++)
		if (strchr(out, l[k]) || strchr(other, l[k]))
			l[j++] = l[k];
	l[j] = 0;
	return x;
}

/* x (letters l) permuted into the order of letters want (a permutation). */
static int
order(Lz *z, int x, const char *l, const char *want)
{
	int64_t p[DP_MAXRANK];
	int n = (int)strlen(want), id = 1;

	for (int k = 0; k < n; k++) {
		p[k] = strchr(l, want[k]) - l;
		id &= p[k] == k;
	}
	return id || x < 0 ? x : lz_permute(z, x, p, n);
}

/* einsum: one operand, its sums and a permute; two, each permuted to
 * [batch, own letters, contracted], expanded where a batch size is 1,
 * viewed 3-D, one aten.bmm, viewed and permuted to the output. */
static int
r_einsum(Lz *z, const Op *op)
{
	char lab[3][DP_MAXRANK + 1], ba[DP_MAXRANK + 1] = "", le[DP_MAXRANK + 1] = "";
	char ri[DP_MAXRANK + 1] = "", co[DP_MAXRANK + 1] = "", wa[2 * DP_MAXRANK + 2];
	char wb[2 * DP_MAXRANK + 2], mid[2 * DP_MAXRANK + 2];
	int64_t size[128] = { 0 }, B = 1, L = 1, R = 1, C = 1, v[3], sz[DP_MAXRANK];
	int a, b, k, n;
	const char *o;

	dp_einsum(dp_gets(op, "equation"), op->nin, lab);
	o = lab[2];
	for (int i = 0; i < op->nin; i++)
		for (k = 0; lab[i][k]; k++)
			if (IT(i)->dim[k] > size[(unsigned char)lab[i][k]])
				size[(unsigned char)lab[i][k]] = IT(i)->dim[k];
	a = sumout(z, X(0), lab[0], op->nin > 1 ? lab[1] : "", o);
	if (op->nin == 1)
		return bind(z, op, order(z, a, lab[0], o));
	b = sumout(z, X(1), lab[1], lab[0], o);
	for (k = 0; o[k]; k++) {
		char c[2] = { o[k], 0 };
		strcat(strchr(lab[0], o[k]) && strchr(lab[1], o[k]) ? ba :
		       strchr(lab[0], o[k]) ? le : ri, c);
	}
	for (k = 0; lab[0][k]; k++)
		if (!strchr(o, lab[0][k])) {
			char c[2] = { lab[0][k], 0 };
			strcat(co, c);
		}
	for (k = 0; ba[k]; k++)
		B *= size[(unsigned char)ba[k]];
	for (k = 0; le[k]; k++)
		L *= size[(unsigned char)le[k]];
	for (k = 0; ri[k]; k++)
		R *= size[(unsigned char)ri[k]];
	for (k = 0; co[k]; k++)
		C *= size[(unsigned char)co[k]];
	snprintf(wa, sizeof wa, "%s%s%s", ba, le, co);
	snprintf(wb, sizeof wb, "%s%s%s", ba, co, ri);
	a = order(z, a, lab[0], wa);
	b = order(z, b, lab[1], wb);
	for (int i = 0; i < 2; i++) {   /* broadcast sizes of 1 */
		int *x = i ? &b : &a, same = 1;
		const char *w = i ? wb : wa;
		n = (int)strlen(w);
		for (k = 0; k < n; k++) {
			sz[k] = size[(unsigned char)w[k]];
			same &= *x >= 0 && lz_type(z, *x)->dim[k] == sz[k];
		}
		if (!same)
			*x = lz_expand(z, *x, sz, n);
	}
	v[0] = B, v[1] = L, v[2] = C;
	a = lz_view(z, a, v, 3);
	v[1] = C, v[2] = R;
	b = lz_view(z, b, v, 3);
	a = product(z, Abmm, a, b);
	snprintf(mid, sizeof mid, "%s%s%s", ba, le, ri);
	n = (int)strlen(mid);
	for (k = 0; k < n; k++)
		sz[k] = size[(unsigned char)mid[k]];
	a = lz_view(z, a, sz, n);
	return bind(z, op, order(z, a, mid, o));
}

/* index with several adjacent index tensors (x[i, j] on dims d, d+1...):
 * the indices made non-negative (remainder by each dim's size), combined
 * into one flat index i·n1 + j (broadcasting), and one aten.index of x
 * with those dims viewed as one. */
static int
r_indexn(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int d = axis(dp_geti(op, "dim", 0), t->rank), k = op->nin - 1, f = -1, j, c;
	int64_t v[DP_MAXRANK], m = 1;

	for (j = 0; j < k; j++) {
		int ix = X(1 + j);
		if (IT(1 + j)->dtype != DP_I64)
			ix = toi64(z, ix);
		ix = lz_op2(z, Aremainder, ix, lz_scalar(z, (double)t->dim[d + j], DP_I64));
		f = j == 0 ? ix : lz_op2(z, Aadd, lz_op2(z, Amul, f, lz_scalar(z, (double)t->dim[d + j],
		                                                               DP_I64)), ix);
		m *= t->dim[d + j];
	}
	for (j = c = 0; j < t->rank; j++)
		if (j <= d || j >= d + k)
			v[c++] = j == d ? m : t->dim[j];
	return bind(z, op, take(z, lz_view(z, X(0), v, c), d, f));
}

/* cumsum or cumprod of an integer or bool x: in i64 (cast first). */
static int
r_scanint(Lz *z, const Op *op)
{
	int x = X(0), k;

	if (IT(0)->dtype == OT->dtype)
		return lz_copy(z, op);
	k = lz_begin(z, Ocast, &x, 1);
	dp_sets(z->out, k, "dtype", dp_dtype_name[OT->dtype]);
	x = lz_end(z, k);
	if (x < 0)
		return -1;
	k = lz_begin(z, op->kind, &x, 1);
	dp_seti(z->out, k, "dim", dp_geti(op, "dim", 0));
	return bind(z, op, lz_end(z, k));
}

/* amax / amin over dim (empty: all): x permuted to [kept dims, reduced
 * dims] and viewed [kept, R], the values gathered at argmax along R (of
 * −x for amin), viewed as the result. */
static int
extremev(Lz *z, int x, unsigned m, int min, const Type *o)
{
	Type tx = x >= 0 ? *lz_type(z, x) : (Type){0};
	const Type *t = &tx;
	int r = t->rank, n = 0, kept, i, y, k, id = 1, in[2];
	int64_t p[DP_MAXRANK], v[DP_MAXRANK + 1], R = 1;

	if (x < 0)
		return -1;
	if (!m)
		m = (1u << r) - 1;
	for (i = 0; i < r; i++)
		if (!(m >> i & 1)) {
			v[n] = t->dim[i];
			p[n++] = i;
		}
	kept = n;
	for (i = 0; i < r; i++)
		if (m >> i & 1) {
			R *= t->dim[i];
			p[n++] = i;
		}
	for (i = 0; i < r; i++)
		id &= p[i] == i;
	if (!id)
		x = lz_permute(z, x, p, r);
	v[kept] = R;
	if (x < 0)
		return -1;
	if (lz_type(z, x)->rank != kept + 1 || lz_type(z, x)->dim[kept] != R)
		x = lz_view(z, x, v, kept + 1);
	y = min ? lz_op1(z, Aneg, x) : x;
	if (t->dtype != DP_F32 && t->dtype != DP_F64)   /* argmax: f32 kernels, exact to ±2^24 */
		y = lz_cast(z, y, DP_F32);
	if (y < 0)
		return -1;
	k = lz_begin(z, Oargmax, &y, 1);
	dp_seti(z->out, k, "dim", kept);
	dp_seti(z->out, k, "keepdim", 1);
	in[0] = x;
	in[1] = lz_end(z, k);
	if (in[1] < 0)
		return -1;
	k = lz_begin(z, Agather, in, 2);
	dp_seti(z->out, k, "dim", kept);
	return lz_view(z, lz_end(z, k), o->dim, o->rank);
}

static int
extreme(Lz *z, const Op *op, unsigned m, int min)
{
	return bind(z, op, extremev(z, X(0), m, min, OT));
}

static int
r_amax(Lz *z, const Op *op)
{
	const Attr *dim = dp_attr(op, "dim");
	unsigned m = 0;

	for (int i = 0; dim && i < dim->n; i++)
		m |= 1u << axis(dim->ints[i], IT(0)->rank);
	return extreme(z, op, m, op->kind == Aamin);
}

/* max.dim / min.dim (their values; import refuses a use of the indices):
 * amax / amin over the one dim. */
static int
r_maxdim(Lz *z, const Op *op)
{
	int r = IT(0)->rank;

	return extreme(z, op, r ? 1u << axis(dp_geti(op, "dim", 0), r) : 0, op->kind == Amindim);
}

/* diagonal(x, offset, dim1, dim2): x permuted to [other dims, dim1, dim2],
 * viewed [other dims, n1·n2], an aten.index along the last dim at start,
 * start + n2 + 1, ... (start: offset, or −offset·n2 below the main
 * diagonal). */
static int
r_diagonal(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int r = t->rank, a = axis(dp_geti(op, "dim1", 0), r), b = axis(dp_geti(op, "dim2", 1), r);
	int x = X(0), n = 0, id = 1, k;
	int64_t o = dp_geti(op, "offset", 0), L = OT->dim[OT->rank - 1], p[DP_MAXRANK];
	int64_t v[DP_MAXRANK], n2 = t->dim[b], start = o >= 0 ? o : -o * n2;

	if (L == 0)
		return lz_fail(z, "an empty diagonal is not supported");
	for (int i = 0; i < r; i++)
		if (i != a && i != b) {
			v[n] = t->dim[i];
			p[n++] = i;
		}
	p[n] = a;
	p[n + 1] = b;
	v[n] = t->dim[a] * n2;
	for (int i = 0; i < r; i++)
		id &= p[i] == i;
	if (!id)
		x = lz_permute(z, x, p, r);
	x = lz_view(z, x, v, r - 1);
	k = lz_begin(z, Aarange, NULL, 0);
	dp_setf(z->out, k, "start", (double)start);
	dp_setf(z->out, k, "end", (double)(start + L * (n2 + 1)));
	dp_setf(z->out, k, "step", (double)(n2 + 1));
	dp_sets(z->out, k, "dtype", "i64");
	return bind(z, op, take(z, x, r - 2, lz_end(z, k)));
}

/* The n values of a pooling attribute (one value: n times; none: def). */
static void
nvals(const Op *op, const char *key, int64_t def, int n, int64_t *out)
{
	const Attr *a = dp_attr(op, key);

	for (int i = 0; i < n; i++)
		out[i] = !a || a->n == 0 ? def : a->ints[a->n == 1 ? 0 : i];
}

/* One 2-D pool (kind) of x [P, 1, H, W] with (h, w) pairs k, s, p, d (the
 * output size for adaptive pooling) and op's ceil_mode, count_include_pad. */
static int
pool2(Lz *z, const Op *op, int kind, int x, const int64_t *k, const int64_t *s,
      const int64_t *p, const int64_t *d)
{
	int j;

	if (x < 0)
		return -1;
	j = lz_begin(z, kind, &x, 1);
	if (kind == Aadaptavg) {
		dp_setints(z->out, j, "output_size", k, 2);
		return lz_end(z, j);
	}
	dp_seti(z->out, j, "ceil_mode", dp_geti(op, "ceil_mode", 0));
	if (kind == Aavgpool)
		dp_seti(z->out, j, "count_include_pad", dp_geti(op, "count_include_pad", 1));
	else
		dp_setints(z->out, j, "dilation", d, 2);
	dp_setints(z->out, j, "kernel_size", k, 2);
	dp_setints(z->out, j, "padding", p, 2);
	dp_setints(z->out, j, "stride", s, 2);
	return lz_end(z, j);
}

/* 1-D and 3-D pooling as 2-D pooling of planes (each window is a box,
 * its max, mean or adaptive mean separable by dims): 1-D, x viewed [P, 1,
 * 1, L] pooled by (1, k); 3-D, x viewed [P, 1, H, W] pooled over (H, W),
 * then viewed [Q, 1, D, OH·OW] pooled by (kd, 1); viewed as the result. */
static int
r_pooln(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int n = op->kind == Amaxpool1 || op->kind == Aavgpool1 || op->kind == Aadaptavg1 ? 1 : 3;
	int kind = op->kind == Amaxpool1 || op->kind == Amaxpool3 ? Amaxpool :
	           op->kind == Aavgpool1 || op->kind == Aavgpool3 ? Aavgpool : Aadaptavg;
	int h = t->rank - n, x = X(0);
	int64_t k[3], s[3], p[3], d[3], v[4], k2[2], s2[2], p2[2], d2[2], all = dp_numel(t);

	if (kind == Aadaptavg)
		nvals(op, "output_size", 1, n, k);
	else
		nvals(op, "kernel_size", 1, n, k);
	nvals(op, "stride", 0, n, s);
	nvals(op, "padding", 0, n, p);
	nvals(op, "dilation", 1, n, d);
	for (int i = 0; i < n; i++)
		if (s[i] == 0)
			s[i] = k[i];
	if (n == 1) {
		int64_t K[2] = { 1, k[0] }, S[2] = { 1, s[0] }, Pd[2] = { 0, p[0] }, D[2] = { 1, d[0] };
		v[0] = all / t->dim[h];
		v[1] = v[2] = 1;
		v[3] = t->dim[h];
		x = lz_view(z, x, v, 4);
		x = pool2(z, op, kind, x, K, S, Pd, D);
		return bind(z, op, lz_view(z, x, OT->dim, OT->rank));
	}
	v[0] = all / (t->dim[h + 1] * t->dim[h + 2]);
	v[1] = 1;
	v[2] = t->dim[h + 1];
	v[3] = t->dim[h + 2];
	x = lz_view(z, x, v, 4);
	x = pool2(z, op, kind, x, &k[1], &s[1], &p[1], &d[1]);
	if (x < 0)
		return -1;
	v[0] = all / (t->dim[h] * t->dim[h + 1] * t->dim[h + 2]);
	v[2] = t->dim[h];
	v[3] = lz_type(z, x)->dim[2] * lz_type(z, x)->dim[3];
	x = lz_view(z, x, v, 4);
	k2[0] = k[0], s2[0] = s[0], p2[0] = p[0], d2[0] = d[0];
	k2[1] = kind == Aadaptavg ? v[3] : 1, s2[1] = 1, p2[1] = 0, d2[1] = 1;
	x = pool2(z, op, kind, x, k2, s2, p2, d2);
	return bind(z, op, lz_view(z, x, OT->dim, OT->rank));
}

/* A reduction (kind) over dims mask m of x, keepdim off. */
static int
reducem(Lz *z, int kind, int x, unsigned m)
{
	int64_t d[DP_MAXRANK];
	int n = 0, k;

	for (int i = 0; i < DP_MAXRANK; i++)
		if (m >> i & 1)
			d[n++] = i;
	if (x < 0)
		return -1;
	k = lz_begin(z, kind, &x, 1);
	dp_setints(z->out, k, "dim", d, n);
	dp_seti(z->out, k, "keepdim", 0);
	return lz_end(z, k);
}

int
lz_arange(Lz *z, int64_t n)
{
	int k = lz_begin(z, Aarange, NULL, 0);

	dp_setf(z->out, k, "start", 0);
	dp_setf(z->out, k, "end", (double)n);
	dp_setf(z->out, k, "step", 1);
	dp_sets(z->out, k, "dtype", "i64");
	return lz_end(z, k);
}

int
lz_cast(Lz *z, int x, int dtype)
{
	int k;

	if (x < 0 || lz_type(z, x)->dtype == dtype)
		return x;
	k = lz_begin(z, Ocast, &x, 1);
	dp_sets(z->out, k, "dtype", dp_dtype_name[dtype]);
	return lz_end(z, k);
}

enum { S_SET, S_SUM, S_MEAN, S_AMAX, S_AMIN };

/* The scatter of src s into x (rank r) along dim d at index I (i64, x's
 * shape but m along d; s: I's shape or rank 0), by comparison instead of
 * a scatter kernel: eq = I viewed [.., 1, m, ..] == arange(n) viewed
 * [.., n, 1, ..] marks, for each target position, the sources that land
 * there (an [.., n, m, ..] bool, so memory n·m per row); has = any(eq)
 * over m.  S_SET takes the first source (argmax of eq), the reductions
 * sum, average or take the extreme of the marked sources; where no
 * source lands, x stays; self: x's value takes part in the reduction. */
static int
scat(Lz *z, int x, int d, int I, int s, int mode, int self)
{
	Type tx = *lz_type(z, x), ti;
	int r = tx.rank, eq, has, y, k, s0 = s, ar = lz_arange(z, tx.dim[d]);
	int64_t v[DP_MAXRANK + 1], a[DP_MAXRANK + 1], n = tx.dim[d];

	I = inrange(z, I, ar);
	if (I < 0 || s < 0)
		return -1;
	ti = *lz_type(z, I);
	if (r + 1 > DP_MAXRANK)
		return lz_fail(z, "rank %d is too high (at most %d)", r, DP_MAXRANK - 1);
	for (int i = 0, j = 0; i <= r; i++) {
		v[i] = i == d ? 1 : ti.dim[j++];
		a[i] = i == d ? n : 1;
	}
	y = lz_view(z, I, v, r + 1);
	k = lz_view(z, ar, a, r + 1);
	eq = lz_op2(z, Aeq, y, k);
	has = reducem(z, Aany, eq, 1u << (d + 1));
	if (lz_type(z, s)->rank)
		s = lz_view(z, s, v, r + 1);
	if (has < 0 || s < 0)
		return -1;
	if (mode == S_SET) {
		int in[2];
		if (lz_type(z, s)->rank == 0)
			y = s;
		else {
			in[0] = lz_cast(z, eq, DP_F32);
			if (in[0] < 0)
				return -1;
			k = lz_begin(z, Oargmax, in, 1);
			dp_seti(z->out, k, "dim", d + 1);
			dp_seti(z->out, k, "keepdim", 0);
			in[1] = lz_end(z, k);
			in[0] = s0;
			if (in[1] < 0)
				return -1;
			k = lz_begin(z, Agather, in, 2);
			dp_seti(z->out, k, "dim", d);
			y = lz_end(z, k);
		}
	} else if (mode == S_SUM || mode == S_MEAN) {
		int e = lz_cast(z, eq, tx.dtype), c;
		y = reducem(z, Asum, lz_op2(z, Amul, e, s), 1u << (d + 1));
		if (self)
			y = lz_op2(z, Aadd, x, y);
		if (mode == S_MEAN) {
			c = reducem(z, Asum, e, 1u << (d + 1));
			if (self)
				c = lz_op2(z, Aadd, c, lz_scalar(z, 1, tx.dtype));
			y = lz_op2(z, Adiv, y, c);
		}
	} else {
		int in[3], fill = lz_scalar(z, mode == S_AMAX ? -INFINITY : INFINITY, tx.dtype);
		in[0] = eq;
		in[1] = s;
		in[2] = fill;
		if (fill < 0)
			return -1;
		y = lz_end(z, lz_begin(z, Awhere, in, 3));
		y = extremev(z, y, 1u << (d + 1), mode == S_AMIN, &tx);
		if (self)
			y = lz_op2(z, mode == S_AMAX ? Amaximum : Aminimum, x, y);
	}
	{
		int in[3] = { has, y, x };
		if (y < 0)
			return -1;
		return lz_end(z, lz_begin(z, Awhere, in, 3));
	}
}

/* x viewed to size[0..n-1], or x itself when that is its shape. */
static int
review(Lz *z, int x, const int64_t *size, int n)
{
	const Type *t;

	if (x < 0)
		return -1;
	t = lz_type(z, x);
	if (t->rank == n && !memcmp(t->dim, size, (size_t)n * sizeof *size))
		return x;
	return lz_view(z, x, size, n);
}

/* The scatter of vals (x's shape but M along d) into x along d at the
 * vector idx [M] (the same index for every row, as index_put and
 * index_copy have): an index_write, which writes only the M slices (in
 * place where x is a state only it reads; formats/ops.md). */
static int
scat1(Lz *z, int x, int d, int idx, int vals)
{
	int k, in[3];

	if (idx < 0 || vals < 0)
		return -1;
	in[0] = x;
	in[1] = idx;
	in[2] = vals;
	k = lz_begin(z, Oindexwrite, in, 3);
	dp_seti(z->out, k, "dim", d);
	return lz_end(z, k);
}

/* index_put(x, values, idx0[, idx1...]) on the adjacent dims from dim:
 * the indices made non-negative and combined into one flat index (as
 * aten.index_n), x viewed with those dims as one, the values expanded
 * to the indexed shape and viewed likewise, a scatter (scat1;
 * accumulate: scat's sum with x's values), viewed back. */
static int
r_indexput(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int d = axis(dp_geti(op, "dim", 0), t->rank), k = op->nin - 2, f = -1, j, c, vs;
	int64_t xv[DP_MAXRANK], sh[DP_MAXRANK], one[DP_MAXRANK], N = 1, M;
	Type tf;

	for (j = 0; j < k; j++) {
		int ix = lz_cast(z, X(2 + j), DP_I64), sz;
		if (k > 1)   /* each checked: a combined index in range can still be wrong */
			ix = inrange(z, ix, lz_arange(z, t->dim[d + j]));
		else if (!dp_geti(op, "accumulate", 0))
			ix = fromend(z, ix, t->dim[d + j]);   /* (with accumulate, scat checks it) */
		if (j > 0) {
			sz = lz_scalar(z, (double)t->dim[d + j], DP_I64);
			f = lz_op2(z, Amul, f, sz);
			ix = lz_op2(z, Aadd, f, ix);
		}
		f = ix;
		N *= t->dim[d + j];
	}
	if (f < 0)
		return -1;
	tf = *lz_type(z, f);
	M = dp_numel(&tf);
	if (t->rank - k + tf.rank > DP_MAXRANK)
		return lz_fail(z, "the indexed shape's rank is too high");
	for (j = c = 0; j < t->rank; j++)   /* x viewed: the indexed dims as one */
		if (j <= d || j >= d + k)
			xv[c++] = j == d ? N : t->dim[j];
	for (j = 0; j < d; j++)              /* the indexed shape */
		sh[j] = t->dim[j];
	for (j = 0; j < tf.rank; j++)
		sh[d + j] = tf.dim[j];
	for (j = d + k; j < t->rank; j++)
		sh[j - k + tf.rank] = t->dim[j];
	vs = lz_cast(z, X(1), t->dtype);
	vs = lz_expand(z, vs, sh, t->rank - k + tf.rank);
	for (j = 0; j < c; j++) {
		sh[j] = j == d ? M : xv[j];
		one[j] = j == d ? M : 1;
	}
	vs = review(z, vs, sh, c);
	j = review(z, X(0), xv, c);
	if (!dp_geti(op, "accumulate", 0)) {
		j = scat1(z, j, d, review(z, f, &M, 1), vs);
		return bind(z, op, review(z, j, t->dim, t->rank));
	}
	f = review(z, f, one, c);
	f = lz_expand(z, f, sh, c);
	if (j < 0)
		return -1;
	j = scat(z, j, d, f, vs, S_SUM, 1);
	return bind(z, op, review(z, j, t->dim, t->rank));
}

/* index_copy(x, dim, index, src): scat1 at the index (a vector); with
 * accumulate (index_add), alpha·src's sum with x's values: the index
 * viewed along d and expanded to src's shape, scat's sum. */
static int
r_indexcopy(Lz *z, const Op *op)
{
	const Type *ts = IT(2);
	int d = axis(dp_geti(op, "dim", 0), IT(0)->rank), i = lz_cast(z, X(1), DP_I64), s = X(2);
	int64_t m = ts->rank ? ts->dim[d] : 1, v[DP_MAXRANK];
	double alpha = dp_getf(op, "alpha", 1);

	if (IT(1)->rank == 0)
		i = lz_view(z, i, &m, 1);
	if (!dp_geti(op, "accumulate", 0))
		return bind(z, op, scat1(z, X(0), d, i, s));
	for (int j = 0; j < ts->rank; j++)
		v[j] = j == d ? m : 1;
	if (ts->rank > 1)
		i = lz_expand(z, lz_view(z, i, v, ts->rank), ts->dim, ts->rank);
	if (alpha != 1)
		s = lz_op2(z, Amul, s, lz_scalar(z, alpha, ts->dtype));
	return bind(z, op, scat(z, X(0), d, i, s, S_SUM, 1));
}

/* scatter / scatter_add / scatter_reduce: src sliced to the index's shape,
 * a scatter. */
static int
r_scatter(Lz *z, const Op *op)
{
	const Type *t = IT(0), *ti = IT(1), *ts = IT(2);
	const char *red = dp_gets(op, "reduce");
	int d = axis(dp_geti(op, "dim", 0), t->rank), s = X(2), i;
	int mode = !red ? S_SET : !strcmp(red, "sum") ? S_SUM : !strcmp(red, "mean") ? S_MEAN :
	           !strcmp(red, "amax") ? S_AMAX : S_AMIN;

	for (int j = 0; j < ts->rank && s >= 0; j++)
		if (ts->dim[j] != ti->dim[j])
			s = lz_slice(z, s, j, 0, ti->dim[j], 1);
	i = lz_cast(z, X(1), DP_I64);
	if (i < 0 || s < 0)
		return -1;
	return bind(z, op, scat(z, X(0), d, i, s, mode, (int)dp_geti(op, "include_self", 1)));
}

/* clamp with tensor bounds: minimum(maximum(x, min), max). */
static int
r_clampt(Lz *z, const Op *op)
{
	int x = X(0), j = 1;

	if (dp_geti(op, "has_min", 0))
		x = lz_op2(z, Amaximum, x, X(j++));
	if (dp_geti(op, "has_max", 0))
		x = lz_op2(z, Aminimum, x, X(j));
	return bind(z, op, x);
}

/* The table. */
/* aten.randperm: the ranks of n random 64-bit keys (an i64 aten.rand of
 * the op's seed and stream): rank[i] = Σ_j [key_j < key_i], an aten.lt of
 * the keys viewed [1, n] and [n, 1] (memory n² bools), cast and summed.
 * The keys are distinct (runtime/dpscalar.h), so the ranks are a
 * permutation of 0..n−1, uniform as the keys are. */
static int
r_randperm(Lz *z, const Op *op)
{
	int64_t n = dp_geti(op, "n", 0), row[2] = { 1, n }, col[2] = { n, 1 };
	int k = lz_begin(z, Arand, NULL, 0), key, lt;

	dp_setints(z->out, k, "size", &n, 1);
	dp_sets(z->out, k, "dtype", "i64");
	dp_seti(z->out, k, "seed", dp_geti(op, "seed", 0));
	dp_seti(z->out, k, "stream", dp_geti(op, "stream", 0));
	key = lz_end(z, k);
	lt = lz_op2(z, Alt, lz_view(z, key, row, 2), lz_view(z, key, col, 2));
	if (lt < 0)
		return -1;
	k = lz_begin(z, Ocast, &lt, 1);
	dp_sets(z->out, k, "dtype", "i64");
	lt = lz_end(z, k);
	if (lt < 0)
		return -1;
	k = lz_begin(z, Asum, &lt, 1);
	dp_setints(z->out, k, "dim", (int64_t[]){ 1 }, 1);
	lt = lz_end(z, k);
	if (lt < 0 || OT->dtype == DP_I64)
		return bind(z, op, lt);
	k = lz_begin(z, Ocast, &lt, 1);
	dp_sets(z->out, k, "dtype", dp_dtype_name[OT->dtype]);
	return bind(z, op, lz_end(z, k));
}

/* ---- complex values and the discrete Fourier transform ----
 * A complex tensor is f32 with a trailing axis of 2 (re, im), as
 * view_as_real gives it: import converts complex ATen values so, and no
 * lowering sees complex numbers. */

/* aten.stack of a and b along dim. */
static int
stack2(Lz *z, int a, int b, int dim)
{
	int in[2] = { a, b }, k;

	if (a < 0 || b < 0)
		return -1;
	k = lz_begin(z, Astack, in, 2);
	dp_seti(z->out, k, "dim", dim);
	return lz_end(z, k);
}

/* x's real (part 0) or imaginary (1) part. */
static int
part(Lz *z, int x, int p)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aselect, &x, 1);
	dp_seti(z->out, k, "dim", lz_type(z, x)->rank - 1);
	dp_seti(z->out, k, "index", p);
	return lz_end(z, k);
}

/* An i64 aten.arange of n viewed [n, 1] (col 0) or [1, n] (col 1). */
static int
iota(Lz *z, int64_t n, int col)
{
	int64_t v[2] = { col ? 1 : n, col ? n : 1 };

	return lz_view(z, lz_arange(z, n), v, 2);
}

/* cos (s 0) or sin (s 1) of the angles 2π·((r·c) mod n)/n of a rows × cols
 * table, times scale: computed by the program from aten.arange (the
 * product reduced mod n exactly in i64, so each angle is in [0, 2π)). */
static int
trig(Lz *z, int64_t rows, int64_t cols, int64_t n, int s, double scale)
{
	int a = lz_op2(z, Aremainder, lz_op2(z, Amul, iota(z, rows, 0), iota(z, cols, 1)),
	               lz_scalar(z, (double)n, DP_I64)), k;

	if (a < 0)
		return -1;
	k = lz_begin(z, Ocast, &a, 1);
	dp_sets(z->out, k, "dtype", "f32");
	a = lz_op2(z, Amul, lz_end(z, k), lz_scalar(z, 2 * M_PI / (double)n, DP_F32));
	a = lz_op1(z, s ? Asin : Acos, a);
	return scale == 1 ? a : lz_op2(z, Amul, a, lz_scalar(z, scale, DP_F32));
}

/* The factor of a transform of n points under ATen's normalization code
 * (0: none, 1: 1/√n, 2: 1/n); each transformed dim contributes its own. */
static double
normscale(int64_t code, int64_t n)
{
	return code == 1 ? 1 / sqrt((double)n) : code == 2 ? 1 / (double)n : 1;
}

/* The matrix m [nin·(pin+1), nout·(pout+1)] applied along axis d (of r
 * data axes; a trailing (re, im) axis where pin) of x: x permuted to
 * [other axes, d, (re, im)], viewed [P, ·], aten.mm, viewed back and
 * permuted so that d has its place and (re, im) is last where pout. */
static int
along(Lz *z, int x, int d, int r, int pin, int m, int64_t nout, int pout)
{
	const Type *t;
	int64_t p[DP_MAXRANK], q[DP_MAXRANK], v[DP_MAXRANK], rows = 1, two[2];
	int i, j = 0, id = 1, nv = 0;

	if (x < 0 || m < 0)
		return -1;
	t = lz_type(z, x);
	for (i = 0; i < r; i++)
		if (i != d) {
			p[j++] = i;
			rows *= t->dim[i];
			v[nv++] = t->dim[i];
		}
	p[j++] = d;
	if (pin)
		p[j++] = r;
	for (i = 0; i < j; i++)
		id &= p[i] == i;
	if (!id)
		x = lz_permute(z, x, p, j);
	two[0] = rows;
	two[1] = t->dim[d] * (pin ? 2 : 1);
	x = lz_op2(z, Amm, lz_view(z, x, two, 2), m);
	v[nv++] = nout;
	if (pout)
		v[nv++] = 2;
	x = lz_view(z, x, v, nv);
	for (i = 0; i < r; i++)   /* result axis i is axis q[i] of [others, d, (re, im)] */
		q[i] = i < d ? i : i > d ? i - 1 : r - 1;
	if (pout)
		q[r] = r;
	return d == r - 1 ? x : lz_permute(z, x, q, r + pout);
}

/* The complex DFT of n points as a real matrix [2n, 2n] on interleaved
 * (re, im) pairs: sign 1 forward (e^−iθ), −1 inverse (e^iθ). */
static int
c2cmatrix(Lz *z, int64_t n, int sign, double scale)
{
	int c = trig(z, n, n, n, 0, scale), s = trig(z, n, n, n, 1, scale);
	int ns = lz_op1(z, Aneg, s);
	int64_t v[2] = { 2 * n, 2 * n };
	int rowre = stack2(z, c, sign > 0 ? ns : s, 2), rowim = stack2(z, sign > 0 ? s : ns, c, 2);

	return lz_view(z, stack2(z, rowre, rowim, 1), v, 2);
}

/* aten.fft_r2c: the real DFT along the last dim of dim (the one-sided n/2
 * + 1 bins, or all n) as x·[cos | −sin] interleaved, then the forward
 * complex DFT along each other dim of dim. */
static int
r_fftr2c(Lz *z, const Op *op)
{
	const Attr *dims = dp_attr(op, "dim");
	const Type *t = IT(0);
	int r = t->rank, last = axis(dims->ints[dims->n - 1], r), x, i;
	int64_t code = dp_geti(op, "normalization", 0), n = t->dim[last], m = OT->dim[last];
	int64_t v[2] = { n, 2 * m };
	double sc = normscale(code, n);

	x = along(z, X(0), last, r, 0,
	          lz_view(z, stack2(z, trig(z, n, m, n, 0, sc), lz_op1(z, Aneg, trig(z, n, m, n, 1, sc)),
	                            2), v, 2), m, 1);
	for (i = 0; i < dims->n - 1; i++) {
		int d = axis(dims->ints[i], r);
		n = t->dim[d];
		x = along(z, x, d, r, 1, c2cmatrix(z, n, 1, normscale(code, n)), n, 1);
	}
	return bind(z, op, x);
}

/* aten.fft_c2r: the inverse complex DFT along each dim of dim but the
 * last, then along the last the real inverse of its first n/2 + 1 bins
 * (n = last_dim_size; fewer where x has fewer): Σ_k w_k·(re_k cos θ −
 * im_k sin θ), w_k 1 for bin 0 and, n even, bin n/2 (their imaginary
 * parts unread), else 2 (the conjugate bins the one-sided form omits). */
static int
r_fftc2r(Lz *z, const Op *op)
{
	const Attr *dims = dp_attr(op, "dim");
	const Type *t = IT(0);
	int r = t->rank - 1, last = axis(dims->ints[dims->n - 1], r), x = X(0), i, w, k;
	int64_t code = dp_geti(op, "normalization", 0), n = dp_geti(op, "last_dim_size", 1), m;
	int64_t v[2];
	double sc;

	for (i = 0; i < dims->n - 1; i++) {
		int d = axis(dims->ints[i], r);
		int64_t nd = t->dim[d];
		x = along(z, x, d, r, 1, c2cmatrix(z, nd, -1, normscale(code, nd)), nd, 1);
	}
	m = n / 2 + 1 < t->dim[last] ? n / 2 + 1 : t->dim[last];
	if (m < t->dim[last])
		x = lz_slice(z, x, last, 0, m, 1);
	/* the weights w_k as a column [m, 1]: 2, with 1 at k = 0 and k = n/2 */
	k = lz_begin(z, Afull, NULL, 0);
	dp_setints(z->out, k, "size", (int64_t[]){ m, 1 }, 2);
	dp_setf(z->out, k, "value", 2);
	dp_sets(z->out, k, "dtype", "f32");
	w = lz_end(z, k);
	{
		int kk = iota(z, m, 0), one0 = lz_op2(z, Aeq, kk, lz_scalar(z, 0, DP_I64));
		if (n % 2 == 0)
			one0 = lz_op2(z, Aor, one0, lz_op2(z, Aeq, kk, lz_scalar(z, (double)(n / 2), DP_I64)));
		int in[3] = { one0, lz_scalar(z, 1, DP_F32), w };
		if (one0 < 0 || in[1] < 0 || w < 0)
			return -1;
		w = lz_end(z, lz_begin(z, Awhere, in, 3));
	}
	sc = normscale(code, n);
	v[0] = 2 * m;
	v[1] = n;
	x = along(z, x, last, r, 1,
	          lz_view(z, stack2(z, lz_op2(z, Amul, trig(z, m, n, n, 0, sc), w),
	                            lz_op1(z, Aneg, lz_op2(z, Amul, trig(z, m, n, n, 1, sc), w)), 1),
	                  v, 2), n, 0);
	return bind(z, op, x);
}

/* aten.fft_c2c: the complex DFT (forward e^−iθ, else e^iθ) along each dim
 * of dim, each scaled by its share of the normalization. */
static int
r_fftc2c(Lz *z, const Op *op)
{
	const Attr *dims = dp_attr(op, "dim");
	const Type *t = IT(0);
	int r = t->rank - 1, x = X(0), sign = dp_geti(op, "forward", 1) ? 1 : -1, i;
	int64_t code = dp_geti(op, "normalization", 0);

	for (i = 0; i < dims->n; i++) {
		int d = axis(dims->ints[i], r);
		int64_t n = t->dim[d];
		x = along(z, x, d, r, 1, c2cmatrix(z, n, sign, normscale(code, n)), n, 1);
	}
	return bind(z, op, x);
}

/* aten.complex_mul: (ar·br − ai·bi, ar·bi + ai·br), broadcasting;
 * aten.complex_abs: √(re² + im²); aten.complex_angle: atan2(im, re). */
static int
r_complex(Lz *z, const Op *op)
{
	int a = X(0), re = part(z, a, 0), im = part(z, a, 1);

	if (op->kind == Acabs)
		return bind(z, op, lz_op1(z, Asqrt, lz_op2(z, Aadd, lz_op2(z, Amul, re, re),
		                                           lz_op2(z, Amul, im, im))));
	if (op->kind == Acangle)
		return bind(z, op, lz_op2(z, Aatan2, im, re));
	int bre = part(z, X(1), 0), bim = part(z, X(1), 1);
	return bind(z, op, stack2(z, lz_op2(z, Asub, lz_op2(z, Amul, re, bre), lz_op2(z, Amul, im, bim)),
	                          lz_op2(z, Aadd, lz_op2(z, Amul, re, bim), lz_op2(z, Amul, im, bre)),
	                          OT->rank - 1));
}

/* The coordinates in x's shape t of the flat positions pos (i64[m]):
 * i64[m, rank], each an aten.index into that dim's aten.arange expanded
 * to t and viewed flat, aten.stack. */
static int
coordsat(Lz *z, const Type *t, int pos)
{
	int64_t n = dp_numel(t), v[DP_MAXRANK];
	int k, d, co[DP_MAXRANK];

	for (d = 0; d < t->rank; d++) {
		int a;
		for (int j = 0; j < t->rank; j++)
			v[j] = j == d ? t->dim[d] : 1;
		k = lz_begin(z, Aarange, NULL, 0);
		dp_setf(z->out, k, "end", (double)t->dim[d]);
		dp_sets(z->out, k, "dtype", "i64");
		a = lz_expand(z, lz_view(z, lz_end(z, k), v, t->rank), t->dim, t->rank);
		co[d] = lz_op2(z, Aindex, lz_view(z, a, &n, 1), pos);
		if (co[d] < 0)
			return -1;
	}
	k = lz_begin(z, Astack, co, t->rank);
	dp_seti(z->out, k, "dim", 1);
	return lz_end(z, k);
}

/* x != 0 viewed flat [numel] and cast to dtype. */
static int
nzflat(Lz *z, int x, const Type *t, int dtype)
{
	int64_t n = dp_numel(t);
	int nz = t->dtype == DP_BOOL ? x : lz_op2(z, Ane, x, lz_scalar(z, 0, t->dtype));
	return lz_cast(z, lz_view(z, nz, &n, 1), dtype);
}

/* aten.nonzero_static: row k is the coordinates of the (k+1)-th nonzero of
 * x in row-major order, or fill_value past the last.  The running count c
 * of nonzeros (aten.cumsum of x != 0 viewed flat [N]) marks element j as
 * the (k+1)-th where c[j] = k + 1 and x[j] != 0: an [size, N] aten.eq
 * (memory size·N bools), aten.any per row, argmax the first mark; each
 * coordinate an aten.index into that dim's aten.arange expanded to x's
 * shape and viewed flat; aten.stack, aten.where. */
static int
r_nonzeros(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t n = dp_numel(t), size = dp_geti(op, "size", 0), row[2] = { 1, n }, col[2] = { size, 1 };
	int64_t one = 1;
	int nz = nzflat(z, X(0), t, DP_BOOL), c = lz_cast(z, nz, DP_I64), eq, has, pos, k;

	if (nz < 0 || c < 0)
		return -1;
	k = lz_begin(z, Acumsum, &c, 1);
	dp_seti(z->out, k, "dim", 0);
	c = lz_end(z, k);
	k = lz_begin(z, Aarange, NULL, 0);
	dp_setf(z->out, k, "start", 1);
	dp_setf(z->out, k, "end", (double)size + 1);
	dp_sets(z->out, k, "dtype", "i64");
	eq = lz_op2(z, Aand, lz_op2(z, Aeq, lz_view(z, c, row, 2), lz_view(z, lz_end(z, k), col, 2)),
	            lz_view(z, nz, row, 2));
	if (eq < 0)
		return -1;
	k = lz_begin(z, Aany, &eq, 1);
	dp_setints(z->out, k, "dim", &one, 1);
	has = lz_end(z, k);
	k = lz_begin(z, Ocast, &eq, 1);
	dp_sets(z->out, k, "dtype", "f32");
	pos = lz_end(z, k);
	if (pos < 0 || has < 0)
		return -1;
	k = lz_begin(z, Oargmax, &pos, 1);
	dp_seti(z->out, k, "dim", 1);
	c = coordsat(z, t, lz_end(z, k));
	{
		int in[3] = { lz_view(z, has, col, 2), c, lz_scalar(z, (double)dp_geti(op, "fill_value", -1), DP_I64) };
		if (in[0] < 0 || c < 0 || in[2] < 0)
			return -1;
		return bind(z, op, lz_end(z, lz_begin(z, Awhere, in, 3)));
	}
}

/* aten.nonzero (formats/ops.md, "Bounded sizes"): a stable descending
 * aten.sort of x != 0 (as i32, viewed flat) puts the positions of the
 * nonzeros first, in order, then the others (valid rows for the gathers
 * after it): their coordinates as aten.nonzero_static's, in linear memory;
 * the count an aten.sum of x != 0 as i64; bound of the two. */
static int
r_nonzero(Lz *z, const Op *op)
{
	const Type *t = IT(0);
	int64_t zero = 0;
	int nz = nzflat(z, X(0), t, DP_I32), k, in[2];

	if (nz < 0)
		return -1;
	k = lz_begin(z, Asort, &nz, 1);
	dp_seti(z->out, k, "dim", 0);
	dp_seti(z->out, k, "descending", 1);
	if (lz_end(z, k) < 0 || (in[0] = coordsat(z, t, z->out->op[k].out[1])) < 0)
		return -1;
	nz = lz_cast(z, nz, DP_I64);
	k = lz_begin(z, Asum, &nz, 1);
	dp_setints(z->out, k, "dim", &zero, 1);
	if (nz < 0 || (in[1] = lz_end(z, k)) < 0)
		return -1;
	z->map[op->out[1]] = in[1];
	return bind(z, op, lz_end(z, lz_begin(z, Obound, in, 2)));
}

static const struct {
	int kind;
	Rewrite *fn;
	const char *what;
} rules[] = {
	{ Oreshape, r_view, "aten.view to the result's sizes" },
	{ Oflatten, r_view, "aten.view to the result's sizes" },
	{ Areshape, r_view, "aten.view to the result's sizes" },
	{ Aview, r_view, "aten.view to the result's sizes (-1 resolved)" },
	{ Aunflatten, r_unflatten, "aten.view to the result's sizes" },
	{ Opermute, r_permute, "aten.permute, dims >= 0" },
	{ Apermute, r_permute, "aten.permute, dims >= 0" },
	{ At, r_permute, "aten.permute [1, 0] (a vector: aten.view)" },
	{ Atranspose, r_permute, "aten.permute swapping the two dims (rank < 2: aten.view)" },
	{ Amatmul, r_matmul, "views + aten.mm (a matrix operand b), else expands + views + aten.bmm "
	  "(either aten.mul where K is 1)" },
	{ Amm, r_product, "aten.mul where K is 1 (an outer product), else unchanged" },
	{ Abmm, r_product, "aten.mul where K is 1 (an outer product), else unchanged" },
	{ Aconv, r_conv, "transposed: the direct one of x with stride − 1 zeros between its "
	  "elements, padded by dilation·(k − 1) − padding, by w regrouped and reversed "
	  "(aten.index), at stride 1; "
	  "1-D (rank 3): the 2-D one of x and w viewed with a height of 1; "
	  "3-D (rank 5): the 2-D one of the depth taps' planes stacked along the channels "
	  "(aten.slice, aten.full, aten.cat, aten.permute, aten.view) by w permuted to "
	  "[O, KD·Cg, KH, KW], viewed and permuted back; "
	  "windows tiling the input (2-D, stride = kernel > 1x1, no padding, "
	  "dilation 1, one group): the patches (aten.view, aten.permute) by the weight viewed "
	  "[O, C·kh·kw] (aten.linear), viewed and permuted back to [N, O, H', W']; else "
	  "unchanged" },
	{ Amaxpool, r_pool, "stride (empty: the kernel), padding, dilation as (h, w) pairs" },
	{ Aavgpool, r_pool, "stride (empty: the kernel), padding as (h, w) pairs" },
	{ Acumsum, r_scanint, "integers and bool: cast to i64, then aten.cumsum" },
	{ Acumprod, r_scanint, "integers and bool: cast to i64, then aten.cumprod" },
	{ Aexpandas, r_expandas, "aten.expand to the other operand's sizes" },
	{ Aexpand, r_expand, "to its operand's own sizes: the operand; else unchanged" },
	{ Aaddcmul, r_addcmul, "s + (value·a)·b" },
	{ Aaddcdiv, r_addcmul, "s + (value·a)/b" },
	{ Amaskfill, r_maskfill, "aten.where(mask, value, x)" },
	{ Afill, r_fill, "aten.full_like(x, value)" },
	{ Avecnorm, r_vecnorm, "ord 2: sqrt(sum(x·x)); ord 1: sum(abs(x))" },
	{ Avar, r_var, "sum((x − mean)²) / (n − correction)" },
	{ Agroupnorm, r_groupnorm, "aten.layer_norm of x viewed [N, G, rest], then w·y + b per channel" },
	{ Apad, r_pad, "constant: aten.slice (negative pads), aten.cat with aten.full blocks; "
	  "circular: aten.cat of slices; reflect, replicate: aten.index at computed indices" },
	{ Aroll, r_roll, "aten.cat of two aten.slice per dim" },
	{ Adiff, r_diff, "aten.cat of prepend, x, append; n times x[1:] − x[:-1]" },
	{ Aslicescat, r_slicescat, "aten.cat of x's head, src, x's tail (step 1)" },
	{ Aselscat, r_selscat, "aten.cat of x's head, src viewed, x's tail" },
	{ Alogsoftmax, r_logsoftmax, "aten.log(softmax)" },
	{ Amul, r_boolarith, "of two bool tensors: aten.logical_and; else unchanged" },
	{ Aadd, r_boolarith, "of two bool tensors (alpha 1): aten.logical_or; else unchanged" },
	{ Aisnan, r_isnan, "x != x" },
	{ Aisinf, r_isnan, "abs(x) == inf" },
	{ Aelu, r_elu, "scale · where(x > 0, x, alpha·expm1(input_scale·x))" },
	{ Aupnearest, r_upnearest, "aten.index along H and W at ⌊i·in/out⌋" },
	{ Aflip, r_flip, "aten.index at the reversed aten.arange per dim" },
	{ Arepeat, r_repeat, "aten.view, aten.expand, aten.view" },
	{ Arepeatil, r_repeatil, "aten.view with a 1 after dim (flat: [n, 1]), aten.expand by the "
	  "repeats, aten.view" },
	{ Aunfold, r_unfold, "aten.index along the dimension at i·step + j (two aten.arange), "
	  "aten.view, aten.permute moving the window's axis last" },
	{ Acat, r_bigcat, "of more than 256 tensors: a cat of cats of at most 256 each; else "
	  "unchanged" },
	{ Astack, r_bigcat, "of more than 256 tensors: the cats of the tensors viewed with the new "
	  "axis; else unchanged" },
	{ Abaddbmm, r_baddbmm, "beta·s + alpha·aten.bmm(b1, b2) (s unread where beta is 0)" },
	{ Alstm, r_rnn, "unrolled: per layer and direction the input's aten.linear for all steps, "
	  "then per step aten.linear of h plus the step's rows, sigmoid/tanh gates (aten.slice), "
	  "c' = f·c + i·g, h' = o·tanh(c') (aten.linear by w_hr); aten.cat of the steps" },
	{ Agru, r_rnn, "unrolled as aten.lstm's: r, u = σ(hh + gx), n = tanh(gx_n + hh_n·r), "
	  "h' = (h − n)·u + n" },
	{ Arnntanh, r_rnn, "unrolled as aten.lstm's: h' = tanh(h·w_hhᵀ + b_hh + gx)" },
	{ Arnnrelu, r_rnn, "unrolled as aten.lstm's: h' = relu(h·w_hhᵀ + b_hh + gx)" },
	{ Alstmcell, r_rnncell, "one step of aten.lstm's" },
	{ Agrucell, r_rnncell, "one step of aten.gru's" },
	{ Acopyto, r_copyto, "cast, then aten.expand to x's shape" },
	{ Aupbicubic, r_upsample, "per axis (W, then H): the four taps around PyTorch's source position "
	  "(aten.index gathers, clamped), weighted by the cubic convolution kernel (A = −0.75), summed" },
	{ Aupbilinear, r_upsample, "per axis: x[i0]·(1 − λ) + x[i1]·λ, two aten.index gathers at computed "
	  "indices" },
	{ Aeinsum, r_einsum, "sums, aten.permute, aten.expand, aten.view, one aten.bmm (aten.mul where "
	  "nothing is summed), aten.view, "
	  "aten.permute" },
	{ Aall, r_all, "not(any(not(x)))" },
	{ Aindexn, r_indexn, "one aten.index at the flat index of the adjacent index tensors" },
	{ Aargmaxc, r_argmax, "argmax (no dim: of x viewed flat)" },
	{ Aargmin, r_argmax, "argmax of −x (no dim: of x viewed flat)" },
	{ Aasstrided, r_asstrided, "a view of a permutation: aten.view then aten.permute" },
	{ Aamax, r_amax, "aten.gather at argmax of x permuted and viewed [kept, reduced]" },
	{ Aamin, r_amax, "aten.gather at argmax of −x permuted and viewed [kept, reduced]" },
	{ Amaxdim, r_maxdim, "amax over dim (the values; the indices must be unused)" },
	{ Amindim, r_maxdim, "amin over dim (the values; the indices must be unused)" },
	{ Adiagonal, r_diagonal, "aten.permute, aten.view, aten.index at an aten.arange of step n2 + 1" },
	{ Amaxpool1, r_pooln, "aten.max_pool2d of x viewed [P, 1, 1, L] by (1, k)" },
	{ Aavgpool1, r_pooln, "aten.avg_pool2d of x viewed [P, 1, 1, L] by (1, k)" },
	{ Aadaptavg1, r_pooln, "aten.adaptive_avg_pool2d of x viewed [P, 1, 1, L]" },
	{ Amaxpool3, r_pooln, "aten.max_pool2d over (H, W), then over (D, 1) of planes viewed" },
	{ Aavgpool3, r_pooln, "aten.avg_pool2d over (H, W), then over (D, 1) of planes viewed" },
	{ Aadaptavg3, r_pooln, "aten.adaptive_avg_pool2d over (H, W), then over (D, OH·OW)" },
	{ Aindexput, r_indexput, "one aten.eq of the flat index and an aten.arange, aten.any, aten.index at argmax, aten.where (accumulate: as aten.scatter)" },
	{ Aindexcopy, r_indexcopy, "as aten.index_put with one index along dim (accumulate, index_add: as aten.scatter_add of alpha·src)" },
	{ Ascatter, r_scatter, "aten.eq of the index and an aten.arange, aten.any, then aten.gather at "
	  "argmax (set), or aten.sum / aten.where + amax of the marked sources, aten.where" },
	{ Aclampt, r_clampt, "aten.minimum(aten.maximum(x, min), max)" },
	{ Atopk, r_topk, "aten.sort along dim (descending when largest), both results sliced to k" },
	{ Aprod, r_prod, "integers cast to i64; per dim ⌈log2 n⌉ rounds of aten.mul of two halves "
	  "(aten.slice), an odd element carried by aten.cat" },
	{ Abnstats, r_bnstats, "(x − mean)·rsqrt(biased var + eps)·weight + bias, aten.mean over all "
	  "dims but 1" },
	{ Acdist, r_cdist, "the row differences [.., P, R, M] (aten.sub of views), then √Σd², Σ|d|, "
	  "(Σ|d|^p)^(1/p), count of nonzero, or max |d|" },
	{ Ahistc, r_histc, "bin ⌊(x − min)·bins/(max − min)⌋ (x = max: the last) of x viewed flat, an "
	  "aten.eq with aten.arange(bins) and the range test, summed" },
	{ Agroupedmm, r_groupedmm, "every group's aten.bmm of a by b [G, M, N], then row i's of group "
	  "g(i) = Σⱼ [offsetsⱼ <= i] (aten.index; rows past the last offset 0)" },
	{ Apdist, r_pdist, "as aten.cdist of x with itself, viewed flat, aten.index at i·N + j, i < j" },
	{ Amaskscat, r_maskscat, "aten.where(mask, src at aten.cumsum(mask) − 1, x), viewed flat" },
	{ Acol2im, r_col2im, "per kernel offset: aten.select of x viewed [N, C, kh, kw, nh, nw], spread by "
	  "the stride (aten.cat with zeros), shifted and cut (aten.slice, aten.cat), summed" },
	{ Asdpa, r_sdpa, "grouped heads (enable_gqa, or keys and values repeated by aten.expand + "
	  "aten.view): the query viewed [.., Hkv, G, L, E] against them [.., Hkv, 1, S, E], read in place" },
	{ Agridsamp, r_gridsamp, "source coordinates (unnormalized, clipped or reflected), then per "
	  "nearest or bilinear corner an aten.gather of x viewed [N, C, H·W], weighted, summed" },
	{ Aembbag, r_embbag, "[B, L] membership by comparison with aten.arange(L), then aten.mm with the "
	  "rows (sum; ÷ count: mean) or aten.argmax/aten.gather of the members (max)" },
	{ Arandperm, r_randperm, "the ranks of an i64 aten.rand's keys: aten.sum of aten.lt of the keys "
	  "viewed [1, n] and [n, 1]" },
	{ Afftr2c, r_fftr2c, "aten.mm by [cos | −sin] tables (from aten.arange, cos, sin) along the last dim, "
	  "then by the complex DFT's [2n, 2n] table along the others, between permutes and views" },
	{ Afftc2r, r_fftc2r, "the inverse complex DFT's aten.mm along the other dims, then by the weighted "
	  "[cos; −sin] table of the first n/2 + 1 bins along the last" },
	{ Afftc2c, r_fftc2c, "the complex DFT's [2n, 2n] table (e^−iθ forward, e^iθ inverse) by aten.mm "
	  "along each dim, between permutes and views" },
	{ Acmul, r_complex, "(ar·br − ai·bi, ar·bi + ai·br): aten.select, aten.mul, aten.stack" },
	{ Acabs, r_complex, "sqrt(re² + im²)" },
	{ Acangle, r_complex, "atan2(im, re)" },
	{ Anonzeros, r_nonzeros, "aten.cumsum of x != 0, aten.eq with aten.arange(1, size + 1), aten.any, "
	  "argmax, an aten.index per dim into its coordinates, aten.stack, aten.where" },
	{ Anonzero, r_nonzero, "bound of the coordinates of the positions a stable descending aten.sort "
	  "of x != 0 puts first, and their count, aten.sum of x != 0 as i64" },
};

int
rewrite(Lz *z, const Op *op)
{
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (rules[i].kind == op->kind)
			return rules[i].fn(z, op);
	if (dp_op_form[op->kind] == Fcomposite)
		dp_die("composite op %s has no rewrite", dp_op_name[op->kind]);
	return lz_copy(z, op);
}

void
print_rules(FILE *f)
{
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		fprintf(f, "%-26s %s\n", dp_op_name[rules[i].kind], rules[i].what);
}
