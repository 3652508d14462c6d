/* xf.c: the transformer rewrites of nn_fuse (nn.c): GPT-2's decomposed
 * tanh GELU back into one aten.gelu, an addmm with a constant weight as a
 * linear layer (its weight read [K, N]), a linear layer's residual add and
 * activation fused into it, and attention reading q, k, v and writing its
 * result in place through strides instead of the slices and permutes
 * around it. */
#include <math.h>
#include <string.h>

#include "lower.h"

/* The op defining v. */
static const Op *
def(const Fn *fn, int v)
{
	return &fn->op[fn->val[v].def];
}

/* Whether v is a cpu f32 constant holding the one float f (by its weight
 * hash: the compiler never reads the blob). */
static int
isscalar(const Fn *fn, int v, float f)
{
	const Op *d = def(fn, v);
	const char *h = d->kind == Oconst ? dp_gets(d, "hash") : NULL;
	char want[17];

	if (!h || d->dev != DEV_CPU || fn->val[v].t.dtype != DP_F32 || dp_numel(&fn->val[v].t) != 1 ||
	    dp_geti(d, "state", 0))
		return 0;
	snprintf(want, sizeof want, "%016llx", (unsigned long long)dp_whash(&f, sizeof f));
	return strcmp(h, want) == 0;
}

/* Whether op j is a cpu f32 op of kind with y's type and one operand x;
 * the other operand (index into *o) is left to the caller. */
static int
binop(const Fn *fn, int j, int kind, int x, int *o)
{
	const Op *op = &fn->op[j];

	if (op->kind != kind || op->nin != 2 || op->nout != 1 || op->dev != DEV_CPU ||
	    fn->val[op->out[0]].t.dtype != DP_F32)
		return 0;
	if ((kind == Aadd || kind == Asub) && dp_getf(op, "alpha", 1) != 1)
		return 0;
	if (op->in[0] == x)
		*o = op->in[1];
	else if (op->in[1] == x && kind != Apow)
		*o = op->in[0];
	else
		return 0;
	return 1;
}

/*
 * 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³))) as PyTorch exports
 * transformers' NewGELU: mul(u, 0.5), pow(u, 3), mul(·, 0.044715),
 * add(u, ·), mul(·, √(2/π)), tanh, add(·, 1), mul of the first and the last
 * (operands of mul and add in either order), every intermediate read only
 * by the next.  Rewritten as aten.gelu(u, approximate="tanh") where the
 * last mul was; the others gone, their results orphaned to it.
 */
static void
gelu(Fn *fn, int *nuse, int *gone, int *orphan, int i)
{
	Op *op = &fn->op[i];
	int u, m0, a2, t, m2, a, m1, p, o, k, ops[7], n = 0, j;

	if (op->kind != Amul || op->nin != 2 || op->nout != 1 || op->dev != DEV_CPU)
		return;
	for (k = 0; k < 2; k++) {   /* m0 = mul(u, 0.5) one operand, a2 the other */
		m0 = op->in[k];
		a2 = op->in[1 - k];
		if (nuse[m0] != 1 || nuse[a2] != 1 || m0 == a2)
			continue;
		const Op *d0 = def(fn, m0), *d2 = def(fn, a2);
		if (d0->kind != Amul || d0->nin != 2 || d2->kind != Aadd || d2->nin != 2)
			continue;
		u = isscalar(fn, d0->in[1], 0.5f) ? d0->in[0] :
		    isscalar(fn, d0->in[0], 0.5f) ? d0->in[1] : -1;
		if (u < 0 || nuse[u] != 3 || fn->val[u].t.dtype != DP_F32)
			continue;
		t = isscalar(fn, d2->in[1], 1.0f) ? d2->in[0] :
		    isscalar(fn, d2->in[0], 1.0f) ? d2->in[1] : -1;
		if (t < 0 || nuse[t] != 1 || def(fn, t)->kind != Atanh)
			continue;
		m2 = def(fn, t)->in[0];
		{
			const Op *dm2 = def(fn, m2);
			if (nuse[m2] != 1 || dm2->kind != Amul || dm2->nin != 2)
				continue;
			a = isscalar(fn, dm2->in[1], 0.7978845608028654f) ? dm2->in[0] :
			    isscalar(fn, dm2->in[0], 0.7978845608028654f) ? dm2->in[1] : -1;
		}
		if (a < 0 || nuse[a] != 1 || !binop(fn, fn->val[a].def, Aadd, u, &m1))
			continue;
		if (nuse[m1] != 1 || def(fn, m1)->kind != Amul || def(fn, m1)->nin != 2)
			continue;
		{
			const Op *d1 = def(fn, m1);
			p = isscalar(fn, d1->in[1], 0.044715f) ? d1->in[0] :
			    isscalar(fn, d1->in[0], 0.044715f) ? d1->in[1] : -1;
		}
		if (p < 0 || nuse[p] != 1 || !binop(fn, fn->val[p].def, Apow, u, &o) ||
		    !isscalar(fn, o, 3.0f))
			continue;
		ops[n++] = fn->val[m0].def, ops[n++] = fn->val[p].def, ops[n++] = fn->val[m1].def;
		ops[n++] = fn->val[a].def, ops[n++] = fn->val[m2].def, ops[n++] = fn->val[t].def;
		ops[n++] = fn->val[a2].def;
		for (j = 0; j < n; j++) {   /* all the same shape as u, on the cpu */
			const Type *tj = &fn->val[fn->op[ops[j]].out[0]].t;
			if (gone[ops[j]] || fn->op[ops[j]].dev != DEV_CPU || ops[j] > i ||
			    !sametype(tj, &fn->val[u].t))
				break;
		}
		if (j < n || fn->val[op->out[0]].t.rank != fn->val[u].t.rank)
			continue;
		for (j = 0; j < n; j++) {
			gone[ops[j]] = 1;
			orphan[fn->op[ops[j]].out[0]] = 2 + i;
			for (int q = 0; q < fn->op[ops[j]].nin; q++)
				nuse[fn->op[ops[j]].in[q]]--;
			fn->op[ops[j]].nin = 0;   /* reads nothing now (reader) */
		}
		nuse[op->in[0]]--, nuse[op->in[1]]--;
		op->kind = Agelu;
		op->in = dp_alloc(fn->arena, 1, sizeof *op->in);
		op->in[0] = u;
		op->nin = 1;
		nuse[u]++;
		op->attr = NULL;
		op->nattr = 0;
		dp_sets(fn, i, "approximate", "tanh");
		return;
	}
}

/* Rewrites every decomposed tanh GELU of fn (gelu above). */
void
xf_gelu(Fn *fn, int *nuse, int *gone, int *orphan)
{
	for (int i = 0; i < fn->nop; i++)
		if (!gone[i])
			gelu(fn, nuse, gone, orphan, i);
}

/*
 * aten.addmm(bias [N], x [M, K], w [K, N]) with alpha = beta = 1, f32, w a
 * constant of the cpu and x not a transposed view: a linear layer reading
 * its weight as stored (attribute wt = 1), so that it is packed at init
 * and takes the fusions of linear layers.
 */
void
xf_addmm(Fn *fn, int i)
{
	Op *op = &fn->op[i];
	int b, x, w;

	if (op->kind != Aaddmm || op->dev != DEV_CPU || op->nin != 3 || op->nout != 1 ||
	    dp_getf(op, "alpha", 1) != 1 || dp_getf(op, "beta", 1) != 1)
		return;
	b = op->in[0], x = op->in[1], w = op->in[2];
	if (fn->val[w].t.rank != 2 || fn->val[x].t.rank != 2 || fn->val[b].t.rank != 1 ||
	    fn->val[b].t.dim[0] != fn->val[w].t.dim[1] || !isconst(fn, w) ||
	    dp_geti(def(fn, w), "state", 0) || fn->val[b].t.dtype != DP_F32 ||
	    fn->val[x].t.dtype != DP_F32 || fn->val[op->out[0]].t.dtype != DP_F32 ||
	    dp_istranspose(fn, def(fn, x)))
		return;
	op->in[0] = x, op->in[1] = w, op->in[2] = b;
	op->kind = Alinear;
	op->attr = NULL;
	op->nattr = 0;
	dp_seti(fn, i, "wt", 1);
}

/*
 * A linear layer i (f32, a constant 2-D weight, an input that is not a
 * transposed view) with its result's one reader an add of a same-shaped
 * tensor (the residual: added in the epilogue, its operand appended and
 * its index set as attribute res), then that result's one reader an
 * activation: the layer runs where the last fused op did, with its result.
 * 1 when anything was fused (f, moved, gone, orphan updated).
 */
int
xf_linear(Fn *fn, const int *nuse, int *gone, int *orphan, char *moved, Fuse *fu, int i)
{
	Op *op = &fn->op[i];
	int y = op->out[0], cur = y, last = i, j, k, v, *in;
	Fuse f = { .nconv = op->nin };

	if (op->dev != DEV_CPU || op->nout != 1 || op->nin < 2 || op->nin > 3 ||
	    fn->val[op->in[1]].t.rank != 2 || !isconst(fn, op->in[1]) ||
	    fn->val[y].t.dtype != DP_F32 || fn->val[op->in[0]].t.dtype != DP_F32)
		return 0;
	if (op->nin == 3 && (fn->val[op->in[2]].t.rank != 1 || fn->val[op->in[2]].t.dtype != DP_F32))
		return 0;
	if (dp_istranspose(fn, def(fn, op->in[0])))
		return 0;
	in = dp_alloc(fn->arena, (size_t)op->nin + 1, sizeof *in);
	memcpy(in, op->in, (size_t)op->nin * sizeof *in);
	j = reader(fn, nuse, gone, cur, last);
	/* views in between (a 2-D addmm's result seen as [B, T, N]): taken
	 * along when an add or an activation follows */
	for (k = j, v = cur; k >= 0 && fn->op[k].kind == Aview && fn->op[k].dev == DEV_CPU; ) {
		v = fn->op[k].out[0];
		k = reader(fn, nuse, gone, v, k);
	}
	if (k >= 0 && k != j && (fn->op[k].kind == Aadd || fn->op[k].nin == 1)) {
		while (j != k) {
			orphan[cur] = 1;
			gone[j] = 1;
			cur = fn->op[j].out[0];
			last = j;
			j = reader(fn, nuse, gone, cur, last);
		}
	}
	if (j >= 0 && resadd(fn, &fn->op[j], cur)) {
		f.res = op->nin;
		in[op->nin] = dp_other(&fn->op[j], cur);
		orphan[cur] = 1;
		gone[j] = 1;
		cur = fn->op[j].out[0];
		last = j;
		j = reader(fn, nuse, gone, cur, last);
	}
	if (j >= 0 && fn->op[j].nin == 1 && fn->op[j].in[0] == cur && fn->op[j].nout == 1 &&
	    fn->op[j].dev == DEV_CPU && sametype(&fn->val[fn->op[j].out[0]].t, &fn->val[cur].t)) {
		f.act = actof(&fn->op[j], &f.lo, &f.hi);
		if (f.act == 2)   /* a clamp's bounds have no place in the call */
			f.act = 0;
		if (f.act) {
			orphan[cur] = 1;
			gone[j] = 1;
			cur = fn->op[j].out[0];
			last = j;
		}
	}
	if (last == i)
		return 0;
	for (k = 0; k < fn->nval; k++)   /* fused away: where the layer now runs */
		if (orphan[k] == 1)
			orphan[k] = 2 + last;
	if (f.res) {
		op->in = in;
		op->nin++;
		dp_seti(fn, i, "res", f.res);
	}
	op->out[0] = cur;
	fu[last] = f;
	fn->op[last] = *op;
	gone[last] = 0;
	moved[last] = 1;
	gone[i] = 1;
	return 1;
}

/* ---- attention in place ---- */

/* A strided view: dims, element strides, offset. */
typedef struct Sv {
	int r;
	int64_t dim[DP_MAXRANK], st[DP_MAXRANK], off;
} Sv;

/* The strides of view v reshaped to dims nd (rank nr) without a copy, as
 * a view of a strided tensor can be: each run of new dims must split or
 * merge old dims that are contiguous with each other.  0, or -1. */
static int
reshape(Sv *v, const int64_t *nd, int nr)
{
	int64_t ns[DP_MAXRANK], base, on, nn;
	int od, vd = nr - 1;

	if (v->r == 0 || nr == 0)
		return -1;
	base = v->st[v->r - 1], on = 1, nn = 1;
	for (od = v->r - 1; od >= 0; od--) {
		on *= v->dim[od];
		if (od > 0 && (v->dim[od - 1] == 1 || v->st[od - 1] == on * base))
			continue;   /* od - 1 continues this run of old dims */
		while (vd >= 0 && (nn < on || nd[vd] == 1)) {
			ns[vd] = nn * base;
			nn *= nd[vd];
			vd--;
		}
		if (nn != on)
			return -1;
		if (od > 0) {
			base = v->st[od - 1];
			on = nn = 1;
		}
	}
	if (vd != -1)
		return -1;
	v->r = nr;
	memcpy(v->dim, nd, (size_t)nr * sizeof *nd);
	memcpy(v->st, ns, (size_t)nr * sizeof *ns);
	return 0;
}

/* Applies movement op d (of input type the view's) to the view.  0, or -1
 * for an op it cannot follow. */
static int
follow(const Fn *fn, const Op *d, Sv *v)
{
	const Type *to = &fn->val[d->out[0]].t;
	int k, ax;

	switch (d->kind) {
	case Aview:
		return reshape(v, to->dim, to->rank);
	case Apermute: {
		const Attr *a = dp_attr(d, "dims");
		Sv w = *v;
		if (!a || a->n != v->r)
			return -1;
		for (k = 0; k < v->r; k++) {
			ax = (int)(a->ints[k] < 0 ? a->ints[k] + v->r : a->ints[k]);
			if (ax < 0 || ax >= v->r)
				return -1;
			w.dim[k] = v->dim[ax];
			w.st[k] = v->st[ax];
		}
		*v = w;
		return 0;
	}
	case Aslice: {
		int64_t n, s = dp_geti(d, "start", 0), step = dp_geti(d, "step", 1);
		ax = normdim(dp_geti(d, "dim", 0), v->r);
		n = v->dim[ax];
		if (s < 0)
			s = s < -n ? 0 : s + n;
		if (s > n)
			s = n;
		if (step < 1)
			return -1;
		v->off += s * v->st[ax];
		v->st[ax] *= step;
		v->dim[ax] = to->dim[ax];
		return 0;
	}
	case Aselect: {
		int64_t ix = dp_geti(d, "index", 0);
		ax = normdim(dp_geti(d, "dim", 0), v->r);
		if (ix < 0)
			ix += v->dim[ax];
		v->off += ix * v->st[ax];
		for (k = ax; k + 1 < v->r; k++) {
			v->dim[k] = v->dim[k + 1];
			v->st[k] = v->st[k + 1];
		}
		v->r--;
		return 0;
	}
	}
	return -1;
}

/* Whether op d only moves or views its one f32 operand. */
static int
movement(const Op *d)
{
	return (d->kind == Aview || d->kind == Apermute || d->kind == Aslice ||
	        d->kind == Aselect) && d->nin == 1 && d->nout == 1 && d->dev == DEV_CPU;
}

/* Operand v of attention, followed back through the movement ops that
 * only it reads to the tensor they view (*base), as a strided view of it;
 * the ops passed into ops[] (*n).  0, or -1 (nothing to gain). */
static int
viewsrc(const Fn *fn, const int *nuse, const int *gone, int v, int *base, Sv *sv, int *ops, int *n)
{
	int chain[16], m = 0, x = v, k;

	while (m < 16 && nuse[x] == 1 && movement(def(fn, x)) && !gone[fn->val[x].def]) {
		chain[m++] = fn->val[x].def;
		x = def(fn, x)->in[0];
	}
	if (m == 0 || fn->val[x].t.dtype != DP_F32 || fn->val[x].t.dev != DEV_CPU)
		return -1;
	sv->r = fn->val[x].t.rank;
	sv->off = 0;
	for (k = sv->r - 1; k >= 0; k--) {
		sv->dim[k] = fn->val[x].t.dim[k];
		sv->st[k] = k == sv->r - 1 ? 1 : sv->st[k + 1] * sv->dim[k + 1];
	}
	for (k = m - 1; k >= 0; k--)
		if (follow(fn, &fn->op[chain[k]], sv) != 0)
			return -1;
	if (sv->r != fn->val[v].t.rank || sv->st[sv->r - 1] != 1)
		return -1;
	*base = x;
	for (k = 0; k < m; k++)
		ops[(*n)++] = chain[k];
	return 0;
}

/*
 * Attention op i: each of q, k, v that is a chain of views, slices and
 * permutes of a tensor X read only by it is read in X through strides; a
 * result read only by one permute that keeps its last dim is written in
 * that permute's result; a key or value with a batch dim of 1 where the
 * query's is longer (grouped heads, dp-legalize) is read through a stride
 * of 0 there.  The op keeps its logical shape in attributes:
 * xdims (q's dims, then S and Ev), xst (for y, q, k, v: the batch dims'
 * strides and the row stride) and xoff (their offsets); the chains are
 * gone.  Nothing changes when no operand is strided this way.
 */
void
xf_sdpa(Fn *fn, int *nuse, int *gone, int *orphan, int i)
{
	Op *op = &fn->op[i];
	const Type *tq, *tk, *tv, *to;
	int r, nb, k, d, b[3], nops = 0, ops[48], any = 0, y, j, nd;
	int64_t st[4 * DP_MAXRANK], off[4] = { 0 }, dims[DP_MAXRANK + 2];
	Sv sv[4];

	if (op->kind != Asdpa || op->dev != DEV_CPU || op->nin < 3 || op->nout != 1 ||
	    dp_attr(op, "xst"))
		return;
	tq = &fn->val[op->in[0]].t, tk = &fn->val[op->in[1]].t, tv = &fn->val[op->in[2]].t;
	to = &fn->val[op->out[0]].t;
	r = tq->rank;
	if (r < 2 || tk->rank != r || tv->rank != r || to->rank != r || tq->dtype != DP_F32 ||
	    tk->dtype != DP_F32 || tv->dtype != DP_F32 || to->dtype != DP_F32 || dp_numel(to) == 0)
		return;
	for (d = 0; d < r - 2; d++)   /* a key's or value's batch dim of 1: read by all */
		if (tk->dim[d] != tq->dim[d] || tv->dim[d] != tq->dim[d])
			any = 1;
	nb = r - 2;
	for (k = 0; k < 3; k++) {
		const Type *t = &fn->val[op->in[k]].t;
		int n0 = nops;
		if (viewsrc(fn, nuse, gone, op->in[k], &b[k], &sv[k + 1], ops, &nops) == 0) {
			any = 1;
			continue;
		}
		nops = n0;
		b[k] = op->in[k];
		sv[k + 1].r = r;
		sv[k + 1].off = 0;
		for (d = r - 1; d >= 0; d--)
			sv[k + 1].st[d] = d == r - 1 ? 1 : sv[k + 1].st[d + 1] * t->dim[d + 1];
	}
	/* the result: into the one permute reading it, when that keeps the last dim */
	y = op->out[0];
	sv[0].r = r, sv[0].off = 0;
	for (d = r - 1; d >= 0; d--)
		sv[0].st[d] = d == r - 1 ? 1 : sv[0].st[d + 1] * to->dim[d + 1];
	j = reader(fn, nuse, gone, y, i);
	if (j >= 0 && fn->op[j].kind == Apermute && fn->op[j].dev == DEV_CPU &&
	    fn->op[j].nout == 1) {
		const Attr *a = dp_attr(&fn->op[j], "dims");
		const Type *tz = &fn->val[fn->op[j].out[0]].t;
		int64_t zs[DP_MAXRANK];
		for (d = r - 1; d >= 0; d--)
			zs[d] = d == r - 1 ? 1 : zs[d + 1] * tz->dim[d + 1];
		if (a && a->n == r && (a->ints[r - 1] == r - 1 || a->ints[r - 1] == -1)) {
			for (d = 0; d < r; d++)   /* y's dim a[d] is z's dim d */
				sv[0].st[a->ints[d] < 0 ? a->ints[d] + r : a->ints[d]] = zs[d];
			gone[j] = 1;
			orphan[y] = 2 + i;
			op->out[0] = fn->op[j].out[0];
			any = 1;
		}
	}
	if (!any)
		return;
	for (k = 0; k < 4; k++) {   /* a batch dim of 1: stride 0 (the same rows for every entry) */
		const Type *t = k == 0 ? to : &fn->val[op->in[k - 1]].t;
		for (d = 0; d < nb; d++)
			if (t->dim[d] == 1)
				sv[k].st[d] = 0;
	}
	for (k = 0; k < nops; k++) {
		gone[ops[k]] = 1;
		orphan[fn->op[ops[k]].out[0]] = 2 + i;
		nuse[fn->op[ops[k]].in[0]]--;
		fn->op[ops[k]].nin = 0;
	}
	for (k = 0; k < 3; k++) {
		if (b[k] != op->in[k])
			nuse[b[k]]++;
		op->in[k] = b[k];
	}
	for (k = 0; k < 4; k++) {
		for (d = 0; d < nb; d++)
			st[k * (nb + 1) + d] = sv[k].st[d];
		st[k * (nb + 1) + nb] = sv[k].st[r - 2];
		off[k] = sv[k].off;
	}
	nd = 0;
	for (d = 0; d < r; d++)
		dims[nd++] = tq->dim[d];
	dims[nd++] = tk->dim[r - 2];
	dims[nd++] = tv->dim[r - 1];
	dp_setints(fn, i, "xdims", dims, nd);
	dp_setints(fn, i, "xst", st, 4 * (nb + 1));
	dp_setints(fn, i, "xoff", off, 4);
}
